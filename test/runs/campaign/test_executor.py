"""Local and Ray executors compute the same results, keep going past failing items and dying workers, and see each
item once."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.monitor.metrics import frechet
from cosim_validation.robots.model.kinematics import Kinematics
from cosim_validation.runs.campaign.executor import Outcome, WorkerSetupError, run_local, run_ray, start_ray

URDF = Path(__file__).resolve().parents[3] / "urdf" / "xmate_er3_pro.urdf"


def build_state(urdf: str, needle_length_m: float) -> Kinematics:
    return Kinematics.from_urdf(urdf, needle_length_m)


def tip_path_distance(kin: Kinematics, item: int) -> float:
    """Fréchet distance between the tip paths of two random joint paths seeded by the item."""
    if item == 13:
        raise ValueError("item 13 fails on purpose")
    rng = np.random.default_rng(item)
    qa = np.cumsum(rng.normal(scale=0.02, size=(50, 7)), axis=0)
    qb = qa + rng.normal(scale=0.01, size=qa.shape)
    return float(frechet(kin.tip_poses(qa)[0], kin.tip_poses(qb)[0]))


def collect(runner: Any, **kwargs: Any) -> dict[int, Outcome[Any]]:
    got: dict[int, Outcome[Any]] = {}

    def on_result(outcome: Outcome[Any]) -> None:
        assert outcome.index not in got, "an item came back twice"
        got[outcome.index] = outcome

    runner(build_state, (str(URDF), 0.2), tip_path_distance, ((i, i) for i in range(24)), on_result, **kwargs)
    return got


@pytest.fixture(scope="module")
def serial() -> dict[int, Outcome[Any]]:
    return collect(run_local, workers=1)


def test_serial_results_and_failure(serial: dict[int, Outcome[Any]]) -> None:
    assert sorted(serial) == list(range(24))
    assert "item 13 fails on purpose" in serial[13].error
    assert serial[13].value is None
    assert all(serial[i].value > 0 for i in serial if i != 13)


def test_process_pool_equals_serial(serial: dict[int, Outcome[Any]]) -> None:
    pooled = collect(run_local, workers=2)
    assert {i: o.value for i, o in pooled.items()} == {i: o.value for i, o in serial.items()}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One local Ray for this file's Ray tests, started as run_ray starts one (each start costs about 8 s); a campaign
    test (test_campaign_runner.py) covers run_ray starting and ending its own."""
    import ray

    start_ray(workers=2)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.slow
@pytest.mark.usefixtures("local_ray")
def test_ray_equals_serial(serial: dict[int, Outcome[Any]]) -> None:
    remote = collect(run_ray, workers=2)
    assert {i: o.value for i, o in remote.items()} == {i: o.value for i, o in serial.items()}
    assert "item 13 fails on purpose" in remote[13].error


def niceness(state: None, item: int) -> int:
    return os.nice(0)


@pytest.mark.slow
@pytest.mark.usefixtures("local_ray")
def test_a_local_rays_workers_run_at_the_callers_priority() -> None:
    """Ray starts its workers at niceness 15; on a busy machine they starved (a campaign 20 times slower beside four
    busy loops). The local Ray started for a campaign runs its cases at the campaign's priority."""
    got: dict[int, Outcome[Any]] = {}
    run_ray(type(None), (), niceness, ((i, i) for i in range(2)), lambda o: got.__setitem__(o.index, o), workers=2)
    assert {i: o.value for i, o in got.items()} == {0: os.nice(0), 1: os.nice(0)}


def _no_state() -> None:
    return None


def _interrupted_in_a_kernel(state: Any, item: int) -> int:
    """As numba reports a Ctrl-C inside a compiled kernel: a SystemError caused by the KeyboardInterrupt."""
    if item == 1:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise SystemError("CPUDispatcher(<function k>) returned a result with an exception set") from interrupt
    if item == 2:
        raise SystemError("a SystemError of its own")  # a failure of the case, not an interrupt
    return item


