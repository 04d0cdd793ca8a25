"""The options that put the hazard detector into the control loop, shared by campaign and session."""

from __future__ import annotations

import argparse


def add_detector_options(parser: argparse.ArgumentParser) -> None:
    """``--detector THRESHOLDS`` and ``--stop-on-alarm``."""
    parser.add_argument(
        "--detector",
        default=None,
        metavar="tip_mm=X[,joint=Y][,tracker_mm=Z]",
        help="run seed 003's hazard detector in the control loop, the physical robot against the virtual twin at "
        "every setpoint (docs/HAZARDS.md): live it publishes /cosim/hazards/alarms and /cosim/feedback_wrench; "
        "joint in rad (m for a prismatic joint); thresholds e.g. from `cosim hazards table`",
    )
    parser.add_argument(
        "--stop-on-alarm",
        action="store_true",
        help="mitigation: a detector alarm is an exception of the task supervisor, the robot holds (needs "
        "--detector and a supervisor)",
    )
