"""Every shipped hazard scenario injected live (hazard_injector nodes over DDS) and in batch: identical traces.

All the scenarios of config/hazards.yaml at once on one case: the command faults on the virtual robot, seed 003's
three and the feedback faults on the physical one (each filter corrupts its own windows; stacked, they must still
give the same corrupted streams in both modes). The records of both robots, sample for sample, the verdicts and
the KPIs are the same in a session and in a campaign, and the bag holds every window's start and end on
/cosim/hazards/events.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.campaign.results_db import ResultsDB
from cosim_validation.config import load_config
from cosim_validation.hazards.hazard_library import load_library
from cosim_validation.robot import RobotConfig
from test.session.test_live_equals_batch import _both, _close, suite_file  # noqa: F401  (suite_file: fixture)

pytestmark = [pytest.mark.ros, pytest.mark.slow]

PHYSICAL = ("sudden_jump", "temporarily_unavailable", "permanently_unavailable", "encoder_zeroed", "tracker_dropout")


def _filters() -> list[str]:
    names = list(load_library())
    virtual = [n for n in names if n not in PHYSICAL]
    return [f"--filter=physical=hazards:{n}" for n in PHYSICAL] + [f"--filter=virtual=hazards:{n}" for n in virtual]


def _records(db_path: Path, kinematics: object) -> dict:  # type: ignore[type-arg]
    with ResultsDB.open(db_path) as db:
        return {
            (test_id, robot): db.trajectory(test_id, robot, kinematics)  # type: ignore[arg-type]
            for test_id, robots in db.trajectory_robots().items()
            for robot in robots
            if robot != "expected"
        }


def test_every_scenario_gives_the_same_traces_live_and_in_batch(
    tmp_path: Path,
    suite_file: Path,  # noqa: F811
    node_env: dict[str, str],
    repo_root: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    filters = _filters()
    assert len(filters) == len(load_library())
    live, batch = _both(tmp_path, suite_file, "1", "--no-validate", *filters)
    capsys.readouterr()
    (live_cases, live_verdicts, live_kpis), (batch_cases, batch_verdicts, batch_kpis) = live, batch
    assert len(live_cases) == 1
    for test_id, outcome in live_cases.items():
        assert outcome == batch_cases[test_id]
    for key, verdict in live_verdicts.items():
        assert verdict.status == batch_verdicts[key].status, key
        assert _close(verdict.margin, batch_verdicts[key].margin), key
    for key, kpi in live_kpis.items():
        assert _close(kpi.value, batch_kpis[key].value), key

    config = load_config(repo_root / "config" / "needle_insertion.yaml")
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    live_records = _records(tmp_path / "session" / "results.sqlite", kinematics)
    batch_records = _records(tmp_path / "campaign" / "results.sqlite", kinematics)
    assert {robot for _, robot in live_records} == {"virtual", "physical"}
    for key, record in live_records.items():
        other = batch_records[key]
        assert len(record.t_s) == len(other.t_s), key
        for field in ("q_setpoint", "q_measured", "actual_tip_pos_m"):
            a, b = getattr(record, field), getattr(other, field)
            np.testing.assert_allclose(a, b, atol=1e-9, err_msg=f"{key} {field}")
    physical = next(r for (_, robot), r in live_records.items() if robot == "physical")
    assert np.isnan(physical.actual_tip_pos_m).any()  # the tracker dropout is in the trace

    from cosim_validation.ros.bag import read_messages

    events = [m.message for m in read_messages(tmp_path / "session" / "session.mcap", ["/cosim/hazards/events"])]
    started = {e.message.split(":")[0] for e in events if e.code == "fault_start"}
    assert started == set(load_library())
    assert {e.code for e in events} == {"fault_start", "fault_end"}
