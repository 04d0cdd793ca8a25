"""The operating state of a CRTK arm and the ``state_command`` words that change it, as dVRK arms accept them.

The state is enabled or not, homed or not, busy or not. The words are those of ../shared/ROBOTS.md 2.2:
``enable``, ``disable``, ``home`` (only once enabled), ``unhome``, ``pause``, ``resume``; states DISABLED,
ENABLED, PAUSED, FAULT. Shared by the emulated arms
(:mod:`cosim_validation.live.nodes.crtk_emulator`) and the arm served to an external node under test
(:mod:`cosim_validation.live.external.crtk_server`).
"""

from __future__ import annotations

from typing import Any

from cosim_validation.live.ros.crtk_topics import DISABLED, ENABLED

PAUSED = "PAUSED"


class OperatingState:
    """One arm's operating state; it starts DISABLED and not homed, as a powered-up arm does.

    Attributes:
        state: ``DISABLED``, ``ENABLED`` or ``PAUSED``.
        homed: Whether the arm was homed since it was last unhomed.
        busy: Whether a ``move_jp`` is under way.
    """

    def __init__(self) -> None:
        self.state, self.homed, self.busy = DISABLED, False, False

    def command(self, word: str) -> bool:
        """Apply ``state_command`` ``word``; False when it does not apply in this state (it is then ignored).

        Args:
            word: One of ``enable``, ``disable``, ``home``, ``unhome``, ``pause``, ``resume``; any other word is
                refused.
        """
        if word == "enable" or (word == "resume" and self.state == PAUSED):
            self.state = ENABLED
        elif word == "disable":
            self.state = DISABLED
        elif word == "home" and self.state == ENABLED:
            self.homed = True
        elif word == "unhome":
            self.homed = False
        elif word == "pause" and self.state == ENABLED:
            self.state = PAUSED
        else:
            return False
        return True

    def ready(self) -> bool:
        """Whether the arm takes motion commands: enabled and homed."""
        return self.state == ENABLED and self.homed

    def why_not_ready(self, name: str) -> str:
        """Why arm ``name`` takes no motion command now.

        Args:
            name: The arm's name, for the message.
        """
        return f"{name} is {self.state}, homed {self.homed}: enable and home it first"

    def message(self, stamp: Any) -> Any:
        """crtk_msgs/OperatingState of now, stamped ``stamp`` (a builtin_interfaces Time).

        Args:
            stamp: The header's stamp, a builtin_interfaces/Time.
        """
        from crtk_msgs.msg import OperatingState as OperatingStateMsg

        msg = OperatingStateMsg(state=self.state, is_homed=self.homed, is_busy=self.busy)
        msg.header.stamp = stamp
        return msg
