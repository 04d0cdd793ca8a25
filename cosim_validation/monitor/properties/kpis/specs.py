"""KPIs of a run ([Actuators 2025]): targeting error, deviation from the expected trajectory, stage durations.

File format, under ``kpis:`` of a properties file::

    targeting_error:   {kind: targeting_error, signal: tip}          # m
    deviation_p2t_max: {kind: deviation_p2t_max, signal: tip}        # m
    deviation_frechet: {kind: deviation_frechet, signal: tip}        # m
    joint_deviation_max: {kind: joint_deviation_max}                 # rad, over the revolute joints
    insertion_deviation_max: {kind: insertion_deviation_max}         # m, over the prismatic joints
    injection_extraction_frechet: {kind: stage_frechet, stages: [injection, extraction]}  # m
    duration: {kind: duration}                                       # s, one KPI per stage and the whole case

A stage's path (``stage_frechet``) is the motion during the stage: its samples, preceded by the last
sample of the stage before (where that motion starts); the second path is compared reversed.
``signal`` is ``tip`` (forward kinematics of the measured joints, the default) or ``actual_tip``
(tracker / simulator ground truth). Properties can bound a KPI with ``kpi(name)`` (outside temporal
operators), e.g. ``kpi(targeting_error) < 0.003``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.record import Stage
from cosim_validation.common.record.stage import CASE_STAGES
from cosim_validation.monitor.properties.context import MonitorContext
from cosim_validation.monitor.properties.errors import PropertyError
from cosim_validation.monitor.properties.sample import Block
from cosim_validation.monitor.properties.verdict import Kpi

#: kind -> unit
KINDS: dict[str, str] = {
    "targeting_error": "m",
    "deviation_p2t_max": "m",
    "deviation_frechet": "m",
    "joint_deviation_max": "rad",
    "insertion_deviation_max": "m",
    "stage_frechet": "m",
    "duration": "s",
}
_NEEDS_EXPECTED = frozenset(
    {"deviation_p2t_max", "deviation_frechet", "joint_deviation_max", "insertion_deviation_max"}
)


@dataclass(frozen=True)
class KpiSpec:
    """One KPI definition.

    Attributes:
        name: Name of the KPI (``Kpi.name``).
        kind: One of :data:`KINDS`.
        signal: ``tip`` or ``actual_tip`` (position KPIs).
        stages: For ``stage_frechet``: the two stages whose paths are compared, the second reversed.
    """

    name: str
    kind: str
    signal: str = "tip"
    stages: tuple[Stage, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise PropertyError(self.name, f"unknown KPI kind {self.kind!r}; expected one of: {', '.join(KINDS)}")
        if self.signal not in ("tip", "actual_tip"):
            raise PropertyError(self.name, f"KPI signal must be 'tip' or 'actual_tip', got {self.signal!r}")
        if self.kind == "stage_frechet" and len(self.stages) != 2:
            raise PropertyError(self.name, f"stage_frechet needs two stages, got {len(self.stages)}")

    @property
    def unit(self) -> str:
        """Unit of the value."""
        return KINDS[self.kind]

    @property
    def needs_expected(self) -> bool:
        """Whether the KPI compares with the expected trajectory."""
        return self.kind in _NEEDS_EXPECTED


def parse_kpis(node: ConfigNode | None) -> tuple[KpiSpec, ...]:
    """KPI specs from the ``kpis`` mapping of a properties file (None: no KPIs).

    Args:
        node: The ``kpis`` mapping: KPI name -> ``kind`` and optional ``signal`` and ``stages``; None: no KPIs.
    """
    if node is None:
        return ()
    specs = []
    for name, item in node.items():
        item.reject_unknown(("kind", "signal", "stages"))
        stages: tuple[Stage, ...] = ()
        if item.get("stages") is not None:
            stages = tuple(_stage(s) for s in item["stages"].elements())
        signal = item["signal"].to_str(choices=("tip", "actual_tip")) if item.get("signal") is not None else "tip"
        try:
            specs.append(KpiSpec(name, item["kind"].to_str(choices=KINDS), signal, stages))
        except PropertyError as exc:
            raise item.error(exc.message) from None
    return tuple(specs)


def _stage(node: ConfigNode) -> Stage:
    names = [s.label for s in CASE_STAGES]
    return Stage.parse(node.to_str(choices=names))


@dataclass(frozen=True)
class KpiValue:
    """A KPI's value and the sample it was decided at (index into the block; -1 if none)."""

    kpi: Kpi
    sample: int


def positions(block: Block, signal: str) -> np.ndarray:
    """(n, 3) tip positions of ``block`` for ``signal`` (tip or actual_tip) [m].

    Args:
        block: n samples of one robot.
        signal: ``tip`` (forward kinematics of the measured joints); anything else: ``actual_tip`` (tracker or
            ground truth, NaN where unknown).

    Returns:
        The positions in base_link, shape (n, 3), in [m].
    """
    return block.tip_pos_m if signal == "tip" else block.actual_tip_pos_m


def plan_target(expected: Block | None) -> np.ndarray | None:
    """The expected tip at the plan's last injection sample (where the plan puts the target), if any.

    Args:
        expected: The expected (planned) samples, or None.

    Returns:
        The point in base_link, shape (3,), in [m]; None without a plan or an injection sample in it.
    """
    if expected is not None:
        hits = np.flatnonzero(expected.stage == int(Stage.INJECTION))
        if hits.size:
            return np.asarray(expected.tip_pos_m[int(hits[-1])])
    return None


def target_point(context: MonitorContext, expected: Block | None) -> np.ndarray | None:
    """The case's target: the context's, else :func:`plan_target`.

    Args:
        context: The monitor context; its ``target_m`` is used when set.
        expected: The expected (planned) samples, used when the context has no target; or None.

    Returns:
        The target in base_link, shape (3,), in [m]; None if neither gives one.
    """
    return context.target_m if context.target_m is not None else plan_target(expected)
