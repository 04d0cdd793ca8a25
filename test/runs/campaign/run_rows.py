"""Comparing two run directories row by row (timings, which differ by nature, are left out)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.common.config import load_config
from cosim_validation.robots.model import RobotConfig
from cosim_validation.runs.campaign.results_db import ResultsDB
from test.runs.campaign.run_fixtures import CONFIG


def stored_rows(run_dir: Path) -> dict[str, Any]:
    """Every stored row of a run: cases, verdicts, KPIs, and each trajectory's arrays."""
    kinematics = RobotConfig.from_config(load_config(CONFIG)["robot"]).kinematics
    with ResultsDB.open(run_dir / "results.sqlite") as db:
        records = {}
        for test_id, robots in db.trajectory_robots().items():
            for robot in robots:
                r = db.trajectory(test_id, robot, kinematics)
                arrays = (r.t_s, r.stage, r.q_setpoint, r.q_measured, r.actual_tip_pos_m)
                records[(test_id, robot)] = (r.backend, *arrays)
        return {"cases": db.cases(), "verdicts": db.verdicts(), "kpis": db.kpis(), "records": records}


def rows_of(rows: dict[str, Any], test_ids: set[str]) -> dict[str, Any]:
    """The rows of :func:`stored_rows` that belong to the cases ``test_ids``, in their order."""
    return {
        "cases": [c for c in rows["cases"] if c.test_id in test_ids],
        "verdicts": [v for v in rows["verdicts"] if v.test_id in test_ids],
        "kpis": [k for k in rows["kpis"] if k.test_id in test_ids],
        "records": {key: r for key, r in rows["records"].items() if key[0] in test_ids},
    }


def assert_same_rows(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Equal rows, exactly (NaN equals NaN in arrays)."""
    assert a["cases"] == b["cases"]
    assert a["verdicts"] == b["verdicts"]
    assert a["kpis"] == b["kpis"]
    assert a["records"].keys() == b["records"].keys()
    for key, first in a["records"].items():
        second = b["records"][key]
        assert first[0] == second[0], key
        for x, y in zip(first[1:], second[1:], strict=True):
            np.testing.assert_array_equal(x, y, err_msg=str(key))
