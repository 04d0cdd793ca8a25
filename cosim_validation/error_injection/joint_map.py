"""The calibrated joint model of an arm: where its joints really are for the values its encoders give.

q_true = offset + scale * q + lost_motion * d + sum over coupled pairs (driving, driven) of coupling * q[driving]
added to the driven joint: a joint zero (mastering) offset [rad, or m for a prismatic joint], a transmission ratio
error (scale, 1 nominal), the lost motion of a gear or cable (the link trails its motor by a fixed amount on the
side of its last move: d the direction of the joint's last move, +1 / -1, 0 before the first, the CPE direction
of :mod:`~.features`) and the coupling of wrist cables that run over the pulleys of the joints before them
[joint per joint]. The nominal forward kinematics of q_true is the calibrated model of the arm
(:mod:`~.kinematic_calibration` estimates it); the identity map is the nominal model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cosim_validation.error_injection.error_types import ModelFileError


@dataclass(frozen=True)
class JointMap:
    """q_true = offset + scale * q + lost_motion * direction (+ couplings), for (n, J) joint values.

    Attributes:
        offset: (J,) joint zero offsets [rad | m].
        scale: (J,) transmission ratio, real over nominal (1: nominal).
        coupled: (driving, driven) 0-based joint index pairs.
        coupling: (P,) how much the driven joint turns per unit of the driving one [joint per joint].
        lost_motion: (J,) where the link sits relative to its motor after a move in + direction [rad | m]
            (negative: it trails; minus that after a move in - direction).
    """

    offset: np.ndarray
    scale: np.ndarray
    coupled: tuple[tuple[int, int], ...] = ()
    coupling: np.ndarray = field(default_factory=lambda: np.zeros(0))
    lost_motion: np.ndarray | None = None

    @classmethod
    def identity(cls, n_joints: int, coupled: tuple[tuple[int, int], ...] = ()) -> JointMap:
        """The nominal model: no offset, unit ratios, no coupling.

        Args:
            n_joints: J, the number of joints.
            coupled: (driving, driven) 0-based joint index pairs, each with a zero coupling.
        """
        return cls(np.zeros(n_joints), np.ones(n_joints), coupled, np.zeros(len(coupled)), np.zeros(n_joints))

    @property
    def n_joints(self) -> int:
        """Joints mapped."""
        return int(self.offset.size)

    def apply(self, q: np.ndarray, directions: np.ndarray | None = None) -> np.ndarray:
        """(n, J) true joint values of measured ones ``q``.

        Args:
            q: Measured joints, shape (n, J), in [rad] (or [m] for a prismatic joint).
            directions: The joints' last moves (+1, -1, 0), shape (n, J); None: not known, no lost motion.
        """
        q = np.atleast_2d(np.asarray(q, dtype=np.float64))
        out = self.offset + self.scale * q
        if directions is not None and self.lost_motion is not None:
            out += self.lost_motion * np.atleast_2d(directions)
        for (driving, driven), c in zip(self.coupled, self.coupling, strict=True):
            out[:, driven] += c * q[:, driving]
        return out  # type: ignore[no-any-return]

    def to_json(self, joint_names: tuple[str, ...]) -> dict[str, Any]:
        """The model as JSON (joint names for the reader; the values in joint order).

        Args:
            joint_names: The J joint names, in joint order (stored for the reader).
        """
        return {
            "joint_names": list(joint_names),
            "offset": [float(v) for v in self.offset],
            "scale": [float(v) for v in self.scale],
            "coupled": [[int(a), int(b)] for a, b in self.coupled],
            "coupling": [float(v) for v in self.coupling],
            "lost_motion": [float(v) for v in self._lost()],
        }

    def _lost(self) -> np.ndarray:
        return np.zeros(self.n_joints) if self.lost_motion is None else self.lost_motion

    @classmethod
    def from_json(cls, value: object, n_joints: int, where: str) -> JointMap:
        """Inverse of :meth:`to_json` for an arm of ``n_joints``.

        Args:
            value: The parsed JSON object.
            n_joints: J, the arm's joint count.
            where: Where the object is, for the error messages.

        Raises:
            ModelFileError: A missing or malformed field (naming ``where`` and the field).
        """
        if not isinstance(value, dict):
            raise ModelFileError(f"{where}: expected an object, got {value!r}")
        offset, scale = (_numbers(value, key, n_joints, where) for key in ("offset", "scale"))
        pairs = value.get("coupled")
        if not isinstance(pairs, list) or not all(_is_pair(p, n_joints) for p in pairs):
            raise ModelFileError(f"{where}.coupled: expected pairs of joint indices in 0..{n_joints - 1}")
        coupling = _numbers(value, "coupling", len(pairs), where)
        lost = _numbers(value, "lost_motion", n_joints, where)
        for key, numbers, (low, high) in (
            ("offset", offset, (-MAX_JOINT_OFFSET, MAX_JOINT_OFFSET)),
            ("scale", scale, SCALE_RANGE),
            ("coupling", coupling, (-MAX_COUPLING, MAX_COUPLING)),
            ("lost_motion", lost, (-MAX_JOINT_OFFSET, MAX_JOINT_OFFSET)),
        ):
            outside = np.flatnonzero((numbers < low) | (numbers > high))
            if outside.size:  # scale 0 froze the arm (a 1.3 m miss), an offset of 1e6 rad failed the first case
                k = int(outside[0])
                raise ModelFileError(
                    f"{where}.{key}[{k}]: {numbers[k]:g} is no arm's calibration; expected {low:g} to {high:g}"
                )
        return cls(offset, scale, tuple((int(a), int(b)) for a, b in pairs), coupling, lost)


#: What a kinematic calibration of an arm can be: a joint zero offset or lost motion within a radian (or a metre),
#: a transmission ratio within a factor of two of nominal, a coupling of one joint into another at most one to one.
MAX_JOINT_OFFSET = 1.0
SCALE_RANGE = (0.5, 2.0)
MAX_COUPLING = 1.0


def _is_pair(value: object, n_joints: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < n_joints for v in value)
        and value[0] != value[1]
    )


def _numbers(value: dict[str, Any], key: str, n: int, where: str) -> np.ndarray:
    numbers = value.get(key)
    if (
        not isinstance(numbers, list)
        or len(numbers) != n
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers)
        or not np.isfinite(np.asarray(numbers, dtype=np.float64)).all()
    ):
        raise ModelFileError(f"{where}.{key}: expected {n} finite numbers, got {numbers!r}")
    return np.asarray(numbers, dtype=np.float64)
