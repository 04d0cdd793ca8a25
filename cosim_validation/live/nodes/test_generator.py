"""test_generator: reads a suite, sends one RunTestCase goal after another, stores every result.

Each finished case goes into ``results.sqlite`` at once (the schema of ``cosim campaign``), so an
interrupted session keeps every finished case. One line per case on stdout (``cosim session`` shows
them); when the suite is done the node exits, which ends the session.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import rclpy
from rclpy.action import ActionClient
from rclpy.node import Node

from cosim_validation.assembly import controller_name
from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.common.exceptions import CosimError, InputError
from cosim_validation.live.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.action_goal import send_goal, wait_result
from cosim_validation.live.session.node_parameters import TestGeneratorParams
from cosim_validation.runs.campaign.campaign_runner import suite_record
from cosim_validation.runs.campaign.case_pipeline import case_row
from cosim_validation.runs.campaign.result_rows import kpi_row, verdict_row
from cosim_validation.runs.campaign.results_db import CaseResult, ResultsDB
from cosim_validation.runs.run_inputs import portable_path
from cosim_validation.testgen.suite import Suite
from cosim_validation_interfaces.action import RunTestCase

OUTCOMES = {0: "completed", 1: "refused", 2: "aborted", 3: "failed"}


def session_meta(suite: Suite, suite_path: Path, params: TestGeneratorParams, cases: int) -> dict[str, Any]:
    """The results database's meta of a session (what the report needs: suites, configuration, controller).

    Args:
        suite: The suite the session runs.
        suite_path: The suite's file; its name is stored.
        params: The node's checked parameters (configuration, controller, robots).
        cases: How many of the suite's cases the session runs.
    """
    config_path = resolve_resource(params.config)
    config = load_case_config(config_path)
    controller = controller_name(params.controller or None, config)
    return {
        "kind": "session",
        "suite": [suite.suite_id],
        "suites": [suite_record(suite)],
        "suite_file": suite_path.name,
        # relative to the run directory (the results database's folder), as a campaign keeps it: no path of the machine
        "config_path": portable_path(Path(params.results).resolve().parent, config_path),
        "controller": controller,
        "robots": list(params.robots) or ["virtual", "physical"],
        "cases": cases,
    }


def pick_cases(total: int, count: int, selection: str) -> list[int]:
    """Indices of the cases to run: all (count <= 0), the first ``count``, or ``count`` spread evenly.

    Args:
        total: The cases in the suite.
        count: How many to run; <= 0, or at least ``total``: all.
        selection: ``first`` for the first ``count``; anything else (``spread``) spreads them evenly from the suite's
            first case to its last.
    """
    if count <= 0 or count >= total:
        return list(range(total))
    if selection == "first":
        return list(range(count))
    return sorted({round(i * (total - 1) / max(count - 1, 1)) for i in range(count)})


class TestGenerator(Node):
    """Drives the controller with the cases of a suite."""

    __test__ = False  # not a pytest class

    def __init__(self) -> None:
        super().__init__("test_generator")
        self.params = declare_parameters(self, TestGeneratorParams)
        suite_path = Path(self.params.suite)
        self.suite = Suite.read(suite_path)
        self.indices = pick_cases(len(self.suite), self.params.cases, self.params.selection)
        self.meta = session_meta(self.suite, suite_path, self.params, len(self.indices))
        if Path(self.params.results).exists():
            raise InputError(f"{self.params.results}: already exists; a session writes a new results database")
        self.client: ActionClient[Any, Any, Any] = ActionClient(self, RunTestCase, "/cosim/run_test_case")
        self.exit_code = 0
        threading.Thread(target=self._run_suite, daemon=True).start()

    def _run_suite(self) -> None:
        try:
            # SQLite objects belong to the thread that made them: this one
            self.db = ResultsDB.create(self.params.results, self.meta)
        except CosimError as exc:
            print(f"error: {exc}", flush=True)
            self.exit_code = 1
            rclpy.try_shutdown()
            return
        try:
            if not self.client.wait_for_server(timeout_sec=self.params.server_timeout_s):
                raise RuntimeError("no /cosim/run_test_case action server")
            for n, index in enumerate(self.indices, start=1):
                case = self.suite.case(index)
                outcome = self._run_case(index, case, n)
                if outcome == "aborted" and self.params.stop_on_abort:
                    print("stopping after an aborted case (stop_on_abort)", flush=True)
                    break
        except Exception as exc:  # noqa: BLE001 - report, exit non-zero, keep what is stored
            print(f"error: {exc}", flush=True)
            self.exit_code = 1
        finally:
            try:
                self.db.close()
            finally:
                rclpy.try_shutdown()  # ends spin(): the session sees this node exit

    def _run_case(self, index: int, case: Any, n: int) -> str:
        goal = RunTestCase.Goal(
            test_case=convert.test_case_to_msg(case),
            controller=self.params.controller,
            robots=list(self.params.robots),
        )
        start = time.monotonic()
        handle = send_goal(self.client, goal, warn=lambda text: print(f"{case.test_id}: {text}", flush=True))
        if handle is None or not handle.accepted:
            raise RuntimeError(f"the controller rejected case {case.test_id}")
        result = wait_result(handle).result
        outcome = OUTCOMES[int(result.outcome)]
        self._store(index, case, result, outcome, time.monotonic() - start)
        print(self._line(n, case, result, outcome, time.monotonic() - start), flush=True)
        return outcome

    def _store(self, index: int, case: Any, result: Any, outcome: str, wall_s: float) -> None:
        verdicts = tuple(verdict_row(case.test_id, convert.verdict_from_msg(v)[1]) for v in result.verdicts)
        kpis = tuple(kpi_row(case.test_id, convert.kpi_from_msg(k)[1]) for k in result.kpis)
        controller = str(self.meta["controller"])  # the resolved name (a plugin's or external node's, not "default")
        row = case_row(case, index, controller, outcome, str(result.message), float(result.duration_s))
        self.db.add(CaseResult(row, verdicts, kpis, (), wall_s=wall_s, worker=self.get_name()))

    def _line(self, n: int, case: Any, result: Any, outcome: str, wall_s: float) -> str:
        total = len(self.indices)
        target_mm = " ".join(f"{1000 * v:.0f}" for v in case.target_m)
        violated = sorted(
            {f"{v.property}@{OUTCOME_ROBOTS.get(v.robot, v.robot)}" for v in result.verdicts if v.verdict == 2}
        )
        held = sum(1 for v in result.verdicts if v.verdict == 1)
        tail = f"{held} hold, {len(violated)} violated" + (f" ({', '.join(violated)})" if violated else "")
        note = f" - {result.message}" if result.message != "every stage executed" else ""
        return f"[{n}/{total}] {case.test_id} target ({target_mm}) mm: {outcome}, {tail}  {wall_s:.1f} s{note}"


OUTCOME_ROBOTS = {0: "expected", 1: "virtual", 2: "physical"}


def main(args: list[str] | None = None) -> int:
    """Run the ``test_generator`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation test_generator --ros-args -p suite:=suite.parquet -p results:=results.sqlite

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(TestGenerator, args, threads=2)  # exit code: TestGenerator.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
