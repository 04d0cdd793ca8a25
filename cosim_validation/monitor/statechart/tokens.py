"""Tokens of the guard, action and LTL languages, and a cursor over them for the parsers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from cosim_validation.monitor.statechart.errors import ExpressionError
from cosim_validation.monitor.syntax_bounds import Nesting

#: Operators, longest first so that ``<->`` wins over ``<-`` and ``<=`` over ``<``.
OPERATORS: tuple[str, ...] = ("<->", "->", "==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "~", "+", "-", "*")
OPERATORS += ("/", "(", ")", "[", "]", ",", ".", "=")
_NUMBER = re.compile(r"(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


@dataclass(frozen=True)
class Token:
    """One token: kind ``number``, ``string``, ``name``, ``op`` or ``end``; its text and offset."""

    kind: str
    text: str
    position: int


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with an ``end`` token.

    Raises:
        ExpressionError: A character that starts no token, or an unterminated string.
    """
    tokens: list[Token] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        number = _NUMBER.match(text, i)
        name = _NAME.match(text, i)
        if number:
            tokens.append(Token("number", number.group(0), i))
            i = number.end()
        elif name:
            tokens.append(Token("name", name.group(0), i))
            i = name.end()
        elif ch in "'\"":
            end = text.find(ch, i + 1)
            if end < 0:
                raise ExpressionError("unterminated string", text, i)
            tokens.append(Token("string", text[i + 1 : end], i))
            i = end + 1
        else:
            op = next((o for o in OPERATORS if text.startswith(o, i)), None)
            if op is None:
                raise ExpressionError(f"unexpected character {ch!r}", text, i)
            tokens.append(Token("op", op, i))
            i += len(op)
    tokens.append(Token("end", "", len(text)))
    return tokens


class Cursor:
    """Reading position in a token list, with the source text for error messages."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.index = 0
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

    @property
    def token(self) -> Token:
        """The current token."""
        return self.tokens[self.index]

    def peek(self, *texts: str) -> bool:
        """Whether the current token is an operator or name spelled as one of ``texts``."""
        return self.token.kind in ("op", "name") and self.token.text in texts

    def take(self) -> Token:
        """The current token; move past it."""
        token = self.token
        if token.kind != "end":
            self.index += 1
        return token

    def accept(self, *texts: str) -> Token | None:
        """Take the current token if it is one of ``texts``."""
        return self.take() if self.peek(*texts) else None

    def expect(self, text: str) -> Token:
        """Take the current token, which must be ``text``."""
        if not self.peek(text):
            raise self.error(f"expected {text!r}")
        return self.take()

    def error(self, message: str) -> ExpressionError:
        """An error at the current token."""
        found = self.token.text or "end of text"
        return ExpressionError(f"{message}, found {found!r}", self.text, self.token.position)

    def finish(self) -> None:
        """Raise unless every token was read."""
        if self.token.kind != "end":
            raise self.error("unexpected text after the expression")
