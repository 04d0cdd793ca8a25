"""The markers node publishes the configured anatomy and colours finished targets by verdict."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cosim_validation.anatomy import load_anatomy
from cosim_validation.common.config import load_config
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.mesh_markers import mesh_resource_from_marker
from cosim_validation.live.ros.qos import LATCHED, RESULT, to_rclpy
from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec
from cosim_validation.robots.visuals import resolve_package_uri
from cosim_validation.robots.visuals.stl_binary import read_stl
from test.live.ros.ros_harness import spin_until

pytestmark = pytest.mark.ros


def test_anatomy_and_target_markers(
    tmp_path: Path, repo_root: Path, rclpy_context: Any, node_env: dict[str, str]
) -> None:
    from geometry_msgs.msg import Point
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from visualization_msgs.msg import MarkerArray

    from cosim_validation_interfaces.msg import CaseReport, CaseStatus, Verdict

    config = repo_root / "config" / "needle_insertion.yaml"
    scene = load_anatomy(load_config(config)["anatomy"])
    group = ProcessGroup(tmp_path, env=node_env)
    node = Node("probe", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    got: dict[str, list[Any]] = {"anatomy": [], "anatomy_mesh": [], "targets": []}
    node.create_subscription(MarkerArray, "/cosim/markers/anatomy", got["anatomy"].append, to_rclpy(LATCHED))
    node.create_subscription(MarkerArray, "/cosim/markers/anatomy_mesh", got["anatomy_mesh"].append, to_rclpy(LATCHED))
    node.create_subscription(MarkerArray, "/cosim/markers/targets", got["targets"].append, to_rclpy(LATCHED))
    status = node.create_publisher(CaseStatus, "/cosim/case_status", to_rclpy(LATCHED))
    reports = node.create_publisher(CaseReport, "/cosim/case_reports", to_rclpy(RESULT))
    try:
        group.start(ProcessSpec("markers", "markers", ("-p", f"config:={config}")))
        group.wait_ready(["markers"], timeout_s=90)
        both = spin_until(node, executor, lambda: bool(got["anatomy"]) and bool(got["anatomy_mesh"]), timeout_s=20)
        assert both, group.log_tail("markers")
        assert spin_until(node, executor, lambda: reports.get_subscription_count() > 0, timeout_s=20)
        start = CaseStatus(event=CaseStatus.STARTED)
        start.test_case.test_id = "c1"
        start.test_case.target = Point(x=0.45, y=0.02, z=0.11)
        status.publish(start)
        spin_until(node, executor, lambda: False, timeout_s=0.3)
        reports.publish(
            CaseReport(test_id="c1", verdicts=[Verdict(verdict=Verdict.HOLDS), Verdict(verdict=Verdict.VIOLATED)])
        )
        assert spin_until(node, executor, lambda: bool(got["targets"]), timeout_s=20)
    finally:
        group.stop()
        executor.shutdown()
        node.destroy_node()
    markers = got["anatomy"][-1].markers
    assert [m.ns for m in markers] == [m.name for m in scene]
    for marker, model in zip(markers, scene, strict=True):
        np.testing.assert_allclose(convert.mesh_from_marker(marker), model.vertices_m[model.faces], atol=1e-12)
    # the same models from the package's STL files (made by make setup), placed where the session has them
    meshes = got["anatomy_mesh"][-1].markers
    assert [m.ns for m in meshes] == [m.name for m in scene]
    for marker, model in zip(meshes, scene, strict=True):
        assert marker.type == marker.MESH_RESOURCE
        uri, T_base_mesh = mesh_resource_from_marker(marker)
        assert uri == f"package://cosim_validation/meshes/anatomy/{model.source.split(':')[1]}.stl"
        corners = read_stl(resolve_package_uri(uri)) @ T_base_mesh[:3, :3].T + T_base_mesh[:3, 3]
        np.testing.assert_allclose(corners, model.vertices_m[model.faces], atol=1e-6)
    (target,) = got["targets"][-1].markers
    position, verdict = convert.target_from_marker(target)
    np.testing.assert_allclose(position, [0.45, 0.02, 0.11])
    assert verdict == Verdict.VIOLATED


def test_triangles_only_and_a_bad_style(
    tmp_path: Path, repo_root: Path, rclpy_context: Any, node_env: dict[str, str]
) -> None:
    """anatomy_markers chooses the topics; an unknown value is one error line and exit code 1."""
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from visualization_msgs.msg import MarkerArray

    config = repo_root / "config" / "needle_insertion.yaml"
    group = ProcessGroup(tmp_path, env=node_env)
    node = Node("probe", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    got: dict[str, list[Any]] = {"anatomy": [], "anatomy_mesh": []}
    for topic in got:
        node.create_subscription(MarkerArray, f"/cosim/markers/{topic}", got[topic].append, to_rclpy(LATCHED))
    try:
        args = ("-p", f"config:={config}", "-p", "anatomy_markers:=triangles")
        group.start(ProcessSpec("markers", "markers", args))
        group.start(ProcessSpec("bad", "markers", ("-r", "__node:=bad", "-p", "anatomy_markers:=meshes")))
        group.wait_ready(["markers"], timeout_s=90)
        assert spin_until(node, executor, lambda: bool(got["anatomy"]), timeout_s=20), group.log_tail("markers")
        spin_until(node, executor, lambda: False, timeout_s=1.0)  # a mesh topic would have arrived by now too
        assert group.processes["bad"].wait(timeout=60) == 1
    finally:
        group.stop()
        executor.shutdown()
        node.destroy_node()
    assert got["anatomy_mesh"] == []
    expected = "error: parameter 'anatomy_markers' of node 'bad' (markers): expected one of: both, mesh, triangles; "
    assert f"{expected}got 'meshes'" in group.log_tail("bad")


def test_the_pose_of_a_mesh_marker_is_its_rotation_also_at_half_turns() -> None:
    """The markers node's matrix-to-quaternion (numpy alone) against scipy's Rotation: random rotations, the
    identity and half turns about axes with components of either sign (where a sign read from off-diagonal
    differences, all zero there, goes wrong)."""
    from scipy.spatial.transform import Rotation

    from cosim_validation.live.ros.mesh_markers import rotation_quaternion

    axes = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, -1, 0], [0, 1, -1], [-1, 2, 3]], dtype=float)
    half_turns = Rotation.from_rotvec(np.pi * axes / np.linalg.norm(axes, axis=1, keepdims=True))
    rotations = [*Rotation.random(500, random_state=3), *half_turns, Rotation.identity()]
    for rotation in rotations:
        w, x, y, z = rotation_quaternion(rotation.as_matrix())
        assert w >= 0.0
        np.testing.assert_allclose(Rotation.from_quat([x, y, z, w]).as_matrix(), rotation.as_matrix(), atol=1e-12)


def test_the_triangle_markers_are_built_once_and_read_back_from_the_cache(
    tmp_path: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The serialized triangle lists the markers node publishes: built and stored at the first start, read back
    byte for byte at the next without building a marker; another mesh or colour is another entry."""
    from rclpy.serialization import deserialize_message
    from visualization_msgs.msg import Marker, MarkerArray

    from cosim_validation.live.nodes import markers as markers_node

    monkeypatch.setenv("COSIM_CACHE_DIR", str(tmp_path))
    scene = load_anatomy(load_config(repo_root / "config" / "needle_insertion.yaml")["anatomy"])
    built = markers_node.triangle_markers_cdr(scene)
    assert len(list(tmp_path.glob("anatomy_markers_*.npz"))) == 1
    decoded = deserialize_message(built, MarkerArray).markers
    assert [(m.ns, m.id, m.type) for m in decoded] == [(m.name, i, Marker.TRIANGLE_LIST) for i, m in enumerate(scene)]
    for marker, model in zip(decoded, scene, strict=True):
        np.testing.assert_array_equal(convert.mesh_from_marker(marker), model.vertices_m[model.faces])
        assert (marker.color.r, marker.color.g, marker.color.b, marker.color.a) == pytest.approx(
            convert.ROLE_COLORS_RGBA[model.role]
        )

    def no_build(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("built again although the cache holds the same meshes")

    monkeypatch.setattr(convert, "mesh_to_marker", no_build)
    assert markers_node.triangle_markers_cdr(scene) == built
    monkeypatch.undo()
    monkeypatch.setenv("COSIM_CACHE_DIR", str(tmp_path))
    first = dataclasses.replace(scene.models[0], vertices_m=scene.models[0].vertices_m + 1e-3)  # a moved model
    moved = deserialize_message(markers_node.triangle_markers_cdr([first, *scene.models[1:]]), MarkerArray).markers
    np.testing.assert_array_equal(convert.mesh_from_marker(moved[0]), first.vertices_m[first.faces])
    assert len(list(tmp_path.glob("anatomy_markers_*.npz"))) == 2
