"""Does the kinematic calibration's lost-motion term leave the calibration residual's tail? A study (a diagnostic).

The kinematic calibration (docs/ERRORS.md, "Kinematic calibration") models each joint's lost motion as a fixed
amount in the direction of the joint's last move: the link trails its motor by the whole play. That holds once a
joint has moved through its play since it last reversed; just after a reversal that moved it less, the link sits
partway. The emulated arms' gear and cable play is the classical play operator (backlash), which has that memory.

This script calibrates a dataset twice, on the rows ``cosim errors calibrate`` takes (the settled training rows),
and prints the marker-pose residuals of both:

- ``last move``: the shipped calibration (lost motion times the direction of the last move);
- ``play operator``: the same parameters, each lost motion the half-width of a play operator run over the
  dataset's measured joints in time order within each segment, so that a joint partway through its play after a
  reversal has its link partway.

It also splits the residuals of the shipped calibration into the rows where some joint has travelled less than its
play since its last reversal (by the play width the shipped calibration estimated) and the others.

Usage (a dataset from ``cosim errors collect``; 10-20 s)::

    scripts/with_env.sh python scripts/play_phase_study.py --config config/dvrk_psm_insertion.yaml d.parquet
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.common.exceptions import CosimError
from cosim_validation.error_injection import kinematic_calibration as kc
from cosim_validation.error_injection.dataset_cleaning import clean
from cosim_validation.error_injection.dataset_io import read_parquet
from cosim_validation.error_injection.hand_eye import HandEye, calibrate, residuals
from cosim_validation.error_injection.labelling_calibration import calibration_rows, last_moves
from cosim_validation.error_injection.repeats import average_repeats, groups
from cosim_validation.error_injection.transforms import poses
from cosim_validation.robots.model import Kinematics, RobotConfig


def play_phases(q: np.ndarray, starts: np.ndarray, directions: np.ndarray, half_width: np.ndarray) -> np.ndarray:
    """(n, J) where each link sits in its play, in [-1, 1]: (motor - link) / half-width of a play operator.

    Run over the measured joints ``q`` in row order, restarted at each segment start with the link trailing by
    the half-width in the direction of the row's last move (0: centred). +1 and -1 are the last-move model's
    values; in between, a joint partway through its play after a reversal.

    Args:
        q: (n, J) measured joints, in time order within each segment [rad | m].
        starts: (n,) bool, the first row of each segment.
        directions: (n, J) each joint's last move (+1, -1, 0), for the start of a segment.
        half_width: (J,) half-width of each joint's play [rad | m], >= 0.
    """
    phase = np.zeros_like(q)
    link = q[0].copy()
    width = np.where(half_width > 0.0, half_width, 1.0)
    for i in range(len(q)):
        if starts[i]:
            link = q[i] - half_width * directions[i]
        link = np.clip(link, q[i] - half_width, q[i] + half_width)
        phase[i] = np.where(half_width > 0.0, (q[i] - link) / width, directions[i])
    return phase


class _PlayProblem(kc._Problem):
    """The shipped calibration problem, the lost motion applied through the play operator over all rows."""

    def __init__(
        self,
        kinematics: Kinematics,
        all_q: np.ndarray,
        all_directions: np.ndarray,
        starts: np.ndarray,
        rows: np.ndarray,
        B: np.ndarray,
        coupled: tuple[tuple[int, int], ...],
    ) -> None:
        self.all_q, self.all_directions, self.starts, self.rows = all_q, all_directions, starts, rows
        super().__init__(kinematics, all_q[rows], all_directions[rows], B, coupled, 0.1)

    def true_joints(self, p: np.ndarray) -> np.ndarray:
        joint_map = self.joint_map(p)
        lost = np.zeros(self.q.shape[1]) if joint_map.lost_motion is None else joint_map.lost_motion
        # the phase takes the direction's place: true = ... + lost_motion * phase (lost_motion < 0: the link trails)
        phase = play_phases(self.all_q, self.starts, self.all_directions, np.abs(lost))[self.rows]
        return joint_map.apply(self.q, phase)


def _fit(problem: kc._Problem, nominal: HandEye) -> tuple[np.ndarray, np.ndarray]:
    """(n, 2) residuals (position [m], rotation [rad]) and the (J,) fitted lost motions of ``problem``, solved as the
    shipped calibration is, from the hand-eye calibration of the nominal model."""
    p, _keep, _error = kc._fit(problem, kc._start(nominal, problem.n_kinematic))
    X, Y = problem.transforms(p)
    translation, rotation = residuals(problem.tool_poses(p), problem.B, X, Y)
    lost = problem.joint_map(p).lost_motion
    return np.column_stack([translation, rotation]), np.zeros(problem.q.shape[1]) if lost is None else lost


def _line(name: str, res: np.ndarray) -> str:
    t, r = 1e3 * res[:, 0], np.degrees(res[:, 1])
    return (
        f"{name:<14} position mean {t.mean():.3f} median {np.median(t):.3f} p95 {np.percentile(t, 95):.3f} mm; "
        f"rotation mean {r.mean():.4f} p95 {np.percentile(r, 95):.4f} deg"
    )


def study(args: argparse.Namespace) -> None:
    """Calibrate both ways and print the residuals.

    Args:
        args: The parsed command line.
    """
    kinematics = RobotConfig.from_config(load_case_config(resolve_resource(args.config))["robot"]).kinematics
    readings = clean(read_parquet(args.dataset))
    cleaned = average_repeats(readings)
    settled = np.bincount(groups(readings)) > 1
    data, tracked = cleaned.dataset, cleaned.tracked
    directions = last_moves(data)
    starts = np.zeros(data.n_rows, dtype=bool)
    starts[data.segment_starts()] = True
    tracked_rows = np.flatnonzero(tracked)
    rows = tracked_rows[calibration_rows(data.set_name[tracked] == "train", settled[tracked], True)]
    B = poses(data.marker_pos_m[rows], data.marker_quat_wxyz[rows])
    q = data.q_measured[rows]
    coupled = kc.default_coupled(q.shape[1])
    nominal = calibrate(kc.kinematics_poses(kinematics, q), B)  # the start of both
    res_shipped, lost = _fit(kc._Problem(kinematics, q, directions[rows], B, coupled, 0.1), nominal)
    res_play, lost_play = _fit(_PlayProblem(kinematics, data.q_measured, directions, starts, rows, B, coupled), nominal)
    print(f"{len(rows)} settled training poses of {data.n_rows} rows")
    print(_line("last move", res_shipped))
    print(_line("play operator", res_play))
    names = kinematics.joint_names
    print(
        "lost motion (last move / play operator): "
        + ", ".join(f"{n} {1e3 * a:+.2f} / {1e3 * b:+.2f}" for n, a, b in zip(names, lost, lost_play, strict=True))
        + " (mrad | mm)"
    )
    inside = np.abs(play_phases(data.q_measured, starts, directions, np.abs(lost))[rows]) < 1.0 - 1e-9
    partial = inside.any(axis=1)
    t = 1e3 * res_shipped[:, 0]
    top = t > np.percentile(t, 95)
    print(
        f"last move: {partial.sum()} poses with a joint partway through its play, position mean {t[partial].mean():.3f}"
        f" mm there, {t[~partial].mean():.3f} elsewhere; {100 * partial[top].mean():.0f} % of the worst 5 %"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the study; 0 on success, 1 with one ``error:`` line for a bad input (a missing or unreadable dataset or
    configuration).

    Args:
        argv: The command line (default: sys.argv).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", required=True, help="case-study configuration of the dataset's robot")
    parser.add_argument("dataset", help="a dataset from cosim errors collect (Parquet)")
    args = parser.parse_args(argv)
    try:
        study(args)
    except (CosimError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
