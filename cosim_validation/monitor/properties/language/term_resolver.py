"""Resolving the terms of an expression: names, signals, joint indices, functions, units and kinds."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from cosim_validation.common.record import Stage, SupervisorMode
from cosim_validation.monitor.properties.context import MonitorContext
from cosim_validation.monitor.properties.errors import PropertyError
from cosim_validation.monitor.properties.language import signals as sig
from cosim_validation.monitor.properties.language import syntax as s
from cosim_validation.monitor.properties.language import terms as t
from cosim_validation.monitor.properties.language.mode_entry import ModeEntry

FUNCTIONS = ("dist", "angle", "abs", "x", "y", "z", "p2m", "entry", "kpi")
STAGES = {stage.label: stage for stage in Stage}
#: The supervisor's modes by name (``supervisor == stopped``); none shares a name with a stage.
MODES = {mode.label: mode for mode in SupervisorMode}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def constant_name_problem(name: str) -> str | None:
    """Why a constant may not be called ``name``, or None.

    An expression could never name it, or would read something else: names resolve as signals, ``target``, stages
    and modes before constants.

    Args:
        name: The constant's key in the property file.
    """
    from cosim_validation.monitor.properties.language.parser import KEYWORDS

    if not _IDENTIFIER.fullmatch(name):
        return "not a name an expression can use (letters, digits and _, not starting with a digit)"
    taken = {
        **dict.fromkeys(sig.SIGNALS, "a signal"),
        **dict.fromkeys(("target", "self_collision", "self_distance"), "a signal"),
        **dict.fromkeys(STAGES, "a stage"),
        **dict.fromkeys(MODES, "a supervisor mode"),
        **dict.fromkeys(KEYWORDS, "a keyword"),
    }
    if name in taken:
        return f"the name of {taken[name]}: an expression would read that, never the constant; rename it"
    return None


@dataclass(frozen=True)
class Obstacle:
    """An obstacle named in an expression (resolved to a distance only inside p2m, safedis, nocollision)."""

    name: str


Binding = dict[str, "int | Obstacle"]


class TermResolver:
    """Turns syntax terms into typed :mod:`terms`, recording what the expression needs from the context."""

    def __init__(self, name: str, text: str, context: MonitorContext, kpi_units: Mapping[str, str]) -> None:
        self.name, self.text, self.ctx = name, text, context
        self.kpi_units = kpi_units
        self.units: set[str] = set()
        self.requires: set[str] = set()
        self.kpis: set[str] = set()
        self.per_sample: list[int] = []  # positions of temporal operators and signals (not allowed with kpi())

    def error(self, message: str, pos: int) -> PropertyError:
        """The error ``message`` at position ``pos`` of the expression.

        Args:
            message: What is wrong.
            pos: 0-based character offset of the problem in the expression.
        """
        return PropertyError(self.name, message, self.text, pos)

    # ------------------------------------------------------------------ formulas
    def scalar_pair(self, a: s.Term, b: s.Term, env: dict[str, int | Obstacle], pos: int) -> tuple[t.Term, t.Term]:
        """``a`` and ``b`` resolved as scalar terms.

        Args:
            a: The first syntax term.
            b: The second syntax term.
            env: The variables bound by ``forall``: name -> joint index or obstacle.
            pos: Position of the predicate in the expression (not used: errors point at the term at fault).
        """
        return self.term(a, env, kinds=(t.SCALAR,)), self.term(b, env, kinds=(t.SCALAR,))

    def unify(self, a: str, b: str, pos: int) -> str:
        """The common unit of ``a`` and ``b`` ("" adopts the other); an error when they differ.

        Args:
            a: A unit (``m``, ``rad``, ``s``, ``1``) or "" (a plain number).
            b: Another unit or "".
            pos: 0-based character offset in the expression that the error points at.
        """
        if a and b and a != b:
            raise self.error(f"units do not match: {a!r} and {b!r}", pos)
        return a or b

    def term(self, node: s.Term, env: dict[str, int | Obstacle], kinds: tuple[str, ...] = ()) -> t.Term:
        """``node`` as a value term, of one of ``kinds`` when given; an error for an obstacle or a joint variable.

        Args:
            node: The syntax term.
            env: The variables bound by ``forall``: name -> joint index or obstacle.
            kinds: The accepted kinds (``scalar``, ``point``, ``vector``, ``segment``, ...); empty: any.
        """
        value = self.resolve(node, env)
        if isinstance(value, Obstacle):
            message = f"obstacle {value.name!r} is not a value here (use p2m, safedis or nocollision)"
            raise self.error(message, start_of(node))
        if isinstance(value, int):
            raise self.error("a joint variable is an index: use it as q[j] or joint[j]", start_of(node))
        if kinds and value.kind not in kinds:
            raise self.error(f"expected a {' or '.join(kinds)}, got a {value.kind}", start_of(node))
        return value

    def resolve(self, node: s.Term, env: dict[str, int | Obstacle]) -> t.Term | int | Obstacle:
        """``node`` as a term, a joint index (a bound variable) or an obstacle.

        Args:
            node: The syntax term.
            env: The variables bound by ``forall``: name -> joint index or obstacle.
        """
        if isinstance(node, s.Num):
            return t.Const(node.value)
        if isinstance(node, s.Name):
            return self.resolve_name(node, env)
        if isinstance(node, s.Index):
            return self.indexed(node, env)
        if isinstance(node, s.Neg):
            inner = self.term(node.operand, env, kinds=(t.SCALAR,))
            return t.Apply("neg", (inner,), unit=inner.unit)
        if isinstance(node, s.Arith):
            return self.arith(node, env)
        return self.call(node, env)

    def arith(self, node: s.Arith, env: dict[str, int | Obstacle]) -> t.Term:
        """``+ - * /`` of two scalars, with the unit of the result; an error for units that do not combine.

        Args:
            node: The arithmetic syntax node.
            env: The variables bound by ``forall``: name -> joint index or obstacle.
        """
        a = self.term(node.left, env, kinds=(t.SCALAR,))
        b = self.term(node.right, env, kinds=(t.SCALAR,))
        if node.op in "+-":
            unit = self.unify(a.unit, b.unit, node.pos)
        elif a.unit and b.unit:
            raise self.error(f"{node.op} needs a plain number on one side, got {a.unit!r} and {b.unit!r}", node.pos)
        else:
            unit = a.unit or b.unit
            if node.op == "/" and b.unit:
                raise self.error("cannot divide by a quantity with a unit", node.pos)
            if node.op == "/" and constant_value(b) == 0.0:  # it was judged on infinities, with numpy's warning
                raise self.error("division by zero", start_of(node.right))
        term = t.Apply(node.op, (a, b), unit=unit)
        value = constant_value(term)
        if value is not None and not abs(value) <= s.MAX_NUMBER:  # a folded 1e12 * 1e12 is out of range too
            raise self.error(f"{value:g} is too large (beyond {s.MAX_NUMBER:g})", node.pos)
        return term

    def resolve_name(self, node: s.Name, env: dict[str, int | Obstacle]) -> t.Term | int | Obstacle:
        """A name: a bound variable, a signal, the target, a stage or mode, an obstacle or a constant.

        Args:
            node: The name (``tip``, ``expected.tip``, ``injection``, ``heart``, ``delta_m``, ...).
            env: The variables bound by ``forall``: name -> joint index or obstacle.
        """
        ident = node.ident
        if ident in env:
            return env[ident]
        expected = ident.startswith("expected.")
        base = ident.removeprefix("expected.")
        if base in sig.SIGNALS:
            self.per_sample.append(node.pos)
            kind, unit, indexed = sig.SIGNALS[base]
            if indexed:
                raise self.error(f"signal {ident!r} needs a joint index, e.g. {ident}[0] or {ident}[j]", node.pos)
            return self.signal(base, kind, unit, -1, expected, node.pos)
        if expected:
            raise self.error(f"unknown expected signal {ident!r}; known: {', '.join(sorted(sig.SIGNALS))}", node.pos)
        if ident == "target":
            self.per_sample.append(node.pos)
            self.requires.add("target")
            return sig.Target()
        if ident == "self_collision":
            raise self.error("self_collision is a condition: use it alone, e.g. always not self_collision", node.pos)
        if ident == "self_distance":
            self.per_sample.append(node.pos)
            self.requires.add("self_distance")
            return sig.SelfDistanceTerm()
        if ident in STAGES:
            self.requires.add("stages")
            return t.StageConst(STAGES[ident])
        if ident in MODES:
            return t.ModeConst(MODES[ident])
        if ident in self.ctx.obstacles:
            return Obstacle(ident)
        if ident in self.ctx.constants:
            return t.Const(float(self.ctx.constants[ident]), unit=self.constant_unit(ident, node.pos))
        known = sorted([*sig.SIGNALS, "target", "self_distance", *self.ctx.obstacles, *self.ctx.constants])
        message = f"unknown name {ident!r}; known signals, obstacles and constants: {', '.join(known)}"
        raise self.error(message, node.pos)

    def constant_unit(self, name: str, pos: int) -> str:
        """The unit a constant's name declares (``_m``, ``_rad``, ``_s``), or "" (it adopts its partner's).

        A bound in metres added to one in radians, or compared with an angle, was taken; a name in another unit
        (``_deg``, ``_mm``) was read as if in the language's own (1 degree judged as 1 rad).

        Args:
            name: The constant's name.
            pos: Where the expression names it (0-based character offset), for the error.

        Raises:
            PropertyError: A name in another unit, saying the unit to give it in.
        """
        suffix = name.rsplit("_", 1)[-1] if "_" in name else ""
        # another unit, or one of ours in capitals (_M: metres or mega? _MM: millimetres)
        if suffix.lower() in _OTHER_UNITS or (suffix.lower() in _UNITS and suffix not in _UNITS):
            own = _OTHER_UNITS.get(suffix.lower(), suffix.lower())
            raise self.error(
                f"constant {name!r} is named in {suffix}, but properties compute in m, rad and s: give it in {own} "
                f"as {name[: -len(suffix)]}{own}",
                pos,
            )
        return suffix if suffix in _UNITS else ""

    def signal(self, base: str, kind: str, unit: str, joint: int, expected: bool, pos: int) -> t.Term:
        """The signal ``base`` (of the expected robot when ``expected``), noting what it needs from the context.

        Args:
            base: The signal's name without ``expected.``, a key of :data:`signals.SIGNALS`.
            kind: Its kind (``scalar``, ``point``, ...).
            unit: Its unit (``m``, ``rad``, ``s``, ``1``).
            joint: 0-based joint index of an indexed signal; -1 for the others.
            expected: Whether it is the expected (planned) robot's signal.
            pos: Position of the name in the expression (not used).
        """
        if expected:
            self.requires.add("expected")
        if base.startswith("actual_tip"):
            self.requires.add("actual_tip")
        if base == "stage":
            self.requires.add("stages")
        return sig.Signal(base, kind, unit, joint, expected)

    def indexed(self, node: s.Index, env: dict[str, int | Obstacle]) -> t.Term:
        """``name[index]``: a joint limit or an indexed signal of one joint.

        Args:
            node: The indexed syntax node.
            env: The variables bound by ``forall``: name -> joint index or obstacle.
        """
        self.per_sample.append(node.pos)
        base = node.base.ident.removeprefix("expected.")
        if node.base.ident in sig.JOINT_LIMITS:
            self.requires.add("joint_limits")
            return sig.JointLimit(upper=sig.JOINT_LIMITS[base], joint=self.joint_index(node, env))
        if base not in sig.SIGNALS or not sig.SIGNALS[base][2]:
            indexed = ", ".join([*(n for n, spec in sig.SIGNALS.items() if spec[2]), *sig.JOINT_LIMITS])
            raise self.error(f"{node.base.ident!r} cannot be indexed; indexed signals: {indexed}", node.pos)
        joint = self.joint_index(node, env)
        kind, unit, _ = sig.SIGNALS[base]
        return self.signal(base, kind, unit, joint, node.base.ident.startswith("expected."), node.pos)

    def joint_index(self, node: s.Index, env: dict[str, int | Obstacle]) -> int:
        """The 0-based joint index of ``name[index]`` (a literal or a ``forall j in joints`` variable).

        Args:
            node: The indexed syntax node.
            env: The variables bound by ``forall``: name -> joint index or obstacle.
        """
        index = self.resolve(node.index, env)
        if isinstance(index, t.Const) and float(index.value).is_integer():
            joint = int(index.value)
        elif isinstance(index, int):
            joint = index
        else:
            raise self.error("a joint index is an integer or a variable bound by 'forall j in joints'", node.pos)
        if not 0 <= joint < self.ctx.n_joints:
            raise self.error(
                f"joint index {joint} out of range: the robot has {self.ctx.n_joints} joints "
                f"(0..{self.ctx.n_joints - 1})",
                start_of(node.index),
            )
        return joint

    def call(self, node: s.Call[s.Term], env: dict[str, int | Obstacle]) -> t.Term:
        """A function call (:data:`FUNCTIONS`), its arguments checked for number and kind.

        Args:
            node: The call syntax node.
            env: The variables bound by ``forall``: name -> joint index or obstacle.
        """
        arity = {"dist": 2, "angle": 2, "abs": 1, "x": 1, "y": 1, "z": 1, "p2m": 2, "entry": 2, "kpi": 1}
        if node.func not in arity:
            raise self.error(f"unknown function {node.func!r}; known: {', '.join(FUNCTIONS)}", node.pos)
        if len(node.args) != arity[node.func]:
            raise self.error(f"{node.func} takes {arity[node.func]} arguments, got {len(node.args)}", node.pos)
        if node.func == "kpi":
            return self.kpi(node)
        if node.func == "dist":
            a, b = (self.term(x, env, kinds=(t.POINT,)) for x in node.args)
            return t.Apply("dist", (a, b), unit="m")
        if node.func == "angle":
            a, b = (self.term(x, env, kinds=(t.VECTOR,)) for x in node.args)
            return t.Apply("angle", (a, b), unit="rad")
        if node.func == "abs":
            a = self.term(node.args[0], env, kinds=(t.SCALAR,))
            return t.Apply("abs", (a,), unit=a.unit)
        if node.func in ("x", "y", "z"):
            a = self.term(node.args[0], env, kinds=(t.POINT, t.VECTOR))
            return t.Apply(node.func, (a,), unit=a.unit)
        if node.func == "p2m":
            x = self.term(node.args[0], env, kinds=(t.POINT, t.SEGMENT))
            obstacle = self.resolve(node.args[1], env)
            if not isinstance(obstacle, Obstacle):
                raise self.error("p2m needs an obstacle as its second argument", start_of(node.args[1]))
            return self.obstacle_distance(x, obstacle, node.args[1])
        x = self.term(node.args[0], env)
        stage = self.resolve(node.args[1], env)
        if isinstance(stage, t.ModeConst):  # where the current stay in a supervisor mode began
            return ModeEntry(x, stage.mode)
        if not isinstance(stage, t.StageConst):
            names = f"stages: {', '.join(STAGES)}; supervisor modes: {', '.join(MODES)}"
            raise self.error(f"entry needs a stage or supervisor mode name second; {names}", start_of(node.args[1]))
        return t.Entry(x, stage.stage)

    def kpi(self, node: s.Call[s.Term]) -> t.Term:
        """``kpi(name)``: a KPI of the set, in its unit.

        Args:
            node: The ``kpi(...)`` call, with one argument (checked by :meth:`call`).
        """
        arg = node.args[0]
        if not isinstance(arg, s.Name) or arg.ident not in self.kpi_units:
            known = ", ".join(self.kpi_units) or "none"
            raise self.error(f"kpi() takes the name of a KPI of the set; KPIs: {known}", start_of(arg))
        self.kpis.add(arg.ident)
        return t.KpiTerm(arg.ident, self.kpi_units[arg.ident])

    def obstacle_distance(self, x: t.Term, obstacle: Obstacle, node: s.Term) -> t.Term:
        """The signed distance of ``x`` to ``obstacle`` [m]; 0 when the context has no obstacles.

        Args:
            x: A point or segment term, in base_link [m].
            obstacle: The obstacle; name "" when the context has none.
            node: The syntax term that names the obstacle (its position is noted as a per-sample use).
        """
        self.per_sample.append(start_of(node))
        if not obstacle.name:
            return t.Const(0.0, unit="m")  # no obstacles in the context: the verdict is UNKNOWN anyway
        return t.ObstacleDistance(x, obstacle.name)


def start_of(node: s.Term | s.Formula) -> int:
    """The position of ``node`` in the text (of its left operand for arithmetic).

    Args:
        node: A syntax term or formula.
    """
    if isinstance(node, s.Arith):
        return start_of(node.left)
    return node.pos


_BOUNDARY = re.compile(r"\s+(and|or|until|->)\b|\s*->")


def snippet(text: str, start: int) -> str:
    """The source of the atom starting at ``start``: up to its closing parenthesis or the next connective.

    Args:
        text: The property expression.
        start: 0-based character offset in ``text`` where the atom starts.
    """
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth < 0:
                return text[start:i].strip()
        elif depth == 0 and _BOUNDARY.match(text, i):
            return text[start:i].strip()
    return text[start:].strip()


#: the units a constant's name may declare (the language's own)
_UNITS = ("m", "rad", "s")
#: unit suffixes of constant names in another unit than the language's (m, rad, s), and the language's unit
_OTHER_UNITS = {
    **dict.fromkeys(("mm", "cm", "dm", "um", "nm", "km"), "m"),
    **dict.fromkeys(("deg", "degree", "degrees", "mrad", "urad"), "rad"),
    **dict.fromkeys(("ms", "us", "ns", "min"), "s"),
}


def constant_value(term: t.Term) -> float | None:
    """The number ``term`` always is, or None if it depends on the samples.

    Literals and constants, negated, added, subtracted, multiplied or divided, are folded.

    Args:
        term: A resolved term.
    """
    if isinstance(term, t.Const):
        return term.value
    if not isinstance(term, t.Apply) or term.func not in _FOLDED:
        return None
    values = [constant_value(arg) for arg in term.args]
    known = [v for v in values if v is not None]
    if len(known) != len(values) or len(known) != (1 if term.func == "neg" else 2):
        return None
    if term.func == "/" and known[1] == 0.0:
        return None  # refused where it is written (division by zero)
    return _FOLDED[term.func](*known)


#: the arithmetic constant_value folds: negation and the four binary operators
_FOLDED: dict[str, Callable[..., float]] = {
    "neg": lambda a: -a,
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
}
