"""Seed 004's behaviour tests as YAML on the statechart core: the three shipped Python machines
(properties.machines) and their YAML forms (config/behaviours) give identical results on real records (the
five-stage planner's cases executed on MuJoCo and the emulated ER3 Pro) and on edited records that fail."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.config import load_config
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord
from cosim_validation.controllers import InsertionSetup
from cosim_validation.monitor.statechart.behaviour import (
    BehaviourResult,
    BehaviourRunner,
    load_behaviour,
    run_behaviour,
    run_behaviours,
)
from cosim_validation.monitor.statechart.model import Machine
from cosim_validation.monitor.statechart.snapshot import Snapshots, record_rows, z_axis
from cosim_validation.robots.registry import make_backend
from cosim_validation.robots.virtual import execute_trajectory
from test.monitor.properties.lt4r_reference import SHIPPED, MachineResult, run_machine, shipped
from test.monitor.properties.lt4r_reference.machine import Machine as PyMachine
from test.monitor.statechart.machines import write

NAMES = ("stage_order", "no_retraction_during_injection", "settles_at_target")
TARGETS = ([0.45, -0.05, 0.05], [0.44, 0.02, 0.03], [0.459, 0.0746, -0.0076], [0.47, -0.02, 0.0])


@pytest.fixture(scope="module")
def records(insertion_setup: InsertionSetup) -> list[tuple[TrajectoryRecord, np.ndarray]]:
    """Each target's plan as the expected record and as run on MuJoCo and on the emulated arm (seed 3)."""
    config = load_config("config/needle_insertion.yaml")
    kinematics = insertion_setup.robot.kinematics
    out = []
    for target in TARGETS:
        plan = insertion_setup.controller("straight").plan_case(
            insertion_setup.planning.default_source_m, np.array(target)
        )
        out.append((plan.to_record(kinematics, "case"), plan.line.target_m))
        for name in ("mujoco", "emulated"):
            backend = make_backend(name, config, kinematics, seed=3)
            out.append((execute_trajectory(backend, kinematics, plan.t_s, plan.stage, plan.q), plan.line.target_m))
            backend.close()
    return out


