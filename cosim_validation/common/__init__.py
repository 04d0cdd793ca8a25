"""What every part shares.

The base error, optional imports, the on-disk cache, Ctrl-C, YAML configuration and the trajectory record.
"""
