"""Parser of the property expression language (grammar in docs/PROPERTIES.md).

::

    formula  := 'forall' binding (',' binding)* ':' formula | implies
    binding  := NAME 'in' NAME                      # domains: joints, obstacles
    implies  := or ('->' implies)?                  # right-associative
    or       := and ('or' and)*
    and      := until ('and' until)*
    until    := unary ('until' window? unary)?
    unary    := 'not' unary | ('always' | 'eventually') window? unary | 'next' unary | primary
    window   := '[' bound ',' bound ']'             # seconds after the current sample, 0 <= a <= b
    bound    := NUMBER | NAME                       # a constant in seconds (window_s)
    primary  := 'true' | 'false' | FLAG | PREDICATE '(' args ')' | '(' formula ')' | term CMP term
    term     := product (('+' | '-') product)*
    product  := factor (('*' | '/') factor)*
    factor   := '-' factor | NUMBER | NAME ('[' term ']')? | NAME '(' args ')' | '(' term ')'
    CMP      := '<' | '<=' | '>' | '>=' | '==' | '!='
"""

from __future__ import annotations

from cosim_validation.monitor.properties.errors import PropertyError
from cosim_validation.monitor.properties.language import syntax as s
from cosim_validation.monitor.syntax_bounds import tree_problem
from cosim_validation.monitor.tokens import Lexicon, Token, TokenCursor, TokenError
from cosim_validation.monitor.tokens import tokenize as lex

PREDICATES = frozenset({"safediff", "safebound", "safedis", "nocollision"})
FLAGS = frozenset({"self_collision"})  # boolean signals usable as conditions
KEYWORDS = frozenset({"forall", "in", "always", "eventually", "next", "until", "not", "and", "or", "true", "false"})
_CMP = frozenset({"<", "<=", ">", ">=", "==", "!="})
#: The operators of the property language (a dotted name, ``constants.x``, is one name)
LEXICON = Lexicon(("->", "<=", ">=", "==", "!=", "<", ">", "(", ")", "[", "]", ",", ":", "+", "-", "*", "/"), True)


def tokenize(text: str, name: str = "") -> list[Token]:
    """Split ``text`` into tokens (:mod:`cosim_validation.monitor.tokens`).

    Args:
        text: The property expression.
        name: Property name for error messages.

    Raises:
        PropertyError: A character that starts no token.
    """
    try:
        return lex(text, LEXICON)
    except TokenError as exc:
        raise PropertyError(name, exc.message, text, exc.pos) from None


