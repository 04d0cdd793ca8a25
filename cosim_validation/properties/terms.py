"""Per-sample terms: typed, unit-carrying expressions evaluated column-wise on a :class:`Block`.

A term evaluates to an array with one row per sample: scalars (n,), points and vectors (n, 3),
segments (n, 2, 3), stages (n,) uint8. The same code runs on a whole trace (offline) and on one
sample (online), so both give bit-identical values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from cosim_validation.properties.context import BoundedDistanceField, MonitorContext
from cosim_validation.properties.sample import Block
from cosim_validation.record import Stage

SCALAR, POINT, VECTOR, SEGMENT, STAGE = "scalar", "point", "vector", "segment", "stage"


@dataclass
class Env:
    """What terms are evaluated on: the robot's samples, the aligned expected samples, the context.

    Attributes:
        block: n samples of the robot.
        expected: n expected samples aligned to ``block`` row by row (see docs/PROPERTIES.md), or None.
        context: The monitor context.
        state: Per-term memory carried from block to block (online); empty for a whole trace.
    """

    block: Block
    expected: Block | None
    context: MonitorContext
    state: dict[int, Any] = field(default_factory=dict)
    kpis: dict[str, float] = field(default_factory=dict)
    signals: dict[tuple[str, int, bool], np.ndarray] = field(default_factory=dict)  # read once per env


def _norm(v: np.ndarray) -> np.ndarray:
    """Row norms of (n, 3), written out so that every row is computed the same way whatever n is."""
    x, y, z = v[:, 0], v[:, 1], v[:, 2]
    return np.sqrt(x * x + y * y + z * z)  # type: ignore[no-any-return]


def _z_axis(quat_wxyz: np.ndarray) -> np.ndarray:
    w, x, y, z = quat_wxyz[:, 0], quat_wxyz[:, 1], quat_wxyz[:, 2], quat_wxyz[:, 3]
    return np.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], axis=1)


class Term:
    """Base of every term: ``kind`` (scalar, point, vector, segment, stage), ``unit`` (m, rad, s, 1, "")."""

    kind: str = SCALAR
    unit: str = ""
    uses_expected: bool = False
    rowwise: bool = True  # each row depends on its own sample only (no memory such as entry())

    def evaluate(self, env: Env) -> np.ndarray:
        """Values on every sample of ``env.block``."""
        raise NotImplementedError

    def lower_bound(self, env: Env, tight: bool = False) -> np.ndarray | None:
        """Cheap values <= :meth:`evaluate` on every sample, or None if this term has none.

        ``tight``: a tighter, costlier bound where the term has one (e.g. an obstacle's distance grid).
        """
        return None

    def lipschitz_points(self, env: Env) -> np.ndarray | None:
        """(n, k, 3) points such that the value changes by at most their largest displacement, or None."""
        return None


@dataclass(eq=False)
class Const(Term):
    """A number; unit "" adopts the unit of what it is combined with."""

    value: float
    unit: str = ""

    def evaluate(self, env: Env) -> np.ndarray:
        return np.full(env.block.n, self.value)


@dataclass(eq=False)
class StageConst(Term):
    """A stage name such as ``injection``."""

    stage: Stage
    kind: str = STAGE

    def evaluate(self, env: Env) -> np.ndarray:
        return np.full(env.block.n, int(self.stage), dtype=np.uint8)


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
    if name in ("q", "q_setpoint"):
        return (b.q_measured_rad if name == "q" else b.q_setpoint_rad)[:, j]
    if name in ("joint", "joint_axis"):
        return (b.joint_pos_m if name == "joint" else b.joint_axis)[:, j, :]
    if name in ("tip", "actual_tip"):
        return b.tip_pos_m if name == "tip" else b.actual_tip_pos_m
    if name in ("tip_axis", "actual_tip_axis"):
        return _z_axis(b.tip_quat_wxyz if name == "tip_axis" else b.actual_tip_quat_wxyz)
    if name == "needle_base":
        return b.tip_pos_m - b.needle_length_m * _z_axis(b.tip_quat_wxyz)
    if name == "needle":
        return np.stack([b.tip_pos_m - b.needle_length_m * _z_axis(b.tip_quat_wxyz), b.tip_pos_m], axis=1)
    raise AssertionError(name)


#: Signals of a robot: name -> (kind, unit, indexed by joint).
SIGNALS: dict[str, tuple[str, str, bool]] = {
    "t": (SCALAR, "s", False),
    "stage": (STAGE, "1", False),
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


@dataclass(eq=False)
class Target(Term):
    """The case's target point from the context."""

    kind: str = POINT
    unit: str = "m"

    def evaluate(self, env: Env) -> np.ndarray:
        assert env.context.target_m is not None
        return np.broadcast_to(env.context.target_m, (env.block.n, 3))


@dataclass(eq=False)
class SelfDistanceTerm(Term):
    """Smallest distance between non-adjacent links [m], from the context's self-collision model."""

    unit: str = "m"

    def evaluate(self, env: Env) -> np.ndarray:
        assert env.context.self_distance is not None
        return np.asarray(env.context.self_distance(env.block.q_measured_rad), dtype=np.float64)


@dataclass(eq=False)
class SelfCollisionTerm(Term):
    """Whether the robot's links touch each other (bool per sample), from the context's self-collision check."""

    kind: str = "flag"
    unit: str = "1"

    def evaluate(self, env: Env) -> np.ndarray:
        assert env.context.self_collision is not None
        return np.asarray(env.context.self_collision(env.block.q_measured_rad), dtype=bool)


@dataclass(eq=False)
class Apply(Term):
    """A function of other terms: dist, angle, abs, + - * /, unary minus."""

    func: str
    args: tuple[Term, ...]
    unit: str = ""

    def __post_init__(self) -> None:
        self.uses_expected = any(a.uses_expected for a in self.args)
        self.rowwise = all(a.rowwise for a in self.args)

    def lower_bound(self, env: Env, tight: bool = False) -> np.ndarray | None:
        if self.func == "-" and isinstance(self.args[1], Const):
            bound = self.args[0].lower_bound(env, tight)
            return None if bound is None else bound - self.args[1].value
        return None

    def lipschitz_points(self, env: Env) -> np.ndarray | None:
        if self.func == "-" and isinstance(self.args[1], Const):
            return self.args[0].lipschitz_points(env)
        return None

    def evaluate(self, env: Env) -> np.ndarray:
        v = [a.evaluate(env) for a in self.args]
        f = self.func
        if f == "dist":
            return _norm(v[0] - v[1])
        if f == "angle":
            cross = np.cross(v[0], v[1])
            dot = v[0][:, 0] * v[1][:, 0] + v[0][:, 1] * v[1][:, 1] + v[0][:, 2] * v[1][:, 2]
            return np.asarray(np.arctan2(_norm(cross), dot))
        if f == "abs":
            return np.asarray(np.abs(v[0]))
        if f in ("x", "y", "z"):
            return np.asarray(v[0][:, "xyz".index(f)])
        if f == "neg":
            return -v[0]
        return {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[f](v[0], v[1])  # type: ignore[no-any-return]


_BOUNDS_KNOWN: dict[int, bool] = {}


def _has_bounds(field_: object) -> bool:
    """Whether ``field_`` is a BoundedDistanceField (cached: runtime protocol checks are slow)."""
    key = id(type(field_))
    if key not in _BOUNDS_KNOWN:
        _BOUNDS_KNOWN[key] = isinstance(field_, BoundedDistanceField)
    return _BOUNDS_KNOWN[key]


@dataclass(eq=False)
class ObstacleDistance(Term):
    """Signed distance of a point or segment term to an obstacle of the context [m]."""

    arg: Term
    obstacle: str
    unit: str = "m"

    def __post_init__(self) -> None:
        self.uses_expected = self.arg.uses_expected
        self.rowwise = self.arg.rowwise

    def lipschitz_points(self, env: Env) -> np.ndarray | None:
        # a (signed) distance to a fixed region is 1-Lipschitz in the point, and in the ends of a segment
        value = self.arg.evaluate(env)
        return value.reshape(value.shape[0], -1, 3)

    def lower_bound(self, env: Env, tight: bool = False) -> np.ndarray | None:
        field_ = env.context.obstacles[self.obstacle]
        if not _has_bounds(field_):
            return None
        field_ = cast(BoundedDistanceField, field_)
        value = self.arg.evaluate(env)
        if self.arg.kind == SEGMENT:
            segment = getattr(field_, "segment_tight_lower_bound_m", None) if tight else None
            return (segment or field_.segment_lower_bound_m)(value[:, 0], value[:, 1])
        point = getattr(field_, "point_tight_lower_bound_m", None) if tight else None
        return (point or field_.point_lower_bound_m)(value)

    def evaluate(self, env: Env) -> np.ndarray:
        field_ = env.context.obstacles[self.obstacle]
        value = self.arg.evaluate(env)
        out = np.full(value.shape[0], np.nan)
        rows = np.isfinite(value.reshape(value.shape[0], -1)).all(axis=1)  # NaN samples stay unknown
        if not rows.any():
            return out
        value = value[rows]
        if self.arg.kind == SEGMENT:
            dist = field_.segment_distance_m(np.ascontiguousarray(value[:, 0]), np.ascontiguousarray(value[:, 1]))
        else:
            dist = field_.point_distance_m(np.ascontiguousarray(value))
        out[rows] = np.asarray(dist, dtype=np.float64)
        return out


@dataclass(eq=False)
class KpiTerm(Term):
    """``kpi(name)``: the value of a KPI of the run (a case-level constant)."""

    name: str
    unit: str

    def evaluate(self, env: Env) -> np.ndarray:
        return np.full(env.block.n, env.kpis[self.name])


@dataclass(eq=False)
class Entry(Term):
    """``entry(x, S)``: the value of x at the first sample of stage S, held afterwards; NaN before."""

    arg: Term
    stage: Stage

    def __post_init__(self) -> None:
        self.kind = self.arg.kind
        self.unit = self.arg.unit
        self.uses_expected = self.arg.uses_expected
        self.rowwise = False

    def evaluate(self, env: Env) -> np.ndarray:
        value = self.arg.evaluate(env)
        out = np.full_like(value, np.nan, dtype=np.float64)
        held = env.state.get(id(self))
        if held is not None:
            out[:] = held
            return out
        hits = np.flatnonzero(env.block.stage == int(self.stage))
        if hits.size:
            first = int(hits[0])
            env.state[id(self)] = np.array(value[first], dtype=np.float64)
            out[first:] = value[first]
        return out
