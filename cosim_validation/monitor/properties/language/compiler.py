"""From a syntax tree to a compiled formula: names resolved, quantifiers expanded, kinds and units checked."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from cosim_validation.common.record import SupervisorMode
from cosim_validation.monitor.properties.context import MonitorContext
from cosim_validation.monitor.properties.errors import PropertyError
from cosim_validation.monitor.properties.language import formula as f
from cosim_validation.monitor.properties.language import signals as sig
from cosim_validation.monitor.properties.language import syntax as s
from cosim_validation.monitor.properties.language import terms as t
from cosim_validation.monitor.properties.language.term_resolver import (
    Obstacle,
    TermResolver,
    constant_value,
    snippet,
    start_of,
)

DOMAINS = ("joints", "obstacles")


@dataclass
class Compiled:
    """A compiled property expression.

    Attributes:
        formula: The formula tree.
        unit: Unit of the margin (m, rad, s or 1).
        requires: What the context or trace must provide: ``target``, ``self_distance``, ``obstacles``,
            ``expected``, ``actual_tip``, ``stages`` (the property names a stage); missing ones make the verdict
            UNKNOWN.
    """

    formula: f.Formula
    unit: str
    requires: frozenset[str] = field(default_factory=frozenset)
    kpis: frozenset[str] = field(default_factory=frozenset)

    @property
    def case_level(self) -> bool:
        """True for a property over KPIs (decided once per run, at its end)."""
        return bool(self.kpis)


class _Compiler(TermResolver):
    """Compiles formulas: quantifiers, temporal operators, predicates and comparisons."""

    def formula(self, node: s.Formula, env: dict[str, int | Obstacle]) -> f.Formula:
        if isinstance(node, s.Forall):
            return self.forall(node, env, 0)
        if isinstance(node, s.BoolConst):
            return f.Constant(node.value)
        if isinstance(node, s.Not):
            return f.Not(self.formula(node.operand, env))
        if isinstance(node, s.Junction):
            return (f.And if node.op == "and" else f.Or)(tuple(self.formula(op, env) for op in node.operands))
        if isinstance(node, s.Implies):
            return f.Or((f.Not(self.formula(node.left, env)), self.formula(node.right, env)))
        if isinstance(node, s.Temporal):
            return self.temporal(node, env)
        if isinstance(node, s.Predicate):
            return self.predicate(node, env)
        if isinstance(node, s.Flag):
            self.per_sample.append(node.pos)
            self.requires.add("self_collision")
            return f.FlagTest(sig.SelfCollisionTerm(), "self_collision")
        return self.compare(node, env)

    def temporal(self, node: s.Temporal, env: dict[str, int | Obstacle]) -> f.Formula:
        """``always``, ``eventually``, ``next`` or ``until`` (a per-sample use of its operands)."""
        self.per_sample.append(node.pos)
        operands = [self.formula(operand, env) for operand in node.operands]
        if node.op == "next":
            return f.Next(operands[0])
        if node.op == "until":
            return f.Until(operands[0], operands[1], self.window(node.window))
        return (f.Always if node.op == "always" else f.Eventually)(operands[0], self.window(node.window))

    def forall(self, node: s.Forall, env: dict[str, int | Obstacle], level: int) -> f.Formula:
        if level == len(node.bindings):
            return self.formula(node.body, env)
        var, domain, pos = node.bindings[level]
        if domain not in DOMAINS:
            raise self.error(f"unknown domain {domain!r}; expected one of: {', '.join(DOMAINS)}", pos)
        if var in env:
            raise self.error(f"variable {var!r} is already bound", pos)
        values: list[int | Obstacle]
        if domain == "joints":
            values = list(range(self.ctx.n_joints))
        else:
            values = [Obstacle(o) for o in self.ctx.obstacles]
            if not values:
                self.requires.add("obstacles")
                values = [Obstacle("")]  # compiled once so that the body is checked; evaluation says UNKNOWN
        parts = tuple(self.forall(node, {**env, var: v}, level + 1) for v in values)
        return parts[0] if len(parts) == 1 else f.And(parts)

    def predicate(self, node: s.Predicate, env: dict[str, int | Obstacle]) -> f.Formula:
        n_args = {"safediff": (3,), "safebound": (3,), "safedis": (2, 3), "nocollision": (2,)}[node.func]
        if len(node.args) not in n_args:
            expected = " or ".join(map(str, n_args))
            raise self.error(f"{node.func} takes {expected} arguments, got {len(node.args)}", node.pos)
        text = snippet(self.text, node.pos)
        if node.func == "safediff":
            x, y = self.scalar_pair(node.args[0], node.args[1], env, node.pos)
            eps = self.bound(node, 2, env)
            unit = self.unify(self.unify(x.unit, y.unit, node.pos), eps.unit, node.pos)
            diff = t.Apply("abs", (t.Apply("-", (x, y)),))
            return self.atom(t.Apply("-", (eps, diff)), unit, text)
        if node.func == "safebound":
            x = self.term(node.args[0], env, kinds=(t.POINT,))
            y = self.term(node.args[1], env, kinds=(t.POINT,))
            eps = self.bound(node, 2, env)
            unit = self.unify("m", eps.unit, node.pos)
            return self.atom(t.Apply("-", (eps, t.Apply("dist", (x, y)))), unit, text)
        x = self.term(node.args[0], env, kinds=(t.POINT, t.SEGMENT))
        other = self.resolve(node.args[1], env)
        if isinstance(other, Obstacle):
            dist: t.Term = self.obstacle_distance(x, other, node.args[1])
        elif node.func == "nocollision":
            raise self.error("nocollision needs an obstacle as its second argument", node.pos)
        else:
            y = self.term(node.args[1], env, kinds=(t.POINT,))
            if x.kind != t.POINT:
                raise self.error("safedis between two points takes a point first, not the needle segment", node.pos)
            dist = t.Apply("dist", (x, y))
        if len(node.args) == 3:
            delta = self.bound(node, 2, env)
            self.unify("m", delta.unit, node.pos)
            dist = t.Apply("-", (dist, delta))
        return self.atom(dist, "m", text)

    def bound(self, node: s.Predicate, index: int, env: dict[str, int | Obstacle]) -> t.Term:
        """A predicate's tolerance or clearance (argument ``index``): a scalar, never a negative number.

        A negative one asks for the impossible (a clearance of -5 cm holds inside the obstacle) and was taken.
        """
        term = self.term(node.args[index], env, kinds=(t.SCALAR,))
        value = constant_value(term)
        if value is not None and value < 0.0:
            raise self.error(
                f"{node.func}'s bound must be >= 0, got {value:g} (a distance or tolerance)", start_of(node.args[index])
            )
        return term

    def compare(self, node: s.Compare, env: dict[str, int | Obstacle]) -> f.Formula:
        left = self.term(node.left, env)
        right = self.term(node.right, env)
        if t.STAGE in (left.kind, right.kind):
            return self.stage_test(node, left, right)
        if t.MODE in (left.kind, right.kind):
            return self.mode_test(node, left, right)
        if left.kind != t.SCALAR or right.kind != t.SCALAR:
            raise self.error(f"can only compare scalars, got a {left.kind} and a {right.kind}", node.pos)
        if node.op in ("==", "!="):
            raise self.error("== and != compare stages only; use safediff(x, y, eps) for numbers", node.pos)
        unit = self.unify(left.unit, right.unit, node.pos)
        self.refuse_negative_kpi_bound(node, left, right)
        margin = t.Apply("-", (right, left) if node.op in ("<", "<=") else (left, right))
        return self.atom(margin, unit, snippet(self.text, start_of(node.left)))

    def refuse_negative_kpi_bound(self, node: s.Compare, left: t.Term, right: t.Term) -> None:
        """A comparison with a KPI (a distance, angle or duration: never negative) that never or always holds.

        ``kpi(x) < -0.003`` can never hold and ``kpi(x) > -0.003`` always does: either was taken and judged; so with
        the KPI inside arithmetic (``2 * kpi(x) < -0.001``). The ranges of both sides (:func:`value_range`) decide;
        a bare KPI against a constant is named with the constant.
        """
        names = sorted(_kpi_names(left) | _kpi_names(right))
        if not names:
            return
        below, above = (left, right) if node.op in ("<", "<=") else (right, left)  # below < above
        # the range of below - above, each KPI or other term counted once: kpi(x) < kpi(x) - 1 never holds
        low, high = difference_range(below, above)
        strict = node.op in ("<", ">")
        never = low >= 0.0 if strict else low > 0.0
        always = high < 0.0 if strict else high <= 0.0
        if not (never or always):
            return
        holds = "never" if never else "always"
        for kpi, other, bound in ((left, right, node.right), (right, left, node.left)):
            value = constant_value(other)
            if isinstance(kpi, t.KpiTerm) and value is not None:
                raise self.error(
                    f"kpi({kpi.name}) is a distance, angle or duration (>= 0): compared with {value:g} it {holds} "
                    "holds",
                    start_of(bound),
                )
        kpis = ", ".join(f"kpi({name})" for name in names)
        if low == high:  # below - above is one number: say left - right
            difference = low if below is left else -low
            raise self.error(
                f"the left side minus the right side is {difference:g} whatever {kpis} "
                f"{'is' if len(names) == 1 else 'are'}, so the comparison {holds} holds",
                node.pos,
            )
        left_range, right_range = value_range(left), value_range(right)  # for the message only
        raise self.error(
            f"{kpis} {'is' if len(names) == 1 else 'are'} never negative (a distance, angle or duration): the left "
            f"side is within [{_g(left_range)}], the right side within [{_g(right_range)}], so the comparison {holds} "
            "holds",
            node.pos,
        )

    def stage_test(self, node: s.Compare, left: t.Term, right: t.Term) -> f.Formula:
        if node.op not in ("==", "!="):
            raise self.error(f"stages compare with == or != only, got {node.op!r}", node.pos)
        const, other = (right, left) if isinstance(right, t.StageConst) else (left, right)
        if not isinstance(const, t.StageConst) or other.kind != t.STAGE:
            raise self.error("compare the stage signal with a stage name, e.g. stage == injection", node.pos)
        return f.StageTest(other, int(const.stage), node.op == "!=")

    def mode_test(self, node: s.Compare, left: t.Term, right: t.Term) -> f.Formula:
        """``supervisor == stopped``: the same integer test as a stage's, on the supervisor signal."""
        if node.op not in ("==", "!="):
            raise self.error(f"supervisor modes compare with == or != only, got {node.op!r}", node.pos)
        const, other = (right, left) if isinstance(right, t.ModeConst) else (left, right)
        if not isinstance(const, t.ModeConst) or other.kind != t.MODE:
            modes = ", ".join(m.label for m in SupervisorMode)
            raise self.error(
                f"compare the supervisor signal with a mode name ({modes}), e.g. supervisor == stopped", node.pos
            )
        return f.StageTest(other, int(const.mode), node.op == "!=")

    def atom(self, term: t.Term, unit: str, text: str) -> f.Atom:
        unit = unit or "1"
        self.units.add(unit)
        return f.Atom(term, unit, text.strip())

    def window(self, window: s.Window | None) -> tuple[float, float] | None:
        """``[a, b]`` in seconds (constants resolved), widened by :data:`WINDOW_SLACK_S` on both sides."""
        if window is None:
            return None
        a, b = (self.window_bound(bound, window.pos) for bound in (window.a, window.b))
        problem = s.window_problem(a, b)
        if problem:
            raise self.error(problem, window.pos)
        return (a - WINDOW_SLACK_S, b + WINDOW_SLACK_S)

    def window_bound(self, bound: float | str, pos: int) -> float:
        """A window's bound: a number, or a constant in seconds (a name ending ``_s``, or with no unit)."""
        if isinstance(bound, float):
            return bound
        if bound not in self.ctx.constants:
            known = ", ".join(sorted(self.ctx.constants)) or "none"
            raise self.error(f"a time window names {bound!r}, which is no constant; constants: {known}", pos)
        unit = self.constant_unit(bound, pos)
        if unit not in ("s", ""):
            raise self.error(f"a time window is in s, but constant {bound!r} is in {unit}", pos)
        return float(self.ctx.constants[bound])

    # ------------------------------------------------------------------ terms


