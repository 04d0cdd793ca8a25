"""What the task supervisor ([Preda et al. 2016]) let the controller do at a sample.

The per-sample supervisor signal (in `record` beside `Stage`: every record carries it, and the monitor's properties
name it).
"""

from __future__ import annotations

from enum import IntEnum

from cosim_validation.common.exceptions import InputError


class SupervisorMode(IntEnum):
    """The supervisor's mode at a sample; the values equal ``cosim_validation_interfaces/SupervisorState`` modes.

    Derived from the flags of the machine's active states (docs/SUPERVISOR.md): ``motion`` -> AUTONOMOUS,
    ``teleoperation`` -> TELEOPERATION, ``stopped`` -> STOPPED, a final state -> COMPLETED, any other ``hold``
    state (configuring, waiting at the target) -> HOLDING. A run without a supervisor is UNSUPERVISED.
    """

    UNSUPERVISED = 0
    AUTONOMOUS = 1
    HOLDING = 2
    STOPPED = 3
    TELEOPERATION = 4
    COMPLETED = 5

    @property
    def label(self) -> str:
        """Lower-case name, as used in files, reports and properties (``supervisor == stopped``)."""
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> SupervisorMode:
        """The mode named ``text`` (case-insensitive).

        Args:
            text: The mode's name (e.g. ``holding``); case and surrounding blanks are ignored.
        """
        try:
            return cls[text.strip().upper()]
        except KeyError:
            names = ", ".join(m.label for m in cls)
            raise InputError(f"unknown supervisor mode {text!r}; expected one of: {names}") from None