def failing_variants(record: TrajectoryRecord, target: np.ndarray) -> list[tuple[TrajectoryRecord, np.ndarray | None]]:
    """Edited copies that make each machine fail in its own way."""
    stage = record.stage.copy()
    injection = np.flatnonzero(stage == Stage.INJECTION)
    skipped = stage.copy()
    skipped[stage == Stage.APPROACH] = Stage.INITIALIZATION  # the approach is skipped
    truncated = {f: getattr(record, f)[: injection[len(injection) // 2]] for f in _ARRAYS}  # ends mid-injection
    jitter = record.tip_pos_m.copy()
    axis = np.array([z_axis(q) for q in record.tip_quat_wxyz[injection[::2]]])
    jitter[injection[::2]] -= 0.002 * axis  # 2 mm back along the needle every other sample
    return [
        (_with(record, stage=skipped), target),
        (_with(record, **truncated), target),
        (_with(record, tip_pos_m=jitter), target),
        (record, target + np.array([0.0, 0.0, 0.01])),  # 1 cm off: never settles within 3 mm
        (record, None),  # no target
    ]


_ARRAYS = (
    "t_s",
    "stage",
    "q_setpoint",
    "q_measured",
    "joint_pos_m",
    "joint_axis",
    "tip_pos_m",
    "tip_quat_wxyz",
    "actual_tip_pos_m",
    "actual_tip_quat_wxyz",
)


def _with(record: TrajectoryRecord, **arrays: np.ndarray) -> TrajectoryRecord:
    fields = {f: getattr(record, f) for f in _ARRAYS} | arrays
    return TrajectoryRecord(
        record.test_id, record.robot, record.backend, record.joint_names, record.needle_length_m, **fields
    )


def same(python: MachineResult, yaml: BehaviourResult) -> None:
    """Field by field: status, final state, time, stage, reason and every transition."""
    assert yaml.status == python.status.name.lower()
    assert yaml.final_state == python.final_state
    assert (math.isnan(yaml.time_s) and math.isnan(python.time_s)) or yaml.time_s == python.time_s
    assert yaml.stage == python.stage
    assert yaml.reason == python.reason
    assert yaml.transitions == python.transitions


@pytest.mark.parametrize("name", NAMES)
def test_yaml_machines_have_the_python_machines_structure(name: str) -> None:
    python, yaml = shipped(name), load_behaviour(name)

    def names(m: PyMachine, prefix: str = "") -> set[str]:
        out = set()
        for state in m.states.values():
            out.add(prefix + state.name)
            if state.machine is not None:
                out |= names(state.machine, f"{prefix}{state.name}.")
        return out

    assert names(python) == set(yaml.states) - {""}
    assert yaml.default_leaf("").split(".")[0] == python.start


VARIANTS = [(name, {}) for name in NAMES] + [
    ("stage_order", {"max_stage_s": 8.0}),  # the timed transitions fire on the long stages
    ("settles_at_target", {"radius_m": 0.0002, "max_oscillations": 0, "tolerance_m": 0.0}),
]


@pytest.mark.parametrize(("name", "parameters"), VARIANTS)
def test_identical_results_on_real_and_failing_records(
    name: str, parameters: dict[str, float], records: list[tuple[TrajectoryRecord, np.ndarray]]
) -> None:
    python, yaml = SHIPPED[name](**parameters), load_behaviour(name, parameters)
    outcomes = set()
    cases = [(r, t) for r, t in records] + [v for r, t in records[:3] for v in failing_variants(r, t)]
    for record, target in cases:
        expected = run_machine(python, record, target)
        got = run_behaviour(yaml, record, target)
        same(expected, got)
        outcomes.add(got.status)
    assert {"holds", "violated"} <= outcomes  # both outcomes occur, so the comparison can tell them apart


def test_online_pushing_equals_offline(records: list[tuple[TrajectoryRecord, np.ndarray]]) -> None:
    record, target = records[1]
    machine = load_behaviour("settles_at_target")
    runner = BehaviourRunner(machine, record.robot, target)
    for row in record_rows(record):
        runner.push(row)
    assert runner.finish() == run_behaviour(machine, record, target)
    empty = BehaviourRunner(machine, record.robot, target).finish()
    assert empty.status == "unknown"
    assert empty.reason == "empty trace: no samples"


def test_machines_run_together_decide_as_each_alone(records: list[tuple[TrajectoryRecord, np.ndarray]]) -> None:
    machines = [load_behaviour(name, parameters) for name, parameters in VARIANTS]
    statuses = set()
    for record, target in [*records, *(v for r, t in records[:3] for v in failing_variants(r, t))]:
        together = run_behaviours(machines, record, target)  # one snapshot per sample for all of them
        assert together == tuple(run_behaviour(machine, record, target) for machine in machines)
        statuses |= {result.status for result in together}
    assert statuses == {"holds", "violated", "unknown"}  # red early, ended elsewhere, and a run without a target


def test_shared_snapshots_must_be_of_the_runners_target(records: list[tuple[TrajectoryRecord, np.ndarray]]) -> None:
    record, target = records[1]
    machine = load_behaviour("settles_at_target")
    with pytest.raises(InputError, match="shared snapshots are of another target"):
        BehaviourRunner(machine, record.robot, target, Snapshots(target + 0.001))
    with pytest.raises(InputError, match="shared snapshots are of another target"):
        BehaviourRunner(machine, record.robot, None, Snapshots(target))


def test_red_is_reported_when_the_next_sample_arrives(records: list[tuple[TrajectoryRecord, np.ndarray]]) -> None:
    record, target = records[0]
    jittered = failing_variants(record, target)[2][0]  # backs off along the needle during the injection
    machine = load_behaviour("no_retraction_during_injection")
    offline = run_behaviour(machine, jittered, target)
    assert offline.status == "violated"
    runner = BehaviourRunner(machine, jittered.robot, target)
    answers = [runner.push(row) for row in record_rows(jittered)]
    first = next(k for k, answer in enumerate(answers) if answer is not None)
    red_sample = int(np.flatnonzero(jittered.t_s == offline.time_s)[0])
    assert first == red_sample + 1  # a sample is judged once the next one says it was not the last
    assert answers[first] == offline
    assert all(answer is None for answer in answers[first + 1 :])  # reported once
    assert runner.finish() == offline


def test_loading_by_name_or_path_and_bad_machines(tmp_path: Path) -> None:
    by_path = load_behaviour("config/behaviours/stage_order.yaml", {"max_stage_s": 5.0})
    assert isinstance(by_path, Machine)
    assert by_path.parameters["max_stage_s"] == 5.0
    with pytest.raises(InputError, match="unknown behaviour machine 'stage_ordr'; shipped: no_retraction"):
        load_behaviour("stage_ordr")
    text = "machine: m\nsignals: {speed: ''}\ninitial: a\nstates: {a: {final: true}}\n"
    with pytest.raises(InputError, match="declares signal 'speed'; signals: t_s, stage"):
        BehaviourRunner(load_behaviour(write(tmp_path, text)), RobotRole.VIRTUAL)
