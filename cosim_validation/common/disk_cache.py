"""A small on-disk cache of numpy arrays for results that are slow to compute and fully determined by code.

Entries are keyed by the caller (include a digest of the code that computes them, see :func:`source_digest`),
written atomically (temporary file, then rename) so concurrent processes never read half a file, and
ignored when unreadable or damaged (empty, cut short, a bad checksum). The folder is ``COSIM_CACHE_DIR`` (set to
``.cache`` in the repository by
``scripts/env.sh``), else ``~/.cache/cosim_validation``. Deleting it only costs recomputation.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np


def cache_dir() -> Path:
    """The cache folder (not created here)."""
    configured = os.environ.get("COSIM_CACHE_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "cosim_validation"


def source_digest(modules: Iterable[str]) -> str:
    """A short digest of the source files of ``modules`` and of the numpy version.

    Args:
        modules: Dotted names of importable modules (e.g. ``cosim_validation.anatomy.radial_mesh``) whose source files
            decide the cached result.
    """
    digest = hashlib.sha256(np.__version__.encode())
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise ImportError(f"cannot find the source of {name!r}")
        digest.update(Path(spec.origin).read_bytes())
    return digest.hexdigest()[:16]


def load_arrays(key: str) -> dict[str, np.ndarray] | None:
    """The arrays stored under ``key``, or None if absent or unreadable.

    Args:
        key: The entry's name (the file ``<key>.npz`` in :func:`cache_dir`).
    """
    path = cache_dir() / f"{key}.npz"
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except Exception:  # noqa: BLE001 - any damage (empty, cut short, a bad CRC: EOFError, BadZipFile) is a miss
        return None


def store_arrays(key: str, arrays: Mapping[str, np.ndarray]) -> None:
    """Store ``arrays`` under ``key`` (silently skipped if the folder is not writable).

    Args:
        key: The entry's name (the file ``<key>.npz`` in :func:`cache_dir`); an entry of that name is replaced.
        arrays: The arrays by name (no object arrays: they are read back without pickle).
    """
    folder = cache_dir()
    tmp = ""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        named: dict[str, Any] = dict(arrays)
        with os.fdopen(handle, "wb") as f:
            np.savez(f, **named)
        os.replace(tmp, folder / f"{key}.npz")
    except OSError:  # a full disk, a read-only folder: nothing is kept, not even the half-written file
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
