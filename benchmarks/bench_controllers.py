"""What the controller's contract costs per control period: planned, closed-loop plugin, external ROS 2 node.

The same cases on the emulated ER3 Pro through the one assembly (``CaseAssembly.run_batch``):

1. ``straight``: the built-in planning controller; its plan streamed open loop (the named alternative);
2. a closed-loop plugin that replays the very same plan period by period (``start``/``step``), so the motion and
   the number of periods are the same and the difference is the contract's overhead: one ``Observation`` built
   and one ``Command`` checked per period;
3. ``--external``: an external node (``python -m cosim_controller_example.tip_servo_node``, the worked example)
   at ``--rtf`` (real-time factor); its time is dominated by the wall time it is given per period
   (period / rtf), so the ratio printed there is against that floor.
4. ``--moveit``: the ``moveit`` controller against the emulated move_group (a separate process in a domain of
   its own, planning with the project's planner): the same planner behind MoveIt's services, so the ratio to
   ``straight`` per case is the cost of the MoveIt interface (the planning scene applied, the joint-space and
   Cartesian requests and answers over DDS), not of MoveIt's own planners, which the stand-in does not have.

Prints, per variant, wall time per case and per period, and the closed-loop overhead per period against the
planned stream's cost per period (the ratio). Both variants plan inside ``run_batch`` (the replay in
``reference``) with the same planner, so the difference is the contract's overhead; each variant runs
``--repeats`` times and its fastest run counts, which keeps a loaded machine's noise out of the ratio.

Run: ``nice -n 10 python benchmarks/bench_controllers.py [--cases 5] [--external --rtf 10] [--moveit]``.
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cosim_validation.assembly import AssemblySpec, CaseAssembly  # noqa: E402
from cosim_validation.controllers import CaseStart, Command, ControllerContext, Observation  # noqa: E402
from cosim_validation.controllers.planning import InsertionLine, Plan  # noqa: E402
from cosim_validation.live.session.discovery_scope import DomainLease  # noqa: E402
from cosim_validation.testgen.test_case import TestCase  # noqa: E402
from test.assembly.test_plugin_campaigns import write_config  # noqa: E402

TARGETS = np.array([[0.44, 0.02, 0.03], [0.45, -0.05, 0.05], [0.43, 0.04, 0.04], [0.46, 0.0, 0.02]])


class PlanReplay:
    """Closed loop in form only: the straight plan, one setpoint per period (declared as the reference)."""

    def __init__(self, context: ControllerContext) -> None:
        self.name, self.planner, self.world = context.name, context.planner, context.world
        self.plan: Plan | None = None

    def reference(self, case: CaseStart) -> Plan:
        axis = (case.target_m - case.source_m) / np.linalg.norm(case.target_m - case.source_m)
        entry = self.world.skin_entries(case.source_m[None, :], case.target_m)[0]
        self.plan = self.planner.plan(case.source_m, InsertionLine(case.target_m, axis, entry), self.name)
        return self.plan

    def start(self, case: CaseStart) -> None:
        """Nothing to reset."""

    def step(self, observation: Observation) -> Command:
        assert self.plan is not None
        p = round(observation.t_s / float(self.plan.t_s[1] - self.plan.t_s[0]))
        if p >= self.plan.n_samples:
            return Command.done("completed", "replayed")
        return Command.setpoint(self.plan.q[p])


def make_replay(options: dict[str, Any], context: ControllerContext) -> PlanReplay:
    """The factory the case study names (``bench_controllers:make_replay``)."""
    return PlanReplay(context)


def cases(n: int) -> list[TestCase]:
    source = np.array([0.42, 0.02, 0.20])
    out = []
    for i in range(n):
        target = TARGETS[i % len(TARGETS)] + np.array([0.0, 0.002 * (i // len(TARGETS)), 0.0])
        out.append(
            TestCase(f"b-{i:04d}", "bench", "base_link", source + 0, target, np.full(3, -1), 0.0, "manual", i, 0.0)
        )
    return out


def run(config: Path, suite: list[TestCase]) -> tuple[float, int, list[str], list[float]]:
    """Wall time of the cases after a warm-up case, periods streamed, outcomes, and each case's wall time."""
    assembly = CaseAssembly(AssemblySpec(str(config), engines=("emulated",)))
    try:
        assembly.run_batch(suite[0])  # warm-up: numba, the node's start
        runs, walls = [], []
        for case in suite:
            start = time.perf_counter()
            runs.append(assembly.run_batch(case).run)
            walls.append(time.perf_counter() - start)
    finally:
        assembly.close()
    return sum(walls), sum(r.executed for r in runs), [r.outcome for r in runs], walls


