"""Errors of the state-machine core: bad machine files, bad expressions, the model checker failing."""

from __future__ import annotations

from cosim_validation.common.exceptions import ConfigError, CosimError


class MachineError(ConfigError):
    """A machine, goal or script file is malformed or names something that does not exist.

    Args:
        source: The file the definition came from.
        key: Dotted key path of the offending entry, e.g. ``transitions[3].target``.
        message: What was expected, what came and what exists.
    """


class ExpressionError(CosimError):
    """An expression (guard, action, LTL goal) does not parse or cannot be evaluated.

    Args:
        message: What went wrong.
        text: The expression text.
        position: 0-based character offset of the problem in ``text``; -1 if not applicable.
    """

    def __init__(self, message: str, text: str = "", position: int = -1) -> None:
        self.message = message
        self.text = text
        self.position = position
        detail = message
        if text and position >= 0:
            detail += f" at column {position + 1} of {text!r}"
        elif text:
            detail += f" in {text!r}"
        super().__init__(detail)


class ModelCheckError(CosimError):
    """The model checker (SPIN, the C compiler, the pan verifier) could not be run or failed."""