class _Parser(TokenCursor):
    def __init__(self, text: str, name: str) -> None:
        super().__init__(text, tokenize(text, name))
        self.name = name

    # ------------------------------------------------------------------ helpers
    def error(self, message: str, tok: Token | None = None) -> PropertyError:
        tok = tok or self.token
        return PropertyError(self.name, message, self.text, tok.pos)

    def expect_op(self, op: str) -> Token:
        if not self.at("op", op):
            found = repr(self.token.text) if self.token.kind != "end" else "the end of the expression"
            raise self.error(f"expected {op!r}, found {found}")
        return self.take()

    # ------------------------------------------------------------------ formulas
    def parse(self) -> s.Formula:
        if self.token.kind == "end":
            raise self.error("empty expression")
        formula = self.formula()
        if self.token.kind != "end":
            raise self.error(f"unexpected {self.token.text!r} after a complete formula")
        problem = tree_problem(formula)  # a chain of thousands of operands is evaluated recursively
        if problem is not None:
            raise PropertyError(self.name, problem)
        return formula

    def formula(self) -> s.Formula:
        with self.deeper():  # every parenthesised formula comes back here
            return self._formula()

    def _formula(self) -> s.Formula:
        if self.at("name", "forall"):
            start = self.take()
            bindings = [self.binding()]
            while self.at("op", ","):
                self.take()
                bindings.append(self.binding())
            self.expect_op(":")
            return s.Forall(tuple(bindings), self.formula(), start.pos)
        return self.implies()

    def binding(self) -> tuple[str, str, int]:
        var = self.token
        if var.kind != "name" or var.text in KEYWORDS:
            raise self.error("expected a variable name after 'forall'")
        self.take()
        if not self.at("name", "in"):
            raise self.error(f"expected 'in' after variable {var.text!r}")
        self.take()
        domain = self.token
        if domain.kind != "name":
            raise self.error("expected a domain (joints or obstacles) after 'in'")
        self.take()
        return var.text, domain.text, domain.pos

    def implies(self) -> s.Formula:
        left = self.disjunction()
        if self.at("op", "->"):
            arrow = self.take()
            with self.deeper():
                return s.Implies("->", left, self.implies(), arrow.pos)
        return left

    def disjunction(self) -> s.Formula:
        first = self.conjunction()
        operands = [first]
        while self.at("name", "or"):
            self.take()
            operands.append(self.conjunction())
        return first if len(operands) == 1 else s.Junction("or", tuple(operands), _pos(first))

    def conjunction(self) -> s.Formula:
        first = self.until()
        operands = [first]
        while self.at("name", "and"):
            self.take()
            operands.append(self.until())
        return first if len(operands) == 1 else s.Junction("and", tuple(operands), _pos(first))

    def until(self) -> s.Formula:
        left = self.unary()
        if self.at("name", "until"):
            tok = self.take()
            window = self.window()
            return s.Temporal("until", window, (left, self.unary()), tok.pos)
        return left

    def unary(self) -> s.Formula:
        tok = self.token
        if self.at("name", "not"):
            self.take()
            with self.deeper():
                return s.Not("not", self.unary(), tok.pos)
        if self.at("name", "always", "eventually"):
            self.take()
            window = self.window()
            with self.deeper():
                return s.Temporal(tok.text, window, (self.unary(),), tok.pos)
        if self.at("name", "next"):
            self.take()
            with self.deeper():
                return s.Temporal("next", None, (self.unary(),), tok.pos)
        return self.primary()

    def window(self) -> s.Window | None:
        if not self.at("op", "["):
            return None
        open_tok = self.take()
        a = self.window_bound()
        self.expect_op(",")
        b = self.window_bound()
        self.expect_op("]")
        problem = s.window_problem(a, b) if isinstance(a, float) and isinstance(b, float) else None
        if problem:  # with a constant's name, checked once the constant is known
            raise self.error(problem, open_tok)
        return s.Window(a, b, open_tok.pos)

    def window_bound(self) -> float | str:
        """A number, or the name of a constant in seconds (``window_s``)."""
        if self.token.kind == "name" and self.token.text not in KEYWORDS:
            return self.take().text
        return self.number()

    def number(self) -> float:
        if self.token.kind != "number":
            raise self.error(f"expected a number, found {self.token.text!r}")
        return self.finite(self.take())

    def finite(self, tok: Token) -> float:
        """The value of the number token ``tok``; an error if it overflows.

        1e400 was infinity, and every property with it came out 'unknown, vacuous'.
        """
        value = float(tok.text)
        if not abs(value) <= s.MAX_NUMBER:
            raise self.error(f"number {tok.text} is too large (beyond {s.MAX_NUMBER:g})", tok)
        if value == 0.0 and any(c in "123456789" for c in tok.text.lower().split("e")[0]):  # 1e-400 read as 0
            raise self.error(f"number {tok.text} is too small (it rounds to 0)", tok)
        return value

    def primary(self) -> s.Formula:
        tok = self.token
        if self.at("name", "true", "false"):
            self.take()
            return s.BoolConst(tok.text == "true", tok.pos)
        if tok.kind == "name" and tok.text in PREDICATES:
            self.take()
            return s.Predicate(tok.text, self.args(), tok.pos)
        if self.at("op", "("):
            mark = self.index
            self.take()
            as_formula: PropertyError | None = None
            try:
                inner = self.formula()
                self.expect_op(")")
                if not self.at("op", *_CMP, "+", "-", "*", "/"):
                    return inner
            except PropertyError as exc:
                as_formula = exc
            self.index = mark  # a parenthesised term, e.g. (a + b) < c
            try:
                return self.comparison(tok)
            except PropertyError as exc:
                # the reading that got further says what is wrong: "always (t < 1" lacks its ")" at the end; read
                # as a term, it failed earlier, at the "<" ("expected ')', found '<'")
                if as_formula is not None and as_formula.position > exc.position:
                    raise as_formula from None
                raise
        return self.comparison(tok)

    def comparison(self, tok: Token) -> s.Formula:
        """``term CMP term``, or a flag (``self_collision``), starting at ``tok``."""
        if tok.kind == "name" and tok.text in KEYWORDS:
            raise self.error(f"unexpected keyword {tok.text!r}")
        left = self.term()
        if isinstance(left, s.Name) and left.ident in FLAGS and not self.at("op", *_CMP):
            return s.Flag(left.ident, left.pos)
        if not self.at("op", *_CMP):
            found = repr(self.token.text) if self.token.kind != "end" else "the end of the expression"
            if isinstance(left, s.Call):  # e.g. "always frobnicate(tip)": a call that is no predicate, uncompared
                raise self.error(
                    f"{left.func}(...) is not a predicate ({', '.join(sorted(PREDICATES))}); a term function's value "
                    f"is compared, e.g. {left.func}(...) < 0.01 (found {found} after it)",
                    tok,
                )
            raise self.error(f"expected a comparison (< <= > >= == !=) or a predicate, found {found}")
        op = self.take()
        return s.Compare(op.text, left, self.term(), op.pos)

    # ------------------------------------------------------------------ terms
    def args(self) -> tuple[s.Term, ...]:
        self.expect_op("(")
        args: list[s.Term] = []
        with self.deeper():
            if not self.at("op", ")"):
                args.append(self.term())
                while self.at("op", ","):
                    self.take()
                    args.append(self.term())
        self.expect_op(")")
        return tuple(args)

    def term(self) -> s.Term:
        left = self.product()
        while self.at("op", "+", "-"):
            op = self.take()
            left = s.Arith(op.text, left, self.product(), op.pos)
        return left

    def product(self) -> s.Term:
        left = self.factor()
        while self.at("op", "*", "/"):
            op = self.take()
            left = s.Arith(op.text, left, self.factor(), op.pos)
        return left

    def factor(self) -> s.Term:
        tok = self.token
        if self.at("op", "-"):
            self.take()
            with self.deeper():
                return s.Neg("-", self.factor(), tok.pos)
        if tok.kind == "number":
            self.take()
            return s.Num(self.finite(tok), tok.pos)
        if self.at("op", "("):
            self.take()
            with self.deeper():
                inner = self.term()
            self.expect_op(")")
            return inner
        if tok.kind == "name" and tok.text not in KEYWORDS:
            self.take()
            if self.at("op", "("):
                return s.Call(tok.text, self.args(), tok.pos)
            name = s.Name(tok.text, tok.pos)
            if self.at("op", "["):
                self.take()
                with self.deeper():
                    index = self.term()
                self.expect_op("]")
                return s.Index(name, index, tok.pos)
            return name
        found = repr(tok.text) if tok.kind != "end" else "the end of the expression"
        raise self.error(f"expected a signal, number or function, found {found}")


def _pos(node: s.Formula) -> int:
    return node.pos


def parse_formula(text: str, name: str = "") -> s.Formula:
    """Parse a property expression into a syntax tree.

    Args:
        text: The expression, e.g. ``forall j in joints: always safedis(joint[j], heart, 0.02)``.
        name: Property name for error messages.

    Raises:
        PropertyError: Malformed expression; the message names the property and the column.
    """
    return _Parser(text, name).parse()
