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


@pytest.mark.parametrize("damage", ["empty", "cut_short", "bad_crc"])
def test_a_damaged_entry_is_a_miss_not_a_traceback(cache: Path, damage: str) -> None:
    """An empty entry (EOFError), one cut short or with a flipped byte (zipfile.BadZipFile) crashed every command."""
    disk_cache.store_arrays("k", {"values": np.linspace(0.0, 1.0, 50_000)})
    entry = cache / "k.npz"
    data = entry.read_bytes()
    entry.write_bytes(
        {
            "empty": b"",
            "cut_short": data[: len(data) // 2],
            "bad_crc": data[:1000] + bytes([data[1000] ^ 1]) + data[1001:],
        }[damage]
    )
    assert disk_cache.load_arrays("k") is None


def test_a_write_that_fails_leaves_no_temporary_file(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk: nothing is kept, also not the half-written temporary file (they piled up, one a run)."""

    def full(file: object, **arrays: object) -> None:
        file.write(b"half")  # type: ignore[attr-defined]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", full)
    disk_cache.store_arrays("k", {"values": np.zeros(3)})
    assert list(cache.iterdir()) == []


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
