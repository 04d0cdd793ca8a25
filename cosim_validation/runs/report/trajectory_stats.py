"""Numbers computed from stored trajectories.

Fréchet diversity within cubes (Figure 6), deviations of the executed robots from the expected trajectory (Table 4,
Figure 11).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cosim_validation.common.record import Stage, TrajectoryRecord
from cosim_validation.monitor.metrics import frechet_all_pairs
from cosim_validation.monitor.properties.alignment import align_expected
from cosim_validation.runs.report.run_data import RunData

#: The part of a case from the source to the target ([Actuators 2025], Figure 6).
SOURCE_TO_TARGET = (Stage.APPROACH, Stage.INJECTION)


def tip_path_m(record: TrajectoryRecord, stages: tuple[Stage, ...] | None = SOURCE_TO_TARGET) -> np.ndarray:
    """(m, 3) needle-tip positions [m] in base_link during ``stages`` (None: all).

    The actual tip if the record holds one in any sample (NaN in the samples where it is not known), else the
    forward kinematics tip.

    Args:
        record: One robot's trajectory of a case.
        stages: The stages whose samples are kept, in record order; None keeps every sample.
    """
    tip = record.actual_tip_pos_m if record.has_actual_tip else record.tip_pos_m
    if stages is None:
        return np.asarray(tip)
    return np.asarray(tip[np.isin(record.stage, [int(s) for s in stages])])


@dataclass(frozen=True)
class CubeFrechet:
    """Fréchet distances between the tip paths of the cases of one cube [m].

    Attributes:
        granularity_m: Cube edge [m].
        cube: Cube index.
        n_cases: Cases in the cube.
        part: ``source_to_target`` (approach and injection, [Actuators 2025]'s Figure 6) or ``injection`` only (the
            part that depends on the target alone: the sources of a suite differ case by case).
        min_m, mean_m, max_m: Over every pair of cases [m].
    """

    granularity_m: float
    cube: tuple[int, int, int]
    n_cases: int
    part: str
    min_m: float
    mean_m: float
    max_m: float


#: The parts of a case compared in Figure 6.
PARTS: dict[str, tuple[Stage, ...]] = {"source_to_target": SOURCE_TO_TARGET, "injection": (Stage.INJECTION,)}


def _cube_groups(run: RunData, robot: str) -> dict[float, dict[tuple[int, int, int], list[str]]]:
    done = run.completed()
    done = done[(done["generator"] == "grid") & (done["cube_i"] >= 0)]
    stored = run.trajectory_robots
    groups: dict[float, dict[tuple[int, int, int], list[str]]] = {}
    for test_id, g, i, j, k in done[["test_id", "granularity_m", "cube_i", "cube_j", "cube_k"]].itertuples(index=False):
        if robot in stored.get(test_id, ()):
            groups.setdefault(float(g), {}).setdefault((int(i), int(j), int(k)), []).append(test_id)
    return groups


def cube_frechet(run: RunData, robot: str, max_cubes: int = 200) -> tuple[list[CubeFrechet], dict[float, int]]:
    """Per cube with >= 2 cases (grid suites): min, mean and max pairwise Fréchet distance of the tip paths.

    Args:
        run: The run.
        robot: Whose trajectories (``virtual``, or ``expected`` for plans only).
        max_cubes: At most this many cubes per granularity, evenly spaced in cube order (bounded time).

    Returns:
        The cubes measured, and per granularity how many cubes had >= 2 cases.
    """
    out: list[CubeFrechet] = []
    eligible: dict[float, int] = {}
    for granularity, cubes in sorted(_cube_groups(run, robot).items(), reverse=True):
        multi = sorted(c for c, ids in cubes.items() if len(ids) >= 2)
        eligible[granularity] = len(multi)
        chosen = (
            multi
            if len(multi) <= max_cubes
            else [multi[i] for i in np.linspace(0, len(multi) - 1, max_cubes).astype(int)]
        )
        for cube in chosen:
            records = [run.trajectory(t, robot) for t in cubes[cube]]
            upper = np.triu_indices(len(records), k=1)
            for part, stages in PARTS.items():
                d = frechet_all_pairs([tip_path_m(r, stages) for r in records])[upper]
                out.append(
                    CubeFrechet(
                        granularity, cube, len(records), part, *(float(f(d)) for f in (np.min, np.mean, np.max))
                    )
                )
    return out, eligible


@dataclass(frozen=True)
class Deviation:
    """Deviation statistics of one robot from the expected trajectory over many cases (Table 4).

    Attributes:
        robot: ``virtual`` or ``physical``.
        n_cases: Cases pooled.
        joint_deg: mean, std, median, p95, max of ``|q_measured - q_expected|`` over every revolute joint and
            sample [deg].
        tip_mm: the same for the needle-tip distance to the expected tip [mm].
        tip_source: ``actual`` (simulator ground truth / tracker) or ``fk`` (forward kinematics of the encoders).
        prismatic_mm: the same as ``joint_deg`` over the prismatic joints (the PSM's and the Raven-II's insertion)
            [mm]; None for a robot without one (a length is never converted to degrees).
    """

    robot: str
    n_cases: int
    joint_deg: dict[str, float]
    tip_mm: dict[str, float]
    tip_source: str
    prismatic_mm: dict[str, float] | None = None


def _stats(values: np.ndarray) -> dict[str, float]:
    if values.size == 0:
        return {k: float("nan") for k in ("mean", "std", "median", "p95", "max")}
    return {
        "mean": float(values.mean()),
        "std": float(values.std()),
        "median": float(np.median(values)),
        "p95": float(np.percentile(values, 95)),
        "max": float(values.max()),
    }


def record_deviation(record: TrajectoryRecord, expected: TrajectoryRecord) -> tuple[np.ndarray, np.ndarray]:
    """(n, J) joint deviations and (n,) tip deviations [m] of ``record`` from ``expected`` (nearest time).

    The joint deviations are ``|q_measured - q_expected|`` in [rad], or [m] for a prismatic joint; the tip of
    ``record`` is its actual tip if it holds one in any sample, else its forward kinematics tip.

    Args:
        record: An executed robot's trajectory, n samples, J joints.
        expected: The expected trajectory of the same case (same joints); each sample of ``record`` is paired with
            the expected sample nearest in time.
    """
    pair = align_expected(record.t_s, expected.t_s)
    joints = np.abs(record.q_measured - expected.q_measured[pair])
    tip = record.actual_tip_pos_m if record.has_actual_tip else record.tip_pos_m
    return joints, np.linalg.norm(tip - expected.tip_pos_m[pair], axis=1)


def deviations(run: RunData, test_ids: list[str], robots: tuple[str, ...] = ("virtual", "physical")) -> list[Deviation]:
    """Table 4 over ``test_ids`` for each robot with trajectories there.

    Revolute joints in degrees, prismatic joints in millimetres (joint types from the run's robot model).

    Args:
        run: The run; its robot model tells the joint types (all revolute without one).
        test_ids: The cases pooled; for each robot, those with both its and the expected trajectory stored.
        robots: The executed robots compared with the expected trajectory; one without a case is left out.
    """
    out = []
    stored = run.trajectory_robots
    prismatic = run.kinematics.chain.prismatic if run.kinematics is not None else None
    for robot in robots:
        ids = [t for t in test_ids if {"expected", robot} <= set(stored.get(t, ()))]
        if not ids:
            continue
        joints, tips, actual = [], [], True
        for test_id in ids:
            record = run.trajectory(test_id, robot)
            j, d = record_deviation(record, run.trajectory(test_id, "expected"))
            joints.append(j)
            tips.append(d)
            actual &= record.has_actual_tip
        pooled = np.concatenate(joints)
        linear = np.zeros(pooled.shape[1], dtype=bool) if prismatic is None else np.asarray(prismatic, dtype=bool)
        joint_deg = np.degrees(pooled[:, ~linear].ravel())
        prismatic_mm = _stats(1e3 * pooled[:, linear].ravel()) if linear.any() else None
        tip_mm = 1e3 * np.concatenate(tips)
        source = "actual" if actual else "fk"
        out.append(Deviation(robot, len(ids), _stats(joint_deg), _stats(tip_mm), source, prismatic_mm))
    return out


def collision_free(run: RunData) -> list[str]:
    """Completed cases where no robot, the plan included, violates the safety property ([Actuators 2025], 5.2.4).

    Args:
        run: The run; the safety verdicts of every robot with verdicts count.
    """
    done = run.completed().index
    bad = np.zeros(len(done), dtype=bool)
    for robot in run.robots():
        bad |= run.violated(robot).loc[done].to_numpy()
    return [str(t) for t in done[~bad]]


def representative_case(run: RunData, test_ids: list[str], robot: str) -> str | None:
    """The case whose maximum tip deviation on ``robot`` is the median among ``test_ids`` (Figure 11).

    The deviation is the whole-case KPI ``actual_deviation_p2t_max``, else ``deviation_p2t_max``; without either the
    first of ``test_ids`` is taken (None if there is none).

    Args:
        run: The run, for its KPIs.
        test_ids: The candidate cases.
        robot: ``virtual`` or ``physical``.
    """
    rows = run.kpis[(run.kpis["robot"] == robot) & (run.kpis["stage"] == "case")]
    for name in ("actual_deviation_p2t_max", "deviation_p2t_max"):
        values = rows[rows["name"] == name].set_index("test_id")["value"].reindex(test_ids).dropna()
        if len(values):
            order = values.sort_values(kind="stable")
            return str(order.index[len(order) // 2])
    return test_ids[0] if test_ids else None


def stage_spans(record: TrajectoryRecord) -> list[tuple[float, float, str]]:
    """(start [s], end [s], stage name) of each run of equal stages in ``record``.

    A stage ends at the first sample of the next one (the last at the record's last sample).

    Args:
        record: A trajectory with at least one sample.
    """
    change = np.flatnonzero(np.diff(record.stage.astype(np.int16))) + 1
    starts = np.concatenate([[0], change])
    ends = np.concatenate([change, [record.n_samples - 1]])
    return [
        (float(record.t_s[a]), float(record.t_s[b]), Stage(int(record.stage[a])).label)
        for a, b in zip(starts, ends, strict=True)
    ]


def as_dict(item: Any) -> dict[str, Any]:
    """Plain values of a result dataclass (for summary.json).

    Args:
        item: A dataclass instance (e.g. :class:`Deviation`); its tuple fields become lists.
    """
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(item).items()}
