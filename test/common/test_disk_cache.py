"""The disk cache returns exactly what was stored, ignores junk, and the built-in meshes come back unchanged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.anatomy import builtin_models
from cosim_validation.common import disk_cache


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COSIM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_round_trip_and_junk(cache: Path) -> None:
    arrays = {"a": np.arange(6.0).reshape(2, 3), "b": np.array([1, 2], dtype=np.int64)}
    assert disk_cache.load_arrays("k") is None
    disk_cache.store_arrays("k", arrays)
    got = disk_cache.load_arrays("k")
    assert got is not None
    for name in arrays:
        np.testing.assert_array_equal(got[name], arrays[name])
    (cache / "j.npz").write_bytes(b"not an npz")
    assert disk_cache.load_arrays("j") is None
    assert not list(cache.glob("*.tmp"))


def test_source_digest_follows_the_code() -> None:
    a = disk_cache.source_digest(["cosim_validation.common.disk_cache"])
    assert a == disk_cache.source_digest(["cosim_validation.common.disk_cache"])
    assert a != disk_cache.source_digest(["cosim_validation.common.disk_cache", "cosim_validation.common.exceptions"])


@pytest.mark.parametrize("name", ["heart", "torso"])
def test_builtin_mesh_from_cache_equals_generated(cache: Path, name: str) -> None:
    builtin_models.builtin_mesh.cache_clear()
    generated = builtin_models.builtin_mesh(name)
    assert len(list(cache.glob(f"anatomy-{name}-*.npz"))) == 1
    builtin_models.builtin_mesh.cache_clear()
    cached = builtin_models.builtin_mesh(name)
    builtin_models.builtin_mesh.cache_clear()
    np.testing.assert_array_equal(cached.vertices_m, generated.vertices_m)
    np.testing.assert_array_equal(cached.faces, generated.faces)
    assert not cached.vertices_m.flags.writeable
