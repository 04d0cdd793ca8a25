"""One needle insertion, period by period: the five stages and the tracked-tip correction (numpy only).

The needle axis is the unit vector from the source to the target; the desired tip runs along that line.

- INITIALIZATION: resolved rate from where the arm rests to the source with the needle along the axis, then a
  hold of ``settle_s`` while the tracked-tip correction is learned.
- APPROACH: the desired tip moves from the source ``approach_fraction`` of the way to the target at
  ``approach_speed_m_s`` (the node knows no anatomy, so it cannot find the skin; the case study's sources lie
  about 11 cm above the chest and its targets 4-10 cm under the skin, so 40 % keeps the approach outside).
- INJECTION: on to the target at ``injection_speed_m_s``, then a hold of ``settle_s`` on the target.
- EXTRACTION: back along the injection's path to the approach point, at the injection speed (the extraction
  retraces the injection, which the monitor checks).
- RESET: back to the source at the approach speed, then a hold of ``reset_s`` there.

Every period the tracked tip is compared with where the command the arm was executing meant to put it (normally
the previous one; :meth:`InsertionCase.step` says how it is found); a fraction ``gain``
of the difference is added to a Cartesian correction (at most ``max_correction_m``), and the nominal model is
driven to the desired tip plus the correction. So an arm whose geometry differs from its URDF puts its real tip
on the line. During the injection the correction may pull back along the needle by at most
``max_retraction_m_s`` (the needle must not be seen moving out while it goes in). Without a tracked tip the
correction is kept.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from cosim_controller_example.resolved_rate import RateLimits, pose_error, resolved_rate_step
from cosim_controller_example.urdf_chain import UrdfChain

# the constants of cosim_validation_interfaces/msg/Stage.msg
INITIALIZATION, APPROACH, INJECTION, EXTRACTION, RESET = 1, 2, 3, 4, 5
STAGE_NAMES = {
    INITIALIZATION: "initialization",
    APPROACH: "approach",
    INJECTION: "injection",
    EXTRACTION: "extraction",
    RESET: "reset",
}
#: How many of the last commands a tracked tip is matched against (its joints pick the one the arm was executing).
SENT_KEPT = 4


@dataclass(frozen=True)
class ServoSettings:
    """Speeds, holds and the correction of an insertion (SI units; defaults from config/needle_insertion.yaml)."""

    approach_speed_m_s: float = 0.05
    injection_speed_m_s: float = 0.02
    approach_fraction: float = 0.4
    settle_s: float = 1.0
    reset_s: float = 1.0
    init_timeout_s: float = 20.0
    gain: float = 0.3
    max_correction_m: float = 0.01
    max_retraction_m_s: float = 0.0005
    tolerance_m: float = 1e-4
    tolerance_rad: float = 1e-3


class Step(NamedTuple):
    """What one period commands: ``q`` (J,), the ``stage`` constant, and ``done`` after the last period."""

    q: np.ndarray
    stage: int
    done: bool


class Leg(NamedTuple):
    """A piece of the line: ``start`` to ``end`` [m along the axis] at ``speed`` [m/s] (0: hold ``hold_s``)."""

    stage: int
    start: float
    end: float
    speed: float
    hold_s: float = 0.0


class InsertionCase:
    """The five stages of one case, advanced one control period per :meth:`step`.

    Args:
        chain: Nominal kinematics.
        limits: Resolved-rate limits (the control period among them).
        settings: Speeds, holds, correction.
        source_m: (3,) source point [m].
        target_m: (3,) target point [m], not at the source.
        q_start: (J,) where the arm rests.
        posture: (J,) a joint vector at the source to move to in joint space first (None: resolved rate only).
    """

    def __init__(
        self,
        chain: UrdfChain,
        limits: RateLimits,
        settings: ServoSettings,
        source_m: np.ndarray,
        target_m: np.ndarray,
        q_start: np.ndarray,
        posture: np.ndarray | None = None,
    ) -> None:
        self.chain, self.limits, self.settings = chain, limits, settings
        self.source, span = np.asarray(source_m, float), np.asarray(target_m, float) - source_m
        self.length_m = float(np.linalg.norm(span))
        self.axis = span / self.length_m
        self.q, self.rest = np.array(q_start, float), np.array(q_start if posture is None else posture, float)
        self.posture = None if posture is None else np.array(posture, float)
        self.correction = np.zeros(3)
        self.legs = _legs(self.length_m, settings)
        self.leg, self.s, self.ticks, self.leg_ticks = -1, 0.0, 0, 0
        self.arrived = False  # the nominal tip has reached the source (the initialization hold has begun)
        self.reference: np.ndarray | None = None  # the desired tip of the last command
        self.unseen = 0  # periods without a tracked tip
        #: The last commands (joints, desired tip, stage), newest last: what the arm may be executing when a tip is
        #: measured.
        self.sent: deque[tuple[np.ndarray, np.ndarray, int]] = deque(maxlen=SENT_KEPT)
        #: The last tracked tip measured while the arm executed an injection command: after the injection's last one, or
        #: a period before it if that tip was not seen (the injection ends holding on the target). None until then.
        self.tip_at_end_of_injection: np.ndarray | None = None
        self.failure = ""

    @property
    def stage(self) -> int:
        """The stage of the last command."""
        return INITIALIZATION if self.leg < 0 else self.legs[min(self.leg, len(self.legs) - 1)].stage

    def step(self, tracked_tip_m: np.ndarray | None, q_at_tip: np.ndarray | None = None) -> Step:
        """The command of the next period, given the tracked tip (None or NaN when not seen).

        The tracked tip is compared with the desired tip of the command the arm was executing when it was measured:
        of the last commands, the one whose joints are nearest the joints measured with the tip. That holds however
        late the tip or the command came. Compared with the newest command instead, any period in which the arm ran
        a command late (a loaded machine) read as an error of the model, and the correction integrated it: up to
        6.9 mm at the target when one command in ten came a period late (benchmarks/bench_tip_servo_node.py,
        ``--late``).

        Args:
            tracked_tip_m: (3,) the newest tracked tip [m], or None / NaN.
            q_at_tip: (J,) the joints measured with the tracked tip (stamped nearest it); None: the tip is not used.
        """
        seen = tracked_tip_m is not None and bool(np.isfinite(tracked_tip_m).all())
        self.unseen += not seen
        executing = self._executing(q_at_tip) if seen else None
        if executing is not None:
            _, reference, stage = executing
            if self.arrived:
                self._learn(reference - np.asarray(tracked_tip_m))
            if stage == INJECTION:  # the last such tip is the one after the injection's last command
                self.tip_at_end_of_injection = np.array(tracked_tip_m, float)
        self.ticks += 1
        if self.leg < 0:
            return self._initialize()
        desired = self._advance()
        if self.leg >= len(self.legs):
            return Step(self.q.copy(), RESET, True)
        return self._command(desired)

    def _executing(self, q_at_tip: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, int] | None:
        """Of the last commands, the one whose joints are nearest ``q_at_tip`` (None without joints or commands)."""
        if q_at_tip is None or not self.sent:
            return None
        gaps = [float(np.max(np.abs(q - q_at_tip))) for q, _, _ in self.sent]
        return self.sent[int(np.argmin(gaps))]

    def _initialize(self) -> Step:
        dt = self.limits.dt_s
        if self.posture is not None:  # the joint-space move first, every joint at most at its speed limit
            gap = self.posture - self.q
            ratio = max(1.0, float(np.max(np.abs(gap) / (0.5 * self.limits.joint_speed * dt))))
            self.q = self.q + gap / ratio
            self.posture = None if ratio <= 1.0 else self.posture
            return Step(self.q.copy(), INITIALIZATION, False)
        error = pose_error(self.chain, self.q, self.source + self.correction, self.axis)
        self.arrived = self.arrived or error.within(self.settings.tolerance_m, self.settings.tolerance_rad)
        if self.arrived:
            self.leg_ticks += 1
            if self.leg_ticks * dt >= self.settings.settle_s - 1e-9:
                self.leg, self.leg_ticks = 0, 0
        elif self.ticks * dt > self.settings.init_timeout_s:
            self.failure = (
                f"the tip did not reach the source in {self.settings.init_timeout_s:g} s "
                f"({1e3 * error.position_m:.2f} mm, {np.degrees(error.angle_rad):.2f} deg off)"
            )
            return Step(self.q.copy(), INITIALIZATION, True)
        return self._command(self.source)

    def _advance(self) -> np.ndarray:
        """Move the desired point one period along the current leg (to the next leg at its end)."""
        leg = self.legs[self.leg]
        dt = self.limits.dt_s
        self.leg_ticks += 1
        if leg.speed > 0.0:
            self.s += np.sign(leg.end - leg.start) * leg.speed * dt
            finished = (self.s - leg.end) * np.sign(leg.end - leg.start) >= -1e-12
            self.s = leg.end if finished else self.s
        else:
            finished = self.leg_ticks * dt >= leg.hold_s - 1e-9
        if finished:
            self.leg, self.leg_ticks = self.leg + 1, 0
        return np.asarray(self.source + self.s * self.axis)

    def _command(self, desired: np.ndarray) -> Step:
        self.q = resolved_rate_step(self.chain, self.q, desired + self.correction, self.axis, self.limits, self.rest)
        self.reference = desired
        self.sent.append((self.q.copy(), desired, self.stage))
        return Step(self.q.copy(), self.stage, False)

    def _learn(self, error: np.ndarray) -> None:
        settings = self.settings
        change = settings.gain * error
        if self.stage == INJECTION:
            back = float(change @ self.axis)
            floor = -settings.max_retraction_m_s * self.limits.dt_s
            if back < floor:
                change = change + (floor - back) * self.axis
        new = self.correction + change
        norm = float(np.linalg.norm(new))
        self.correction = new if norm <= settings.max_correction_m else new * (settings.max_correction_m / norm)


def dry_run(case: InsertionCase, position_m: float = 1e-3, angle_rad: float = 0.02) -> tuple[str, int]:
    """Run ``case`` on its nominal model without a tracker: why it cannot be done ("" if it can), and its periods.

    After the initialization every commanded pose must be within ``position_m`` [m] and ``angle_rad`` [rad] of
    the desired one; the joint limits or a singularity make a target unreachable this way.
    """
    while True:
        step = case.step(None)
        if step.done:
            return case.failure, case.ticks
        if case.leg >= 0 and case.reference is not None:
            error = pose_error(case.chain, step.q, case.reference, case.axis)
            if not error.within(position_m, angle_rad):
                where = float((case.reference - case.source) @ case.axis)
                return (
                    f"{STAGE_NAMES[step.stage]}: {1e3 * where:.1f} mm along the line the nominal tip stays "
                    f"{1e3 * error.position_m:.2f} mm, {np.degrees(error.angle_rad):.2f} deg off "
                    "(joint limits or a singularity)",
                    case.ticks,
                )


def _legs(length_m: float, settings: ServoSettings) -> tuple[Leg, ...]:
    mid = settings.approach_fraction * length_m
    fast, slow = settings.approach_speed_m_s, settings.injection_speed_m_s
    return (
        Leg(APPROACH, 0.0, mid, fast),
        Leg(INJECTION, mid, length_m, slow),
        Leg(INJECTION, length_m, length_m, 0.0, settings.settle_s),
        Leg(EXTRACTION, length_m, mid, slow),
        Leg(RESET, mid, 0.0, fast),
        Leg(RESET, 0.0, 0.0, 0.0, settings.reset_s),
    )
