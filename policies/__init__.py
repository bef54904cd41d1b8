"""The Cedar schema and policies shipped with topolog (Cedar, not Python).

This file exists only so that packaging can map this folder into the installed package
as `verifier.policies`, found through importlib.resources (see verifier/core/resources.py).
"""