#: Time windows are widened by this much on both sides, so that samples taken at k / rate fall inside
#: ``[a, b]`` despite floating-point rounding of their times (e.g. 0.1 + 0.5 < 0.1 * 6) [s].
WINDOW_SLACK_S = 1e-9


def value_range(term: t.Term) -> tuple[float, float]:
    """The values ``term`` can take, as far as its KPIs (never negative) and constants tell: [lo, hi].

    Args:
        term: A resolved scalar term; a signal or function other than these can be anything.
    """
    if isinstance(term, t.Const):
        return (term.value, term.value)
    if isinstance(term, t.KpiTerm):
        return (0.0, math.inf)
    if not isinstance(term, t.Apply) or term.func not in ("neg", "abs", "+", "-", "*", "/"):
        return (-math.inf, math.inf)
    if term.func == "-" and repr(term.args[0]) == repr(term.args[1]):
        return (0.0, 0.0)  # kpi(x) - kpi(x): the same value on both sides, whatever its range
    ranges = [value_range(arg) for arg in term.args]
    if term.func == "neg":
        return (-ranges[0][1], -ranges[0][0])
    if term.func == "abs":
        lo, hi = ranges[0]
        return (0.0 if lo <= 0.0 <= hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi)))
    (a_lo, a_hi), (b_lo, b_hi) = ranges
    if term.func == "+":
        return (a_lo + b_lo, a_hi + b_hi)
    if term.func == "-":
        return (a_lo - b_hi, a_hi - b_lo)
    if term.func == "/" and b_lo <= 0.0 <= b_hi:
        return (-math.inf, math.inf)
    if term.func == "/":
        b_lo, b_hi = 1.0 / b_hi, 1.0 / b_lo
    # 0 * inf is 0 here: a factor that is exactly 0 makes the product 0 whatever the other is
    products = [0.0 if x == 0.0 or y == 0.0 else x * y for x in (a_lo, a_hi) for y in (b_lo, b_hi)]
    return (min(products), max(products))