def test_ctrl_c_inside_a_compiled_kernel_stops_the_run_instead_of_failing_the_case() -> None:
    """The campaign stopped nothing and stored the case as failed with the SystemError (ninth hostile trial)."""
    seen: list[Outcome[Any]] = []
    with pytest.raises(KeyboardInterrupt):
        run_local(_no_state, (), _interrupted_in_a_kernel, [(0, 0), (1, 1), (2, 2)], seen.append, workers=1)
    assert [o.index for o in seen] == [0]  # nothing stored for the interrupted item, nothing after it
    seen.clear()
    run_local(_no_state, (), _interrupted_in_a_kernel, [(0, 0), (2, 2)], seen.append, workers=1)
    assert seen[1].error is not None
    assert "a SystemError of its own" in seen[1].error


def test_bad_worker_count() -> None:
    with pytest.raises(InputError, match="workers must be >= 1, got 0"):
        run_local(build_state, (), tip_path_distance, [], lambda o: None, workers=0)


# ---------------------------------------------------------------------------------------------------- worker deaths
@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail (rather than hang) when the body takes longer than ``seconds`` (SIGALRM: the main thread only)."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"not done within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def attempts_folder(folder: str) -> Path:
    return Path(folder)


def square_or_die(folder: Path, item: int) -> int:
    """Item 7 kills its worker every time, item 3 the first time only; every start is written down (pid)."""
    attempts = folder / f"item{item}"
    with attempts.open("a") as f:
        f.write(f"{os.getpid()}\n")
    if item == 7 or (item == 3 and len(attempts.read_text().split()) == 1):
        os.kill(os.getpid(), signal.SIGKILL)
    return item * item


def die_while_building(folder: str) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def started(folder: Path, item: int) -> list[int]:
    return [int(pid) for pid in (folder / f"item{item}").read_text().split()]


def check_deaths(got: dict[int, Outcome[Any]], folder: Path) -> None:
    assert sorted(got) == list(range(12))
    assert {i: o.value for i, o in got.items() if i != 7} == {i: i * i for i in range(12) if i != 7}
    assert got[7].value is None
    assert got[7].worker_died
    assert "worker process killed by signal 9 (SIGKILL) twice" in got[7].error
    assert len(started(folder, 7)) == 2, "a worker that always dies: exactly one retry"
    assert got[3].retried == "killed by signal 9 (SIGKILL)"
    assert not got[7].retried
    first, second = started(folder, 3)
    assert first != second, "the retry runs in another process"
    assert all(len(started(folder, i)) == 1 for i in range(12) if i not in (3, 7)), "no other item ran twice"


def test_a_dead_worker_costs_its_own_item_only(tmp_path: Path) -> None:
    got: dict[int, Outcome[Any]] = {}

    def on_result(outcome: Outcome[Any]) -> None:
        assert outcome.index not in got, "an item came back twice"
        got[outcome.index] = outcome

    with deadline(240):
        run_local(attempts_folder, (str(tmp_path),), square_or_die, ((i, i) for i in range(12)), on_result, workers=2)
    check_deaths(got, tmp_path)


def test_workers_that_die_while_building_stop_the_run(tmp_path: Path) -> None:
    with deadline(240), pytest.raises(WorkerSetupError, match=r"3 worker processes died while building their world"):
        run_local(die_while_building, (str(tmp_path),), square_or_die, ((i, i) for i in range(4)), print, workers=2)
    assert not list(tmp_path.iterdir()), "no item ran"


@pytest.mark.slow
@pytest.mark.usefixtures("local_ray")
def test_a_dead_ray_actor_costs_its_own_item_only(tmp_path: Path) -> None:
    got: dict[int, Outcome[Any]] = {}
    with deadline(400):
        run_ray(
            attempts_folder,
            (str(tmp_path),),
            square_or_die,
            ((i, i) for i in range(12)),
            lambda o: got.__setitem__(o.index, o),
            workers=2,
        )
    assert sorted(got) == list(range(12))
    assert {i: o.value for i, o in got.items() if i != 7} == {i: i * i for i in range(12) if i != 7}
    assert got[7].worker_died
    assert "worker process died (Ray: " in got[7].error
    assert "twice" in got[7].error
    assert len(started(tmp_path, 7)) == 2
