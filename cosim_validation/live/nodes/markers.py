"""markers: the anatomy and the tested targets, coloured by verdict, for RViz or Foxglove.

- ``/cosim/markers/anatomy_mesh`` (visualization_msgs/MarkerArray, latched): one MESH_RESOURCE marker per
  model naming its STL file of the package (``package://cosim_validation/meshes/anatomy/<name>.stl``, made
  by ``make setup``), placed in base_link after checking the file is the loaded model
  (:func:`cosim_validation.robots.visuals.anatomy_meshes.mesh_resource`); a model without such a file (a user's
  mesh, a missing export) is sent there as a triangle list instead;
- ``/cosim/markers/anatomy`` (MarkerArray, latched): one triangle list per model, for viewers that cannot
  resolve ``package://`` URIs (target lungs green, obstacles red, skin faint), in base_link; the serialized array
  is kept in the on-disk cache (:mod:`cosim_validation.common.disk_cache`), keyed by the meshes, their colours and
  the code that builds it: building it is about 0.8 CPU-s per node start (one Python object per corner);
  parameter ``anatomy_markers`` (both | mesh | triangles) chooses which of the two topics is published;
- ``/cosim/markers/targets`` (MarkerArray, latched): one sphere per finished case at its target, green
  if every verdict holds, red if one is violated, grey if undecided ([Actuators 2025], Figures 7 and 8).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import numpy as np
from rclpy.node import Node
from rclpy.serialization import serialize_message
from visualization_msgs.msg import MarkerArray

from cosim_validation.anatomy import load_anatomy
from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.common.disk_cache import load_arrays, source_digest, store_arrays
from cosim_validation.live.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.mesh_markers import mesh_resource_to_marker
from cosim_validation.live.ros.qos import LATCHED, RESULT, to_rclpy
from cosim_validation.live.session.node_parameters import MarkersParams
from cosim_validation.robots.visuals.anatomy_meshes import MeshMismatchError, mesh_resource
from cosim_validation_interfaces.msg import CaseReport, CaseStatus, Verdict


def worst_verdict(report: Any) -> int:
    """VIOLATED if any verdict is violated, else UNKNOWN if any is unknown, else HOLDS.

    Args:
        report: A CaseReport message; its verdicts are read.
    """
    codes = {int(v.verdict) for v in report.verdicts}
    for code in (Verdict.VIOLATED, Verdict.UNKNOWN):
        if code in codes:
            return int(code)
    return int(Verdict.HOLDS)


class Markers(Node):
    """Publishes the anatomy once and the targets as cases finish."""

    def __init__(self) -> None:
        super().__init__("markers")
        params = declare_parameters(self, MarkersParams)
        style = params.anatomy_markers  # both | mesh | triangles (checked by MarkersParams)
        scene = load_anatomy(load_case_config(resolve_resource(params.config))["anatomy"])
        if style in ("both", "mesh"):
            meshes = MarkerArray(markers=[self._mesh_marker(i, m) for i, m in enumerate(scene)])
            self.create_publisher(MarkerArray, "/cosim/markers/anatomy_mesh", to_rclpy(LATCHED)).publish(meshes)
        if style in ("both", "triangles"):
            triangles = triangle_markers_cdr(scene)
            self.create_publisher(MarkerArray, "/cosim/markers/anatomy", to_rclpy(LATCHED)).publish(triangles)
        self._targets_pub = self.create_publisher(MarkerArray, "/cosim/markers/targets", to_rclpy(LATCHED))
        self._targets = MarkerArray()
        self._cases: dict[str, Any] = {}
        self._diameter_m = params.target_diameter_m
        self.create_subscription(CaseStatus, "/cosim/case_status", self._on_status, to_rclpy(LATCHED))
        self.create_subscription(CaseReport, "/cosim/case_reports", self._on_report, to_rclpy(RESULT))

    def _mesh_marker(self, index: int, model: Any) -> Any:
        """The model from its package file, or as a triangle list when the package has no matching file."""
        try:
            resource = mesh_resource(model)
        except MeshMismatchError as exc:
            self.get_logger().warning(f"anatomy as a triangle list: {exc}")
            return _triangle_marker(index, model)
        color = convert.ROLE_COLORS_RGBA[model.role]
        return mesh_resource_to_marker(resource.uri, resource.T_frame_mesh, index, model.name, color)

    def _on_status(self, msg: CaseStatus) -> None:
        if msg.event == CaseStatus.STARTED:
            self._cases[msg.test_case.test_id] = msg.test_case.target

    def _on_report(self, msg: CaseReport) -> None:
        target = self._cases.pop(msg.test_id, None)
        if target is None:
            return
        position = convert.pose_from_msg(_point_pose(target))[0]
        marker = convert.target_to_marker(position, len(self._targets.markers), worst_verdict(msg), self._diameter_m)
        self._targets.markers.append(marker)
        self._targets_pub.publish(self._targets)


def triangle_markers_cdr(scene: Iterable[Any]) -> bytes:
    """The serialized MarkerArray of ``scene``'s models as triangle lists (marker ``i`` for model ``i``).

    Read from the on-disk cache when it holds the same meshes, colours and builder code; else built, serialized
    and stored.

    Args:
        scene: The anatomy models (name, role, vertices [m], faces).
    """
    models = list(scene)
    key = hashlib.sha256(
        source_digest(
            ["cosim_validation.live.nodes.markers", convert.__name__, "visualization_msgs.msg._marker"]
        ).encode()
    )
    for model in models:
        key.update(f"{model.name}|{convert.ROLE_COLORS_RGBA[model.role]}".encode())
        for array in (np.ascontiguousarray(model.vertices_m, dtype=np.float64), np.ascontiguousarray(model.faces)):
            key.update(f"{array.dtype}{array.shape}".encode())
            key.update(array.tobytes())
    name = f"anatomy_markers_{key.hexdigest()[:24]}"
    cached = load_arrays(name)
    if cached is not None and "cdr" in cached:
        return cached["cdr"].tobytes()
    data = serialize_message(MarkerArray(markers=[_triangle_marker(i, m) for i, m in enumerate(models)]))
    store_arrays(name, {"cdr": np.frombuffer(data, dtype=np.uint8)})
    return bytes(data)


def _triangle_marker(index: int, model: Any) -> Any:
    color = convert.ROLE_COLORS_RGBA[model.role]
    return convert.mesh_to_marker(model.vertices_m, model.faces, index, model.name, color)


def _point_pose(point: Any) -> Any:
    from geometry_msgs.msg import Pose

    pose = Pose()
    pose.position = point
    pose.orientation.w = 1.0
    return pose


def main(args: list[str] | None = None) -> int:
    """Run the ``markers`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation markers

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(Markers, args, threads=1)


if __name__ == "__main__":
    raise SystemExit(main())
