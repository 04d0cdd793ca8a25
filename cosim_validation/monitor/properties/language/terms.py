"""Per-sample terms: typed, unit-carrying expressions evaluated column-wise on a :class:`Block`.

A term evaluates to an array with one row per sample: scalars (n,), points and vectors (n, 3),
segments (n, 2, 3), stages (n,) uint8. The same code runs on a whole trace (offline) and on one
sample (online), so both give bit-identical values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from cosim_validation.common.record import Stage, SupervisorMode
from cosim_validation.monitor.properties.context import (
    BoundedDistanceField,
    MonitorContext,
    TightlyBoundedDistanceField,
)
from cosim_validation.monitor.properties.sample import Block

SCALAR, POINT, VECTOR, SEGMENT, STAGE = "scalar", "point", "vector", "segment", "stage"
#: The kind of the ``supervisor`` signal and of the supervisor mode names (``stopped``, ``teleoperation``, ...).
MODE = "supervisor mode"


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


class Term:
    """Base of every term: ``kind`` (scalar, point, vector, segment, stage), ``unit`` (m, rad, s, 1, "")."""

    kind: str = SCALAR
    unit: str = ""
    uses_expected: bool = False
    rowwise: bool = True  # each row depends on its own sample only (no memory such as entry())

    def evaluate(self, env: Env) -> np.ndarray:
        """Values on every sample of ``env.block``.

        Args:
            env: The samples (``env.block``, n rows), the aligned expected samples, the context and the state.

        Returns:
            One row per sample: (n,) scalars, flags or stages, (n, 3) points or vectors, (n, 2, 3) segments.
        """
        raise NotImplementedError

    def lower_bound(self, env: Env, tight: bool = False) -> np.ndarray | None:
        """Cheap values <= :meth:`evaluate` on every sample, or None if this term has none.

        Args:
            env: The samples (``env.block``, n rows) and the context.
            tight: Whether to give a tighter, costlier bound where the term has one (e.g. an obstacle's distance
                grid).

        Returns:
            (n,) lower bounds in the term's unit, or None.
        """
        return None

    def lipschitz_points(self, env: Env) -> np.ndarray | None:
        """(n, k, 3) points such that the value changes by at most their largest displacement, or None.

        Args:
            env: The samples (``env.block``, n rows) and the context.
        """
        return None


@dataclass(eq=False)
class Const(Term):
    """A number; unit "" adopts the unit of what it is combined with."""

    value: float
    unit: str = ""

    def evaluate(self, env: Env) -> np.ndarray:
        """(n,) the number on every sample of ``env.block``.

        Args:
            env: The samples (only their number n is used).
        """
        return np.full(env.block.n, self.value)


@dataclass(eq=False)
class StageConst(Term):
    """A stage name such as ``injection``."""

    stage: Stage
    kind: str = STAGE

    def evaluate(self, env: Env) -> np.ndarray:
        """(n,) uint8 the stage value on every sample of ``env.block``.

        Args:
            env: The samples (only their number n is used).
        """
        return np.full(env.block.n, int(self.stage), dtype=np.uint8)


@dataclass(eq=False)
class ModeConst(Term):
    """A supervisor mode name such as ``stopped`` (:class:`~cosim_validation.common.record.SupervisorMode`)."""

    mode: SupervisorMode
    kind: str = MODE

    def evaluate(self, env: Env) -> np.ndarray:
        """(n,) uint8 the supervisor mode value on every sample of ``env.block``.

        Args:
            env: The samples (only their number n is used).
        """
        return np.full(env.block.n, int(self.mode), dtype=np.uint8)


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
        """For ``x - c`` with a constant c: the lower bound of x minus c; None otherwise.

        Args:
            env: The samples (``env.block``, n rows) and the context.
            tight: Use x's tighter, costlier bound where it has one.
        """
        if self.func == "-" and isinstance(self.args[1], Const):
            bound = self.args[0].lower_bound(env, tight)
            return None if bound is None else bound - self.args[1].value
        return None

    def lipschitz_points(self, env: Env) -> np.ndarray | None:
        """For ``x - c`` with a constant c: the Lipschitz points of x; None otherwise.

        Args:
            env: The samples (``env.block``, n rows) and the context.
        """
        if self.func == "-" and isinstance(self.args[1], Const):
            return self.args[0].lipschitz_points(env)
        return None

    def evaluate(self, env: Env) -> np.ndarray:
        """The function of the arguments' values on every sample of ``env.block``.

        Args:
            env: The samples (``env.block``, n rows), the aligned expected samples, the context and the state.

        Returns:
            (n,) values in the term's unit (``dist``: [m], ``angle``: [rad]).
        """
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
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = np.asarray({"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[f](v[0], v[1]))
        # finite operands, a result that is not: an overflow (t * 1e12 * 1e12 ...) or a division by a zero sample,
        # unknown rather than an infinite margin (which read as "holds" or as "vacuous: no sample was checked")
        broken = ~np.isfinite(out) & np.isfinite(v[0]) & np.isfinite(v[1])
        return np.where(broken, np.nan, out) if broken.any() else out


_BOUNDS_KNOWN: dict[int, tuple[bool, bool]] = {}


def _bounds_of(field_: object) -> tuple[bool, bool]:
    """Whether ``field_`` is a BoundedDistanceField, and a TightlyBoundedDistanceField.

    Cached by type: runtime protocol checks are slow.
    """
    key = id(type(field_))
    if key not in _BOUNDS_KNOWN:
        _BOUNDS_KNOWN[key] = (
            isinstance(field_, BoundedDistanceField),
            isinstance(field_, TightlyBoundedDistanceField),
        )
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
        """(n, k, 3) the point (k = 1) or the segment's ends (k = 2) [m]: the distance is 1-Lipschitz in them.

        Args:
            env: The samples (``env.block``, n rows) the point or segment is evaluated on.
        """
        # a (signed) distance to a fixed region is 1-Lipschitz in the point, and in the ends of a segment
        value = self.arg.evaluate(env)
        return value.reshape(value.shape[0], -1, 3)

    def lower_bound(self, env: Env, tight: bool = False) -> np.ndarray | None:
        """The obstacle field's lower bound of the distance [m] (tighter with ``tight``), or None without one.

        Args:
            env: The samples (``env.block``, n rows) and the context holding the obstacle.
            tight: Use the field's tighter bounds if it is a
                :class:`~cosim_validation.monitor.properties.context.TightlyBoundedDistanceField`.

        Returns:
            (n,) lower bounds in [m], or None if the field is not a :class:`BoundedDistanceField`.
        """
        field_ = env.context.obstacles[self.obstacle]
        bounded, tightly = _bounds_of(field_)
        if not bounded:
            return None
        value = self.arg.evaluate(env)
        if tight and tightly:
            fine = cast(TightlyBoundedDistanceField, field_)
            if self.arg.kind == SEGMENT:
                return fine.segment_tight_lower_bound_m(value[:, 0], value[:, 1])
            return fine.point_tight_lower_bound_m(value)
        coarse = cast(BoundedDistanceField, field_)
        if self.arg.kind == SEGMENT:
            return coarse.segment_lower_bound_m(value[:, 0], value[:, 1])
        return coarse.point_lower_bound_m(value)

    def evaluate(self, env: Env) -> np.ndarray:
        """(n,) signed distance to the obstacle [m]; NaN where the point or segment is unknown.

        Args:
            env: The samples (``env.block``, n rows) and the context holding the obstacle.
        """
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
        """(n,) the KPI's value of the run on every sample of ``env.block``.

        Args:
            env: The samples (only their number n is used) and the run's KPI values (``env.kpis``).
        """
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
        """The value of the argument at the first sample of the stage, held afterwards; NaN before.

        Args:
            env: The samples (``env.block``, n rows, their stages) and ``env.state``, which carries the held value
                from block to block and is updated here.

        Returns:
            float64 values shaped like the argument's: (n,), (n, 3) or (n, 2, 3).
        """
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
