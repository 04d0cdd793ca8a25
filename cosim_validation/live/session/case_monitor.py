"""Monitoring one case from its topic streams: the live monitor node and ``cosim replay`` both use this.

Streams go through the :class:`StreamAssembler` into a :class:`~cosim_validation.monitor.properties.SessionMonitor`
(one online monitor per robot, the expected plan checked too, as in ``cosim check``; every EXPECTED sample
is also the reference of the other robots' monitors). Verdict changes (a first violation) come back at
once; :meth:`finish` gives the final verdicts and KPIs, and optionally the trajectory records rebuilt from
the samples.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from cosim_validation.assembly.case_outcome import conclude_verdicts
from cosim_validation.assembly.monitor_world import MonitorWorld
from cosim_validation.common.record import RobotRole, Stage, SupervisorMode, TrajectoryRecord
from cosim_validation.live.session.record_builder import RecordBuilder
from cosim_validation.live.session.stream_assembler import StreamAssembler, StreamCaps, Unmatched
from cosim_validation.monitor.properties import Kpi, Sample, SessionMonitor, Verdict


@dataclass(frozen=True)
class CaseConclusion:
    """What the monitor concluded about one case.

    Attributes:
        verdicts: The final verdicts of every robot.
        kpis: The KPIs of every robot.
        samples: Samples monitored per robot (EXPECTED included).
        records: The rebuilt trajectory records per robot (when kept).
        tips: Tip poses used per robot (VIRTUAL, PHYSICAL).
        markers: Tracked markers used per robot (VIRTUAL, PHYSICAL).
    """

    verdicts: tuple[Verdict, ...]
    kpis: tuple[Kpi, ...]
    samples: Mapping[RobotRole, int]
    records: Mapping[RobotRole, TrajectoryRecord] = field(default_factory=dict)
    tips: Mapping[RobotRole, int] = field(default_factory=dict)
    markers: Mapping[RobotRole, int] = field(default_factory=dict)


class CaseMonitor:
    """Online monitoring of one case.

    Args:
        world: The monitor's world (properties, KPIs, machines, arm, obstacles, self-collision).
        robots: ``{role: has_tip_stream}`` of the robots driven (VIRTUAL, PHYSICAL).
        target_m: (3,) the case's target in base_link [m], if known.
        needle_length_m: The case's needle [m] (default: the world's).
        with_expected: False for bags without an expected stream.
        test_id: Stored in the rebuilt records.
        backends: Backend name per robot, stored in the rebuilt records.
        keep_records: Rebuild each robot's TrajectoryRecord (sessions store them).
        markers: The robots whose tracked-marker stream comes too.
    """

    def __init__(
        self,
        world: MonitorWorld,
        robots: Mapping[RobotRole, bool],
        *,
        target_m: np.ndarray | None = None,
        needle_length_m: float | None = None,
        with_expected: bool = True,
        test_id: str = "",
        backends: Mapping[RobotRole, str] | None = None,
        keep_records: bool = False,
        markers: frozenset[RobotRole] = frozenset(),
    ) -> None:
        context = world.context(target_m, needle_length_m)
        kinematics = world.kinematics
        if context.needle_length_m != kinematics.needle_length_m:
            kinematics = kinematics.with_needle_length(context.needle_length_m)
        self._assembler = StreamAssembler(kinematics, dict(robots), with_expected, markers)
        roles = ([RobotRole.EXPECTED] if with_expected else []) + list(robots)
        self._monitor = SessionMonitor(world.properties, context, roles)
        self._counts = dict.fromkeys(roles, 0)
        self._caps: dict[RobotRole, int] = {}
        names = dict(backends or {})
        self._builders = (
            {
                role: RecordBuilder(
                    test_id,
                    role,
                    names.get(role, "plan" if role is RobotRole.EXPECTED else role.label),
                    kinematics.joint_names,
                    kinematics.needle_length_m,
                )
                for role in roles
            }
            if keep_records
            else {}
        )

    @property
    def samples(self) -> dict[RobotRole, int]:
        """Samples monitored so far per robot (EXPECTED included)."""
        return dict(self._counts)

    def add_expected(
        self, stamp_ns: int, stage: Stage, q_plan: np.ndarray, mode: SupervisorMode = SupervisorMode.UNSUPERVISED
    ) -> list[Verdict]:
        """The controller's expected state (and the supervisor's mode when it was sent); returns verdict changes.

        Args:
            stamp_ns: The state's stamp in [ns].
            stage: The plan's stage at that time.
            q_plan: The planned joints, shape (J,), in [rad] (or [m] for a prismatic joint).
            mode: The supervisor's mode when the state was sent.
        """
        return self._push(self._assembler.add_expected(stamp_ns, stage, q_plan, mode))

    def add_joints(self, role: RobotRole, stamp_ns: int, q_measured: np.ndarray) -> list[Verdict]:
        """A robot's measured joints; returns verdict changes.

        Args:
            role: The robot.
            stamp_ns: The stamp of the setpoint they answer, in [ns].
            q_measured: The measured joints, shape (J,), in [rad] (or [m] for a prismatic joint).
        """
        return self._push(self._assembler.add_joints(role, stamp_ns, q_measured))

    def add_tip(self, role: RobotRole, stamp_ns: int, position_m: np.ndarray, quat_wxyz: np.ndarray) -> list[Verdict]:
        """A robot's actual tip pose; returns verdict changes.

        Args:
            role: The robot.
            stamp_ns: The stamp of the setpoint it answers, in [ns].
            position_m: The tip's position in base_link, shape (3,), in [m]; NaN where the robot cannot know it.
            quat_wxyz: The tip's orientation in base_link, a unit quaternion (w, x, y, z), shape (4,).
        """
        return self._push(self._assembler.add_tip(role, stamp_ns, position_m, quat_wxyz))

    def add_marker(
        self, role: RobotRole, stamp_ns: int, position_m: np.ndarray, quat_wxyz: np.ndarray, registration_error_m: float
    ) -> list[Verdict]:
        """A robot's tracked marker; returns verdict changes.

        Args:
            role: The robot.
            stamp_ns: The stamp of the setpoint it answers, in [ns].
            position_m: The marker's position in the tracker's frame, shape (3,), in [m]; NaN if not seen.
            quat_wxyz: The marker's orientation in the tracker's frame, a quaternion (w, x, y, z), shape (4,).
            registration_error_m: The tracker's registration error in [m]; NaN if not seen.
        """
        return self._push(self._assembler.add_marker(role, stamp_ns, position_m, quat_wxyz, registration_error_m))

    def cap(self, caps: StreamCaps) -> None:
        """Monitor at most what the live monitor concluded with (a replay): samples, tip poses, markers per robot.

        Args:
            caps: The most samples, tip poses and markers per robot; a robot not named has no cap.
        """
        self._caps = dict(caps.samples)
        self._assembler.cap(caps.tips, caps.markers)

    def _push(self, samples: list[Sample]) -> list[Verdict]:
        changes: list[Verdict] = []
        for sample in samples:
            if self._counts[sample.robot] >= self._caps.get(sample.robot, self._counts[sample.robot] + 1):
                continue  # past what the live monitor judged (a late answer recorded after the case ended)
            self._counts[sample.robot] += 1
            changes += self._monitor.push(sample)
            if self._builders:
                self._builders[sample.robot].add(sample)
        return changes

    @property
    def unmatched(self) -> list[Unmatched]:
        """After :meth:`finish`: the robot messages of no planned sample of this case (perhaps the next case's)."""
        return self._assembler.unmatched

    def take_from(self, stamp_ns: int) -> list[Unmatched]:
        """Remove the waiting robot messages stamped at or after ``stamp_ns`` (they are a later case's).

        Args:
            stamp_ns: The later case's start stamp, in [ns].
        """
        return self._assembler.take_from(stamp_ns)

    def finish(self, outcome: str = "completed", message: str = "") -> CaseConclusion:
        """End of the case: final verdicts and KPIs of every robot (and the rebuilt records).

        Args:
            outcome: How the case ended (:func:`~cosim_validation.assembly.case_outcome.conclude_verdicts`).
            message: Why.
        """
        self._push(self._assembler.flush())
        verdicts = conclude_verdicts(
            [v for per_robot in self._monitor.finish().values() for v in per_robot], outcome, message
        )
        kpis: list[Kpi] = [k for per_robot in self._monitor.kpis().values() for k in per_robot]
        records = {role: builder.build() for role, builder in self._builders.items() if len(builder)}
        used = self._assembler
        return CaseConclusion(
            tuple(verdicts), tuple(kpis), dict(self._counts), records, used.tips_used, used.markers_used
        )
