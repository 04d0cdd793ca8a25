"""The recorded signals a property can name (``tip``, ``q[j]``, ``expected.tip``, ...) and context signals."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cosim_validation.monitor.properties.language.terms import MODE, POINT, SCALAR, SEGMENT, STAGE, VECTOR, Env, Term
from cosim_validation.monitor.properties.sample import Block


def z_axis(quat_wxyz: np.ndarray) -> np.ndarray:
    """(n, 3) +z axes of (n, 4) wxyz unit quaternions (the needle direction of a tip orientation).

    Args:
        quat_wxyz: Unit quaternions (w, x, y, z), shape (n, 4); the axes are in the quaternions' parent frame.
    """
    w, x, y, z = quat_wxyz[:, 0], quat_wxyz[:, 1], quat_wxyz[:, 2], quat_wxyz[:, 3]
    return np.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], axis=1)


def z_axis_one(quat_wxyz: np.ndarray) -> np.ndarray:
    """(3,) +z axis of one (4,) wxyz unit quaternion (same formula as :func:`z_axis`, without array overhead).

    Args:
        quat_wxyz: One unit quaternion (w, x, y, z), shape (4,).
    """
    w, x, y, z = (float(v) for v in quat_wxyz)
    return np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])


@dataclass(eq=False)
class Signal(Term):
    """A recorded signal of the robot (or of the expected robot when ``expected`` is true).

    ``name`` is one of the keys of :data:`SIGNALS`; ``joint`` the 0-based joint index for indexed ones.
    """

    name: str
    kind: str
    unit: str
    joint: int = -1
    expected: bool = False

    def __post_init__(self) -> None:
        self.uses_expected = self.expected

    def evaluate(self, env: Env) -> np.ndarray:
        """The signal on every sample of the block (or of the expected block), read once per env.

        Args:
            env: The robot's samples (``env.block``), the aligned expected ones (``env.expected``, read when
                ``expected`` is true; must not be None then) and ``env.signals``, the cache of signals read.

        Returns:
            One row per sample, in the signal's unit: (n,) for scalars, the stage and the supervisor mode,
            (n, 3) for points and axes in base_link, (n, 2, 3) for the needle.
        """
        key = (self.name, self.joint, self.expected)
        cached = env.signals.get(key)
        if cached is None:
            block = env.expected if self.expected else env.block
            if block is None:
                raise AssertionError("expected signal evaluated without expected samples")
            cached = env.signals[key] = _read(block, self.name, self.joint)
        return cached


def _read(b: Block, name: str, j: int) -> np.ndarray:
    if name == "t":
        return b.t_s
    if name == "stage":
        return b.stage
    if name == "supervisor":
        return b.supervisor
    if name in ("q", "q_setpoint"):
        return (b.q_measured if name == "q" else b.q_setpoint)[:, j]
    if name in ("joint", "joint_axis"):
        return (b.joint_pos_m if name == "joint" else b.joint_axis)[:, j, :]
    if name in ("tip", "actual_tip"):
        return b.tip_pos_m if name == "tip" else b.actual_tip_pos_m
    if name in ("tip_axis", "actual_tip_axis"):
        return z_axis(b.tip_quat_wxyz if name == "tip_axis" else b.actual_tip_quat_wxyz)
    if name == "needle_base":
        return b.tip_pos_m - b.needle_length_m * z_axis(b.tip_quat_wxyz)
    if name == "needle":
        return np.stack([b.tip_pos_m - b.needle_length_m * z_axis(b.tip_quat_wxyz), b.tip_pos_m], axis=1)
    raise AssertionError(name)


#: Signals of a robot: name -> (kind, unit, indexed by joint).
SIGNALS: dict[str, tuple[str, str, bool]] = {
    "t": (SCALAR, "s", False),
    "stage": (STAGE, "1", False),
    "supervisor": (MODE, "1", False),
    "q": (SCALAR, "rad", True),
    "q_setpoint": (SCALAR, "rad", True),
    "joint": (POINT, "m", True),
    "joint_axis": (VECTOR, "1", True),
    "tip": (POINT, "m", False),
    "tip_axis": (VECTOR, "1", False),
    "actual_tip": (POINT, "m", False),
    "actual_tip_axis": (VECTOR, "1", False),
    "needle_base": (POINT, "m", False),
    "needle": (SEGMENT, "m", False),
}


#: Indexed constants of the robot model: name -> whether it is the upper limit.
JOINT_LIMITS = {"q_lower": False, "q_upper": True}


@dataclass(eq=False)
class JointLimit(Term):
    """The robot model's lower or upper position limit of joint ``joint``, from the context.

    In rad, or m for a prismatic joint.
    """

    upper: bool = False
    joint: int = 0
    unit: str = "rad"

    def evaluate(self, env: Env) -> np.ndarray:
        """(n,) the joint's limit on every sample of ``env.block``, in [rad] (or [m] for a prismatic joint).

        Args:
            env: The samples (only their number n is used) and the context whose ``q_lower`` / ``q_upper`` are read.
        """
        limits = env.context.q_upper if self.upper else env.context.q_lower
        return np.full(env.block.n, float(limits[self.joint]))


@dataclass(eq=False)
class Target(Term):
    """The case's target point from the context."""

    kind: str = POINT
    unit: str = "m"

    def evaluate(self, env: Env) -> np.ndarray:
        """(n, 3) the context's target point on every sample of ``env.block`` [m].

        Args:
            env: The samples (only their number n is used) and the context, whose ``target_m`` must be set.
        """
        assert env.context.target_m is not None
        return np.broadcast_to(env.context.target_m, (env.block.n, 3))


@dataclass(eq=False)
class SelfDistanceTerm(Term):
    """Smallest distance between non-adjacent links [m], from the context's self-collision model."""

    unit: str = "m"

    def evaluate(self, env: Env) -> np.ndarray:
        """(n,) smallest distance between non-adjacent links [m]; NaN where a joint is unknown.

        Args:
            env: The samples, whose measured joints (n, J) go to the context's ``self_distance`` (which must be set).
        """
        assert env.context.self_distance is not None
        return _on_known_joints(env.block.q_measured, env.context.self_distance)


@dataclass(eq=False)
class SelfCollisionTerm(Term):
    """Whether the robot's links touch each other, from the context's self-collision check.

    1.0 / 0.0 per sample; NaN where a joint is unknown.
    """

    kind: str = "flag"
    unit: str = "1"

    def evaluate(self, env: Env) -> np.ndarray:
        """(n,) 1.0 where the links touch each other, 0.0 where not; NaN where a joint is unknown.

        Args:
            env: The samples, whose measured joints (n, J) go to the context's ``self_collision`` (which must be set).
        """
        assert env.context.self_collision is not None
        return _on_known_joints(env.block.q_measured, env.context.self_collision)


def _on_known_joints(q: np.ndarray, check: Callable[[np.ndarray], Any]) -> np.ndarray:
    """``check`` of the samples whose joints are all known, as floats; NaN where a joint is NaN.

    The arm's pose is unknown there: the verdict says so instead of the model failing on it.
    """
    q = np.asarray(q, dtype=np.float64)
    known = np.isfinite(q).all(axis=1)
    out = np.full(q.shape[0], np.nan)
    if known.any():
        out[known] = np.asarray(check(q[known]), dtype=np.float64)
    return out
