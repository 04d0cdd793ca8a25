"""Shared fixtures: paths of the repository and of the optional real anatomy meshes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (the cosim_validation package folder)."""
    return REPO


@pytest.fixture(scope="session")
def shared_anatomy() -> Path | None:
    """The folder of real anatomical meshes (../shared/anatomy), or None where absent.

    Override with COSIM_SHARED_ANATOMY. Tests that use it also run on the embedded models, so a
    machine without the folder still tests the same code.
    """
    # next to the checkout, or next to one of its parents (git worktrees live deeper)
    candidates = [os.environ.get("COSIM_SHARED_ANATOMY", "")] + [str(p / "shared" / "anatomy") for p in REPO.parents]
    for candidate in candidates:
        if candidate and (Path(candidate) / "heart.stl").is_file():
            return Path(candidate)
    return None
