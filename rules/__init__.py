"""The rule pack shipped with topolog (Datalog, not Python).

This file exists only so that packaging can map this folder into the installed package
as `verifier.rules`, found through importlib.resources (see verifier/core/resources.py).
"""
