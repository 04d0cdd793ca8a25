"""The monitor on real runs: MuJoCo, PyBullet and the emulated arm executing the same joint plan.

The plan is a smooth joint-space motion labelled with the five stages (the five-stage needle planner
is not on main yet); the scene is the shipped configuration's (the built-in heart as the obstacle).
Online equals offline on every record, and the behaviour machines run on every engine.
"""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.anatomy import load_anatomy
from cosim_validation.common.config import load_config, resolve_resource
from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord
from cosim_validation.monitor.properties import PropertySet, Status, record_samples
from cosim_validation.monitor.properties.offline.evaluation import evaluate_run
from cosim_validation.monitor.properties.online.monitor import OnlineMonitor
from cosim_validation.monitor.properties.scene_context import record_context, scene_obstacles
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.registry import make_backend
from cosim_validation.robots.virtual import execute_trajectory
from test.monitor.properties.lt4r_reference import run_machine, shipped
from test.monitor.properties.traces import machine_verdicts

ENGINES = ("mujoco", "pybullet", "emulated")


def joint_plan(home: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t, stage, q) at 1 kHz: cosine blends between five joint waypoints, one stage per segment."""
    offsets = np.array(
        [
            [0.0] * 7,
            [0.25, 0.15, 0.0, -0.2, 0.0, 0.1, 0.0],
            [0.3, 0.25, 0.0, -0.3, 0.0, 0.2, 0.0],
            [0.3, 0.3, 0.0, -0.35, 0.0, 0.25, 0.0],
            [0.3, 0.25, 0.0, -0.3, 0.0, 0.2, 0.0],
            [0.0] * 7,
        ]
    )
    waypoints = home + offsets
    t = np.arange(0.0, 1.5, 0.001)
    segment = np.minimum((t / 0.3).astype(int), 4)
    s = 0.5 - 0.5 * np.cos(np.pi * (t - 0.3 * segment) / 0.3)
    q = waypoints[segment] + s[:, None] * (waypoints[segment + 1] - waypoints[segment])
    return t, (segment + 1).astype(np.uint8), q


def make_runs() -> dict[str, TrajectoryRecord]:
    """The joint plan as the expected record, and its run on every engine (seed 1 for the emulated arm)."""
    config = load_config(resolve_resource("config/needle_insertion.yaml"))
    robot = RobotConfig.from_config(config["robot"])
    kinematics = robot.kinematics
    t, stage, q = joint_plan(np.asarray(robot.home_q))
    arrays = kinematics.record_arrays(q)
    nan3, nan4 = np.full((t.size, 3), np.nan), np.full((t.size, 4), np.nan)
    names, needle = kinematics.joint_names, kinematics.needle_length_m
    plan = TrajectoryRecord(
        "joint_plan", RobotRole.EXPECTED, "plan", names, needle, t, stage, q, q, *arrays, nan3, nan4
    )
    out = {"expected": plan}
    for name in ENGINES:
        backend = make_backend(name, config, kinematics, seed=1)
        out[name] = execute_trajectory(backend, kinematics, t, stage, q, test_id="joint_plan")
        backend.close()
    return out


@pytest.fixture(scope="module")
def runs() -> dict[str, TrajectoryRecord]:
    return make_runs()


@pytest.fixture(scope="module")
def obstacles() -> dict[str, object]:
    scene = load_anatomy(load_config(resolve_resource("config/needle_insertion.yaml"))["anatomy"])
    return scene_obstacles(scene)  # type: ignore[return-value]


@pytest.mark.parametrize("name", ["expected", *ENGINES])
def test_online_equals_offline_on_real_runs(
    name: str, runs: dict[str, TrajectoryRecord], obstacles: dict[str, object]
) -> None:
    props = PropertySet.load(resolve_resource("config/properties.yaml"))
    record, plan = runs[name], runs["expected"]
    context = record_context(record, obstacles)  # type: ignore[arg-type]
    offline = evaluate_run(props, record, context, None if name == "expected" else plan)
    monitor = OnlineMonitor(props, context, record.robot)
    for sample in record_samples(plan) if name != "expected" else []:
        monitor.push(sample)
    for sample in record_samples(record):
        monitor.push(sample)
    online = monitor.finish()
    machines = machine_verdicts(props.machines, record, context.target_m)
    assert len(online) == len(offline.verdicts) >= 6 + len(machines)  # offline runs the machines too, last
    assert offline.verdicts[-len(machines) :] == tuple(machines)
    for off, on in zip(offline.verdicts, online, strict=True):
        assert off.same_outcome(on), (off, on)  # type: ignore[attr-defined]
    assert [k.to_dict() for k in offline.kpis] == [k.to_dict() for k in monitor.kpis()]
    statuses = {v.property: v.status for v in offline.verdicts}
    assert statuses["joints_clear_of_obstacles"] is Status.HOLDS  # the arm stays far from the heart
    assert statuses["needle_orientation_constant_during_injection"] is Status.VIOLATED  # joint moves rotate it


@pytest.mark.parametrize("name", ENGINES)
def test_machines_on_every_engine(name: str, runs: dict[str, TrajectoryRecord]) -> None:
    record, plan = runs[name], runs["expected"]
    target = plan.tip_pos_m[plan.stage_indices(Stage.INJECTION)[-1]]  # where the plan's injection ends
    assert run_machine(shipped("stage_order"), record, target).status is Status.HOLDS
    settle = run_machine(shipped("settles_at_target"), record, target)
    assert settle.status is Status.HOLDS, settle  # every engine ends injection within 3 mm of the plan's end
    assert run_machine(shipped("no_retraction_during_injection"), plan, target).status is Status.HOLDS
