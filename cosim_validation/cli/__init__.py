"""The ``cosim`` command line: one module per subcommand, each with ``add_arguments`` and ``run``."""
