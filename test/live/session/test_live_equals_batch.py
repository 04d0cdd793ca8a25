"""Same case, same verdict: the cases of one suite through ``cosim session`` and ``cosim campaign --validate``.

Both go through the one case assembly (the lockstep loop, the robots, the monitor world), so a live session over
DDS and an in-process campaign give every case the same outcome and message, the same verdicts (status and
margin) and the same KPIs on every robot, the emulated physical arm included. Two of the four cases are stopped
by the state validator next to the heart.
"""

from __future__ import annotations

import json
import math
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.runs.campaign.record_codec import POS_STEP_M, QUAT_STEP
from cosim_validation.runs.campaign.results_db import ResultsDB
from cosim_validation.runs.run_inputs import kept_path
from cosim_validation.testgen import Suite

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: Four cases by the heart (a 30 mm grid of the region heart_side_7pct, seed 3, as the grid generator drew them
#: before its cells were refined; kept as data so that a change of the generator does not change the cases): two
#: completed, two stopped by the validator. Each: source [m], target [m], cube index, target depth [m].
CASES = (
    (
        (0.43026024622802117, -0.007424224697440414, 0.29365470328156495),
        (0.4636917431265115, -0.019208256873488476, 0.09584174312651157),
        (0, 0, 2),
        0.01356764230877161,
    ),
    (
        (0.4588482344367925, -0.011820889812838811, 0.29142671588077756),
        (0.4918167431265115, -0.022958256873488476, 0.052716743126511575),
        (1, 0, 0),
        0.011554742231965065,
    ),
    (
        (0.42621969678252575, 0.03128745366041805, 0.2944326307446367),
        (0.47386850092620514, 0.06841821731697693, 0.08629811032460433),
        (1, 3, 2),
        0.002881044987589121,
    ),
    (
        (0.45685630479255634, -0.023795203104369788, 0.2831181594116004),
        (0.5017232534496516, 0.07971218454777168, 0.09148040928009284),
        (2, 4, 2),
        0.0007192220655269921,
    ),
)
TOLERANCE_M = 1e-9
#: Four cases of the same grid the supervisor lets run to their end (13-15 s plans, the shortest of those that
#: neither come within the supervisor's clearance of the heart nor cross its force limit).
SUPERVISED_CASES = (
    (
        (0.46034944895041174, 0.006892537010367068, 0.2914911209669474),
        (0.4535401749334272, 0.007895324092196964, 0.11787454829930542),
        (0, 1, 3),
        0.006398288533091545,
    ),
    (
        (0.45090437850625253, -0.034597409813479175, 0.2966366971591701),
        (0.44570783230934413, 0.044276086291475565, 0.121335070570477),
        (0, 3, 3),
        0.0008141743019223213,
    ),
    (
        (0.4499597951479864, -0.016504421818213526, 0.31054049501500103),
        (0.47760399612272114, -0.023092269193739298, 0.12456742131512095),
        (1, 0, 3),
        0.0005944466101936996,
    ),
    (
        (0.4794638313668729, 0.00023019283831225758, 0.3108465270735283),
        (0.47437226853142317, -0.016613617487514155, 0.12257625076655318),
        (1, 1, 3),
        0.003117585787549615,
    ),
)
MOTION_STATES = ("MoveToSource", "Approach", "Inject", "Extract", "Reset")
#: Scenario action of each case's exception (injected in every motion state in turn) and the event it raises.
#: A fault fired at a step is seen by the next one and lasts one period (for_s 0.15; a lost tip 0.7 s: past the
#: 0.5 s timeout), so the recovery's guard holds again.
EXCEPTIONS = {
    "force": ("fault: force, value: 5, for_s: 0.15", "e_ForceLimit"),
    "clearance": ("fault: clearance, value: 0.001, for_s: 0.15", "e_FRTooClose"),
    "tracking": ("fault: tracking, for_s: 0.7", "e_NeedleLost"),
    "abort": ("request: abort", "e_TaskAborted"),
}
QUANTUM_M = max(POS_STEP_M, QUAT_STEP)  # stored records are quantized to this step (compact record codec)


def _grid_suite(path: Path, repo_root: Path, cases: tuple[tuple, ...]) -> Path:  # type: ignore[type-arg]
    """The pinned ``cases`` as a suite of the 30 mm grid by the heart (its metadata), written to ``path``."""
    from cosim_validation.anatomy import load_anatomy
    from cosim_validation.common.config import load_config
    from cosim_validation.testgen import TestgenRequest, generate_suite, load_testgen_config

    config = load_config(repo_root / "config" / "needle_insertion.yaml")
    request = TestgenRequest(method="grid", granularity_m=0.03, per_cube=1, seed=3, region="heart_side_7pct")
    full, _ = generate_suite(load_anatomy(config["anatomy"]), load_testgen_config(config["testgen"]), request)
    source, target, cube, depth = (np.array([case[k] for case in cases]) for k in range(4))
    suite = Suite.build(
        source,
        target,
        cube,
        depth,
        {k: v for k, v in full.metadata.items() if k not in ("format", "frame_id", "unit", "suite_id")},
    )
    suite.write(path)
    return path


@pytest.fixture(scope="module")
def suite_file(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Path:
    return _grid_suite(tmp_path_factory.mktemp("suite") / "heart_side.parquet", repo_root, CASES)


@pytest.fixture(scope="module")
def supervised_suite_file(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Path:
    return _grid_suite(tmp_path_factory.mktemp("suite") / "supervised.parquet", repo_root, SUPERVISED_CASES)


def _rows(db_path: Path) -> tuple[dict, dict, dict]:  # type: ignore[type-arg]
    with ResultsDB.open(db_path) as db:
        cases = {c.test_id: (c.outcome, c.message) for c in db.cases()}
        verdicts = {(v.test_id, v.property, v.robot): v for v in db.verdicts()}
        kpis = {(k.test_id, k.name, k.robot, k.stage): k for k in db.kpis()}
    return cases, verdicts, kpis


def _close(a: float | None, b: float | None) -> bool:
    a, b = (math.nan if v is None else float(v) for v in (a, b))
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= TOLERANCE_M


def _both(
    tmp_path: Path, suite_file: Path, cases: str, *options: str, configs: tuple[str, ...] = ()
) -> tuple[tuple, tuple]:  # type: ignore[type-arg]
    """The rows of the same cases through ``cosim session`` and ``cosim campaign`` with ``options``; ``configs``:
    the session's graph and the campaign's case-study configuration (default: the shipped ones)."""
    session_dir, campaign_dir = tmp_path / "session", tmp_path / "campaign"
    graph, case_config = (["--config", configs[0]], ["--config", configs[1]]) if configs else ([], [])
    session = ["session", *graph, "--suite", str(suite_file), "--cases", cases, *options]
    assert main([*session, "--out", str(session_dir)]) == 0
    campaign = ["campaign", *case_config, "--suite", str(suite_file), "--backends", "virtual,physical", *options]
    assert main([*campaign, "--workers", "1", "--out", str(campaign_dir)]) == 0
    return _rows(session_dir / "results.sqlite"), _rows(campaign_dir / "results.sqlite")


def test_session_and_campaign_give_the_same_results(
    tmp_path: Path, suite_file: Path, node_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Every case of the suite with the state validator, both robots seen through a filter (a fixed offset on joint
    2: live through the proxy node, in batch around the backends): the same outcomes, verdicts, KPIs, markers and
    error datasets. One run for both (a session costs about 40 CPU-s): the validator judges the setpoints, which
    the filter does not change."""
    offsets = ["--filter", "virtual=offset:joint2=0.003", "--filter", "physical=offset:joint2=0.003"]
    live, batch = _both(tmp_path, suite_file, "0", "--validate", *offsets)
    capsys.readouterr()
    (live_cases, live_verdicts, live_kpis), (batch_cases, batch_verdicts, batch_kpis) = live, batch

    assert live_cases == batch_cases
    outcomes = sorted(outcome for outcome, _ in live_cases.values())
    assert outcomes == ["aborted", "aborted", "completed", "completed"]
    assert all("the state validator refused setpoint" in m for o, m in live_cases.values() if o == "aborted")

    assert live_verdicts.keys() == batch_verdicts.keys()
    assert {robot for _, _, robot in live_verdicts} == {"expected", "virtual", "physical"}
    for key, live in live_verdicts.items():
        batch = batch_verdicts[key]
        assert live.status == batch.status, (key, live, batch)
        assert _close(live.margin, batch.margin), (key, live.margin, batch.margin)
        assert live.first_violation_stage == batch.first_violation_stage, key

    assert live_kpis.keys() == batch_kpis.keys()
    physical = [k for k in live_kpis if k[2] == "physical"]
    assert len(physical) > 0
    for key, live_kpi in live_kpis.items():
        assert _close(live_kpi.value, batch_kpis[key].value), (key, live_kpi.value, batch_kpis[key].value)
    deviation = {k[0]: v.value for k, v in live_kpis.items() if k[1:] == ("joint_deviation_max", "virtual", "case")}
    assert deviation.keys() == live_cases.keys()
    assert min(deviation.values()) > 0.0025, deviation  # the offset shows: 3 mrad on joint 2 (0.0003 rad without)

    # the physical arm's optical-tracker marker (over DDS on /cosim/physical/marker live) is the same sample for
    # sample as in batch, occlusions included
    live_markers, batch_markers = (_markers(tmp_path / d / "results.sqlite") for d in ("session", "campaign"))
    assert live_markers.keys() == batch_markers.keys() == live_cases.keys()
    for test_id, live_record in live_markers.items():
        batch_record = batch_markers[test_id]
        assert live_record.has_marker, test_id
        assert batch_record.has_marker, test_id
        assert live_record.n_samples == batch_record.n_samples, test_id
        for name in ("marker_pos_m", "marker_quat_wxyz", "marker_error_m"):
            mine, theirs = getattr(live_record, name), getattr(batch_record, name)
            np.testing.assert_array_equal(np.isnan(mine), np.isnan(theirs), err_msg=f"{test_id} {name}")
            np.testing.assert_allclose(mine, theirs, rtol=0, atol=QUANTUM_M, err_msg=f"{test_id} {name}")
    _same_error_datasets(tmp_path, min(live_cases))


def _same_error_datasets(tmp_path: Path, held_out: str) -> None:
    """Issue 18's collection live through the drivers: the session's physical trajectories as an error dataset
    (``cosim errors collect --from-run``) are the campaign's rows, one stored quantum apart at most."""
    from cosim_validation.error_injection.dataset_io import read_parquet

    datasets = []
    for mode in ("session", "campaign"):
        out = tmp_path / f"{mode}.parquet"
        argv = ["errors", "collect", "--from-run", str(tmp_path / mode), "--test-cases", held_out, "-o", str(out)]
        assert main(argv) == 0
        datasets.append(read_parquet(out))
    live, batch = datasets
    assert live.robot == batch.robot
    assert live.meta["cases"] == batch.meta["cases"]
    assert live.n_rows == batch.n_rows > 100
    np.testing.assert_array_equal(live.set_name, batch.set_name)
    assert 0 < int((live.set_name == "test").sum()) < live.n_rows
    np.testing.assert_array_equal(live.segment, batch.segment)
    np.testing.assert_array_equal(live.marker_seen, batch.marker_seen)
    for name in ("time_s", "q_setpoint", "q_measured", "marker_pos_m", "marker_quat_wxyz", "marker_error_m"):
        mine, theirs = getattr(live, name), getattr(batch, name)
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=QUANTUM_M, err_msg=name)


def _markers(db_path: Path) -> dict[str, TrajectoryRecord]:
    """The physical robot's stored record of every case (rebuilt with the run's nominal arm)."""
    from cosim_validation.common.config import load_config, package_root
    from cosim_validation.robots.model import RobotConfig

    config = load_config(package_root() / "config" / "needle_insertion.yaml")
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    with ResultsDB.open(db_path) as db:
        return {r.test_id: r for r in db.trajectories("physical", kinematics)}


def _supervisor_scenario(path: Path, test_ids: list[str]) -> Path:
    """Case i injects the i-th exception of EXCEPTIONS in every motion state in turn (0.1 s after entering it)
    and is recovered 0.2 s after each stop, so every case completes."""
    lines = ["scenario:", "  actions:"]
    for test_id, (action, _) in zip(test_ids, EXCEPTIONS.values(), strict=True):
        for state in MOTION_STATES:
            lines.append(f"    - {{cases: [{test_id}], when: {{state: {state}, after_s: 0.1}}, {action}}}")
        recover = f"when: {{state: TaskStopped, after_s: 0.2}}, request: recover, times: {len(MOTION_STATES)}"
        lines.append(f"    - {{cases: [{test_id}], {recover}}}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _supervised_configs(folder: Path) -> tuple[str, str]:
    """A session graph and a case-study configuration whose property set is the shipped one plus the supervisor's
    (config/supervisor/properties.yaml: properties over the supervisor's mode)."""
    import yaml

    from cosim_validation.common.config import package_root

    root = package_root() / "config"
    properties = yaml.safe_load((root / "properties.yaml").read_text())
    supervisor = yaml.safe_load((root / "supervisor" / "properties.yaml").read_text())
    for key in ("constants", "properties"):
        properties[key] |= supervisor[key]
    (folder / "properties.yaml").write_text(yaml.safe_dump(properties, sort_keys=False))
    case = yaml.safe_load((root / "needle_insertion.yaml").read_text())
    case["campaign"]["properties"] = str(folder / "properties.yaml")
    (folder / "case.yaml").write_text(yaml.safe_dump(case, sort_keys=False))
    graph = yaml.safe_load((root / "digital_twin.yaml").read_text())
    for node in graph["nodes"]:
        if node.get("parameters", {}).get("config") == "config/needle_insertion.yaml":
            node["parameters"]["config"] = str(folder / "case.yaml")
    (folder / "graph.yaml").write_text(yaml.safe_dump(graph, sort_keys=False))
    return str(folder / "graph.yaml"), str(folder / "case.yaml")


def _supervisor_modes(db_path: Path) -> dict[tuple[str, str], dict[int, int]]:
    """(test id, robot) -> the stored record's supervisor mode per sample, by sample time [ms]."""
    from cosim_validation.common.config import load_config, package_root
    from cosim_validation.robots.model import RobotConfig

    config = load_config(package_root() / "config" / "needle_insertion.yaml")
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    with ResultsDB.open(db_path) as db:
        return {
            (r.test_id, robot): {round(t * 1000): int(m) for t, m in zip(r.t_s, r.supervisor, strict=True)}
            for robot in ("expected", "virtual", "physical")
            for r in db.trajectories(robot, kinematics)
        }


def test_a_supervised_case_is_the_same_live_and_in_batch(
    tmp_path: Path, supervised_suite_file: Path, node_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Every exception injected in every motion state (four cases, one exception each, five stops and recoveries
    per case): the same outcomes, verdicts and KPIs live over DDS and in batch. Live, per (exception, state), read
    from the session's bag: the stop time from the step that saw the exception to the first command equal to the
    held setpoint, and no robot gets a new setpoint from that step until the recovery. The supervisor's mode
    travels with every sample into the records and the monitor, the same live and in batch, and a property over it
    (stopped_task_holds) is judged on it."""
    from cosim_validation.common.record import SupervisorMode

    test_ids = Suite.read(supervised_suite_file).test_ids
    scenario = _supervisor_scenario(tmp_path / "scenario.yaml", test_ids)
    options = ("--no-validate", "--supervisor", "--supervisor-scenario", str(scenario))
    live, batch = _both(tmp_path, supervised_suite_file, "0", *options, configs=_supervised_configs(tmp_path))
    capsys.readouterr()
    (live_cases, live_verdicts, live_kpis), (batch_cases, batch_verdicts, batch_kpis) = live, batch
    assert live_cases == batch_cases
    assert {o for o, _ in live_cases.values()} == {"completed"}  # recovered after every exception
    assert live_verdicts.keys() == batch_verdicts.keys()
    for key, verdict in live_verdicts.items():
        assert verdict.status == batch_verdicts[key].status, key
        assert _close(verdict.margin, batch_verdicts[key].margin), key
    assert live_kpis.keys() == batch_kpis.keys()
    for key, kpi in live_kpis.items():
        assert _close(kpi.value, batch_kpis[key].value), key

    stops, commands, period_ns = _bag_stops(tmp_path / "session" / "session.mcap")
    assert sorted(stops) == sorted(test_ids)
    assert set(commands) == {"/cosim/virtual/command", "/cosim/physical/command"}
    stop_periods: dict[tuple[str, str, str], float] = {}  # (exception, state, command topic) -> stop time
    for test_id, (exception, (_, event)) in zip(test_ids, EXCEPTIONS.items(), strict=True):
        assert [stop.state for stop in stops[test_id]] == list(MOTION_STATES), test_id  # each interrupted once
        for stop in stops[test_id]:
            assert event in stop.events, (test_id, stop)
            for topic, stream in commands.items():
                before = [q for t, q in stream if t < stop.stop_ns][-1]
                held = [(t, q) for t, q in stream if stop.stop_ns <= t < stop.resume_ns]
                assert len(held) >= 3, (topic, stop)  # held at least the 0.2 s before the recovery
                assert all(q == before for _, q in held), (topic, stop)  # zero plan setpoints until the recovery
                first_ns = next(t for t, q in held if q == before)
                stop_periods[exception, stop.state, topic] = (first_ns - stop.stop_ns) / period_ns
    assert len(stop_periods) == len(EXCEPTIONS) * len(MOTION_STATES) * 2
    assert max(stop_periods.values()) <= 1.0  # the issue: stopped within one control period
    print(f"stop time over {len(stop_periods)} (exception, state, robot): max {max(stop_periods.values()):g} periods")

    # the supervisor's mode per sample: the same in the session's records as in the campaign's, every case stopped
    # (a session's records are rebuilt from its bag, which under load can lack some of a robot's joint states: seen
    # its first one, and 6 of 176 at 16.9-17.5 s, with verdicts and KPIs still equal; so the modes are compared
    # at every sample time both records hold, which must be at least 90 % of the batch record's)
    live_modes, batch_modes = (_supervisor_modes(tmp_path / d / "results.sqlite") for d in ("session", "campaign"))
    assert live_modes.keys() == batch_modes.keys()
    assert {test_id for test_id, _ in live_modes} == set(live_cases)
    for key, modes in live_modes.items():
        both = modes.keys() & batch_modes[key].keys()
        assert len(both) >= 0.9 * len(batch_modes[key]), key
        assert {t: modes[t] for t in both} == {t: batch_modes[key][t] for t in both}, key
        assert batch_modes[key][0] == SupervisorMode.HOLDING  # configuring
        assert SupervisorMode.AUTONOMOUS in modes.values(), key
        assert SupervisorMode.STOPPED in modes.values(), key
    holds = {k: v for k, v in live_verdicts.items() if k[1] == "stopped_task_holds"}
    assert {(t, r) for t, _, r in holds} == {(t, r) for t in live_cases for r in ("expected", "virtual", "physical")}
    assert {v.status for v in holds.values()} == {"holds"}  # the tip stays within 2 mm of where it stopped

    # both runs keep copies of the supervisor's files: configuration, machine, force model and scenario
    for run in ("session", "campaign"):
        manifest = json.loads((tmp_path / run / "inputs.json").read_text())
        roles = {"supervisor", "supervisor_machine", "needle_force", "supervisor_scenario"}
        assert roles <= set(manifest), run
        assert kept_path(tmp_path / run, manifest["supervisor_scenario"]["original"]) == scenario.resolve()


def _tip_mean_mm(run_dir: Path, test_ids: list[str], robots: tuple[str, ...]) -> dict[str, float]:
    """Table 4's tip deviation of each robot over ``test_ids``: the mean distance of its actual needle tip to the
    planned one over every sample [mm] (``report.trajectory_stats.deviations``)."""
    from cosim_validation.runs.report.run_data import load_run
    from cosim_validation.runs.report.trajectory_stats import deviations

    run = load_run(run_dir)
    try:
        return {d.robot: d.tip_mm["mean"] for d in deviations(run, test_ids, robots)}
    finally:
        run.close()


class _Stop(NamedTuple):
    """One exception of a supervised case, read from a session's bag.

    Attributes:
        state: The motion state it interrupted (leaf name).
        events: The events of the step whose measurement carried it.
        stop_ns: That step's stamp (the stamp of the setpoint it decided) [ns].
        resume_ns: The stamp of the first step out of TaskStopped (the recovery) [ns].
    """

    state: str
    events: tuple[str, ...]
    stop_ns: int
    resume_ns: int


def _bag_stops(bag: Path) -> tuple[dict[str, list[_Stop]], dict[str, list[tuple[int, tuple[float, ...]]]], int]:
    """Each case's stops (from /cosim/supervisor/state), the commands to each robot (topic -> (stamp [ns],
    joints)) and the control period [ns]."""
    from cosim_validation.live.ros.bag import read_messages
    from cosim_validation.live.ros.convert import joint_state_from_msg, time_from_msg

    steps: dict[str, list[tuple[int, str, tuple[str, ...]]]] = {}  # test id -> (stamp, leaf, events) per step
    commands: dict[str, list[tuple[int, tuple[float, ...]]]] = {}
    topics = ["/cosim/supervisor/state", "/cosim/virtual/command", "/cosim/physical/command"]
    for message in read_messages(bag, topics):
        msg = message.message
        if message.topic == "/cosim/supervisor/state":
            leaf = msg.state.rsplit(".", 1)[-1]
            steps.setdefault(msg.test_id, []).append((time_from_msg(msg.header.stamp), leaf, tuple(msg.events)))
        else:
            sample = joint_state_from_msg(msg)
            commands.setdefault(message.topic, []).append((sample.t_ns, tuple(sample.position)))
    stops: dict[str, list[_Stop]] = {}
    for test_id, case_steps in steps.items():
        assert len(case_steps) > 20, test_id  # one per control period
        stops[test_id] = []
        for (_, before, _), (t_ns, leaf, events) in pairwise(case_steps):
            if leaf == "TaskStopped" and before != "TaskStopped":
                resume_ns = next(t for t, s, _ in case_steps if t > t_ns and s != "TaskStopped")
                stops[test_id].append(_Stop(before, events, t_ns, resume_ns))
    period_ns = min(b[0] - a[0] for s in steps.values() for a, b in pairwise(s))
    return stops, commands, period_ns


def test_injected_learned_errors_are_the_same_live_and_in_batch(
    tmp_path: Path, suite_file: Path, node_env: dict[str, str], capsys: pytest.CaptureFixture[str], repo_root: Path
) -> None:
    """The errors filter on the virtual robot, with a model learned from the emulated physical arm
    (test/error_injection/data/er3_emulated.npz, made by scripts/make_error_model_fixture.py): live in the proxy
    node, in
    batch around the MuJoCo backend, the same verdicts and KPIs; and live, the virtual tip deviates from the plan
    like the physical one.

    Measure: Table 4's tip deviation (mean distance of the actual needle tip to the planned one over every sample
    of the session's two cases). Measured on the same two cases in batch: 1.325 mm injected, 1.452 mm physical
    (9 % apart), 0.045 mm without injection; over the suite's four: 1.58 against 1.59 mm, per case 2-15 % apart.
    Tolerance: the injected virtual robot within 25 %
    of the physical one (two cases pool fewer samples than the 15 % goal of RQ3's 120 cases assumes), and without
    injection the virtual robot below 10 % of it (the MuJoCo twin follows the plan to hundredths of a mm).
    """
    model = repo_root / "test" / "error_injection" / "data" / "er3_emulated.npz"
    live, batch = _both(tmp_path, suite_file, "2", "--no-validate", "--filter", f"virtual=errors:model={model}")
    plain = ["campaign", "--suite", str(suite_file), "--backends", "virtual", "--no-validate", "--workers", "1"]
    assert main([*plain, "--out", str(tmp_path / "plain")]) == 0
    capsys.readouterr()
    (live_cases, live_verdicts, live_kpis), (batch_cases, batch_verdicts, batch_kpis) = live, batch
    assert len(live_cases) == 2
    for test_id in live_cases:
        assert live_cases[test_id] == batch_cases[test_id]
    assert live_verdicts.keys() <= batch_verdicts.keys()
    for key, verdict in live_verdicts.items():
        assert verdict.status == batch_verdicts[key].status, key
        assert _close(verdict.margin, batch_verdicts[key].margin), key
    for key, kpi in live_kpis.items():
        assert _close(kpi.value, batch_kpis[key].value), key

    cases = sorted(live_cases)
    injected = _tip_mean_mm(tmp_path / "session", cases, ("virtual", "physical"))
    without = _tip_mean_mm(tmp_path / "plain", cases, ("virtual",))["virtual"]
    physical = injected["physical"]
    assert physical > 0.5, injected  # the emulated arm misses the plan by about 1.5 mm
    assert abs(injected["virtual"] - physical) <= 0.25 * physical, (injected, without)
    assert without < 0.1 * physical, (injected, without)


def _collection_configs(folder: Path) -> tuple[str, str]:
    """A session graph of the physical robot alone whose controller runs ``error_collection`` cases (2 goals 5 % of
    each joint range from home, 3 readings per settled step, 1 s of each continuous motion), and its case study."""
    import yaml

    from cosim_validation.common.config import package_root

    root = package_root() / "config"
    case = yaml.safe_load((root / "needle_insertion.yaml").read_text())
    case["campaign"]["properties"] = str(root / case["campaign"]["properties"])
    case["controllers"]["default"] = "error_collection"
    case["controllers"]["collection"] = {"goals": 2, "repeats": 3, "test_s": 1.0, "motion_s": 1.0, "reach": 0.05}
    (folder / "case.yaml").write_text(yaml.safe_dump(case, sort_keys=False))
    graph = yaml.safe_load((root / "digital_twin.yaml").read_text())
    graph["nodes"] = [n for n in graph["nodes"] if n["name"] not in ("virtual_driver", "markers")]
    for node in graph["nodes"]:
        parameters = node.get("parameters", {})
        if parameters.get("config") == "config/needle_insertion.yaml":
            parameters["config"] = str(folder / "case.yaml")
        if "robots" in parameters:
            parameters["robots"] = ["physical"]
    (folder / "graph.yaml").write_text(yaml.safe_dump(graph, sort_keys=False))
    return str(folder / "graph.yaml"), str(folder / "case.yaml")


def test_the_collection_motion_live_gives_the_rows_of_a_batch_collection(
    tmp_path: Path, suite_file: Path, node_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 18's collection pattern live: an ``error_collection`` case (settled steps read 3 times, continuous
    motions) through the physical driver node over DDS; ``cosim errors collect --from-run`` gives the rows of
    ``cosim errors collect`` in batch with the case's seed, every value within one stored quantum (1e-8: both
    drive the emulated arm through the same stamped setpoints and noise streams, the session's record is stored
    through the record codec, the batch dataset is not)."""
    from cosim_validation.assembly import case_seed
    from cosim_validation.error_injection.dataset_io import read_parquet

    graph, case = _collection_configs(tmp_path)
    run = tmp_path / "session"
    argv = ["session", "--config", graph, "--suite", str(suite_file), "--cases", "1", "--no-validate"]
    assert main([*argv, "--out", str(run)]) == 0
    assert main(["errors", "collect", "--from-run", str(run), "-o", str(tmp_path / "live.parquet")]) == 0
    suite = Suite.read(suite_file)
    seed = case_seed(int(suite.metadata["seed"]), suite.test_ids[0])
    batch_argv = ["errors", "collect", "--config", case, "--seed", str(seed), "-o", str(tmp_path / "batch.parquet")]
    assert main(batch_argv) == 0
    capsys.readouterr()
    live, batch = (read_parquet(tmp_path / f"{mode}.parquet") for mode in ("live", "batch"))
    assert live.meta["case_seeds"] == [seed]
    assert live.robot == batch.robot
    assert live.n_rows == batch.n_rows > 50
    np.testing.assert_array_equal(live.set_name, batch.set_name)
    assert int((live.set_name == "test").sum()) == 10  # 1 s of held-out motion at 10 Hz
    np.testing.assert_array_equal(live.segment, batch.segment)
    assert list(np.unique(live.segment)) == [0, 1, 2]
    np.testing.assert_array_equal(live.marker_seen, batch.marker_seen)
    for name in ("time_s", "q_setpoint", "q_measured", "marker_pos_m", "marker_quat_wxyz", "marker_error_m"):
        mine, theirs = getattr(live, name), getattr(batch, name)
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=QUANTUM_M, err_msg=name)
    settled = live.segment == 0  # three readings of each settled step: the same setpoint, the arm at rest
    steps = live.q_setpoint[settled].reshape(-1, 3, live.robot.n_joints)
    assert (steps == steps[:, :1]).all()
    assert np.abs(np.diff(live.q_measured[settled].reshape(steps.shape), axis=1)).max() < 1e-4
