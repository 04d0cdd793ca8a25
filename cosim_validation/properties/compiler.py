"""From a syntax tree to a compiled formula: names resolved, quantifiers expanded, kinds and units checked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from cosim_validation.properties import formula as f
from cosim_validation.properties import syntax as s
from cosim_validation.properties import terms as t
from cosim_validation.properties.context import MonitorContext
from cosim_validation.properties.errors import PropertyError
from cosim_validation.record import Stage

DOMAINS = ("joints", "obstacles")
FUNCTIONS = ("dist", "angle", "abs", "x", "y", "z", "p2m", "entry", "kpi")
_STAGES = {stage.label: stage for stage in Stage}


@dataclass
class Compiled:
    """A compiled property expression.

    Attributes:
        formula: The formula tree.
        unit: Unit of the margin (m, rad, s or 1).
        requires: What the context or trace must provide: ``target``, ``self_distance``, ``obstacles``,
            ``expected``, ``actual_tip``; missing ones make the verdict UNKNOWN.
    """

    formula: f.Formula
    unit: str
    requires: frozenset[str] = field(default_factory=frozenset)
    kpis: frozenset[str] = field(default_factory=frozenset)

    @property
    def case_level(self) -> bool:
        """True for a property over KPIs (decided once per run, at its end)."""
        return bool(self.kpis)


@dataclass(frozen=True)
class _Obstacle:
    name: str


class _Compiler:
    def __init__(self, name: str, text: str, context: MonitorContext, kpi_units: Mapping[str, str]) -> None:
        self.name, self.text, self.ctx = name, text, context
        self.kpi_units = kpi_units
        self.units: set[str] = set()
        self.requires: set[str] = set()
        self.kpis: set[str] = set()
        self.per_sample: list[int] = []  # positions of temporal operators and signals (not allowed with kpi())

    def error(self, message: str, pos: int) -> PropertyError:
        return PropertyError(self.name, message, self.text, pos)

    # ------------------------------------------------------------------ formulas
    def formula(self, node: s.Formula, env: dict[str, int | _Obstacle]) -> f.Formula:
        if isinstance(node, s.Forall):
            return self.forall(node, env, 0)
        if isinstance(node, s.BoolConst):
            return f.Constant(node.value)
        if isinstance(node, s.Not):
            return f.Not(self.formula(node.operand, env))
        if isinstance(node, s.And):
            return f.And(tuple(self.formula(op, env) for op in node.operands))
        if isinstance(node, s.Or):
            return f.Or(tuple(self.formula(op, env) for op in node.operands))
        if isinstance(node, s.Implies):
            return f.Or((f.Not(self.formula(node.left, env)), self.formula(node.right, env)))
        if isinstance(node, s.Unary):
            self.per_sample.append(node.pos)
            operand = self.formula(node.operand, env)
            if node.op == "next":
                return f.Next(operand)
            return (f.Always if node.op == "always" else f.Eventually)(operand, _widen(node.window))
        if isinstance(node, s.Until):
            self.per_sample.append(node.pos)
            return f.Until(self.formula(node.left, env), self.formula(node.right, env), _widen(node.window))
        if isinstance(node, s.Predicate):
            return self.predicate(node, env)
        if isinstance(node, s.Flag):
            self.per_sample.append(node.pos)
            self.requires.add("self_collision")
            return f.FlagTest(t.SelfCollisionTerm())
        return self.compare(node, env)

    def forall(self, node: s.Forall, env: dict[str, int | _Obstacle], level: int) -> f.Formula:
        if level == len(node.bindings):
            return self.formula(node.body, env)
        var, domain, pos = node.bindings[level]
        if domain not in DOMAINS:
            raise self.error(f"unknown domain {domain!r}; expected one of: {', '.join(DOMAINS)}", pos)
        if var in env:
            raise self.error(f"variable {var!r} is already bound", pos)
        values: list[int | _Obstacle]
        if domain == "joints":
            values = list(range(self.ctx.n_joints))
        else:
            values = [_Obstacle(o) for o in self.ctx.obstacles]
            if not values:
                self.requires.add("obstacles")
                values = [_Obstacle("")]  # compiled once so that the body is checked; evaluation says UNKNOWN
        parts = tuple(self.forall(node, {**env, var: v}, level + 1) for v in values)
        return parts[0] if len(parts) == 1 else f.And(parts)

    def predicate(self, node: s.Predicate, env: dict[str, int | _Obstacle]) -> f.Formula:
        n_args = {"safediff": (3,), "safebound": (3,), "safedis": (2, 3), "nocollision": (2,)}[node.name]
        if len(node.args) not in n_args:
            expected = " or ".join(map(str, n_args))
            raise self.error(f"{node.name} takes {expected} arguments, got {len(node.args)}", node.pos)
        text = self.text[node.pos :]
        if node.name == "safediff":
            x, y = self.scalar_pair(node.args[0], node.args[1], env, node.pos)
            eps = self.term(node.args[2], env, kinds=(t.SCALAR,))
            unit = self.unify(self.unify(x.unit, y.unit, node.pos), eps.unit, node.pos)
            diff = t.Apply("abs", (t.Apply("-", (x, y)),))
            return self.atom(t.Apply("-", (eps, diff)), unit, text)
        if node.name == "safebound":
            x = self.term(node.args[0], env, kinds=(t.POINT,))
            y = self.term(node.args[1], env, kinds=(t.POINT,))
            eps = self.term(node.args[2], env, kinds=(t.SCALAR,))
            unit = self.unify("m", eps.unit, node.pos)
            return self.atom(t.Apply("-", (eps, t.Apply("dist", (x, y)))), unit, text)
        x = self.term(node.args[0], env, kinds=(t.POINT, t.SEGMENT))
        other = self.resolve(node.args[1], env)
        if isinstance(other, _Obstacle):
            dist: t.Term = self.obstacle_distance(x, other, node.args[1])
        elif node.name == "nocollision":
            raise self.error("nocollision needs an obstacle as its second argument", node.pos)
        else:
            y = self.term(node.args[1], env, kinds=(t.POINT,))
            if x.kind != t.POINT:
                raise self.error("safedis between two points takes a point first, not the needle segment", node.pos)
            dist = t.Apply("dist", (x, y))
        if len(node.args) == 3:
            delta = self.term(node.args[2], env, kinds=(t.SCALAR,))
            self.unify("m", delta.unit, node.pos)
            dist = t.Apply("-", (dist, delta))
        return self.atom(dist, "m", text)

    def compare(self, node: s.Compare, env: dict[str, int | _Obstacle]) -> f.Formula:
        left = self.term(node.left, env)
        right = self.term(node.right, env)
        if t.STAGE in (left.kind, right.kind):
            return self.stage_test(node, left, right)
        if left.kind != t.SCALAR or right.kind != t.SCALAR:
            raise self.error(f"can only compare scalars, got a {left.kind} and a {right.kind}", node.pos)
        if node.op in ("==", "!="):
            raise self.error("== and != compare stages only; use safediff(x, y, eps) for numbers", node.pos)
        unit = self.unify(left.unit, right.unit, node.pos)
        margin = t.Apply("-", (right, left) if node.op in ("<", "<=") else (left, right))
        return self.atom(margin, unit, self.text[_start(node.left) : _end(node, self.text)])

    def stage_test(self, node: s.Compare, left: t.Term, right: t.Term) -> f.Formula:
        if node.op not in ("==", "!="):
            raise self.error(f"stages compare with == or != only, got {node.op!r}", node.pos)
        const, other = (right, left) if isinstance(right, t.StageConst) else (left, right)
        if not isinstance(const, t.StageConst) or other.kind != t.STAGE:
            raise self.error("compare the stage signal with a stage name, e.g. stage == injection", node.pos)
        return f.StageTest(other, int(const.stage), node.op == "!=")

    def atom(self, term: t.Term, unit: str, text: str) -> f.Atom:
        unit = unit or "1"
        self.units.add(unit)
        return f.Atom(term, unit, text.strip())

    # ------------------------------------------------------------------ terms
    def scalar_pair(self, a: s.Term, b: s.Term, env: dict[str, int | _Obstacle], pos: int) -> tuple[t.Term, t.Term]:
        return self.term(a, env, kinds=(t.SCALAR,)), self.term(b, env, kinds=(t.SCALAR,))

    def unify(self, a: str, b: str, pos: int) -> str:
        if a and b and a != b:
            raise self.error(f"units do not match: {a!r} and {b!r}", pos)
        return a or b

    def term(self, node: s.Term, env: dict[str, int | _Obstacle], kinds: tuple[str, ...] = ()) -> t.Term:
        value = self.resolve(node, env)
        if isinstance(value, _Obstacle):
            message = f"obstacle {value.name!r} is not a value here (use p2m, safedis or nocollision)"
            raise self.error(message, _start(node))
        if isinstance(value, int):
            raise self.error("a joint variable is an index: use it as q[j] or joint[j]", _start(node))
        if kinds and value.kind not in kinds:
            raise self.error(f"expected a {' or '.join(kinds)}, got a {value.kind}", _start(node))
        return value

    def resolve(self, node: s.Term, env: dict[str, int | _Obstacle]) -> t.Term | int | _Obstacle:
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

    def arith(self, node: s.Arith, env: dict[str, int | _Obstacle]) -> t.Term:
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
        return t.Apply(node.op, (a, b), unit=unit)

    def resolve_name(self, node: s.Name, env: dict[str, int | _Obstacle]) -> t.Term | int | _Obstacle:
        ident = node.ident
        if ident in env:
            return env[ident]
        expected = ident.startswith("expected.")
        base = ident.removeprefix("expected.")
        if base in t.SIGNALS:
            self.per_sample.append(node.pos)
            kind, unit, indexed = t.SIGNALS[base]
            if indexed:
                raise self.error(f"signal {ident!r} needs a joint index, e.g. {ident}[0] or {ident}[j]", node.pos)
            return self.signal(base, kind, unit, -1, expected, node.pos)
        if expected:
            raise self.error(f"unknown expected signal {ident!r}; known: {', '.join(sorted(t.SIGNALS))}", node.pos)
        if ident == "target":
            self.per_sample.append(node.pos)
            self.requires.add("target")
            return t.Target()
        if ident == "self_collision":
            raise self.error("self_collision is a condition: use it alone, e.g. always not self_collision", node.pos)
        if ident == "self_distance":
            self.per_sample.append(node.pos)
            self.requires.add("self_distance")
            return t.SelfDistanceTerm()
        if ident in _STAGES:
            return t.StageConst(_STAGES[ident])
        if ident in self.ctx.obstacles:
            return _Obstacle(ident)
        if ident in self.ctx.constants:
            return t.Const(float(self.ctx.constants[ident]))
        known = sorted([*t.SIGNALS, "target", "self_distance", *self.ctx.obstacles, *self.ctx.constants])
        message = f"unknown name {ident!r}; known signals, obstacles and constants: {', '.join(known)}"
        raise self.error(message, node.pos)

    def signal(self, base: str, kind: str, unit: str, joint: int, expected: bool, pos: int) -> t.Term:
        if expected:
            self.requires.add("expected")
        if base.startswith("actual_tip"):
            self.requires.add("actual_tip")
        return t.Signal(base, kind, unit, joint, expected)

    def indexed(self, node: s.Index, env: dict[str, int | _Obstacle]) -> t.Term:
        self.per_sample.append(node.pos)
        base = node.base.ident.removeprefix("expected.")
        if base not in t.SIGNALS or not t.SIGNALS[base][2]:
            indexed = ", ".join(n for n, spec in t.SIGNALS.items() if spec[2])
            raise self.error(f"{node.base.ident!r} cannot be indexed; indexed signals: {indexed}", node.pos)
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
                _start(node.index),
            )
        kind, unit, _ = t.SIGNALS[base]
        return self.signal(base, kind, unit, joint, node.base.ident.startswith("expected."), node.pos)

    def call(self, node: s.Call, env: dict[str, int | _Obstacle]) -> t.Term:
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
            if not isinstance(obstacle, _Obstacle):
                raise self.error("p2m needs an obstacle as its second argument", _start(node.args[1]))
            return self.obstacle_distance(x, obstacle, node.args[1])
        x = self.term(node.args[0], env)
        stage = self.resolve(node.args[1], env)
        if not isinstance(stage, t.StageConst):
            raise self.error(f"entry needs a stage name second; stages: {', '.join(_STAGES)}", _start(node.args[1]))
        return t.Entry(x, stage.stage)

    def kpi(self, node: s.Call) -> t.Term:
        arg = node.args[0]
        if not isinstance(arg, s.Name) or arg.ident not in self.kpi_units:
            known = ", ".join(self.kpi_units) or "none"
            raise self.error(f"kpi() takes the name of a KPI of the set; KPIs: {known}", _start(arg))
        self.kpis.add(arg.ident)
        return t.KpiTerm(arg.ident, self.kpi_units[arg.ident])

    def obstacle_distance(self, x: t.Term, obstacle: _Obstacle, node: s.Term) -> t.Term:
        self.per_sample.append(_start(node))
        if not obstacle.name:
            return t.Const(0.0, unit="m")  # no obstacles in the context: the verdict is UNKNOWN anyway
        return t.ObstacleDistance(x, obstacle.name)


#: Time windows are widened by this much on both sides, so that samples taken at k / rate fall inside
#: ``[a, b]`` despite floating-point rounding of their times (e.g. 0.1 + 0.5 < 0.1 * 6) [s].
WINDOW_SLACK_S = 1e-9


def _widen(window: s.Window | None) -> s.Window | None:
    return None if window is None else (window[0] - WINDOW_SLACK_S, window[1] + WINDOW_SLACK_S)


def _start(node: s.Term | s.Formula) -> int:
    if isinstance(node, s.Arith):
        return _start(node.left)
    return node.pos


def _end(node: s.Compare, text: str) -> int:
    return len(text)


def compile_formula(
    name: str, text: str, tree: s.Formula, context: MonitorContext, kpi_units: Mapping[str, str] | None = None
) -> Compiled:
    """Resolve names in ``tree`` against ``context`` and check kinds and units.

    Raises:
        PropertyError: Unknown signal, joint, obstacle, function or domain; wrong argument kinds; mixed units.
    """
    compiler = _Compiler(name, text, context, kpi_units or {})
    formula = compiler.formula(tree, {})
    if compiler.kpis and compiler.per_sample:
        raise PropertyError(
            name,
            "a property over kpi() values is decided once per run: it may combine kpi() values and numbers "
            "only, without signals or temporal operators",
            text,
            min(compiler.per_sample),
        )
    units = compiler.units or {"1"}
    quantitative = units - {"1"}
    if len(quantitative) > 1:
        raise PropertyError(
            name, f"mixes margins in {' and '.join(sorted(quantitative))}: write one property per unit", text, 0
        )
    unit = next(iter(quantitative)) if quantitative else "1"
    return Compiled(formula, unit, frozenset(compiler.requires), frozenset(compiler.kpis))
