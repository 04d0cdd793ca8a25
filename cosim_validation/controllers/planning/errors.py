"""Errors of planning: a case that cannot be planned, with the reason."""

from __future__ import annotations

from cosim_validation.common.exceptions import CosimError


class PlanningError(CosimError):
    """No plan exists for a case; ``reason`` is a short code, the message says why in words.

    Reasons: ``bad_input``, ``source_inside_body``, ``target_outside_target_model``, ``target_in_obstacle``,
    ``no_skin_entry``, ``too_deep``, ``unreachable``, ``joint_limits``, ``collision``, ``self_collision``,
    ``clearance``, ``no_collision_free_path``; a planner under test adds its own (the MoveIt adapter: ``bad_scene``,
    ``move_group_timeout``, ...).

    Args:
        message: What failed, with the offending values.
        reason: One of the codes above.
    """

    def __init__(self, message: str, reason: str) -> None:
        self.reason = reason
        super().__init__(message)
