"""One test case from input to stored result, on the one case assembly (:mod:`cosim_validation.assembly`).

A worker builds its :class:`~cosim_validation.assembly.CaseAssembly` once (:func:`shared_assembly`);
:func:`run_case` runs a case through it (plan, validate, lockstep execution on every robot, the monitor on
every record: what a live session does over ROS) and returns the database rows of a
:class:`~cosim_validation.runs.campaign.results_db.CaseResult`::

    assembly = shared_assembly(AssemblySpec("config/needle_insertion.yaml", engines=("mujoco", "emulated")))
    result = run_case(assembly, case, case_index=0)

A case's result depends only on the configuration, the case and its seed (a hash of the suite's seed and
the test id, :func:`~cosim_validation.assembly.case_seed`): robots are reset and reseeded per case, never
depending on the worker or the order, so local and Ray runs, resumed and uninterrupted runs, and a live
session of the same cases store the same rows.
"""

from __future__ import annotations

import hashlib
import multiprocessing.util
import os
import socket
import time
from pathlib import Path

from cosim_validation.assembly import AssemblySpec, CaseAssembly, CaseRun
from cosim_validation.assembly.case_assembly import BatchCase
from cosim_validation.runs.campaign.result_rows import kpi_row, verdict_row
from cosim_validation.runs.campaign.results_db import CaseResult, CaseRow, EventRow
from cosim_validation.testgen import TestCase


def case_row(
    case: TestCase, case_index: int, controller: str, outcome: str, message: str, duration_s: float
) -> CaseRow:
    """The ``cases`` row of a test case and its outcome (completed | refused | aborted | failed).

    Args:
        case: The test case (source and target in base_link [m], the target's cube).
        case_index: Position of the case in its campaign.
        controller: Name of the controller under test.
        outcome: ``completed``, ``refused``, ``aborted`` or ``failed``.
        message: The outcome's reason (the controller's refusal, the validator's stop, an error's last line).
        duration_s: Case time covered by the answered samples [s]; 0 for a case that failed.
    """
    (sx, sy, sz), (tx, ty, tz) = (float(v) for v in case.source_m), (float(v) for v in case.target_m)
    ci, cj, ck = (int(v) for v in case.cube_index)
    return CaseRow(
        test_id=case.test_id,
        case_index=case_index,
        source_x_m=sx,
        source_y_m=sy,
        source_z_m=sz,
        target_x_m=tx,
        target_y_m=ty,
        target_z_m=tz,
        cube_i=ci,
        cube_j=cj,
        cube_k=ck,
        granularity_m=float(case.granularity_m),
        generator=case.generator,
        target_depth_m=float(case.target_depth_m),
        controller=controller,
        outcome=outcome,
        message=message,
        duration_s=float(duration_s),
    )


def worker_name() -> str:
    """``host:pid`` of this process (kept in the timings table, never in result rows)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def run_case(assembly: CaseAssembly, case: TestCase, case_index: int, trajectories: bool = True) -> CaseResult:
    """Plan, execute and monitor one case.

    A controller that refuses (or cannot plan) gives outcome ``refused`` with its reason and no trajectory; a
    case the state validator stops is ``aborted`` with its reason and the records up to the stop; any other
    error propagates (the executor records it as ``failed``).

    Args:
        assembly: From :func:`shared_assembly`.
        case: The test case (source and target in base_link [m]).
        case_index: Position of the case in its campaign.
        trajectories: Whether the result carries the records (expected and one per robot).
    """
    started = time.perf_counter()
    batch = assembly.run_batch(case)
    run: CaseRun = batch.run
    row = case_row(case, case_index, assembly.controller_name, run.outcome, run.message, run.duration_s)
    if not batch.records:
        return CaseResult(row, wall_s=time.perf_counter() - started, worker=worker_name())
    reports = assembly.check(batch, case.target_m)
    verdicts = tuple(verdict_row(case.test_id, v) for report in reports for v in report.verdicts)
    kpis = tuple(kpi_row(case.test_id, k) for report in reports for k in report.kpis)
    stored = batch.records if trajectories else ()
    wall_s = time.perf_counter() - started
    return CaseResult(row, verdicts, kpis, stored, wall_s, worker_name(), event_rows(case.test_id, batch))


def event_rows(test_id: str, batch: BatchCase) -> tuple[EventRow, ...]:
    """The case's robot filter events as stored rows, numbered per robot in the order they happened.

    Args:
        test_id: The case's test id, the rows' key.
        batch: The case as run in-process; its ``events`` are ``(robot, FilterEvent)`` pairs in time order.
    """
    rows, seq = [], dict[str, int]()
    for role, event in batch.events:
        number = seq[role.label] = seq.get(role.label, -1) + 1
        rows.append(EventRow(test_id, role.label, number, event.t_s, event.kind, event.name, event.detail))
    return tuple(rows)


_SHARED: dict[tuple[AssemblySpec, str], CaseAssembly] = {}


def shared_assembly(spec: AssemblySpec) -> CaseAssembly:
    """The assembly of ``spec``, built once per process and reused while the configuration files are unchanged.

    An assembly gives the same results whatever ran on it before (robots are reset and reseeded per case),
    so one process running several campaigns one after the other (a test session, ``make demo``) builds it
    once. At most one assembly is kept, and it is closed when the process exits (a controller's node under test
    stopped, its log removed), a campaign's worker process included.

    Args:
        spec: What to build; the assembly is kept under it and the digest of its configuration and property files
            (the configuration's ``campaign`` property file when ``spec.properties_path`` is None).
    """
    from cosim_validation.assembly.campaign_config import CampaignConfig
    from cosim_validation.common.config import load_config

    properties = spec.properties_path
    if properties is None:
        properties = str(CampaignConfig.from_config(load_config(spec.config_path)["campaign"]).properties_path)
    key = (spec, config_digest(spec.config_path, properties))
    if key not in _SHARED:
        close_shared_assemblies()
        _SHARED[key] = CaseAssembly(spec)
        if not _CLOSE_AT_EXIT:
            # multiprocessing runs its finalizers when a worker process ends (it skips atexit) and at the
            # interpreter's exit in the main process
            _CLOSE_AT_EXIT.append(multiprocessing.util.Finalize(None, close_shared_assemblies, exitpriority=10))
    return _SHARED[key]


_CLOSE_AT_EXIT: list[multiprocessing.util.Finalize] = []


def close_shared_assemblies() -> None:
    """Close the assembly shared_assembly keeps (a no-op when there is none)."""
    for assembly in _SHARED.values():
        assembly.close()
    _SHARED.clear()


def config_digest(config_path: str | Path, *extra: str | Path) -> str:
    """SHA-256 (16 hex) of the configuration file and any extra files (e.g. the property file).

    Args:
        config_path: The configuration file.
        *extra: Further files digested after it, in order.
    """
    digest = hashlib.sha256()
    for path in (config_path, *extra):
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]
