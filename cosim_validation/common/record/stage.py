"""The five stages of a needle insertion ([Actuators 2025], section 3)."""

from __future__ import annotations

from enum import IntEnum

from cosim_validation.common.exceptions import InputError


class Stage(IntEnum):
    """Stage of a case; the values equal the constants of ``cosim_validation_interfaces/Stage``."""

    NONE = 0
    INITIALIZATION = 1
    APPROACH = 2
    INJECTION = 3
    EXTRACTION = 4
    RESET = 5

    @property
    def label(self) -> str:
        """Lower-case name, as used in files and reports."""
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Stage:
        """The stage named ``text`` (case-insensitive).

        Args:
            text: The stage's name (e.g. ``injection``); case and surrounding blanks are ignored.
        """
        try:
            return cls[text.strip().upper()]
        except KeyError:
            names = ", ".join(s.label for s in cls)
            raise InputError(f"unknown stage {text!r}; expected one of: {names}") from None


#: The stages of a complete case, in order.
CASE_STAGES: tuple[Stage, ...] = (
    Stage.INITIALIZATION,
    Stage.APPROACH,
    Stage.INJECTION,
    Stage.EXTRACTION,
    Stage.RESET,
)
