"""The property language; docs/PROPERTIES.md describes it.

Syntax tree, parser, compiled formulas over typed per-sample terms, the names they resolve, and robust
(interval) semantics of atoms.

Import from the modules of this package (``cosim_validation.monitor.properties`` holds the public API).
"""
