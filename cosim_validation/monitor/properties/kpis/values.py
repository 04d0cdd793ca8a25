"""Computing the KPIs of one robot's run (whole trace; the online monitor calls this at the end)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.common.record.stage import CASE_STAGES
from cosim_validation.monitor.metrics import frechet, p2t
from cosim_validation.monitor.properties.alignment import align_expected
from cosim_validation.monitor.properties.context import MonitorContext
from cosim_validation.monitor.properties.kpis.specs import KpiSpec, KpiValue, positions, target_point
from cosim_validation.monitor.properties.sample import Block
from cosim_validation.monitor.properties.verdict import Kpi


class _Run:
    """One robot's samples with its plan, and helpers to report a value or why there is none."""

    def __init__(self, block: Block, robot: RobotRole, context: MonitorContext, expected: Block | None) -> None:
        self.block, self.robot, self.context, self.expected = block, robot, context, expected

    def value(self, spec: KpiSpec, value: float, sample: int, stage: Stage = Stage.NONE) -> KpiValue:
        return KpiValue(Kpi(spec.name, self.robot, stage, float(value), spec.unit), sample)

    def none(self, spec: KpiSpec, reason: str, stage: Stage = Stage.NONE) -> KpiValue:
        return KpiValue(Kpi(spec.name, self.robot, stage, math.nan, spec.unit, reason), -1)

    def path(self, spec: KpiSpec, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        """(m, 3) positions of ``spec.signal`` within ``mask``, their sample indices and how many are NaN.

        A path with missing samples is not a path: a KPI over it is unknown (a Fréchet distance
        over a tracker gap joined the samples on either side and grew from 0.1 mm to 10 mm).
        """
        points = positions(self.block, spec.signal)
        index = np.arange(self.block.n) if mask is None else np.flatnonzero(mask)
        missing = int(np.sum(~np.isfinite(points[index]).all(axis=1)))
        return points[index], index, missing

    def gap(self, spec: KpiSpec, missing: int, total: int, where: str = "") -> KpiValue:
        """Unknown: ``missing`` of ``total`` samples of the signal are NaN."""
        return self.none(spec, f"{missing} of {total} {spec.signal} samples{where} are NaN (no data there)")


def _targeting(run: _Run, spec: KpiSpec) -> KpiValue:
    target = target_point(run.context, run.expected)
    if target is None:
        return run.none(spec, "no target: none in the context and no injection in the expected trajectory")
    points, index, _ = run.path(spec, run.block.stage == int(Stage.INJECTION))
    if index.size == 0:
        return run.none(spec, f"no {spec.signal} sample in the injection stage")
    if int(index[-1]) == run.block.n - 1:  # the run stopped during the injection (an aborted case)
        return run.none(spec, "the run ends during the injection: the needle never reached its end point")
    if not np.isfinite(points[-1]).all():
        return run.none(spec, f"the last injection sample has no {spec.signal} data (NaN)")
    d = points[-1] - target
    return run.value(spec, math.sqrt(float(d @ d)), int(index[-1]))


def _deviation(run: _Run, spec: KpiSpec) -> KpiValue:
    assert run.expected is not None
    points, index, missing = run.path(spec)
    plan = run.expected.tip_pos_m
    if missing == index.size:
        return run.none(spec, f"no finite {spec.signal} sample")
    if missing:
        return run.gap(spec, missing, index.size)
    if spec.kind == "deviation_frechet":
        return run.value(spec, frechet(points, plan), int(index[-1]))
    dist = np.asarray(p2t(points, plan))
    worst = int(np.argmax(dist))
    return run.value(spec, float(dist[worst]), int(index[worst]))


def _joint_deviation(run: _Run, spec: KpiSpec) -> KpiValue:
    """Largest joint deviation from the plan, over the revolute or over the prismatic joints.

    The revolute joints in [rad] (``joint_deviation_max``) or the prismatic ones in [m]
    (``insertion_deviation_max``): one KPI never mixes the two units.
    """
    assert run.expected is not None
    wanted = run.context.prismatic_mask == (spec.kind == "insertion_deviation_max")
    if not wanted.any():
        return run.none(
            spec, f"the robot has no {'prismatic' if spec.kind == 'insertion_deviation_max' else 'revolute'} joint"
        )
    pair = align_expected(run.block.t_s, run.expected.t_s)
    diff = np.abs(run.block.q_measured[:, wanted] - run.expected.q_measured[pair][:, wanted]).max(axis=1)
    missing = int(np.isnan(diff).sum())
    if missing:
        return run.none(spec, f"{missing} of {diff.size} samples have NaN joints (no data there)")
    worst = int(np.argmax(diff))
    return run.value(spec, float(diff[worst]), worst)


def _stage_motion(stage: np.ndarray, which: Stage) -> np.ndarray:
    """Mask of the samples of ``which`` plus the sample just before its first one (where its motion starts)."""
    mask: np.ndarray = np.asarray(stage == int(which))
    hits = np.flatnonzero(mask)
    if hits.size and hits[0] > 0:
        mask = mask.copy()
        mask[hits[0] - 1] = True
    return mask


def _stage_frechet(run: _Run, spec: KpiSpec) -> KpiValue:
    first, second = spec.stages
    p, _, p_missing = run.path(spec, _stage_motion(run.block.stage, first))
    q, index, q_missing = run.path(spec, _stage_motion(run.block.stage, second))
    for stage, size, missing in ((first, p.shape[0], p_missing), (second, q.shape[0], q_missing)):
        if size == missing:
            return run.none(spec, f"no {spec.signal} sample in the {stage.label} stage")
        if missing:
            return run.gap(spec, missing, size, f" of the {stage.label} stage")
    return run.value(spec, frechet(p, q[::-1]), int(index[-1]))


def _durations(run: _Run, spec: KpiSpec) -> list[KpiValue]:
    t, stage = run.block.t_s, run.block.stage
    out = [run.value(spec, float(t[-1] - t[0]), run.block.n - 1)]
    for s in CASE_STAGES:
        hits = np.flatnonzero(stage == int(s))
        if hits.size == 0:
            out.append(run.none(spec, f"the {s.label} stage never occurred", s))
            continue
        end = int(hits[-1]) + 1  # the stage lasts until the next stage's first sample
        out.append(run.value(spec, float(t[min(end, run.block.n - 1)] - t[hits[0]]), end - 1, s))
    return out


def evaluate_kpis(
    specs: Sequence[KpiSpec], block: Block, robot: RobotRole, context: MonitorContext, expected: Block | None
) -> list[KpiValue]:
    """Every KPI of ``specs`` on one robot's samples.

    Args:
        specs: KPI definitions.
        block: The robot's samples (a whole run).
        robot: Which robot.
        context: For the target point.
        expected: The expected (planned) samples, for deviation KPIs.
    """
    run = _Run(block, robot, context, expected)
    out: list[KpiValue] = []
    for spec in specs:
        if block.n == 0:
            out.append(run.none(spec, "empty trace: no samples"))
        elif spec.kind == "duration":
            out.extend(_durations(run, spec))
        elif spec.needs_expected and (expected is None or expected.n == 0):
            out.append(run.none(spec, "needs the expected trajectory (none given)"))
        elif spec.kind == "targeting_error":
            out.append(_targeting(run, spec))
        elif spec.kind in ("deviation_p2t_max", "deviation_frechet"):
            out.append(_deviation(run, spec))
        elif spec.kind in ("joint_deviation_max", "insertion_deviation_max"):
            out.append(_joint_deviation(run, spec))
        else:
            out.append(_stage_frechet(run, spec))
    return out
