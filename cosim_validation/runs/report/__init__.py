"""Reports of a run directory: [Actuators 2025]'s tables and figures on the run's data, as self-contained HTML.

Public API::

    build_report(run_dir, max_cubes=200) -> ReportOutcome     # writes report.html and summary.json
    load_run(run_dir) -> RunData                              # the run's tables as DataFrames
"""

from cosim_validation.runs.report.report_builder import SECTION_IDS, ReportOutcome, build_report
from cosim_validation.runs.report.run_data import RunData, load_run

__all__ = ["SECTION_IDS", "ReportOutcome", "RunData", "build_report", "load_run"]
