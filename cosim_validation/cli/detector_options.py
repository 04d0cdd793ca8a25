"""The options that put the hazard detector into the control loop, shared by campaign and session."""

from __future__ import annotations

import argparse

from cosim_validation.cli.arg_types import Once


def add_detector_options(parser: argparse.ArgumentParser) -> None:
    """``--detector THRESHOLDS`` and ``--stop-on-alarm``.

    Args:
        parser: The parser of ``cosim campaign`` or ``cosim session``, to add the two options to.
    """
    parser.add_argument(
        "--detector",
        action=Once,
        default=None,
        metavar="[tip_mm=X][,joint=Y][,tracker_mm=Z][,progress=P]",
        help="run the hazard detector (after Li et al. 2016) in the control loop at every setpoint "
        "(docs/HAZARDS.md): tip_mm, "
        "joint (rad, m for a prismatic joint) and tracker_mm compare the physical robot with the virtual twin, "
        "progress the robot with its own commands (|rho - 1| of the command progress); the keys given choose the "
        "detectors. Live it publishes /cosim/hazards/alarms and /cosim/feedback_wrench, a campaign stores the "
        "alarms in its events table; thresholds e.g. from `cosim hazards table`",
    )
    parser.add_argument(
        "--stop-on-alarm",
        action="store_true",
        help="mitigation: a detector alarm is an exception of the task supervisor, the robot holds (needs "
        "--detector and a supervisor)",
    )
