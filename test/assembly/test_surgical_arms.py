"""The dVRK PSM through the one assembly: config/dvrk_psm_insertion.yaml planned, run in MuJoCo and on the emulated
(perturbed, cable-driven) PSM, and checked by the monitor, like an ER3 Pro case (issue 17)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from cosim_validation.assembly import AssemblySpec, CaseAssembly
from cosim_validation.assembly.case_assembly import BatchCase
from cosim_validation.config import resolve_resource
from cosim_validation.coverage import TestCase
from cosim_validation.record import RobotRole, Stage

PSM_CONFIG = resolve_resource("config/dvrk_psm_insertion.yaml")
TARGET_M = np.array([0.0303, 0.0063, -0.19996])  # in the left lung, ~0.2 m below the RCM (a testgen target)
STANDOFF_M = 0.015  # testgen.source_region.toward_target_m of the configuration


@pytest.fixture(scope="module")
def psm() -> Iterator[CaseAssembly]:
    assembly = CaseAssembly(AssemblySpec(str(PSM_CONFIG), engines=("mujoco", "emulated")))
    yield assembly
    assembly.close()


@pytest.fixture(scope="module")
def batch(psm: CaseAssembly) -> BatchCase:
    source = STANDOFF_M * TARGET_M / np.linalg.norm(TARGET_M)  # on the line from the RCM (the origin)
    z = np.zeros(3, dtype=np.int64)
    case = TestCase("psm-0000001", "psm", "base_link", source, TARGET_M, z, 0.0, "manual", 3, 0.0)
    return psm.run_batch(case)


def test_a_psm_case_runs_through_the_assembly_on_both_robots(batch: BatchCase) -> None:
    assert batch.run.outcome == "completed", batch.run.message
    roles = [r.robot for r in batch.records]
    assert roles == [RobotRole.EXPECTED, RobotRole.VIRTUAL, RobotRole.PHYSICAL]
    for record in batch.records:
        assert record.joint_names == ("yaw", "pitch", "insertion", "roll", "wrist_pitch", "wrist_yaw")
        assert record.q_measured.shape[1] == 6


def test_the_insertion_is_straight_through_the_rcm_by_the_insertion_joint(batch: BatchCase) -> None:
    """During the injection the planned tip stays on the line from the RCM to the target and only the prismatic
    joint moves (metres), by the length of the insertion."""
    plan = batch.records[0]
    injection = plan.stage == int(Stage.INJECTION)
    tips = plan.tip_pos_m[injection]
    unit = TARGET_M / np.linalg.norm(TARGET_M)
    off_line = np.linalg.norm(np.cross(tips, unit), axis=1)
    assert off_line.max() < 1e-6
    q = plan.q_measured[injection]
    travel = np.linalg.norm(tips[-1] - tips[0])
    assert q[-1, 2] - q[0, 2] == pytest.approx(travel, abs=1e-6)
    others = np.delete(q, 2, axis=1)
    assert np.abs(others - others[0]).max() < 1e-4  # rad: the arm pivots before, not during the insertion
    assert np.linalg.norm(tips[-1] - TARGET_M) < 1e-6


def test_the_emulated_psm_misses_by_what_its_encoders_cannot_see(batch: BatchCase) -> None:
    """MuJoCo follows the plan to micrometres; the emulated PSM's actual tip (its hidden joint offsets, cable
    play and stretch) is off its own forward kinematics by a millimetre-scale error."""
    _, virtual, physical = batch.records
    end = int(np.flatnonzero(physical.stage == int(Stage.INJECTION))[-1])
    assert np.linalg.norm(virtual.tip_pos_m[end] - TARGET_M) < 2e-5
    hidden = np.linalg.norm(physical.actual_tip_pos_m - physical.tip_pos_m, axis=1)
    assert 2e-4 < float(np.mean(hidden)) < 1e-2


def test_the_monitor_judges_a_psm_case(psm: CaseAssembly, batch: BatchCase) -> None:
    reports = psm.check(batch, TARGET_M)
    assert [r.robot for r in reports] == ["expected", "virtual", "physical"]
    for report in reports:
        verdicts = {v.property: v.status.name for v in report.verdicts}
        assert verdicts["needle_outside_forbidden_regions"] == "HOLDS"
        assert verdicts["no_self_collision"] == "HOLDS"
        kpis = {k.name: k.value for k in report.kpis}
        assert np.isfinite(kpis["targeting_error"])
