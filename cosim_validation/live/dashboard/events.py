"""What the dashboard is fed: plain values made from the session's messages by the ROS layer.

The dashboard's model never sees a ROS message. ``cosim_validation.live.ros.dashboard_events`` turns each message
of a live subscription or of a bag into one or more of these events; the model applies them in arrival
order. Times are integer nanoseconds of the session clock (simulated time in a sim-time session), positions
are in ``base_link`` [m].
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from cosim_validation.common.record import RobotRole, Stage


class CaseStarted(NamedTuple):
    """The controller accepted and planned a case (CaseStatus STARTED)."""

    t_ns: int  # stamp of the case start (its first sample)
    test_id: str
    source_m: np.ndarray  # (3,)
    target_m: np.ndarray  # (3,)
    sample_count: int  # samples in the expected trajectory
    sampling_rate_hz: float
    robots: tuple[str, ...]  # robots driven: virtual | physical


class StageChanged(NamedTuple):
    """The controller's case entered a stage (CaseStatus STAGE)."""

    test_id: str
    stage: Stage


class CaseEnded(NamedTuple):
    """The controller finished a case (CaseStatus COMPLETED, REFUSED or ABORTED)."""

    test_id: str
    outcome: str  # completed | refused | aborted
    message: str  # why, for a refused or aborted case (e.g. the state validator's refusal)
    t_ns: int = 0


class TipSample(NamedTuple):
    """One needle-tip position of one robot.

    The expected robot's samples carry the case and stage (RobotState); a robot's actual tip
    (PoseStamped of the simulator or the tracker) carries only its stamp, which equals the stamp of the
    expected sample it answers.
    """

    t_ns: int
    robot: RobotRole
    position_m: np.ndarray  # (3,)
    test_id: str = ""
    stage: Stage = Stage.NONE


class VerdictRow(NamedTuple):
    """The verdict of one property on one robot in one case, as the monitor publishes it."""

    test_id: str
    property: str
    robot: RobotRole
    status: int  # 0 unknown, 1 holds, 2 violated (Verdict.msg constants)
    margin: float  # in ``unit``; NaN when unknown
    unit: str  # m | rad | 1
    first_violation_time_s: float  # since case start; NaN if none
    first_violation_stage: Stage
    final: bool
    reason: str = ""


class CaseReported(NamedTuple):
    """The monitor's conclusion of a case (CaseReport): final verdicts and samples per robot."""

    test_id: str
    outcome: str
    verdicts: tuple[VerdictRow, ...]
    samples: dict[RobotRole, int]
    message: str = ""


class AlertRaised(NamedTuple):
    """An alert: from ``/cosim/alerts`` or an extra alert topic (hazard alarms, ...)."""

    t_ns: int
    topic: str
    level: int  # 0 info, 1 warn, 2 error (Alert.msg constants)
    source: str
    code: str
    message: str
    robot: str = ""


class StateReported(NamedTuple):
    """The latest value of a named state: diagnostics, a supervisor state, any extra state topic."""

    t_ns: int
    topic: str
    name: str
    value: str
    level: int = 0  # 0 ok/info, 1 warn, 2 error


class AnatomyMesh(NamedTuple):
    """One anatomy model as triangles (from ``/cosim/markers/anatomy``)."""

    name: str
    role: str  # target | obstacle | skin
    triangles_m: np.ndarray  # (F, 3, 3) corners in base_link [m]


class AnatomyShown(NamedTuple):
    """The session's anatomy (latched: sent once)."""

    meshes: tuple[AnatomyMesh, ...]


DashboardEvent = (
    CaseStarted
    | StageChanged
    | CaseEnded
    | TipSample
    | VerdictRow
    | CaseReported
    | AlertRaised
    | StateReported
    | AnatomyShown
)
