"""Quoting a user's text in a message: one printable line of bounded length."""

from __future__ import annotations

#: The longest text of the user's a message quotes [characters]
QUOTED_CHARS = 300


def one_line(text: str, limit: int = QUOTED_CHARS) -> str:
    r"""``text`` of the user's as one line of at most ``limit`` characters and an ellipsis.

    The user's text: a plugin's message, a cell of their file.

    Line breaks, terminal escapes and other control characters are shown escaped (``\n``, ``\x1b``): a message
    quoting it cannot add lines that read as other errors, clear the terminal, or run to megabytes.

    Args:
        text: What the user's code or file said.
        limit: The most characters kept.
    """
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[: limit + 1])
    return shown if len(text) <= limit else f"{shown[:limit]}... ({len(text)} characters)"
