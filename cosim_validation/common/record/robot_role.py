"""Which robot a trajectory, verdict or KPI belongs to."""

from __future__ import annotations

from enum import IntEnum

from cosim_validation.common.exceptions import InputError


class RobotRole(IntEnum):
    """Role of a robot in a session; values equal ``cosim_validation_interfaces/Robot`` constants."""

    EXPECTED = 0  # the plan of the controller under test
    VIRTUAL = 1  # a simulated robot
    PHYSICAL = 2  # the physical robot or its emulator

    @property
    def label(self) -> str:
        """Lower-case name, as used in files and reports."""
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> RobotRole:
        """The role named ``text`` (case-insensitive).

        Args:
            text: The role's name (``expected``, ``virtual`` or ``physical``); case and surrounding blanks are ignored.
        """
        try:
            return cls[text.strip().upper()]
        except KeyError:
            names = ", ".join(r.label for r in cls)
            raise InputError(f"unknown robot {text!r}; expected one of: {names}") from None
