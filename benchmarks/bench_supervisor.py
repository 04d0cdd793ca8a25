"""The task supervisor: model checking time, the needle force model's cost, and stop times in the loop.

1. SPIN on the shipped machine (config/supervisor/needle_insertion.yaml): wall time of translation and
   compilation and of every goal's search. Named alternative: the plain encoding, where every event is a
   free bit in every step (as seed 002's SMV model has one event module per event), instead of watched
   events plus groups of interchangeable events chosen only where they can matter; same verdicts, the
   ratio of states, transitions and time is printed (``--quick``: one goal, with a time limit).
2. The needle force model on a five-stage plan: one vectorised call over every sample versus the same
   samples one call each (:class:`NeedleForceStream`, what a control loop does); and the exact tissue
   intervals versus dense sampling of the needle (occupancy every 0.5 mm, the obvious alternative), with
   the largest length difference.
3. Stop time: the MuJoCo arm in the real lockstep loop (assembly/lockstep.py with the supervisor), every
   exception injected halfway through every motion state (test/supervisor/exception_cases.py): time from the
   supervisor step that saw the exception until the arm's joints move less than 1e-5 rad per period, and how
   far the tip moved meanwhile; and the cost of a supervised period against the same loop without one.

Run: ``nice -n 10 python benchmarks/bench_supervisor.py [--quick] [--stop-only]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cosim_validation.common.config import load_config  # noqa: E402
from cosim_validation.common.exceptions import CosimError  # noqa: E402
from cosim_validation.controllers import InsertionSetup  # noqa: E402
from cosim_validation.monitor.statechart.checker import check_goals  # noqa: E402
from cosim_validation.monitor.statechart.goals import load_goals  # noqa: E402
from cosim_validation.monitor.statechart.loader import load_machine  # noqa: E402
from cosim_validation.supervisor.needle_force import NeedleForceStream  # noqa: E402
from cosim_validation.supervisor.needle_force_config import load_needle_force  # noqa: E402

TARGET = np.array([0.45, -0.05, 0.05])


def bench_spin(quick: bool, limit_s: float) -> None:
    machine = load_machine(ROOT / "config/supervisor/needle_insertion.yaml")
    goals = load_goals(machine.goals_file, machine)
    with tempfile.TemporaryDirectory() as tmp:
        ours = check_goals(machine, goals, Path(tmp) / "reduced")
        print(f"SPIN, shipped machine: translation + compilation {ours.compile_s:.2f} s, total {ours.total_s:.2f} s")
        only = ("stopped_left_only_by_recovery_or_teleoperation",) if quick else ()
        start = time.perf_counter()
        try:
            plain = check_goals(machine, goals, Path(tmp) / "plain", only, reduce=False, timeout_s=limit_s)
        except CosimError as exc:
            same = max(r.time_s for r in ours.results if not only or r.goal in only)
            print(
                f"plain encoding: no verdict after {time.perf_counter() - start:.0f} s ({exc}); "
                f"ratio > {limit_s / same:.0f} against the reduced search of the same goal(s) ({same:.2f} s)"
            )
            _table(ours, None)
            return
    _table(ours, plain)


def _table(ours, plain) -> None:  # type: ignore[no-untyped-def]
    head = f"{'goal':48} {'verdict':8} {'states':>9} {'trans.':>11} {'s':>7}"
    print(head + f" | plain: {'states':>9} {'trans.':>12} {'s':>8} ratio s")
    by_goal = {r.goal: r for r in plain.results} if plain is not None else {}
    for r in ours.results:
        p = by_goal.get(r.goal)
        row = f"{r.goal:48} {'holds' if r.holds else 'VIOLATED':8} {r.states:9d} {r.transitions:11d} {r.time_s:7.2f}"
        if p is not None:
            row += f" | {'':6} {p.states:9d} {p.transitions:12d} {p.time_s:8.2f} {p.time_s / r.time_s:7.1f}"
        print(row)


def bench_force(setup: InsertionSetup) -> None:
    model = load_needle_force(ROOT / "config/supervisor/needle_force.yaml", setup.scene)
    plan = setup.controller("straight").plan_case(setup.planning.default_source_m, TARGET)
    holder, tip = setup.robot.kinematics.needle_segments(plan.q)
    model.forces(plan.t_s, holder, tip)  # warm up open3d
    best_batch = min(_timed(lambda: model.forces(plan.t_s, holder, tip)) for _ in range(5))

    def streamed() -> None:
        stream = NeedleForceStream(model)
        for k in range(plan.n_samples):
            stream.update(float(plan.t_s[k]), holder[k], tip[k])

    best_stream = min(_timed(streamed) for _ in range(3))
    n = plan.n_samples
    print(
        f"force model, {n} samples: one batch {best_batch * 1e3:.2f} ms ({best_batch / n * 1e6:.1f} us/sample); "
        f"one call per sample {best_stream * 1e3:.1f} ms ({best_stream / n * 1e6:.0f} us/sample); "
        f"ratio {best_stream / best_batch:.1f}"
    )
    exact = model.layers.along_needle(holder, tip)
    best_exact = min(_timed(lambda: model.layers.along_needle(holder, tip)) for _ in range(5))
    sampled, best_sampled = _sampled_lengths(model, holder, tip)
    error = np.max(np.abs(sampled - exact.length_m))
    print(
        f"tissue intervals: exact {best_exact * 1e3:.2f} ms; sampling every 0.5 mm {best_sampled * 1e3:.1f} ms "
        f"(ratio {best_sampled / best_exact:.1f}), largest length difference {error * 1e3:.3f} mm"
    )


def _sampled_lengths(model, holder: np.ndarray, tip: np.ndarray) -> tuple[np.ndarray, float]:  # type: ignore[no-untyped-def]
    step = 0.0005
    length = float(np.linalg.norm(tip[0] - holder[0]))
    s = (np.arange(int(length / step)) + 0.5) / int(length / step)
    points = (holder[:, None, :] + s[None, :, None] * (tip - holder)[:, None, :]).reshape(-1, 3)
    meshes = model.layers._meshes  # the same open3d scenes, queried point by point

    def run() -> np.ndarray:
        owner = np.full(points.shape[0], -1)
        for j in reversed(range(len(meshes))):
            owner[meshes[j].inside(points)] = j
        owner = owner.reshape(holder.shape[0], -1)
        return np.stack([(owner == j).sum(axis=1) * length / s.size for j in range(len(meshes))], axis=1)

    lengths = run()
    return lengths, min(_timed(run) for _ in range(3))


def bench_stop(setup: InsertionSetup) -> None:
    """Stop times of every exception in every motion state (the real lockstep loop), and the supervisor's cost
    per period against the same loop without a supervisor (named alternative)."""
    from cosim_validation.assembly import AssemblySpec, CaseAssembly
    from cosim_validation.common.record.stage import CASE_STAGES
    from cosim_validation.testgen import TestCase
    from test.supervisor.exception_cases import EXCEPTIONS, TARGET, case_id, run_cases, write_scenario

    assembly = CaseAssembly(AssemblySpec(str(ROOT / "config/needle_insertion.yaml"), engines=("mujoco",)))
    plan = assembly.controller("straight").plan_case(setup.planning.default_source_m, TARGET)
    dt = float(plan.t_s[1] - plan.t_s[0])
    with tempfile.TemporaryDirectory() as tmp:
        scenario = Path(tmp) / "scenario.yaml"
        write_scenario(scenario, plan)
        ids = [case_id(s, e) for s in CASE_STAGES for e in EXCEPTIONS if e != "tracking"]
        start = time.perf_counter()
        runs = run_cases(assembly, scenario, ["nominal", *ids])
        supervised_s = time.perf_counter() - start
    stops, moves = [], []
    for test_id in ids:
        run, samples = runs[test_id]
        k = next(i for i, d in enumerate(run.supervision) if d.status.state.endswith("TaskStopped")) + 1
        q = np.array([s.q_measured for s in samples])
        tip = assembly.kinematics.record_arrays(q).tip_pos_m
        still = next(i for i in range(k + 1, len(q)) if np.max(np.abs(q[i] - q[i - 1])) < 1e-5)
        stops.append((still - k) * dt)
        moves.append(np.linalg.norm(tip[still] - tip[k]))
    travel = f"{min(moves) * 1e3:.2f}-{max(moves) * 1e3:.2f} mm"
    print(
        f"stop time after the exception's step ({len(stops)} runs): {min(stops):.1f}-{max(stops):.1f} s "
        f"(mean {np.mean(stops):.2f}); tip travel meanwhile {travel}"
    )
    periods = sum(len(r.supervision) + 1 for r, _ in runs.values())
    case = TestCase(
        "plain", "s", "base_link", setup.planning.default_source_m, TARGET, np.full(3, -1), 0.0, "m", 7, 0.0
    )
    start = time.perf_counter()
    plain_periods = 0
    for _ in range(len(runs)):
        plain_periods += assembly.run_batch(case).run.executed
    plain_s = time.perf_counter() - start
    per_supervised, per_plain = supervised_s / periods * 1e3, plain_s / plain_periods * 1e3
    print(
        f"lockstep period on MuJoCo: supervised {per_supervised:.2f} ms, without a supervisor {per_plain:.2f} ms "
        f"(ratio {per_supervised / per_plain:.2f}; {len(runs)} cases each)"
    )
    assembly.close()


def _timed(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="only one goal in the plain encoding")
    parser.add_argument("--plain-limit-s", type=float, default=600.0, help="time limit of each plain search [s]")
    parser.add_argument("--stop-only", action="store_true", help="only the stop times and the loop's cost (3.)")
    args = parser.parse_args()
    setup = InsertionSetup.from_config(load_config(ROOT / "config/needle_insertion.yaml"))
    if not args.stop_only:
        bench_force(setup)
    bench_stop(setup)
    if not args.stop_only:
        bench_spin(args.quick, args.plain_limit_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
