"""Errors of the anatomy area."""

from __future__ import annotations

from cosim_validation.common.exceptions import InputError


class MeshDefectError(InputError):
    """A mesh cannot be used as a solid: it is empty, open, inconsistently wound, flat or implausibly sized.

    Args:
        source: The file (or ``builtin:<name>``) the mesh came from.
        defects: One line per defect, each saying what was expected and what was found.
        hint: What to do about it (e.g. ``set repair: true``), or "".
    """

    def __init__(self, source: str, defects: list[str], hint: str = "") -> None:
        self.source = source
        self.defects = list(defects)
        text = f"{source}: mesh is not a usable solid: " + "; ".join(self.defects)
        super().__init__(f"{text}. {hint}" if hint else text)
