"""The standalone node's own kinematics and resolved-rate motion, checked against cosim_validation's model."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from cosim_controller_example.case_plan import UnreachableError, plan_case
from cosim_controller_example.insertion_case import INJECTION, ServoSettings
from cosim_controller_example.resolved_rate import RateLimits, pose_error, resolved_rate_step
from cosim_controller_example.urdf_chain import UrdfChain, UrdfChainError, parse_chain

from cosim_validation.robots.model.kinematics import Kinematics
from test.examples.conftest import EXAMPLE

HOME = np.array([0.0, -0.4, 0.0, 1.46, 0.0, 1.3, 0.0])  # config/needle_insertion.yaml robot.home_q
SOURCE, TARGET = np.array([0.45, 0.0, 0.30]), np.array([0.44, 0.02, 0.10])


@pytest.fixture(scope="module")
def urdf_text(repo_root: Path) -> str:
    return (repo_root / "urdf" / "xmate_er3_pro.urdf").read_text()


@pytest.fixture(scope="module")
def chain(urdf_text: str) -> UrdfChain:
    return parse_chain(urdf_text, 0.3)


def _limits() -> RateLimits:
    return RateLimits(0.1, 0.05, 0.5, 0.5 * np.array([2.175] * 4 + [2.61] * 3))


def test_fk_and_jacobian_equal_cosim_kinematics(chain: UrdfChain, repo_root: Path) -> None:
    reference = Kinematics.from_urdf(repo_root / "urdf" / "xmate_er3_pro.urdf", 0.3)
    assert chain.names == reference.joint_names
    np.testing.assert_array_equal(chain.lower, reference.q_lower)
    rng = np.random.default_rng(7)
    for q in rng.uniform(chain.lower, chain.upper, size=(200, 7)):
        p, R = chain.tip(q)
        pose = reference.tip_pose(q)
        assert np.abs(p - pose.pos_m).max() < 1e-9
        assert np.abs(R - pose.R).max() < 1e-9
        assert np.abs(chain.jacobian(q) - reference.tip_jacobian(q)).max() < 1e-9


def test_jacobian_is_the_derivative_of_the_tip(chain: UrdfChain) -> None:
    q, h = HOME + 0.1, 1e-6
    numeric = np.array([(chain.tip(q + h * e)[0] - chain.tip(q - h * e)[0]) / (2 * h) for e in np.eye(7)]).T
    assert np.abs(numeric - chain.jacobian(q)[:3]).max() < 1e-8


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("<robot", "is not XML"),
        ("<robot><link name='base_link'/></robot>", "no joint chain from 'base_link' to 'needle_mount'"),
    ],
)
def test_bad_robot_description_is_named(text: str, words: str) -> None:
    with pytest.raises(UrdfChainError, match=words):
        parse_chain(text, 0.3)


def test_resolved_rate_converges_within_limits(chain: UrdfChain) -> None:
    limits, axis = _limits(), (TARGET - SOURCE) / np.linalg.norm(TARGET - SOURCE)
    q, steps = HOME.copy(), []
    for _ in range(60):
        nxt = resolved_rate_step(chain, q, SOURCE, axis, limits, HOME)
        steps.append(np.abs(nxt - q))
        q = nxt
    error = pose_error(chain, q, SOURCE, axis)
    assert error.within(1e-6, 1e-5), error
    assert pose_error(chain, HOME, SOURCE, axis).position_m > 0.05  # it had somewhere to go
    assert (np.max(steps, axis=0) <= limits.joint_speed * limits.dt_s + 1e-12).all()
    assert (q >= chain.lower + limits.margin).all()
    assert (q <= chain.upper - limits.margin).all()


def test_a_far_target_is_refused(chain: UrdfChain) -> None:
    with pytest.raises(UnreachableError, match="target unreachable"):
        plan_case(chain, _limits(), ServoSettings(), SOURCE, np.array([1.5, 0.0, 0.1]), HOME)


def _perturbed(chain: UrdfChain) -> UrdfChain:
    """The 'physical' arm: every joint origin 0.5 mm further along z, the needle 0.3 mm longer."""
    joints = []
    for joint in chain.joints:
        T = joint.T_origin.copy()
        T[2, 3] += 5e-4
        joints.append(type(joint)(joint.name, joint.kind, T, joint.axis, joint.lower, joint.upper, joint.velocity))
    return UrdfChain(tuple(joints), chain.needle_length_m + 3e-4)


@pytest.mark.parametrize(("gain", "bound_mm"), [(0.3, 0.05), (0.0, None)])
def test_closed_loop_puts_the_real_tip_on_the_target(chain: UrdfChain, gain: float, bound_mm: float | None) -> None:
    """Tracked tip = the perturbed arm's tip at the last command: the loop closes the gap that open loop leaves."""
    real = _perturbed(chain)
    settings = ServoSettings(gain=gain)
    case, periods = plan_case(chain, _limits(), settings, SOURCE, TARGET, HOME)
    tracked, measured, stages = None, None, []
    for _ in range(periods + 5):
        step = case.step(tracked, measured)
        stages.append(step.stage)
        if step.done:
            break
        tracked, measured = real.tip(step.q)[0], step.q
    assert step.done
    assert not case.failure
    assert sorted(set(stages)) == [1, 2, 3, 4, 5]
    assert stages == sorted(stages)
    assert 150 <= len(stages) <= 300  # 15-30 s at 10 Hz, like the five-stage plan of the case study
    assert case.tip_at_end_of_injection is not None
    off_mm = 1e3 * float(np.linalg.norm(case.tip_at_end_of_injection - TARGET))
    if bound_mm is None:
        assert off_mm > 1.0  # the geometric error open loop leaves
    else:
        assert off_mm < bound_mm


