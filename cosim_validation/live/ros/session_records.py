"""Completing a session's run directory from its bag: trajectories into the database, replay checked.

The live graph stores cases, verdicts and KPIs as they finish; the trajectories are rebuilt afterwards
from ``session.mcap`` by the same path the live monitor used (``cosim replay``), which also checks that the
replayed verdicts equal the live ones. The bag is the source of truth: this can be run again at any time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cosim_validation.assembly.monitor_world import MonitorWorld
from cosim_validation.live.ros.replay import compare, replay_bag, unreported
from cosim_validation.runs.campaign.record_codec import encode_record
from cosim_validation.runs.campaign.results_db import ResultsDB


def complete_session(run_dir: Path, world: MonitorWorld) -> dict[str, Any]:
    """Replay ``run_dir/session.mcap``, store each concluded case's trajectories; return a summary.

    Args:
        run_dir: The session's run directory, with ``session.mcap`` and ``results.sqlite``; only cases already stored
            there get their trajectories.
        world: What the monitor judges with (properties, KPIs, nominal arm, forbidden regions), as the live monitor's.
    """
    result = replay_bag(run_dir / "session.mcap", world, keep_records=True)
    stored = 0
    with ResultsDB.open(run_dir / "results.sqlite", encoder=encode_record) as db:
        known = db.finished_ids()
        for end in result.cases:
            if end.info.test_id in known and end.conclusion.records:
                db.add_trajectories(end.info.test_id, list(end.conclusion.records.values()))
                stored += 1
    differences = compare(result)
    return {
        "replayed_cases": len(result.cases),
        "cases_with_trajectories": stored,
        "replay_equals_live": not differences,
        "replay_differences": differences,
        "not_compared": unreported(result),  # the last case, when the recording stopped before its live report
    }
