"""A run directory (campaign or digital-twin session) opened for reporting: tables as DataFrames.

Both kinds of run write ``results.sqlite`` with one schema (:mod:`cosim_validation.runs.campaign.results_db`);
a campaign also keeps its suites' metadata (coverage metrics) in the database's meta. The robot model
and the anatomy come from the run's copy of its configuration (``inputs/``, see
:mod:`cosim_validation.runs.run_inputs`), needed to rebuild compact trajectories and to draw the obstacles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cosim_validation.common.exceptions import CosimError, InputError
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.runs.campaign.results_db import ResultsDB

if TYPE_CHECKING:
    import pandas as pd

    from cosim_validation.anatomy import AnatomyScene
    from cosim_validation.common.config import ConfigNode
    from cosim_validation.robots.model import Kinematics

RESULTS_FILE = "results.sqlite"
DEFAULT_SAFETY_PROPERTY = "needle_outside_forbidden_regions"
ROBOT_ORDER = ("expected", "virtual", "physical")


@dataclass
class RunData:
    """What a report reads from a run directory.

    Attributes:
        run_dir: The directory.
        db: Its results database (open).
        meta: The run's metadata.
        cases: One row per case (columns of the ``cases`` table), index ``test_id``, in case order.
        verdicts: One row per (case, robot, property): test_id, robot, property, status.
        kpis: One row per (case, robot, KPI) for the whole case (stage ``case``): test_id, robot, name,
            stage, value, unit.
        notes: What the report could not use, and why (shown in the report).
    """

    run_dir: Path
    db: ResultsDB
    meta: dict[str, Any]
    cases: pd.DataFrame
    verdicts: pd.DataFrame
    kpis: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        """``campaign`` or ``session``."""
        return str(self.meta.get("kind", "session"))

    @property
    def safety_property(self) -> str:
        """The property whose violation makes a case error-triggering."""
        return str(self.meta.get("safety_property") or DEFAULT_SAFETY_PROPERTY)

    @property
    def suites(self) -> list[dict[str, Any]]:
        """Metadata of the run's suites (campaigns; empty for a session)."""
        return list(self.meta.get("suites", []))

    @cached_property
    def trajectory_robots(self) -> dict[str, list[str]]:
        """``{test_id: [robot, ...]}`` of the stored trajectories."""
        return self.db.trajectory_robots()

    def robots(self) -> list[str]:
        """Robots with verdicts, in the order expected, virtual, physical."""
        present = set(self.verdicts["robot"]) if len(self.verdicts) else set()
        return [r for r in ROBOT_ORDER if r in present]

    @property
    def primary_robot(self) -> str | None:
        """The robot whose safety verdict counts in the coverage tables: virtual, else physical, else the plan."""
        have = set(self.verdicts.loc[self.verdicts["property"] == self.safety_property, "robot"])
        return next((r for r in ("virtual", "physical", "expected") if r in have), None)

    def violated(self, robot: str | None = None) -> pd.Series:
        """Per case (index test_id, every case): whether the safety property is violated on ``robot``.

        Args:
            robot: ``expected``, ``virtual`` or ``physical``; None: :attr:`primary_robot`. A case without that
                robot's verdict counts as not violated.
        """
        robot = robot or self.primary_robot
        rows = self.verdicts[(self.verdicts["property"] == self.safety_property) & (self.verdicts["robot"] == robot)]
        flags = rows.set_index("test_id")["status"].eq("violated")
        return flags.reindex(self.cases.index, fill_value=False).astype(bool)

    @cached_property
    def config(self) -> ConfigNode | None:
        """The run's configuration, from its copy in the run directory (``inputs/``) if there is one.

        Else the file the run names (meta ``config_path``) or the shipped one, as it is now, with a note saying so.
        """
        from cosim_validation.runs.run_inputs import kept_path, load_run_config

        given = self.meta.get("config_path")
        if given:
            given = kept_path(self.run_dir, given)  # relative to the run directory
        if given and not Path(given).is_file():
            given = None
        if given is None:
            from cosim_validation.common.config import package_root

            given = package_root() / "config" / "needle_insertion.yaml"
        return load_run_config(self.run_dir, "config", given, self.notes.append)

    @property
    def config_path(self) -> Path | None:
        """Where the run's configuration was read from (its copy, or the fallback of :attr:`config`)."""
        return Path(self.config.source) if self.config is not None else None

    @cached_property
    def kinematics(self) -> Kinematics | None:
        """The nominal robot of the run (rebuilds compact trajectories)."""
        if self.config is None:
            return None
        from cosim_validation.robots.model import RobotConfig

        return RobotConfig.from_config(self.config["robot"]).kinematics

    @cached_property
    def scene(self) -> AnatomyScene | None:
        """The run's anatomy, placed in base_link."""
        if self.config is None:
            return None
        from cosim_validation.anatomy import load_anatomy

        try:
            return load_anatomy(self.config["anatomy"])
        except CosimError as exc:
            self.notes.append(f"anatomy not drawn: {exc}")
            return None

    def trajectory(self, test_id: str, robot: str) -> TrajectoryRecord:
        """One stored trajectory.

        Args:
            test_id: The case's test id.
            robot: ``expected``, ``virtual`` or ``physical``.

        Raises:
            InputError: No such trajectory stored, or a compact one without the run's robot model.
        """
        return self.db.trajectory(test_id, robot, self.kinematics)

    def completed(self) -> pd.DataFrame:
        """The cases that ran to the end (outcome ``completed``)."""
        return self.cases[self.cases["outcome"] == "completed"]

    def points_m(self, which: str, test_ids: Any = None) -> np.ndarray:
        """(n, 3) ``source`` or ``target`` points of the cases ``test_ids`` (default all) in base_link [m].

        Args:
            which: ``source`` or ``target``.
            test_ids: Test ids (or a boolean mask) selecting rows of :attr:`cases`; None: every case.
        """
        frame = self.cases if test_ids is None else self.cases.loc[test_ids]
        return np.asarray(frame[[f"{which}_{a}_m" for a in "xyz"]].to_numpy(dtype=np.float64))

    def close(self) -> None:
        """Close the database."""
        self.db.close()


def load_run(run_dir: str | Path) -> RunData:
    """Open a run directory.

    Args:
        run_dir: A campaign's or session's run directory, holding ``results.sqlite``.

    Raises:
        InputError: Not a directory, or no (readable) ``results.sqlite`` in it.
    """
    path = Path(run_dir)
    if not path.is_dir():
        why = "a file, expected a directory" if path.exists() else "no such directory"
        raise InputError(f"{path}: not a run directory ({why})")
    if not (path / RESULTS_FILE).is_file():
        raise InputError(f"{path}: not a run directory (no {RESULTS_FILE}; run `cosim campaign` or `cosim session`)")
    db = ResultsDB.open(path / RESULTS_FILE)
    cases = db.frame("SELECT * FROM cases ORDER BY case_index").set_index("test_id", drop=False)
    verdicts = _categorical(db.frame("SELECT test_id, robot, property, status FROM verdicts"))
    kpis = _categorical(db.frame("SELECT test_id, robot, name, stage, value, unit FROM kpis WHERE stage = 'case'"))
    return RunData(path, db, db.meta(), cases, verdicts, kpis)


def _categorical(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as categories: a few distinct names repeated millions of times in a large run."""
    for column in frame.columns:
        if frame[column].dtype == object and column != "test_id":
            frame[column] = frame[column].astype("category")
    return frame