def test_injection_never_pulls_back(chain: UrdfChain) -> None:
    real = _perturbed(chain)
    case, _ = plan_case(chain, _limits(), ServoSettings(), SOURCE, TARGET, HOME)
    axis, tracked, measured, depth = case.axis, None, None, []
    while True:
        step = case.step(tracked, measured)
        if step.done:
            break
        tracked, measured = real.tip(step.q)[0], step.q
        if step.stage == INJECTION:
            depth.append(float((tracked - SOURCE) @ axis))
    speeds = np.diff(depth) / 0.1
    assert len(depth) > 50
    assert speeds.min() > -1e-3


def test_the_node_imports_no_cosim_validation() -> None:
    """The node and every module of its own package it imports use only rclpy, numpy, the standard library and
    message packages."""
    package = EXAMPLE / "cosim_controller_example"
    allowed = {"rclpy", "numpy", "cosim_validation_interfaces", "builtin_interfaces", "cosim_controller_example"}
    seen, todo, roots = set(), ["tip_servo_node"], set()
    while todo:
        name = todo.pop()
        seen.add(name)
        for node in ast.walk(ast.parse((package / f"{name}.py").read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for module in names:
                roots.add(module.split(".")[0])
                mine = module.split(".")[1:2] if module.startswith("cosim_controller_example.") else []
                todo += [m for m in mine if m not in seen]
    assert seen >= {"tip_servo_node", "insertion_case", "resolved_rate", "urdf_chain", "case_plan"}
    stdlib = {r for r in roots if r in __import__("sys").stdlib_module_names}
    foreign = roots - allowed - stdlib - {r for r in roots if r.endswith("_msgs")}
    assert not foreign, foreign
    assert "cosim_validation" not in roots


@pytest.mark.parametrize("late_every", [2, 5])
def test_a_command_the_arm_runs_a_period_late_teaches_the_correction_nothing_wrong(
    chain: UrdfChain, late_every: int
) -> None:
    """A loaded machine: every second (fifth) command reaches the arm a period late, so it still holds the one before
    when its tip is measured. The tip is compared with the command the measured joints show the arm executing, and
    the loop still puts the real tip on the target; compared with the newest command, it read a period of motion as
    an error of the model and integrated it (millimetres at the target)."""
    real = _perturbed(chain)
    case, periods = plan_case(chain, _limits(), ServoSettings(gain=0.3), SOURCE, TARGET, HOME)
    tracked, executed = None, None
    for n in range(periods + 5):
        step = case.step(tracked, executed)
        if step.done:
            break
        late = n % late_every == 0 and executed is not None
        executed = executed if late else step.q
        tracked = real.tip(executed)[0]
    assert step.done
    assert not case.failure
    assert case.tip_at_end_of_injection is not None
    assert 1e3 * float(np.linalg.norm(case.tip_at_end_of_injection - TARGET)) < 0.1


def test_a_tip_is_paired_with_the_joint_state_stamped_nearest_it_within_half_a_period() -> None:
    """A tracker of its own stamps apart from the arm (nearest, not equal); too far apart or a joint missing: none."""
    from cosim_controller_example.tip_servo_node import joints_nearest

    names = ("a", "b")
    history = {1_000: {"a": 0.1, "b": 0.2}, 101_000: {"a": 0.3, "b": 0.4}, 201_000: {"a": 0.5}}
    np.testing.assert_array_equal(joints_nearest(history, 95_000, 50_000, names), [0.3, 0.4])
    np.testing.assert_array_equal(joints_nearest(history, 40_000, 50_000, names), [0.1, 0.2])
    assert joints_nearest(history, 60_000_000, 50_000, names) is None  # nothing that near
    assert joints_nearest(history, 200_000, 50_000, names) is None  # the nearest lacks joint b
    assert joints_nearest({}, 0, 50_000, names) is None


def test_the_tip_of_the_injections_last_command_counts_when_it_comes_after_the_stage_ended(chain: UrdfChain) -> None:
    """A loaded machine: every tracked tip comes a period late, so the tip of the injection's last command arrives
    when the case already commands the extraction. It is still the tip at the end of the injection (matched to its
    command by the joints measured with it), and the extraction's tips that follow do not replace it; taken from the
    injection's last period instead, it would be the tip of the command before."""
    real = _perturbed(chain)
    case, periods = plan_case(chain, _limits(), ServoSettings(gain=0.3), SOURCE, TARGET, HOME)
    commands: list[np.ndarray] = []
    stages: list[int] = []
    for _ in range(periods + 5):
        late = commands[-2] if len(commands) >= 2 else None  # the command before the newest
        step = case.step(None if late is None else real.tip(late)[0], late)
        if step.done:
            break
        commands.append(step.q)
        stages.append(step.stage)
    assert step.done
    assert not case.failure
    last = max(i for i, stage in enumerate(stages) if stage == INJECTION)
    assert stages[last + 1] != INJECTION
    assert not np.array_equal(commands[last], commands[last - 1])  # the correction still moved the arm
    assert case.tip_at_end_of_injection is not None
    np.testing.assert_array_equal(case.tip_at_end_of_injection, real.tip(commands[last])[0])
    assert 1e3 * float(np.linalg.norm(case.tip_at_end_of_injection - TARGET)) < 0.1
