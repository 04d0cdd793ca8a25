"""Assembling per-robot monitor samples from the separate streams of a live session or a bag.

A session publishes, for every sample time t (header stamps are equal by construction):
the expected state (controller: stage, supervisor mode, planned joints; its actual tip is the planned tip; a robot's
sample takes the stage and supervisor mode of the expected state of its stamp), and per robot
its measured joints (driver, sensor_msgs/JointState), its actual tip pose (simulator ground truth or tracker,
geometry_msgs/PoseStamped; NaN where unknown) and the marker an optical tracker saw (TrackedMarker).
Messages on different topics arrive in any order.
The assembler joins them by stamp and hands out complete :class:`~cosim_validation.monitor.properties.Sample`
objects per robot in time order; the live monitor node and ``cosim replay`` both use it, which is why
they give equal verdicts.

Without an expected stream (a bag recorded by someone else), every joint state is a sample on its own,
its stage NONE, its supervisor mode UNSUPERVISED and its time measured from the robot's first message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole, Stage, SupervisorMode
from cosim_validation.monitor.properties import Sample
from cosim_validation.robots.model import Kinematics

_NAN3 = np.full(3, np.nan)
_NAN4 = np.full(4, np.nan)


_NOT_SEEN = (_NAN3, _NAN4, float("nan"))


class Unmatched(NamedTuple):
    """A robot message the case had no planned sample for.

    ``stream`` is joints, tip or marker; ``values`` are the arguments of the matching ``add_*`` after the stamp.
    """

    stream: str
    role: RobotRole
    stamp_ns: int
    values: tuple[Any, ...]


@dataclass
class _RobotStream:
    has_tip: bool
    has_marker: bool = False
    joints: dict[int, np.ndarray] = field(default_factory=dict)  # stamp -> q measured
    tips: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    markers: dict[int, tuple[np.ndarray, np.ndarray, float]] = field(default_factory=dict)
    emitted_until_ns: int = -1
    first_ns: int | None = None
    count: int = 0
    tips_used: int = 0  # tip poses and markers handed out inside samples
    markers_used: int = 0
    tip_cap: int | None = None  # a replay: at most this many (what the live monitor used)
    marker_cap: int | None = None


@dataclass(frozen=True)
class StreamCaps:
    """How much of each robot's streams a replay uses: what the live monitor concluded the case with.

    A live monitor that concludes a case before a robot's last tip poses or markers arrived (a robot that died, a
    timeout) hands out those samples without them; the bag may hold them. Each topic keeps its order, so the first
    ``n`` of a stream are the ones the live monitor used.

    Attributes:
        samples: Samples monitored per robot (EXPECTED included).
        tips: Tip poses used per robot (a robot not named: no cap).
        markers: Tracked markers used per robot (a robot not named: no cap).
    """

    samples: Mapping[RobotRole, int]
    tips: Mapping[RobotRole, int] = field(default_factory=dict)
    markers: Mapping[RobotRole, int] = field(default_factory=dict)


class StreamAssembler:
    """Joins expected states, joint states and tip poses of one case into samples.

    Args:
        kinematics: Nominal arm and needle: forward kinematics of measured joints.
        robots: ``{role: has_tip}`` for every monitored robot (VIRTUAL, PHYSICAL).
        with_expected: False for bags without an expected stream.
        markers: The robots whose tracked-marker stream comes too (a sample waits for its marker message).
    """

    def __init__(
        self,
        kinematics: Kinematics,
        robots: dict[RobotRole, bool],
        with_expected: bool = True,
        markers: frozenset[RobotRole] = frozenset(),
    ) -> None:
        self._kin = kinematics
        self._with_expected = with_expected
        self._streams = {role: _RobotStream(has_tip, role in markers) for role, has_tip in robots.items()}
        self._expected: dict[int, tuple[Stage, np.ndarray, SupervisorMode]] = {}
        self._start_ns: int | None = None
        self.unmatched: list[Unmatched] = []  # after flush: robot messages of no planned sample

    @property
    def samples_per_robot(self) -> dict[RobotRole, int]:
        """How many samples were handed out per robot."""
        return {role: s.count for role, s in self._streams.items()}

    @property
    def tips_used(self) -> dict[RobotRole, int]:
        """How many tip poses were handed out inside samples, per robot."""
        return {role: s.tips_used for role, s in self._streams.items()}

    @property
    def markers_used(self) -> dict[RobotRole, int]:
        """How many tracked markers were handed out inside samples, per robot."""
        return {role: s.markers_used for role, s in self._streams.items()}

    def cap(self, tips: Mapping[RobotRole, int], markers: Mapping[RobotRole, int]) -> None:
        """Hand out at most this many tip poses and markers per robot; later samples get NaN, as live.

        Args:
            tips: The most tip poses per robot (a robot not named: no cap).
            markers: The most markers per robot (a robot not named: no cap).
        """
        for role, stream in self._streams.items():
            stream.tip_cap, stream.marker_cap = tips.get(role), markers.get(role)

    def add_expected(
        self, stamp_ns: int, stage: Stage, q_plan: np.ndarray, mode: SupervisorMode = SupervisorMode.UNSUPERVISED
    ) -> list[Sample]:
        """Take the controller's expected state at ``stamp_ns``; return the EXPECTED sample and any completed.

        Args:
            stamp_ns: The state's stamp in [ns].
            stage: The plan's stage at that time.
            q_plan: The planned joints, shape (J,), in [rad] (or [m] for a prismatic joint).
            mode: The supervisor's mode when the state was sent.
        """
        if self._start_ns is None:
            self._start_ns = stamp_ns
        q = self._checked(q_plan, "expected")
        self._expected[stamp_ns] = (stage, q, mode)
        out = [self._sample(RobotRole.EXPECTED, stamp_ns, (stage, mode), q, q, (_NAN3, _NAN4), _NOT_SEEN)]
        for role in self._streams:
            out += self._emit(role, final=False)
        return out

    def add_joints(self, role: RobotRole, stamp_ns: int, q_measured: np.ndarray) -> list[Sample]:
        """A robot's measured joints at ``stamp_ns``; returns the samples this completes.

        Args:
            role: The robot.
            stamp_ns: The stamp of the setpoint they answer, in [ns].
            q_measured: The measured joints, shape (J,), in [rad] (or [m] for a prismatic joint).
        """
        stream = self._stream(role)
        if stamp_ns <= stream.emitted_until_ns:
            return []  # older than a sample already handed out (one robot's messages keep their order)
        stream.joints[stamp_ns] = self._checked(q_measured, role.label)
        if stream.first_ns is None:
            stream.first_ns = stamp_ns
        return self._emit(role, final=False)

    def add_tip(self, role: RobotRole, stamp_ns: int, position_m: np.ndarray, quat_wxyz: np.ndarray) -> list[Sample]:
        """A robot's actual tip pose at ``stamp_ns``; returns the samples this completes.

        Args:
            role: The robot.
            stamp_ns: The stamp of the setpoint it answers, in [ns].
            position_m: The tip's position in base_link, shape (3,), in [m]; NaN where the robot cannot know it.
            quat_wxyz: The tip's orientation in base_link, a unit quaternion (w, x, y, z), shape (4,).
        """
        self._stream(role).tips[stamp_ns] = (np.asarray(position_m, float), np.asarray(quat_wxyz, float))
        return self._emit(role, final=False)

    def add_marker(
        self, role: RobotRole, stamp_ns: int, position_m: np.ndarray, quat_wxyz: np.ndarray, registration_error_m: float
    ) -> list[Sample]:
        """A robot's tracked marker at ``stamp_ns`` (tracker frame; NaN if not seen); the samples this completes.

        Args:
            role: The robot.
            stamp_ns: The stamp of the setpoint it answers, in [ns].
            position_m: The marker's position in the tracker's frame, shape (3,), in [m]; NaN if not seen.
            quat_wxyz: The marker's orientation in the tracker's frame, a quaternion (w, x, y, z), shape (4,).
            registration_error_m: The tracker's registration error in [m]; NaN if not seen.
        """
        frame = (np.asarray(position_m, float), np.asarray(quat_wxyz, float), float(registration_error_m))
        self._stream(role).markers[stamp_ns] = frame
        return self._emit(role, final=False)

    def flush(self) -> list[Sample]:
        """End of the case: hand out what is waiting (missing tip poses become NaN)."""
        out: list[Sample] = []
        for role in self._streams:
            out += self._emit(role, final=True)
        return out

    def take_from(self, stamp_ns: int) -> list[Unmatched]:
        """Remove and return the waiting robot messages stamped at or after ``stamp_ns``.

        ``stamp_ns`` is the next case's start: these messages arrived before it was announced.

        Args:
            stamp_ns: The next case's start stamp, in [ns].
        """
        taken: list[Unmatched] = []
        for role, stream in self._streams.items():
            for name, pending in (("joints", stream.joints), ("tip", stream.tips), ("marker", stream.markers)):
                for stamp in sorted(s for s in pending if s >= stamp_ns):
                    value = pending.pop(stamp)
                    taken.append(Unmatched(name, role, stamp, value if isinstance(value, tuple) else (value,)))
        return taken

    # ------------------------------------------------------------------ internals
    def _stream(self, role: RobotRole) -> _RobotStream:
        if role not in self._streams:
            raise InputError(f"robot {role.label!r} is not monitored; monitored: {[r.label for r in self._streams]}")
        return self._streams[role]

    def _checked(self, q: np.ndarray, what: str) -> np.ndarray:
        q = np.asarray(q, dtype=np.float64)
        if q.shape != (self._kin.n_joints,):
            raise InputError(f"{what} joints: expected {self._kin.n_joints} positions, got shape {q.shape}")
        return q

    def _emit(self, role: RobotRole, final: bool) -> list[Sample]:
        stream = self._streams[role]
        out: list[Sample] = []
        for stamp in sorted(stream.joints):
            if self._with_expected and stamp not in self._expected:
                if not final:
                    break  # keep time order: wait for the expected state of this sample
                # a joint state of no planned sample: nothing to compare with here (perhaps the next case's)
                self.unmatched.append(Unmatched("joints", role, stamp, (stream.joints.pop(stamp),)))
                continue
            if stream.has_tip and stamp not in stream.tips and not final:
                break  # keep time order: wait for this sample's tip pose
            if stream.has_marker and stamp not in stream.markers and not final:
                break  # and for its marker
            q = stream.joints.pop(stamp)
            tip, marker = self._attached(stream, stamp)
            if self._with_expected:
                stage, q_plan, mode = self._expected[stamp]
            else:
                stage, q_plan, mode = Stage.NONE, q, SupervisorMode.UNSUPERVISED
            out.append(self._sample(role, stamp, (stage, mode), q_plan, q, tip, marker))
            stream.emitted_until_ns = stamp
            stream.count += 1
        for old in [s for s in stream.tips if s <= stream.emitted_until_ns]:
            del stream.tips[old]
        for old in [s for s in stream.markers if s <= stream.emitted_until_ns]:
            del stream.markers[old]
        if final:  # tip poses and markers whose joint state never came
            self.unmatched += [Unmatched("tip", role, s, tip) for s, tip in sorted(stream.tips.items())]
            self.unmatched += [Unmatched("marker", role, s, frame) for s, frame in sorted(stream.markers.items())]
            stream.tips, stream.markers = {}, {}
        return out

    @staticmethod
    def _attached(
        stream: _RobotStream, stamp: int
    ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, float]]:
        tip = stream.tips.pop(stamp, None)
        if tip is not None and (stream.tip_cap is None or stream.tips_used < stream.tip_cap):
            stream.tips_used += 1
        else:
            tip = (_NAN3, _NAN4)
        marker = stream.markers.pop(stamp, None)
        if marker is not None and (stream.marker_cap is None or stream.markers_used < stream.marker_cap):
            stream.markers_used += 1
        else:
            marker = _NOT_SEEN
        return tip, marker

    def _sample(
        self,
        role: RobotRole,
        stamp_ns: int,
        stage_mode: tuple[Stage, SupervisorMode],
        q_set: np.ndarray,
        q_meas: np.ndarray,
        tip: tuple[np.ndarray, np.ndarray],
        marker: tuple[np.ndarray, np.ndarray, float],
    ) -> Sample:
        start = self._start_ns if self._with_expected else self._streams[role].first_ns
        fk = self._kin.record_arrays(q_meas[None, :])
        tip_m, tip_quat = tip
        if role is RobotRole.EXPECTED:  # the plan's actual tip is its planned tip (as in a plan's record)
            tip_m, tip_quat = fk.tip_pos_m[0], fk.tip_quat_wxyz[0]
        return Sample(
            robot=role,
            t_s=(stamp_ns - (start or 0)) / 1e9,
            stage=stage_mode[0],
            supervisor=stage_mode[1],
            q_setpoint=q_set,
            q_measured=q_meas,
            joint_pos_m=fk.joint_pos_m[0],
            joint_axis=fk.joint_axis[0],
            tip_pos_m=fk.tip_pos_m[0],
            tip_quat_wxyz=fk.tip_quat_wxyz[0],
            actual_tip_pos_m=tip_m,
            actual_tip_quat_wxyz=tip_quat,
            marker_pos_m=marker[0],
            marker_quat_wxyz=marker[1],
            marker_error_m=marker[2],
        )
