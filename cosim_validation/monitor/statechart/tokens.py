"""The tokens of the guard, action and LTL languages, and a cursor over them for the parsers.

The tokens are those of :mod:`cosim_validation.monitor.tokens`.
"""

from __future__ import annotations

from cosim_validation.monitor.statechart.errors import ExpressionError
from cosim_validation.monitor.tokens import Lexicon, Token, TokenCursor, TokenError
from cosim_validation.monitor.tokens import tokenize as lex

#: The operators of guards, actions and LTL goals (strings are quoted; ``.`` reads a command's field)
_OPERATORS = "<-> -> == != <= >= && || < > ! ~ + - * / ( ) [ ] , . ="
LEXICON = Lexicon(tuple(_OPERATORS.split()), strings=True)


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with an ``end`` token.

    Args:
        text: Source of a guard, an action or an LTL goal.

    Raises:
        ExpressionError: A character that starts no token, or an unterminated string.
    """
    try:
        return lex(text, LEXICON)
    except TokenError as exc:
        raise ExpressionError(exc.message, text, exc.pos) from None


class Cursor(TokenCursor):
    """Reading position in the tokens of a guard, an action or an LTL goal.

    Args:
        text: The source text.
    """

    def __init__(self, text: str) -> None:
        super().__init__(text, tokenize(text))

    def peek(self, *texts: str) -> bool:
        """Whether the current token is an operator or name spelled as one of ``texts``.

        Args:
            *texts: Spellings accepted, e.g. ``"&&"``, ``"and"``.
        """
        return self.at("op", *texts) or self.at("name", *texts)

    def accept(self, *texts: str) -> Token | None:
        """Take the current token if it is one of ``texts``.

        Args:
            *texts: Spellings accepted (an operator or a name).

        Returns:
            The token taken, or None (the cursor stays) if the current token is none of them.
        """
        return self.take() if self.peek(*texts) else None

    def expect(self, text: str) -> Token:
        """Take the current token, which must be ``text``.

        Args:
            text: The operator or name expected.

        Raises:
            ExpressionError: The current token is something else.
        """
        if not self.peek(text):
            raise self.error(f"expected {text!r}")
        return self.take()

    def error(self, message: str) -> ExpressionError:
        """An error at the current token.

        Args:
            message: What was expected; the token found and its column are appended.

        Returns:
            The error, for the caller to raise.
        """
        found = self.token.text or "end of text"
        return ExpressionError(f"{message}, found {found!r}", self.text, self.token.pos)

    def finish(self) -> None:
        """Raise unless every token was read."""
        if self.token.kind != "end":
            raise self.error("unexpected text after the expression")
