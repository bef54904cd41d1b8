"""Drawings of an inventory: what is drawn (`model`), as Graphviz DOT (`dot`), as SVG (`svg`).

The html report (verifier.reports.html_report) and `topolog draw` share the drawing model:
identical parts of a fleet are drawn once with a count, and every part a finding names is
drawn on its own, so that a 131,072-GPU inventory still gives a small, readable picture.
"""
