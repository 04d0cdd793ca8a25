"""Local and Ray executors compute the same results, keep going past failing items, and see each item once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.monitor.metrics import frechet
from cosim_validation.robots.model.kinematics import Kinematics
from cosim_validation.runs.campaign.executor import Outcome, run_local, run_ray

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


@pytest.mark.slow
def test_ray_equals_serial(serial: dict[int, Outcome[Any]]) -> None:
    remote = collect(run_ray, workers=2)
    assert {i: o.value for i, o in remote.items()} == {i: o.value for i, o in serial.items()}
    assert "item 13 fails on purpose" in remote[13].error


def test_bad_worker_count() -> None:
    with pytest.raises(InputError, match="workers must be >= 1, got 0"):
        run_local(build_state, (), tip_path_distance, [], lambda o: None, workers=0)
