"""The example's closed-loop plugin (``cosim_controller_example.tip_servo``) on the emulated physical ER3 Pro, in
the one assembly: it ends the injection nearer the target than ``straight`` on the same arm and case, and under
the task supervisor it completes every stage, told when it was held, with the same gain."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.assembly import AssemblySpec, BatchCase, CaseAssembly
from cosim_validation.testgen import TestCase

PLUGIN = "cosim_controller_example.tip_servo:make_controller"
TARGET = np.array([0.44, 0.02, 0.03])  # docs/CONTROLLERS.md's case


def _run(controller: str, supervised: bool) -> BatchCase:
    supervisor = "config/supervisor/supervisor.yaml" if supervised else None
    spec = AssemblySpec("config/needle_insertion.yaml", ("emulated",), controller=controller, supervisor=supervisor)
    assembly = CaseAssembly(spec)
    source = assembly.setup.planning.default_source_m
    return assembly.run_batch(TestCase("c", "s", "base_link", source, TARGET, np.full(3, -1), 0.0, "manual", 7, 0.0))


def _targeting_error_mm(batch: BatchCase) -> float:
    """The arm's actual tip at the end of the injection to the target [mm] (what ``cosim run-case`` prints)."""
    from cosim_validation.common.record import Stage
    from cosim_validation.controllers.planning.stage_summary import best_tip

    expected, robot = batch.records[0], batch.records[1]
    last = int(np.flatnonzero(expected.stage == int(Stage.INJECTION))[-1])
    return float(np.linalg.norm(best_tip(robot)[0][last] - TARGET) * 1e3)


@pytest.fixture(scope="module")
def straight() -> float:
    return _targeting_error_mm(_run("straight", supervised=False))


@pytest.mark.parametrize("supervised", [False, True], ids=["alone", "supervised"])
def test_the_servo_ends_nearer_the_target_than_straight(straight: float, supervised: bool) -> None:
    batch = _run(PLUGIN, supervised)
    assert batch.run.outcome == "completed", batch.run.message
    servo = _targeting_error_mm(batch)
    assert servo < 0.5 * straight, (servo, straight)
    if supervised:
        assert batch.run.message.endswith("every stage executed under the supervisor")
        assert len(batch.run.supervision) == len(batch.run.q_sent) - 1
