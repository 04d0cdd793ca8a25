"""Parser of the property expression language (grammar in docs/PROPERTIES.md).

::

    formula  := 'forall' binding (',' binding)* ':' formula | implies
    binding  := NAME 'in' NAME                      # domains: joints, obstacles
    implies  := or ('->' implies)?                  # right-associative
    or       := and ('or' and)*
    and      := until ('and' until)*
    until    := unary ('until' window? unary)?
    unary    := 'not' unary | ('always' | 'eventually') window? unary | 'next' unary | primary
    window   := '[' number ',' number ']'           # seconds after the current sample, 0 <= a <= b
    primary  := 'true' | 'false' | FLAG | PREDICATE '(' args ')' | '(' formula ')' | term CMP term
    term     := product (('+' | '-') product)*
    product  := factor (('*' | '/') factor)*
    factor   := '-' factor | NUMBER | NAME ('[' term ']')? | NAME '(' args ')' | '(' term ')'
    CMP      := '<' | '<=' | '>' | '>=' | '==' | '!='
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from cosim_validation.monitor.properties.errors import PropertyError
from cosim_validation.monitor.properties.language import syntax as s
from cosim_validation.monitor.syntax_bounds import Nesting, tree_problem
from cosim_validation.monitor.tokens import Lexicon, Token, TokenError
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


class _Parser:
    def __init__(self, text: str, name: str) -> None:
        self.text = text
        self.name = name
        self.tokens = tokenize(text, name)
        self.i = 0
        self.nesting = Nesting()

    @contextmanager
    def deeper(self) -> Iterator[None]:
        """One level of recursive descent; raises once nested deeper than the bound (not a RecursionError)."""
        try:
            if not self.nesting.enter():
                raise self.error(Nesting.message())
            yield
        finally:
            self.nesting.leave()

    # ------------------------------------------------------------------ helpers
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def error(self, message: str, tok: Token | None = None) -> PropertyError:
        tok = tok or self.tok
        return PropertyError(self.name, message, self.text, tok.pos)

    def is_op(self, *ops: str) -> bool:
        return self.tok.kind == "op" and self.tok.text in ops

    def is_kw(self, *words: str) -> bool:
        return self.tok.kind == "name" and self.tok.text in words

    def expect_op(self, op: str) -> Token:
        if not self.is_op(op):
            found = repr(self.tok.text) if self.tok.kind != "end" else "the end of the expression"
            raise self.error(f"expected {op!r}, found {found}")
        return self.advance()

    def advance(self) -> Token:
        tok = self.tok
        self.i += 1
        return tok

    # ------------------------------------------------------------------ formulas
    def parse(self) -> s.Formula:
        if self.tok.kind == "end":
            raise self.error("empty expression")
        formula = self.formula()
        if self.tok.kind != "end":
            raise self.error(f"unexpected {self.tok.text!r} after a complete formula")
        problem = tree_problem(formula)  # a chain of thousands of operands is evaluated recursively
        if problem is not None:
            raise PropertyError(self.name, problem)
        return formula

    def formula(self) -> s.Formula:
        with self.deeper():  # every parenthesised formula comes back here
            return self._formula()

    def _formula(self) -> s.Formula:
        if self.is_kw("forall"):
            start = self.advance()
            bindings = [self.binding()]
            while self.is_op(","):
                self.advance()
                bindings.append(self.binding())
            self.expect_op(":")
            return s.Forall(tuple(bindings), self.formula(), start.pos)
        return self.implies()

    def binding(self) -> tuple[str, str, int]:
        var = self.tok
        if var.kind != "name" or var.text in KEYWORDS:
            raise self.error("expected a variable name after 'forall'")
        self.advance()
        if not self.is_kw("in"):
            raise self.error(f"expected 'in' after variable {var.text!r}")
        self.advance()
        domain = self.tok
        if domain.kind != "name":
            raise self.error("expected a domain (joints or obstacles) after 'in'")
        self.advance()
        return var.text, domain.text, domain.pos

    def implies(self) -> s.Formula:
        left = self.disjunction()
        if self.is_op("->"):
            arrow = self.advance()
            with self.deeper():
                return s.Implies(left, self.implies(), arrow.pos)
        return left

    def disjunction(self) -> s.Formula:
        first = self.conjunction()
        operands = [first]
        while self.is_kw("or"):
            self.advance()
            operands.append(self.conjunction())
        return first if len(operands) == 1 else s.Or(tuple(operands), _pos(first))

    def conjunction(self) -> s.Formula:
        first = self.until()
        operands = [first]
        while self.is_kw("and"):
            self.advance()
            operands.append(self.until())
        return first if len(operands) == 1 else s.And(tuple(operands), _pos(first))

    def until(self) -> s.Formula:
        left = self.unary()
        if self.is_kw("until"):
            tok = self.advance()
            window = self.window()
            return s.Until(left, self.unary(), window, tok.pos)
        return left

    def unary(self) -> s.Formula:
        tok = self.tok
        if self.is_kw("not"):
            self.advance()
            with self.deeper():
                return s.Not(self.unary(), tok.pos)
        if self.is_kw("always", "eventually"):
            self.advance()
            window = self.window()
            with self.deeper():
                return s.Unary(tok.text, window, self.unary(), tok.pos)
        if self.is_kw("next"):
            self.advance()
            with self.deeper():
                return s.Unary("next", None, self.unary(), tok.pos)
        return self.primary()

    def window(self) -> s.Window | None:
        if not self.is_op("["):
            return None
        open_tok = self.advance()
        a = self.number()
        self.expect_op(",")
        b = self.number()
        self.expect_op("]")
        if not 0 <= a <= b:
            raise self.error(f"time window [{a:g}, {b:g}] must satisfy 0 <= a <= b (seconds)", open_tok)
        return (a, b)

    def number(self) -> float:
        if self.tok.kind != "number":
            raise self.error(f"expected a number, found {self.tok.text!r}")
        return float(self.advance().text)

    def primary(self) -> s.Formula:
        tok = self.tok
        if self.is_kw("true", "false"):
            self.advance()
            return s.BoolConst(tok.text == "true", tok.pos)
        if tok.kind == "name" and tok.text in PREDICATES:
            self.advance()
            return s.Predicate(tok.text, self.args(), tok.pos)
        if self.is_op("("):
            mark = self.i
            self.advance()
            try:
                inner = self.formula()
                self.expect_op(")")
                if not self.is_op(*_CMP, "+", "-", "*", "/"):
                    return inner
            except PropertyError:
                pass
            self.i = mark  # a parenthesised term, e.g. (a + b) < c
        if tok.kind == "name" and tok.text in KEYWORDS:
            raise self.error(f"unexpected keyword {tok.text!r}")
        left = self.term()
        if isinstance(left, s.Name) and left.ident in FLAGS and not self.is_op(*_CMP):
            return s.Flag(left.ident, left.pos)
        if not self.is_op(*_CMP):
            found = repr(self.tok.text) if self.tok.kind != "end" else "the end of the expression"
            raise self.error(f"expected a comparison (< <= > >= == !=) or a predicate, found {found}")
        op = self.advance()
        return s.Compare(op.text, left, self.term(), op.pos)

    # ------------------------------------------------------------------ terms
    def args(self) -> tuple[s.Term, ...]:
        self.expect_op("(")
        args: list[s.Term] = []
        with self.deeper():
            if not self.is_op(")"):
                args.append(self.term())
                while self.is_op(","):
                    self.advance()
                    args.append(self.term())
        self.expect_op(")")
        return tuple(args)

    def term(self) -> s.Term:
        left = self.product()
        while self.is_op("+", "-"):
            op = self.advance()
            left = s.Arith(op.text, left, self.product(), op.pos)
        return left

    def product(self) -> s.Term:
        left = self.factor()
        while self.is_op("*", "/"):
            op = self.advance()
            left = s.Arith(op.text, left, self.factor(), op.pos)
        return left

    def factor(self) -> s.Term:
        tok = self.tok
        if self.is_op("-"):
            self.advance()
            with self.deeper():
                return s.Neg(self.factor(), tok.pos)
        if tok.kind == "number":
            self.advance()
            return s.Num(float(tok.text), tok.pos)
        if self.is_op("("):
            self.advance()
            with self.deeper():
                inner = self.term()
            self.expect_op(")")
            return inner
        if tok.kind == "name" and tok.text not in KEYWORDS:
            self.advance()
            if self.is_op("("):
                return s.Call(tok.text, self.args(), tok.pos)
            name = s.Name(tok.text, tok.pos)
            if self.is_op("["):
                self.advance()
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
