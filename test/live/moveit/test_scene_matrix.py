"""move_group replaces its whole allowed collision matrix by a scene diff's that names any entry (MoveIt's
PlanningScene::setPlanningSceneDiffMsg), so the ``moveit`` controller reads the matrix (``/get_planning_scene``)
and sends it back whole with the needle's entries: the robot's allowed pairs (its SRDF's) survive. The stand-in
move_group replaces its matrix the same way, so a controller that sent the needle's entries alone would leave it
without them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from moveit_msgs.msg import AllowedCollisionMatrix, PlanningScene, PlanningSceneComponents
from moveit_msgs.srv import ApplyPlanningScene, GetCartesianPath, GetMotionPlan, GetPlanningScene

from cosim_validation.common.config import load_config
from cosim_validation.controllers import InsertionSetup
from cosim_validation.controllers.moveit_spec import MoveItSettings
from cosim_validation.controllers.planning import PlanningError
from cosim_validation.live.moveit.collision_matrix import CollisionMatrix, robot_matrix
from cosim_validation.live.moveit.move_group_client import MoveGroupClient
from cosim_validation.live.moveit.moveit_messages import acm_scene_msg, anatomy_scene_msg, merged_matrix
from cosim_validation.live.moveit.standin_planner import StandInScene
from test.live.moveit.test_moveit_controller import write_config
from test.runs.campaign.run_fixtures import CONFIG

NEEDLE = "needle_tip"
#: pairs of adjacent links the stand-in's starting matrix allows, as the ER3 Pro's SRDF would
ROBOT_PAIRS = [("link6", "link7"), ("link7", "needle_holder"), ("needle_holder", NEEDLE)]


@pytest.fixture(scope="module")
def setup() -> InsertionSetup:
    return InsertionSetup.from_config(load_config(CONFIG))


def _matrix_of_stand_in(rclpy_context: Any) -> CollisionMatrix:
    """The stand-in's matrix, asked over /get_planning_scene by a client of the test's own."""
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    node = Node("acm_reader", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    try:
        client = node.create_client(GetPlanningScene, "get_planning_scene")
        assert client.wait_for_service(timeout_sec=60.0)
        request = GetPlanningScene.Request()
        request.components.components = PlanningSceneComponents.ALLOWED_COLLISION_MATRIX
        future = client.call_async(request)
        executor.spin_until_future_complete(future, timeout_sec=60.0)
        assert future.done()
        return CollisionMatrix.from_msg(future.result().scene.allowed_collision_matrix)
    finally:
        executor.shutdown()
        node.destroy_node()


def test_the_controller_keeps_the_robot_pairs_and_sets_the_needles(
    move_group: Path, rclpy_context: Any, setup: InsertionSetup, tmp_path: Path
) -> None:
    """After a case planned by move_group (the anatomy sent, then the needle's entries of the straight moves), the
    stand-in's matrix still allows the robot's adjacent pairs it started with, and holds the needle's entries:
    the skin and the targets allowed, the forbidden regions not."""
    controller: Any = InsertionSetup.from_config(load_config(write_config(tmp_path))).controller()
    try:
        controller.plan_case(setup.planning.default_source_m, np.array([0.44, 0.02, 0.03]))
    finally:
        controller.close()
    matrix = _matrix_of_stand_in(rclpy_context)
    started = robot_matrix(setup.robot.kinematics.chain, NEEDLE)
    dropped = [tuple(sorted(pair)) for pair in started.entries if not matrix.allowed(*pair)]
    assert not dropped, f"the scene diff dropped the robot's allowed pairs {dropped}"
    for model in setup.scene.models:
        assert matrix.allowed(NEEDLE, model.name) == (model.role in ("skin", "target")), model.name
    assert "WARN" not in move_group.read_text()


def test_the_stand_in_replaces_its_matrix_as_move_group_does(setup: InsertionSetup) -> None:
    scene = StandInScene(setup.robot, setup.planning, NEEDLE)
    assert all(scene.acm.allowed(a, b) for a, b in ROBOT_PAIRS)
    assert not scene.acm.allowed("link1", "link3")  # not adjacent
    assert scene.dropped_robot_pairs() == []
    merged = anatomy_scene_msg(setup.scene, "base_link", NEEDLE, True, scene.acm.to_msg())
    assert scene.apply(merged) == ""
    assert all(scene.acm.allowed(a, b) for a, b in ROBOT_PAIRS)
    assert scene.acm.allowed(NEEDLE, "torso")
    assert not scene.acm.allowed(NEEDLE, "heart")
    assert scene.apply(PlanningScene(is_diff=True)) == ""  # a diff without entry names keeps the matrix
    assert scene.acm.allowed(NEEDLE, "torso")
    assert scene.dropped_robot_pairs() == []
    assert scene.apply(acm_scene_msg(setup.scene, NEEDLE, False)) == ""  # the needle's entries alone replace it all
    assert not scene.acm.allowed(NEEDLE, "torso")
    assert ("needle_holder", NEEDLE) in scene.dropped_robot_pairs()
    assert len(scene.dropped_robot_pairs()) == len(scene.robot_acm.entries)
    merged = acm_scene_msg(setup.scene, NEEDLE, True, scene.robot_acm.to_msg())
    assert scene.apply(merged) == ""
    assert scene.dropped_robot_pairs() == []
    whole = anatomy_scene_msg(setup.scene, "base_link", NEEDLE, False)
    whole.is_diff, whole.allowed_collision_matrix = False, AllowedCollisionMatrix()
    assert scene.apply(whole) == ""  # a whole scene replaces the matrix even when it names no entry
    assert len(scene.dropped_robot_pairs()) == len(scene.robot_acm.entries)
    bad = acm_scene_msg(setup.scene, NEEDLE, True)
    bad.allowed_collision_matrix.entry_values.pop()
    assert "rows for" in scene.apply(bad)  # refused, the matrix kept
    assert len(scene.dropped_robot_pairs()) == len(scene.robot_acm.entries)


def test_the_merge_keeps_entries_and_defaults() -> None:
    start = CollisionMatrix({frozenset(("link1", "link2")): True, frozenset(("a", "b")): True}, {"x": True})
    current = start.to_msg()
    msg = merged_matrix(current, NEEDLE, ["skin", "heart"], {"skin"})
    assert list(msg.entry_names) == [*current.entry_names, NEEDLE, "skin", "heart"]
    assert list(msg.default_entry_names) == ["x"]
    assert list(msg.default_entry_values) == [True]
    rows = np.array([list(e.enabled) for e in msg.entry_values])
    assert (rows == rows.T).all()
    merged = CollisionMatrix.from_msg(msg)
    assert merged.allowed("link1", "link2")
    assert merged.allowed("a", "b")
    assert not merged.allowed("a", "link1")
    assert merged.allowed(NEEDLE, "skin")
    assert not merged.allowed(NEEDLE, "heart")
    assert merged.allowed("x", "skin")
    assert merged.allowed("x", NEEDLE)
    assert not merged.allowed("skin", "heart")
    again = CollisionMatrix.from_msg(merged_matrix(msg, NEEDLE, ["skin", "heart"], {"heart"}))
    assert again.allowed(NEEDLE, "heart")
    assert not again.allowed(NEEDLE, "skin")
    assert again.allowed("a", "b")
    bad = AllowedCollisionMatrix(entry_names=["a", "b"], entry_values=current.entry_values[:1])
    with pytest.raises(ValueError, match="1 rows for 2 names"):
        merged_matrix(bad, NEEDLE, ["skin"], set())


def test_a_move_group_without_get_planning_scene_is_one_error_naming_it(rclpy_context: Any) -> None:
    """A move_group that serves the other three services but not /get_planning_scene (its capability
    MoveGroupGetPlanningSceneService disabled): the controller's wait ends in one error naming that service."""
    from rclpy.node import Node

    node = Node("move_group", context=rclpy_context)
    for kind, name in (
        (GetMotionPlan, "plan_kinematic_path"),
        (GetCartesianPath, "compute_cartesian_path"),
        (ApplyPlanningScene, "apply_planning_scene"),
    ):
        node.create_service(kind, name, lambda request, response: response)
    client = MoveGroupClient(MoveItSettings(service_timeout_s=3.0))
    try:
        with pytest.raises(PlanningError) as error:
            client.wait()
    finally:
        client.close()
        node.destroy_node()
    assert error.value.reason == "move_group_unavailable"
    assert str(error.value).startswith("move_group is not there: service /get_planning_scene not available within 3 s")
