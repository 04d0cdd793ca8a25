"""The stored trajectories of a run directory as the ``.npz`` records ``cosim check`` reads.

A campaign or a session stores every robot's trajectory in ``results.sqlite`` (compactly: the robot model
rebuilds it); nothing wrote them out as files until ``cosim export``. Each record is written to
``OUT/<test_id>/<robot>.npz`` with :meth:`TrajectoryRecord.save` (a temporary file renamed into place) and
carries the case's target in ``meta['target_m']``, so ``cosim check OUT/<test_id>/*.npz`` needs no
``--target``. Nothing is overwritten: every file to write is checked before the first is written.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole
from cosim_validation.robots.model import Kinematics
from cosim_validation.runs.campaign.results_db import ResultsDB


@dataclass(frozen=True)
class ExportedRecord:
    """One written record: its case, robot and file."""

    test_id: str
    robot: str
    path: Path


def _selected(db: ResultsDB, cases: Sequence[str], robots: Sequence[str]) -> list[tuple[str, str]]:
    """(test_id, robot) pairs to export, in case order; every asked case and robot must be stored."""
    stored = db.trajectory_robots()
    if not stored:
        raise InputError(f"{db.path}: no trajectories stored (the run was made with --no-trajectories?)")
    order = [c.test_id for c in db.cases() if c.test_id in stored]
    missing = [c for c in cases if c not in stored]
    if missing:
        known = ", ".join(order[:5]) + (", ..." if len(order) > 5 else "")
        raise InputError(f"--case {missing[0]!r}: no trajectories of that case in {db.path} (stored: {known})")
    for robot in robots:
        RobotRole.parse(robot)
    wanted = [c for c in order if not cases or c in cases]
    pairs = [(c, r) for c in wanted for r in stored[c] if not robots or r in robots]
    if not pairs:
        raise InputError(f"--robot {', '.join(robots)}: no such trajectory stored for the chosen cases")
    return pairs


def export_records(
    db: ResultsDB, out_dir: Path, kinematics: Kinematics | None, cases: Sequence[str] = (), robots: Sequence[str] = ()
) -> list[ExportedRecord]:
    """Write the stored trajectories of ``cases`` (all if empty) and ``robots`` (all if empty) into ``out_dir``.

    Args:
        db: The run's results database.
        out_dir: Where ``<test_id>/<robot>.npz`` go (created).
        kinematics: The run's robot model (rebuilds compact records).
        cases: Test ids; empty for every case with trajectories.
        robots: ``expected``, ``virtual``, ``physical``; empty for all.

    Raises:
        InputError: Unknown case or robot, no trajectories, a file that exists already, or a record that cannot
            be read back (a damaged database).
    """
    pairs = _selected(db, cases, robots)
    targets = {c.test_id: [c.target_x_m, c.target_y_m, c.target_z_m] for c in db.cases()}
    paths = [out_dir / test_id / f"{robot}.npz" for test_id, robot in pairs]
    existing = [p for p in paths if p.exists()]
    if existing:
        raise InputError(f"{existing[0]}: already exists; refusing to overwrite it (choose another -o)")
    written: list[ExportedRecord] = []
    made: list[Path] = []  # folders this export created, innermost last
    try:
        for (test_id, robot), path in zip(pairs, paths, strict=True):
            record = db.trajectory(test_id, robot, kinematics)
            record = dataclasses.replace(record, meta={**record.meta, "target_m": targets[test_id]})
            made += [d for d in reversed([path.parent, *path.parent.parents]) if not d.exists()]
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(f"{path.parent}: cannot create the folder ({exc.strerror})") from None
            # another export into the same folder at once: both checked before either wrote, and both said "wrote"
            record.save(path, overwrite=False)
            written.append(ExportedRecord(test_id, robot, path))
    except BaseException:
        _undo(written, made)  # all or nothing: no partial export is left beside an error
        raise
    return written


def _undo(written: list[ExportedRecord], made: list[Path]) -> None:
    """Remove the records an export wrote and the folders it created (the ones still empty)."""
    for record in written:
        record.path.unlink(missing_ok=True)
    for folder in reversed(made):
        with contextlib.suppress(OSError):  # not empty (something else is in it) or gone
            folder.rmdir()
