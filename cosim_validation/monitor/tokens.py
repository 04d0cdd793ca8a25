"""The one tokenizer of the monitor's three expression languages: properties, guards and actions, LTL goals.

Each language states its :class:`Lexicon` (its operators, whether a dotted name is one token, whether it has
strings) and turns a :class:`TokenError` into its own error type, which names the property or the expression. Its
recursive-descent parser reads the tokens through a :class:`TokenCursor`, which bounds the nesting.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from cosim_validation.monitor.syntax_bounds import Nesting

_NUMBER = re.compile(r"(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*")
_QUOTES = "'\""


@dataclass(frozen=True)
class Token:
    """One token: kind ``number``, ``name``, ``string``, ``op`` or ``end``.

    Its text (a string's without its quotes) and its 0-based offset in the source text.
    """

    kind: str
    text: str
    pos: int


@dataclass(frozen=True)
class Lexicon:
    """What a language's tokens are.

    Attributes:
        operators: Every operator; the longest that matches wins (``<->`` over ``<-``, ``<=`` over ``<``).
        dotted_names: Whether ``a.b.c`` is one name (else ``.`` must be an operator to be read).
        strings: Whether ``'...'`` and ``"..."`` are string tokens.
    """

    operators: tuple[str, ...]
    dotted_names: bool = False
    strings: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "operators", tuple(sorted(self.operators, key=len, reverse=True)))


class TokenError(ValueError):
    """A character that starts no token, or an unterminated string, at ``pos`` of the text."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


def tokenize(text: str, lexicon: Lexicon) -> list[Token]:
    """The tokens of ``text`` in ``lexicon``, ending with an ``end`` token at ``len(text)``.

    Args:
        text: Source text of one expression; whitespace separates tokens and is dropped.
        lexicon: The language's operators, and whether it has dotted names and strings.

    Raises:
        TokenError: A character that starts no token, or an unterminated string.
    """
    names = _DOTTED_NAME if lexicon.dotted_names else _NAME
    tokens: list[Token] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        match = _NUMBER.match(text, i) or names.match(text, i)
        if match is not None:
            tokens.append(Token("number" if ch.isdigit() or ch == "." else "name", match.group(0), i))
            i = match.end()
        elif lexicon.strings and ch in _QUOTES:
            end = text.find(ch, i + 1)
            if end < 0:
                raise TokenError("unterminated string", i)
            tokens.append(Token("string", text[i + 1 : end], i))
            i = end + 1
        else:
            op = next((o for o in lexicon.operators if text.startswith(o, i)), None)
            if op is None:
                raise TokenError(f"unexpected character {ch!r}", i)
            tokens.append(Token("op", op, i))
            i += len(op)
    tokens.append(Token("end", "", len(text)))
    return tokens


class TokenCursor:
    """The reading position of a recursive-descent parser in the tokens of one text.

    A language's parser subclasses it and says how its errors are made (:meth:`error`).

    Args:
        text: The source text (for error messages).
        tokens: Its tokens, ending with an ``end`` token (:func:`tokenize`).
    """

    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.tokens = tokens
        self.index = 0
        self.nesting = Nesting()

    @property
    def token(self) -> Token:
        """The current token."""
        return self.tokens[self.index]

    def take(self) -> Token:
        """The current token; move past it (the ``end`` token stays current)."""
        token = self.token
        if token.kind != "end":
            self.index += 1
        return token

    def at(self, kind: str, *texts: str) -> bool:
        """Whether the current token is of ``kind`` and spelled as one of ``texts``.

        Args:
            kind: ``op``, ``name``, ``number``, ``string`` or ``end``.
            *texts: Spellings accepted.
        """
        return self.token.kind == kind and self.token.text in texts

    @contextmanager
    def deeper(self) -> Iterator[None]:
        """One level of recursive descent; raises once nested deeper than the bound (not a RecursionError)."""
        try:
            if not self.nesting.enter():
                raise self.error(Nesting.message())
            yield
        finally:
            self.nesting.leave()

    def error(self, message: str) -> Exception:
        """The language's error at the current token, for the caller to raise.

        Args:
            message: What is wrong.
        """
        raise NotImplementedError
