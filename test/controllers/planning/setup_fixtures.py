"""Shared session fixtures of the planning and controller tests: the shipped case study, and targets in it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.config import load_config
from cosim_validation.controllers import InsertionSetup

CONFIG_PATH = Path(__file__).resolve().parents[3] / "config" / "needle_insertion.yaml"


def grid_targets(setup: InsertionSetup, model: str, granularity_m: float) -> np.ndarray:
    """Centres of the cubes of edge ``granularity_m`` over the model's bounding box that lie inside it, (k, 3)."""
    lo, hi = setup.scene.model(model).bounds_m
    axes = [np.arange(lo[i] + granularity_m / 2, hi[i], granularity_m) for i in range(3)]
    points = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    return points[np.asarray(setup.world.targets[model].contains(points))]


@pytest.fixture(scope="session")
def insertion_setup() -> InsertionSetup:
    """Robot, anatomy, planner and controllers of the shipped configuration, built once."""
    return InsertionSetup.from_config(load_config(CONFIG_PATH))


@pytest.fixture(scope="session")
def lung_grid(insertion_setup: InsertionSetup) -> np.ndarray:
    """Grid suite of the left lung: one target per 20 mm cube (seed 000's finest granularity)."""
    return grid_targets(insertion_setup, "left_lung", 0.02)


@pytest.fixture(scope="session")
def behind_heart(insertion_setup: InsertionSetup, lung_grid: np.ndarray) -> np.ndarray:
    """Grid targets whose segment from the default source passes through the heart, (k, 3)."""
    source = insertion_setup.planning.default_source_m
    starts = np.ascontiguousarray(np.broadcast_to(source, lung_grid.shape))
    distance, _ = insertion_setup.world.forbidden_distance(starts, lung_grid)
    return lung_grid[distance == 0.0]
