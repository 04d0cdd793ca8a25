"""The emulated move_group honours the collision objects it is sent: an injection through the heart stops before
the heart only while the heart is in the planning scene, and only where the needle may not touch it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.anatomy import AnatomyScene
from cosim_validation.common.config import load_config
from cosim_validation.controllers import InsertionSetup
from cosim_validation.controllers.planning import InsertionLine
from cosim_validation.live.moveit.moveit_messages import acm_scene_msg, anatomy_scene_msg, pose_msg
from cosim_validation.live.moveit.standin_planner import StandInScene
from test.runs.campaign.run_fixtures import CONFIG


@pytest.fixture(scope="module")
def setup() -> InsertionSetup:
    return InsertionSetup.from_config(load_config(CONFIG))


def _crossing_case(setup: InsertionSetup) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start joints at the skin entry, needle orientation, target) of a line from the source through the heart."""
    source = setup.planning.default_source_m
    heart = setup.scene.model("heart").vertices_m.mean(axis=0)
    axis = (heart - source) / np.linalg.norm(heart - source)
    target = heart + 0.03 * axis  # 30 mm past the heart's centre, still on the line
    entry = setup.world.skin_entries(source[None, :], target)[0]
    distance, _ = setup.world.forbidden_distance(entry[None, :], target[None, :])
    assert distance[0] == 0.0  # the segment from the entry to the target crosses the heart
    q = setup.planner.source_pose(entry - 0.01 * axis, InsertionLine(target, axis, entry))
    return q, setup.robot.kinematics.tip_pose(q).R, target


def _scene(setup: InsertionSetup, names: tuple[str, ...], needle_may_touch_all: bool = False) -> StandInScene:
    chosen = AnatomyScene(tuple(m for m in setup.scene.models if m.name in names), setup.scene.T_base_patient)
    scene = StandInScene(setup.robot, setup.planning, "needle_tip")
    assert scene.apply(anatomy_scene_msg(chosen, "base_link", "needle_tip", needle_in_body=True)) == ""
    if needle_may_touch_all:  # the needle may touch every object, the heart too
        msg = acm_scene_msg(chosen, "needle_tip", needle_in_body=True)
        row = msg.allowed_collision_matrix.entry_values[0]
        row.enabled = [False] + [True] * (len(row.enabled) - 1)
        assert scene.apply(msg) == ""
    return scene


def test_the_heart_object_stops_the_injection(setup: InsertionSetup) -> None:
    q, R, target = _crossing_case(setup)
    everything = tuple(setup.scene.names)
    with_heart = _scene(setup, everything)
    path, fraction = with_heart.cartesian_path(q, [pose_msg(target, R)], 0.002)
    assert 0.0 < fraction < 1.0
    assert with_heart.stop == "in collision"
    tips = setup.robot.kinematics.tip_poses(path)[0]
    mount, tip = setup.robot.kinematics.needle_segments(path)
    assert setup.world.forbidden_distance(mount, tip)[0].min() > 0.0  # the path stops before the heart
    assert np.linalg.norm(tips[-1] - target) > 0.0
    without_heart = _scene(setup, tuple(n for n in everything if n != "heart"))
    path, fraction = without_heart.cartesian_path(q, [pose_msg(target, R)], 0.002)
    assert fraction == 1.0
    np.testing.assert_allclose(setup.robot.kinematics.tip_pose(path[-1]).pos_m, target, atol=1e-5)
    allowed = _scene(setup, everything, needle_may_touch_all=True)
    assert allowed.cartesian_path(q, [pose_msg(target, R)], 0.002)[1] == 1.0


def test_a_scene_without_a_skin_or_with_an_unknown_role_is_refused(setup: InsertionSetup) -> None:
    scene = StandInScene(setup.robot, setup.planning, "needle_tip")
    heart_only = AnatomyScene((setup.scene.model("heart"),), setup.scene.T_base_patient)
    assert "no model with role 'skin'" in scene.apply(anatomy_scene_msg(heart_only, "base_link", "needle_tip", False))
    msg = anatomy_scene_msg(setup.scene, "base_link", "needle_tip", False)
    msg.world.collision_objects[0].type.key = "organ"
    assert "role must be one of" in scene.apply(msg)
    assert scene.planner is None  # nothing applied


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ([], "parameter 'config' of node 'move_group': required (case-study file: its robot and planning sections"),
        # a fraction outside (0, 1] was taken: a negative one cut every path to nothing
        (["-p", f"config:={CONFIG}", "-p", "cartesian_fraction:=1.5"], "parameter 'cartesian_fraction' of node"),
        (["-p", "config:=nope.yaml"], "nope.yaml: file not found"),
        (["-p", f"config:={CONFIG}", "-p", "plan_error:=OOPS"], "no MoveItErrorCodes constant 'OOPS'"),
    ],
)
def test_the_stand_in_refuses_bad_parameters_with_one_line(
    parameters: list[str], message: str, node_env: dict[str, str], tmp_path: Path
) -> None:
    command = [sys.executable, "-m", "cosim_validation.live.moveit.standin_node", "--ros-args", *parameters]
    done = subprocess.run(command, env=node_env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: move_group stand-in: {message}"), line
