"""markers: the anatomy and the tested targets, coloured by verdict, for RViz or Foxglove.

- ``/cosim/markers/anatomy`` (visualization_msgs/MarkerArray, latched): one triangle list per model
  (target lungs green, obstacles red, skin faint), in base_link.
- ``/cosim/markers/targets`` (MarkerArray, latched): one sphere per finished case at its target, green
  if every verdict holds, red if one is violated, grey if undecided (seed 000, Figures 7 and 8).
"""

from __future__ import annotations

from typing import Any

from rclpy.node import Node
from visualization_msgs.msg import MarkerArray

from cosim_validation.anatomy import load_anatomy
from cosim_validation.config import load_case_config, resolve_resource
from cosim_validation.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.ros import convert
from cosim_validation.ros.qos import LATCHED, RESULT, to_rclpy
from cosim_validation_interfaces.msg import CaseReport, CaseStatus, Verdict


def worst_verdict(report: Any) -> int:
    """VIOLATED if any verdict is violated, else UNKNOWN if any is unknown, else HOLDS."""
    codes = {int(v.verdict) for v in report.verdicts}
    for code in (Verdict.VIOLATED, Verdict.UNKNOWN):
        if code in codes:
            return int(code)
    return int(Verdict.HOLDS)


class Markers(Node):
    """Publishes the anatomy once and the targets as cases finish."""

    def __init__(self) -> None:
        super().__init__("markers")
        params = declare_parameters(self, "markers")
        config = load_case_config(resolve_resource(params["config"]))
        scene = load_anatomy(config["anatomy"])
        anatomy = MarkerArray(
            markers=[
                convert.mesh_to_marker(m.vertices_m, m.faces, i, m.name, convert.ROLE_COLORS_RGBA[m.role])
                for i, m in enumerate(scene)
            ]
        )
        self.create_publisher(MarkerArray, "/cosim/markers/anatomy", to_rclpy(LATCHED)).publish(anatomy)
        self._targets_pub = self.create_publisher(MarkerArray, "/cosim/markers/targets", to_rclpy(LATCHED))
        self._targets = MarkerArray()
        self._cases: dict[str, Any] = {}
        self._diameter_m = float(params["target_diameter_m"])
        self.create_subscription(CaseStatus, "/cosim/case_status", self._on_status, to_rclpy(LATCHED))
        self.create_subscription(CaseReport, "/cosim/case_reports", self._on_report, to_rclpy(RESULT))

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


def _point_pose(point: Any) -> Any:
    from geometry_msgs.msg import Pose

    pose = Pose()
    pose.position = point
    pose.orientation.w = 1.0
    return pose


def main(args: list[str] | None = None) -> int:
    """ros2 run cosim_validation markers"""
    return run_node(Markers, args, threads=1)


if __name__ == "__main__":
    raise SystemExit(main())
