"""Every exception injected in every motion state, through the real lockstep loop (shared by the tests and
benchmarks/bench_supervisor.py).

One scenario file names one case per (state, exception): the fault (or the abort request) fires halfway through
the state's planned duration; a lost tip stays lost. All cases run in one :class:`Lockstep` on one robot.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from cosim_validation.assembly import CaseAssembly
from cosim_validation.assembly.lockstep import CaseRun, Lockstep, LockstepSettings
from cosim_validation.assembly.robot_port import BackendPort
from cosim_validation.assembly.supervision import Supervision
from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.common.record.stage import CASE_STAGES
from cosim_validation.controllers.planning import Plan
from cosim_validation.robots.robot_backend import BackendSample
from cosim_validation.testgen import TestCase

TARGET = np.array([0.45, -0.05, 0.05])  # in the left lung, off the heart's path
#: The machine's motion state of each stage.
STATE_OF_STAGE = {
    Stage.INITIALIZATION: "MoveToSource",
    Stage.APPROACH: "Approach",
    Stage.INJECTION: "Inject",
    Stage.EXTRACTION: "Extract",
    Stage.RESET: "Reset",
}
#: Scenario action of each exception (``{state}``/``{after}`` filled per case).
EXCEPTIONS = {
    "clearance": "fault: clearance, value: 0.001",
    "force": "fault: force, value: 5.0",
    "tracking": "fault: tracking",
    "abort": "request: abort",
}


def case_id(stage: Stage, exception: str) -> str:
    """The test id of one injected case."""
    return f"{stage.label}-{exception}"


def write_scenario(path: Path, plan: Plan) -> None:
    """One action per (stage, exception), halfway through the stage (s after entering its state)."""
    dt = float(plan.t_s[1] - plan.t_s[0])
    lines = ["scenario:", "  actions:"]
    for stage in CASE_STAGES:
        after = round(max(1, int(np.sum(plan.stage == stage)) // 2) * dt, 3)
        for exception, action in EXCEPTIONS.items():
            when = f"{{state: {STATE_OF_STAGE[stage]}, after_s: {after}}}"
            lines.append(f"    - {{cases: [{case_id(stage, exception)}], when: {when}, {action}}}")
    path.write_text("\n".join(lines) + "\n")


#: Each case's run and the robot's answers (one per streamed setpoint).
Runs = Mapping[str, tuple[CaseRun, list[BackendSample]]]


def run_cases(assembly: CaseAssembly, scenario: Path, test_ids: list[str]) -> Runs:
    """Run ``test_ids`` (to TARGET) under the shipped supervisor with ``scenario`` on the assembly's MuJoCo robot;
    each case's run and the robot's answers (one per streamed setpoint)."""
    setup = assembly.setup
    supervision = Supervision.load(
        "config/supervisor/supervisor.yaml",
        assembly.kinematics,
        setup.world,
        setup.scene,
        setup.robot.limits.velocity,
        scenario,
    )
    port = BackendPort(assembly.robot("mujoco"))
    loop = Lockstep(assembly.kinematics, {RobotRole.VIRTUAL: port}, LockstepSettings(), supervision=supervision)
    runs = {}
    try:
        for test_id in test_ids:
            case = TestCase(
                test_id,
                "s",
                "base_link",
                setup.planning.default_source_m,
                TARGET,
                np.full(3, -1),
                0.0,
                "manual",
                7,
                0.0,
            )
            run = loop.run(case, assembly.controller("straight"))
            runs[test_id] = (run, list(port.samples))
    finally:
        port.backend.close()
    return runs
