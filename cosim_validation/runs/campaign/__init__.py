"""Running many cases: executors, the results database, resume."""
