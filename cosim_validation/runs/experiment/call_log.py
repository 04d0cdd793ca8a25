"""The calls of one experiment across ``--resume``: each call's wall time, so the total is the sum of all.

A long experiment (RQ2 at 2 mm runs for hours) may be interrupted by Ctrl-C or killed outright and
resumed later. ``experiment.json`` keeps a list of calls; a call is written there when it starts
(``ended: false``) and again when it ends. A call that never ended (the process was killed) gets its
wall time from the results database when the experiment is resumed: from its start to the last case
stored after it, which is what that call achieved (flagged ``wall_s_from: last stored case``).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cosim_validation.runs.campaign.json_file import read_json

EXPERIMENT_FILE = "experiment.json"
_ISO_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def utc_now() -> str:
    """The current time, UTC, in the form the results database stores ``finished_at``."""
    return datetime.now(UTC).strftime(_ISO_FORMAT)[:-4] + "Z"


def _parse(stamp: str) -> datetime:
    return datetime.strptime(stamp.rstrip("Z") + "000Z", _ISO_FORMAT).replace(tzinfo=UTC)


def _last_stored_after(results_path: Path, started_at: str) -> tuple[int, str | None]:
    """Cases stored at or after ``started_at`` and the time of the last of them."""
    if not results_path.is_file():
        return 0, None
    with sqlite3.connect(f"file:{results_path}?mode=ro", uri=True) as db:
        count, last = db.execute(
            "SELECT COUNT(*), MAX(finished_at) FROM timings WHERE finished_at >= ?", (started_at,)
        ).fetchone()
    return int(count), last


def _closed(call: dict[str, Any], results_path: Path) -> dict[str, Any]:
    """An earlier call as it is kept: an ended call as written, a killed one measured from the database."""
    if call.get("ended", True):
        return call
    count, last = _last_stored_after(results_path, str(call["started_at"]))
    wall = (_parse(last) - _parse(str(call["started_at"]))).total_seconds() if last else 0.0
    return call | {
        "ended": False,
        "cases_run": count,
        "wall_s": {"campaign": wall, "total": wall},
        "wall_s_from": "last stored case",
    }


def earlier_calls(out_dir: Path, resume: bool, results_path: Path) -> list[dict[str, Any]]:
    """The calls recorded before this one (none unless ``resume``).

    An ``experiment.json`` written before calls were recorded counts as one ended call.

    Args:
        out_dir: The experiment's output directory (its ``experiment.json``).
        resume: Whether this call resumes the experiment (``--resume``).
        results_path: The results database of the experiment's campaign; a call that was killed is measured
            from it.
    """
    path = out_dir / EXPERIMENT_FILE
    if not resume or not path.is_file():
        return []
    previous = read_json(path)
    if "calls" not in previous:
        return [{"ended": True, "wall_s": previous.get("wall_s", {}), "interrupted": previous.get("interrupted")}]
    return [_closed(c, results_path) for c in previous["calls"]]


def summed_wall_s(calls: list[dict[str, Any]]) -> dict[str, float]:
    """Wall time per phase [s] summed over ``calls`` (``total`` included).

    Args:
        calls: The calls as ``experiment.json`` keeps them, each with a ``wall_s`` mapping of phase -> [s]
            (None values are skipped).
    """
    sums: dict[str, float] = {}
    for call in calls:
        for phase, seconds in dict(call.get("wall_s", {})).items():
            if seconds is not None:
                sums[phase] = sums.get(phase, 0.0) + float(seconds)
    return sums
