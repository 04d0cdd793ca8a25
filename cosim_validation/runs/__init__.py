"""The files of a run and the runs of many cases: campaigns, their database, reports, experiments."""
