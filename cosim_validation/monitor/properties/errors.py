"""Errors of the property language and the runtime monitor."""

from __future__ import annotations

from cosim_validation.common.exceptions import CosimError


class PropertyError(CosimError):
    """A property or machine definition is malformed or names something that does not exist.

    Args:
        name: Name of the property (or KPI, machine) at fault; "" if not known yet.
        message: What was expected and what came.
        source: The text of the expression, if the problem is inside it.
        position: 0-based character offset of the problem in ``source``; -1 if not applicable.
    """

    def __init__(self, name: str, message: str, source: str = "", position: int = -1) -> None:
        self.name = name
        self.message = message
        self.source = source
        self.position = position
        where = f"property {name!r}: " if name else ""
        text = f"{where}{message}"
        if source.strip() and position >= 0:
            text += f" at column {position + 1}:\n  {source}\n  {' ' * position}^"
        super().__init__(text)


class TraceError(CosimError):
    """A trace or sample cannot be monitored (time going backwards, wrong shape, unknown robot)."""
