"""QoS profiles of the session's topics, chosen once here and documented.

- ``/cosim/<robot>/command``: :data:`COMMAND` (reliable, volatile, keep last 1000). Every setpoint matters
  to the trajectory record; stale ones are not replayed to a late joiner.
- ``/cosim/expected``, ``/cosim/<robot>/joint_states``, ``/cosim/<robot>/tip_pose``: :data:`STATE`
  (reliable, volatile, keep last 1000). The monitor and the recorder must see every sample.

The depth matters with RELIABLE: a writer keeps only its last ``depth`` samples for readers that have not
acknowledged them, so a reader that falls behind (the recorder on a loaded machine, in sim time the
session runs as fast as the robots answer) loses what the writer dropped. 1000 samples are 100 s at 10 Hz.

- ``/cosim/case_status``, ``/cosim/markers``: :data:`LATCHED` (reliable, transient local, keep last 10).
  A node, RViz or Foxglove started late still gets the current case and the anatomy.
- ``/cosim/verdicts``, ``/cosim/kpis``, ``/cosim/case_reports``, ``/cosim/alerts``: :data:`RESULT`
  (reliable, volatile, keep last 1000). Results are never dropped.
- ``/diagnostics``: :data:`DIAGNOSTICS` (reliable, volatile, keep last 10), the ROS convention.
- ``/clock``: :data:`CLOCK` (best effort, keep last 1), the profile rclpy's clock subscription uses;
  only the newest time matters.

The profiles are plain values here; :func:`to_rclpy` builds the rclpy objects (imported lazily, so this
module also describes the profiles written into bags without rclpy).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple


class QosSpec(NamedTuple):
    """A QoS profile as plain values."""

    reliability: Literal["reliable", "best_effort"]
    durability: Literal["volatile", "transient_local"]
    depth: int


COMMAND = QosSpec("reliable", "volatile", 1000)
STATE = QosSpec("reliable", "volatile", 1000)
LATCHED = QosSpec("reliable", "transient_local", 10)
RESULT = QosSpec("reliable", "volatile", 1000)
DIAGNOSTICS = QosSpec("reliable", "volatile", 10)
CLOCK = QosSpec("best_effort", "volatile", 1)


def to_rclpy(spec: QosSpec) -> Any:
    """The ``rclpy.qos.QoSProfile`` of ``spec``.

    Args:
        spec: The profile as plain values (keep last ``depth``).
    """
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=spec.depth,
        reliability=ReliabilityPolicy.RELIABLE if spec.reliability == "reliable" else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL
        if spec.durability == "transient_local"
        else DurabilityPolicy.VOLATILE,
    )
