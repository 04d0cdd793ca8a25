"""The one tokenizer of the monitor's three expression languages: properties, guards and actions, LTL goals.

Each language states its :class:`Lexicon` (its operators, whether a dotted name is one token, whether it has
strings) and turns a :class:`TokenError` into its own error type, which names the property or the expression.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
