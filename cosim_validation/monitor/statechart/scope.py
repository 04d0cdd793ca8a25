"""The names an expression of a machine may use, and parsing guards and actions against them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.record import Stage
from cosim_validation.monitor.statechart.errors import ExpressionError, MachineError
from cosim_validation.monitor.statechart.evaluation import FUNCTIONS, evaluate
from cosim_validation.monitor.statechart.expression import (
    Attr,
    Expr,
    ListLit,
    bounded,
    free_names,
    functions_used,
    parse_action,
    parse_expression,
    subexpressions,
)
from cosim_validation.monitor.statechart.model import Action, Guard
from cosim_validation.monitor.syntax_tree import Call, Const, Infix, Name, Prefix


class ExpressionScope:
    """What guards and actions of one machine can refer to.

    Args:
        source: The machine file (for errors).
        parameters: Constants.
        variables: Variables with their initial values.
        signals: Names the host provides each step.
        guards: Named guards (inputs and expressions), inlined where a guard expression names them.
        commands: Declared controller commands.
    """

    def __init__(
        self,
        source: str,
        parameters: Mapping[str, Any],
        variables: Mapping[str, Any],
        signals: Mapping[str, str],
        guards: Mapping[str, Guard],
        commands: Mapping[str, str],
    ) -> None:
        self.source = source
        self.parameters = parameters
        self.variables = variables
        self.signals = signals
        self.guards = guards
        self.commands = commands
        inputs = [name for name, guard in guards.items() if guard.expr is None]
        self.names = {*parameters, *variables, *signals, *inputs}
        self._inlined: dict[str, Expr] = {}  # each named guard expanded once, then shared

    def expression(self, node: ConfigNode) -> Expr:
        """Parse a guard-like expression at ``node`` with named guards inlined; check every name.

        Args:
            node: The expression's entry in the machine file (its string value, file and key for errors).

        Raises:
            MachineError: The text does not parse, or :meth:`checked` rejects it.
        """
        text = node.to_str()
        try:
            parsed = parse_expression(text)
        except ExpressionError as exc:
            raise MachineError(node.source, node.key, str(exc)) from None
        return self.checked(parsed, node)

    def checked(self, expr: Expr, node: ConfigNode) -> Expr:
        """``expr`` with named guards inlined, bounded (nesting, size) and every name checked.

        Args:
            expr: A parsed expression.
            node: Its entry in the machine file, for error messages.

        Raises:
            MachineError: Nested too deep or too big once inlined, or an unknown name or function (names the
                file and the key of ``node``).
        """
        try:
            inlined = bounded(self.inline(expr, node), str(node.value))
        except ExpressionError as exc:
            raise MachineError(node.source, node.key, str(exc)) from None
        self.check_names(inlined, node)
        self.check_constants(inlined, node)
        return inlined

    def check_constants(self, expr: Expr, node: ConfigNode) -> None:
        """Raise for what would fail or mislead on every step, found now rather than when a case runs.

        A fuzzy tolerance (``x ~ tol``) made of parameters and numbers only must be a finite number >= 0 (a
        negative one failed every case's verdict at its first step); the ``stage`` signal compared with a text
        must be compared with a stage's label (``stage == "injektion"`` was never true: a false verdict on every
        run).

        Args:
            expr: An expression with named guards inlined.
            node: Its entry in the machine file, for error messages.

        Raises:
            MachineError: Names the file, the key and the value.
        """
        for part in subexpressions(expr):
            if not isinstance(part, Infix):
                continue
            if part.op == "~" and free_names(part.right) <= set(self.parameters):
                try:
                    tolerance = float(evaluate(part.right, self.parameters))
                except (ExpressionError, TypeError, ValueError):
                    continue  # not a number: evaluation says so with its own words
                if not 0.0 <= tolerance < float("inf"):
                    raise MachineError(
                        node.source,
                        node.key,
                        f"fuzzy tolerance {tolerance!r} in {node.value!r}; expected a number >= 0",
                    )
            if part.op in ("==", "!=") and "stage" in self.signals:
                for side, other in ((part.left, part.right), (part.right, part.left)):
                    if side == Name("stage") and isinstance(other, Const) and isinstance(other.value, str):
                        labels = [stage.label for stage in Stage]
                        if other.value not in labels:
                            raise MachineError(
                                node.source,
                                node.key,
                                f"stage {part.op} {other.value!r}: no stage is called so; stages: {', '.join(labels)}",
                            )

    def inline(self, expr: Expr, node: ConfigNode, seen: tuple[str, ...] = ()) -> Expr:
        """``expr`` with every named expression guard replaced by its expression.

        Input guards (no expression) stay names. Each named guard is expanded once and then shared.

        Args:
            expr: A parsed expression.
            node: Its entry in the machine file, for error messages.
            seen: Names of the guards being expanded around ``expr``, outermost first, to detect cycles.

        Raises:
            MachineError: Named guards refer to each other in a cycle.
        """
        if isinstance(expr, Name):
            name = expr.ident
            guard = self.guards.get(name)
            if guard is None or guard.expr is None:
                return expr
            if name in seen:
                cycle = " -> ".join([*seen, name])
                raise MachineError(node.source, node.key, f"guards refer to each other in a cycle: {cycle}")
            if name not in self._inlined:  # guards using the previous one twice each: 2**n nodes unshared
                self._inlined[name] = self.inline(guard.expr, node, (*seen, name))
            return self._inlined[name]
        if isinstance(expr, Attr):
            return Attr(self.inline(expr.base, node, seen), expr.name)
        if isinstance(expr, Call):
            return Call(expr.func, tuple(self.inline(a, node, seen) for a in expr.args), expr.pos)
        if isinstance(expr, ListLit):
            return ListLit(tuple(self.inline(a, node, seen) for a in expr.items))
        if isinstance(expr, Prefix):
            return Prefix(expr.op, self.inline(expr.operand, node, seen), expr.pos)
        if isinstance(expr, Infix):
            return Infix(expr.op, self.inline(expr.left, node, seen), self.inline(expr.right, node, seen), expr.pos)
        return expr

    def check_names(self, expr: Expr, node: ConfigNode) -> None:
        """Raise for a name or function the machine does not declare.

        Args:
            expr: An expression with named guards inlined.
            node: Its entry in the machine file, for error messages.

        Raises:
            MachineError: A name that is no parameter, variable, signal or input guard, or an unknown function.
        """
        unknown = sorted(free_names(expr) - self.names)
        if unknown:
            known = ", ".join(sorted(self.names)) or "none"
            raise MachineError(
                node.source,
                node.key,
                f"unknown name {unknown[0]!r} in {node.value!r}; declared parameters, variables, signals "
                f"and input guards: {known}",
            )
        functions = sorted(functions_used(expr) - set(FUNCTIONS))
        if functions:
            raise MachineError(
                node.source, node.key, f"unknown function {functions[0]!r}; functions: {', '.join(FUNCTIONS)}"
            )

    def action(self, node: ConfigNode) -> Action:
        """Parse one action: a declared command, or ``variable = expression`` for a declared variable.

        Args:
            node: The action's entry in the machine file, a string.

        Raises:
            MachineError: The action does not parse, names an undeclared command or variable, or its
                expression fails :meth:`checked`.
        """
        text = node.to_str()
        try:
            parsed = parse_action(text)
        except ExpressionError as exc:
            raise MachineError(node.source, node.key, str(exc)) from None
        if isinstance(parsed, str):
            if parsed not in self.commands:
                known = ", ".join(self.commands) or "none"
                raise MachineError(node.source, node.key, f"unknown command {parsed!r}; commands: {known}")
            return Action(text, command=parsed)
        if parsed.name not in self.variables:
            known = ", ".join(self.variables) or "none"
            raise MachineError(
                node.source, node.key, f"assignment to undeclared variable {parsed.name!r}; variables: {known}"
            )
        value = self.checked(parsed.value, node)
        return Action(text, assignment=type(parsed)(parsed.name, value))

    def actions(self, node: ConfigNode | None) -> tuple[Action, ...]:
        """A list of actions (or one action as a string); () when absent.

        Args:
            node: The entry (e.g. a state's ``entry``), a string or a list of strings; None when absent.
        """
        if node is None:
            return ()
        if isinstance(node.value, str):
            return (self.action(node),)
        return tuple(self.action(item) for item in node.elements())