def difference_range(a: t.Term, b: t.Term) -> tuple[float, float]:
    """The values ``a - b`` can take, with a term that is on both sides counted once: [lo, hi].

    Both sides are read as sums of constants and scaled terms (``2 * kpi(x) - 1``); a term that is no sum
    (``abs(...)``, a signal) is one term with its :func:`value_range`. ``kpi(x) - (kpi(x) - 1)`` is 1, where
    the ranges of the two sides apart say only that it is within [-inf, inf].

    Args:
        a: A resolved scalar term.
        b: Another.
    """
    terms, constant = _linear(t.Apply("-", (a, b)))
    low = high = constant
    for term, factor in terms.values():
        if abs(factor) <= 1e-12:  # 2 * kpi(x) / 2 - kpi(x): cancelled up to rounding
            continue
        ends = [factor * end for end in value_range(term)]
        low, high = low + min(ends), high + max(ends)
    return (low, high)


def _linear(term: t.Term) -> tuple[dict[str, tuple[t.Term, float]], float]:
    """``term`` as a constant plus factors times terms (by the term's text): ({text: (term, factor)}, constant)."""
    if isinstance(term, t.Const):
        return {}, term.value
    if not isinstance(term, t.Apply) or term.func not in ("neg", "+", "-", "*", "/"):
        return {repr(term): (term, 1.0)}, 0.0
    parts = [_linear(arg) for arg in term.args]
    if term.func in ("neg", "+", "-"):
        signs = (-1.0,) if term.func == "neg" else (1.0, 1.0 if term.func == "+" else -1.0)
        terms: dict[str, tuple[t.Term, float]] = {}
        for (part, _), sign in zip(parts, signs, strict=True):
            for key, (inner, factor) in part.items():
                terms[key] = (inner, terms.get(key, (inner, 0.0))[1] + sign * factor)
        return terms, sum(sign * c for (_, c), sign in zip(parts, signs, strict=True))
    (left, left_c), (right, right_c) = parts
    if term.func == "*" and not left:
        return {k: (inner, left_c * factor) for k, (inner, factor) in right.items()}, left_c * right_c
    if term.func == "*" and not right:
        return {k: (inner, right_c * factor) for k, (inner, factor) in left.items()}, left_c * right_c
    if term.func == "/" and not right and right_c != 0.0:
        return {k: (inner, factor / right_c) for k, (inner, factor) in left.items()}, left_c / right_c
    return {repr(term): (term, 1.0)}, 0.0


def _kpi_names(term: t.Term) -> set[str]:
    """The KPIs ``term`` names."""
    if isinstance(term, t.KpiTerm):
        return {term.name}
    return set().union(*(_kpi_names(arg) for arg in term.args)) if isinstance(term, t.Apply) else set()


def _g(bounds: tuple[float, float]) -> str:
    return ", ".join(f"{v:g}" for v in bounds)


def compile_formula(
    name: str, text: str, tree: s.Formula, context: MonitorContext, kpi_units: Mapping[str, str] | None = None
) -> Compiled:
    """Resolve names in ``tree`` against ``context`` and check kinds and units.

    Args:
        name: Property name, for error messages.
        text: The expression's source text (``tree`` is its parse), for error messages and the atoms' texts.
        tree: The syntax tree of ``text`` (:func:`~cosim_validation.monitor.properties.language.parser.parse_formula`).
        context: Joints, obstacles and constants the names resolve against.
        kpi_units: Unit of every KPI of the set by name (the names ``kpi(name)`` may use); None: no KPIs.

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
