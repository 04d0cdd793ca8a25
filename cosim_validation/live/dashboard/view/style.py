"""Colours and labels shared by the panels (plain values, no Qt)."""

from __future__ import annotations

from cosim_validation.common.record import RobotRole, Stage

ROBOT_COLORS: dict[RobotRole, tuple[int, int, int]] = {
    RobotRole.EXPECTED: (40, 40, 40),  # the plan: dark grey
    RobotRole.VIRTUAL: (31, 119, 180),  # simulator: blue
    RobotRole.PHYSICAL: (230, 120, 20),  # physical arm: orange
}
STAGE_COLORS: dict[Stage, tuple[int, int, int]] = {
    Stage.NONE: (200, 200, 200),
    Stage.INITIALIZATION: (166, 206, 227),
    Stage.APPROACH: (178, 223, 138),
    Stage.INJECTION: (251, 154, 153),
    Stage.EXTRACTION: (253, 191, 111),
    Stage.RESET: (202, 178, 214),
}
VERDICT_LABELS = {0: "unknown", 1: "holds", 2: "violated"}
VIOLATED_BG = (255, 205, 205)  # a violated verdict's row
UNKNOWN_BG = (235, 235, 235)
LEVEL_LABELS = {0: "info", 1: "warn", 2: "error"}
LEVEL_BG = {0: (255, 255, 255), 1: (255, 240, 190), 2: (255, 205, 205)}
OUTCOME_BG = {"completed": (220, 245, 220), "refused": (235, 235, 235), "aborted": (255, 225, 190)}
OBSTACLE_FILL = (220, 40, 40, 90)
TARGET_MODEL_PEN = (60, 160, 80)
