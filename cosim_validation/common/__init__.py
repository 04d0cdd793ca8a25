"""What every part shares: the base error, optional imports, the on-disk cache, Ctrl-C, YAML configuration and
the trajectory record.
"""
