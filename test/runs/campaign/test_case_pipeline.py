"""The per-case pipeline: one case's result depends on the case and its seed only; refusals are results."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.assembly import AssemblySpec, CaseAssembly, case_seed
from cosim_validation.common.exceptions import ConfigError, InputError
from cosim_validation.common.record import RobotRole
from cosim_validation.runs.campaign.case_pipeline import run_case, shared_assembly
from cosim_validation.runs.campaign.results_db import CaseResult
from cosim_validation.testgen import Suite
from test.runs.campaign.run_fixtures import CONFIG


@pytest.fixture(scope="module")
def world() -> CaseAssembly:
    """The assembly the reference campaign uses (built once per test process)."""
    return shared_assembly(AssemblySpec(str(CONFIG), ("mujoco", "emulated"), "straight"))


def _same(a: CaseResult, b: CaseResult) -> None:
    assert (a.case, a.verdicts, a.kpis) == (b.case, b.verdicts, b.kpis)
    assert [r.robot for r in a.trajectories] == [r.robot for r in b.trajectories]
    for x, y in zip(a.trajectories, b.trajectories, strict=True):
        np.testing.assert_array_equal(x.q_measured, y.q_measured)
        np.testing.assert_array_equal(x.actual_tip_pos_m, y.actual_tip_pos_m)


def test_case_seed_depends_on_suite_seed_and_id_only() -> None:
    seeds = {case_seed(s, t) for s in (0, 1) for t in ("a-0000000", "a-0000001")}
    assert len(seeds) == 4
    assert case_seed(1, "a-0000001") == case_seed(1, "a-0000001")
    assert all(0 <= s < 2**63 for s in seeds)


def test_a_case_is_the_same_whatever_ran_before(world: CaseAssembly, suites: tuple[Path, Path]) -> None:
    suite = Suite.read(suites[0])
    a, b = suite.case(0), suite.case(1)
    first = run_case(world, a, 0)
    run_case(world, b, 1)
    again = run_case(world, a, 0)
    _same(first, again)
    if first.case.outcome == "completed":
        assert [r.robot for r in first.trajectories] == [RobotRole.EXPECTED, RobotRole.VIRTUAL, RobotRole.PHYSICAL]
        assert first.trajectories[2].meta["seed"] == case_seed(a.seed, a.test_id)
        other_seed = run_case(world, replace(a, seed=a.seed + 1), 0)  # the physical arm's noise follows the seed
        assert not np.array_equal(other_seed.trajectories[2].actual_tip_pos_m, first.trajectories[2].actual_tip_pos_m)


def test_a_target_outside_the_lung_is_refused_with_its_reason(world: CaseAssembly, suites: tuple[Path, Path]) -> None:
    case = Suite.read(suites[0]).case(0)
    outside = replace(case, target_m=case.source_m + np.array([0.0, 0.0, 0.05]))
    result = run_case(world, outside, 5)
    assert result.case.outcome == "refused"
    assert result.case.message.startswith("target_outside_target_model:")
    assert (result.verdicts, result.kpis, result.trajectories) == ((), (), ())
    assert (result.case.test_id, result.case.case_index) == (case.test_id, 5)


def test_bad_assembly_requests() -> None:
    with pytest.raises(InputError, match="unknown controller 'wild'; expected one of: straight, guarded"):
        CaseAssembly(AssemblySpec(str(CONFIG), ("mujoco",), controller="wild"))
    with pytest.raises((InputError, ConfigError), match=r"nope\.yaml"):
        CaseAssembly(AssemblySpec("nope.yaml"))
    with pytest.raises(InputError, match="two engines play the same robot: mujoco, pybullet"):
        CaseAssembly(AssemblySpec(str(CONFIG), ("mujoco", "pybullet")))
