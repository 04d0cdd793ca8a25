"""Properties over KPIs (``kpi(name) < bound``): decided once per run, at its end, offline and online alike."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.monitor.properties.context import MonitorContext
from cosim_validation.monitor.properties.kpis.specs import KpiSpec, KpiValue
from cosim_validation.monitor.properties.kpis.values import evaluate_kpis
from cosim_validation.monitor.properties.language import formula as f
from cosim_validation.monitor.properties.language.robustness import (
    ClauseResult,
    Unknowns,
    combine,
    leaf_bounds,
    unknown,
)
from cosim_validation.monitor.properties.language.terms import Env
from cosim_validation.monitor.properties.property_set import CompiledProperty
from cosim_validation.monitor.properties.sample import Block
from cosim_validation.monitor.properties.verdict import Kpi, Verdict


def _bounds(node: f.Formula, env: Env) -> tuple[float, float]:
    """Value of a formula without temporal operators on a one-sample block."""
    if not node.children():
        (lo_row, hi_row), _ = leaf_bounds(node, env)
        return float(lo_row[0]), float(hi_row[0])
    if isinstance(node, f.Not):
        lo, hi = _bounds(node.operand, env)
        return -hi, -lo
    assert isinstance(node, (f.And, f.Or))
    parts = [_bounds(op, env) for op in node.operands]
    pick = min if isinstance(node, f.And) else max
    return pick(p[0] for p in parts), pick(p[1] for p in parts)


def case_level_verdict(
    prop: CompiledProperty, values: Mapping[str, KpiValue], block: Block, robot: RobotRole, context: MonitorContext
) -> Verdict:
    """The verdict of a property over KPIs; its violation is dated at the latest sample the KPIs used.

    Args:
        prop: A compiled property over KPIs (``prop.compiled.case_level``).
        values: The run's whole-case KPI values by name (:func:`whole_case`); every KPI the property names.
        block: The robot's samples of the whole run, n >= 1 (the violation's time and stage are read from it).
        robot: Which robot the verdict is about.
        context: The monitor context the property was compiled against.
    """
    unit = prop.compiled.unit
    used = [values[name] for name in sorted(prop.compiled.kpis)]
    for value in used:
        if math.isnan(value.kpi.value):
            return unknown(prop.name, robot, unit, f"KPI {value.kpi.name}: {value.kpi.reason}")
    env = Env(block.take(np.array([0])), None, context, kpis={v.kpi.name: v.kpi.value for v in used})
    lo, hi = _bounds(prop.compiled.formula, env)
    sample = max(v.sample for v in used)
    result = ClauseResult(lo, hi, float(block.t_s[sample]), Stage(int(block.stage[sample])))
    return combine(prop.name, robot, unit, [result], Unknowns())


def run_kpis(
    specs: Sequence[KpiSpec], block: Block, robot: RobotRole, context: MonitorContext, expected: Block | None
) -> list[KpiValue]:
    """The KPIs that apply to ``robot`` (the plan is not compared with itself, but is its own target source).

    Args:
        specs: KPI definitions.
        block: The robot's samples (a whole run).
        robot: Which robot; for EXPECTED the KPIs that compare with the plan are left out.
        context: The monitor context (target point, joint types).
        expected: The expected (planned) samples, for deviation KPIs and the plan's target; None: not known.
            Ignored for EXPECTED, whose own ``block`` is its plan.
    """
    if robot is RobotRole.EXPECTED:
        expected = block
    applicable = [s for s in specs if not (robot is RobotRole.EXPECTED and s.needs_expected)]
    return evaluate_kpis(applicable, block, robot, context, expected)


def whole_case(values: Sequence[KpiValue]) -> dict[str, KpiValue]:
    """KPI values by name (the whole-case value for per-stage KPIs such as duration).

    Args:
        values: The KPI values of one run, as :func:`run_kpis` gives them.
    """
    return {v.kpi.name: v for v in values if v.kpi.stage is Stage.NONE}


def kpis_of(values: Sequence[KpiValue]) -> list[Kpi]:
    """The plain KPI results.

    Args:
        values: The KPI values of one run, as :func:`run_kpis` gives them.
    """
    return [v.kpi for v in values]