@contextlib.contextmanager
def standin(module: str, *parameters: str) -> Iterator[None]:
    """The stand-in node ``python -m module`` (``name:=value`` parameters) in a ROS domain of its own, which this
    process joins while it runs."""
    with DomainLease.acquire() as scope:
        command = [sys.executable, "-m", module, "--ros-args", *(a for p in parameters for a in ("-p", p))]
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        process = subprocess.Popen(command, env=scope.env(), **quiet)
        try:
            with scope.joined():
                yield
        finally:
            process.terminate()
            process.wait(timeout=30)


def move_group(config: Path) -> contextlib.AbstractContextManager[None]:
    """The emulated move_group (see :func:`standin`)."""
    return standin("cosim_validation.live.moveit.standin_node", f"config:={config}")


def moveit_config(folder: Path) -> Path:
    """The case study planned by ``moveit`` (generous waits: the stand-in starts while the first case waits)."""
    config = write_config(folder, "moveit")
    tree = yaml.safe_load(config.read_text())
    tree["controllers"]["moveit"] = {"service_timeout_s": 60.0, "call_timeout_s": 120.0}
    config.write_text(yaml.safe_dump(tree, sort_keys=False))
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=5)
    parser.add_argument("--external", action="store_true", help="also the example node (installed or on the path)")
    parser.add_argument("--rtf", type=float, default=10.0)
    parser.add_argument("--moveit", action="store_true", help="also the moveit controller (emulated move_group)")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    suite = cases(args.cases)
    sys.path.insert(0, str(Path(__file__).parent))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        variants: list[tuple[str, Any]] = [
            ("planned (straight)", "straight"),
            ("closed-loop plugin", "bench_controllers:make_replay"),
        ]
        if args.external:
            command = f"{sys.executable} -m cosim_controller_example.tip_servo_node --ros-args -p use_sim_time:=true"
            variants.append(
                (f"external node, rtf {args.rtf:g}", {"external": {"command": command, "real_time_factor": args.rtf}})
            )
        for k, (label, default) in enumerate(variants):
            folder = Path(tmp) / str(k)
            folder.mkdir()
            config = write_config(folder, default)
            best = min((run(config, suite) for _ in range(args.repeats)), key=lambda r: r[0])
            rows.append((label, *best))
        if args.moveit:
            folder = Path(tmp) / "moveit"
            config = moveit_config(folder)
            with move_group(config):
                best = min((run(config, suite) for _ in range(args.repeats)), key=lambda r: r[0])
            rows.append(("moveit (emulated move_group)", *best))
    planned_per_period = rows[0][1] / max(rows[0][2], 1)
    print(f"{'variant':<28} {'cases':>5} {'periods':>8} {'s/case':>8} {'ms/period':>10}  outcomes")
    for label, wall, periods, outcomes, _ in rows:
        per_period = wall / max(periods, 1)
        print(
            f"{label:<28} {len(outcomes):>5} {periods:>8} {wall / len(outcomes):>8.3f} {per_period * 1e3:>10.3f}  "
            f"{', '.join(sorted(set(outcomes)))}"
        )
    plugin = rows[1][1] / max(rows[1][2], 1)
    print(
        f"closed-loop plugin overhead per period: {(plugin - planned_per_period) * 1e3:.3f} ms "
        f"(ratio {plugin / planned_per_period:.2f} to the planned stream's cost per period)"
    )
    if args.external:
        ext = rows[2][1] / max(rows[2][2], 1)
        floor = 0.1 / args.rtf
        print(
            f"external node: {ext * 1e3:.1f} ms per period against its floor of period/rtf = {floor * 1e3:.1f} ms "
            f"(ratio {ext / floor:.2f})"
        )
    if args.moveit:  # on the cases both completed: a refusal is cheaper than a run and would flatter the ratio
        both = [i for i, (a, b) in enumerate(zip(rows[0][3], rows[-1][3], strict=True)) if a == b == "completed"]
        if not both:
            print("moveit: no case completed with both controllers: no ratio (run more --cases)")
            return
        straight_case = sum(rows[0][4][i] for i in both) / len(both)
        moveit_case = sum(rows[-1][4][i] for i in both) / len(both)
        print(
            f"moveit: {moveit_case:.3f} s per case against straight's {straight_case:.3f} s on the {len(both)} cases "
            f"both completed (ratio {moveit_case / straight_case:.2f}; the same planner behind the services)"
        )


if __name__ == "__main__":
    main()
