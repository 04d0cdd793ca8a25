"""A test suite: cases as columns, metadata, and its Parquet file.

File layout (Parquet, one row per case): ``test_id`` (string), ``source_{x,y,z}_m`` and
``target_{x,y,z}_m`` (float64, base_link), ``cube_{i,j,k}`` (int32, -1 if none), ``target_depth_m``
(float64). The schema metadata key ``cosim_validation.suite`` holds JSON: ``format``, ``suite_id``,
``frame_id``, ``generator``, ``seed``, ``granularity_m``, ``unit`` and whatever the generator adds
(model hashes, region, grid, metrics, configuration).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.common.atomic_file import write_atomic
from cosim_validation.common.config.bounded_file import parse_json, regular_file_problem
from cosim_validation.common.exceptions import ConfigError, InputError
from cosim_validation.testgen.test_case import TestCase

FORMAT = 1
METADATA_KEY = b"cosim_validation.suite"
REQUIRED_METADATA = ("format", "suite_id", "frame_id", "generator", "seed", "granularity_m", "unit")
_XYZ = ("x", "y", "z")
FLOAT_COLUMNS = (*(f"source_{a}_m" for a in _XYZ), *(f"target_{a}_m" for a in _XYZ), "target_depth_m")
INT_COLUMNS = ("cube_i", "cube_j", "cube_k")


def _content_id(columns: dict[str, np.ndarray], metadata: dict[str, Any]) -> str:
    digest = hashlib.sha256()
    for name in sorted(columns):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(columns[name]).tobytes())
    stable = json.loads(json.dumps(metadata))
    stable.pop("suite_id", None)
    stable.pop("created_s", None)
    stable.get("metrics", {}).pop("generation_s", None)
    digest.update(json.dumps(stable, sort_keys=True).encode())
    return digest.hexdigest()[:16]


@dataclass(frozen=True, eq=False)
class Suite:
    """Test cases as columnar arrays plus metadata.

    Attributes:
        source_m: (N, 3) float64 source points in ``frame_id`` [m].
        target_m: (N, 3) float64 target points [m].
        cube_index: (N, 3) int64 cube of each target, -1s if none.
        target_depth_m: (N,) float64 distance from each target to the target model's boundary [m].
        metadata: JSON-ready mapping with at least the keys of :data:`REQUIRED_METADATA`.
    """

    source_m: np.ndarray
    target_m: np.ndarray
    cube_index: np.ndarray
    target_depth_m: np.ndarray
    metadata: dict[str, Any]

    @classmethod
    def build(
        cls,
        source_m: np.ndarray,
        target_m: np.ndarray,
        cube_index: np.ndarray,
        depth_m: np.ndarray,
        meta: dict[str, Any],
    ) -> Suite:
        """A suite whose ``suite_id`` is the hash of its cases and stable metadata.

        Args:
            source_m: Source points in base_link, shape (N, 3), in [m].
            target_m: Target points in base_link, shape (N, 3), in [m].
            cube_index: Cube of each target, shape (N, 3), int64, -1s if none.
            depth_m: Distance from each target to the target model's boundary, shape (N,), in [m].
            meta: Metadata beside ``format``, ``frame_id`` (base_link) and ``unit`` (m), which it may override.
        """
        metadata = {"format": FORMAT, "frame_id": "base_link", "unit": "m", **meta}
        columns = _columns(source_m, target_m, cube_index, depth_m)
        metadata["suite_id"] = _content_id(columns, metadata)
        return cls(source_m, target_m, cube_index, depth_m, metadata)

    @property
    def suite_id(self) -> str:
        """Content hash (16 hex digits)."""
        return str(self.metadata["suite_id"])

    @property
    def test_ids(self) -> list[str]:
        """``<first 8 of suite_id>-<row, 7 digits>`` for every case."""
        return [f"{self.suite_id[:8]}-{i:07d}" for i in range(len(self))]

    def __len__(self) -> int:
        return int(self.target_m.shape[0])

    def case(self, i: int) -> TestCase:
        """The i-th case (negative i counts from the end).

        Args:
            i: Row of the case, in ``-len(suite)`` .. ``len(suite) - 1``.
        """
        n = len(self)
        if not -n <= i < n:
            raise InputError(f"suite {self.suite_id}: case index {i!r} out of range for {n} cases")
        i %= n
        m = self.metadata
        return TestCase(
            f"{self.suite_id[:8]}-{i:07d}",
            self.suite_id,
            str(m["frame_id"]),
            self.source_m[i].copy(),
            self.target_m[i].copy(),
            self.cube_index[i].copy(),
            float(m["granularity_m"]),
            str(m["generator"]),
            int(m["seed"]),
            float(self.target_depth_m[i]),
        )

    def __iter__(self) -> Iterator[TestCase]:
        return (self.case(i) for i in range(len(self)))

    def write(self, path: str | Path) -> None:
        """Write the Parquet file atomically (a temporary file renamed into place).

        Args:
            path: The Parquet file to write (replaced if it exists); its folder must exist.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = Path(path)
        if path.parent.exists() and not path.parent.is_dir():
            raise InputError(f"{path}: cannot write the suite, {str(path.parent)!r} is a file, not a folder")
        if not path.parent.is_dir():
            raise InputError(f"{path}: cannot write the suite, folder {str(path.parent)!r} does not exist")
        if path.is_dir():
            raise InputError(f"{path}: is a directory; give the suite file to write (e.g. {path / 'suite.parquet'})")
        columns = _columns(self.source_m, self.target_m, self.cube_index, self.target_depth_m)
        table = pa.table({"test_id": pa.array(self.test_ids, pa.string()), **columns})
        table = table.replace_schema_metadata({METADATA_KEY: json.dumps(self.metadata).encode()})
        write_atomic(path, lambda tmp: pq.write_table(table, tmp), "the suite")

    @classmethod
    def read(cls, path: str | Path) -> Suite:
        """Read a suite file written by :meth:`write`.

        Args:
            path: The Parquet file written by :meth:`write`.

        Raises:
            InputError: The file is absent, not Parquet, not a suite, of another format version, a column is
                missing, mistyped or holds nulls (the message names the file and the column), or the cases do
                not match the suite's id (a content hash: the file was edited after it was made).
        """
        table, metadata = _read_table(Path(path))
        arrays = {name: _column(table, name, path, "double") for name in FLOAT_COLUMNS}
        ints = {name: _column(table, name, path, "int32") for name in INT_COLUMNS}
        content = _content_id(arrays | ints, metadata)
        if content != metadata["suite_id"]:
            raise InputError(
                f"{path}: the cases do not match the suite's id {metadata['suite_id']!r} (their content hash is "
                f"{content!r}): the file was changed after it was made, and a run stored under that id would be "
                "mixed with another suite's; make a changed suite with Suite.build (it gets its own id)"
            )
        return cls(
            np.stack([arrays[f"source_{a}_m"] for a in _XYZ], axis=1),
            np.stack([arrays[f"target_{a}_m"] for a in _XYZ], axis=1),
            np.stack([ints[n] for n in INT_COLUMNS], axis=1).astype(np.int64),
            arrays["target_depth_m"],
            metadata,
        )


def _columns(source: np.ndarray, target: np.ndarray, cube: np.ndarray, depth: np.ndarray) -> dict[str, np.ndarray]:
    cols = {f"source_{a}_m": np.ascontiguousarray(source[:, k], dtype=np.float64) for k, a in enumerate(_XYZ)}
    cols |= {f"target_{a}_m": np.ascontiguousarray(target[:, k], dtype=np.float64) for k, a in enumerate(_XYZ)}
    cols |= {n: np.ascontiguousarray(cube[:, k], dtype=np.int32) for k, n in enumerate(INT_COLUMNS)}
    cols["target_depth_m"] = np.ascontiguousarray(depth, dtype=np.float64)
    return cols


def _read_table(path: Path) -> tuple[Any, dict[str, Any]]:
    import pyarrow.parquet as pq

    problem = regular_file_problem(path)
    if problem is not None:
        raise InputError(f"{path}: suite file {problem if problem == 'not found' else 'is ' + problem}")
    try:  # one file: pq.read_table would load pyarrow's dataset layer
        with pq.ParquetFile(path) as parquet:
            table = parquet.read()
    except Exception as exc:  # noqa: BLE001 - any reader failure: not a Parquet file we can read
        raise InputError(f"{path}: not a readable Parquet file: {exc}") from None
    raw = (table.schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise InputError(f"{path}: not a cosim_validation suite (no {METADATA_KEY.decode()!r} metadata)")
    try:
        metadata = parse_json(raw, path, METADATA_KEY.decode())
    except ConfigError as exc:
        raise InputError(f"{path}: suite metadata is not valid JSON ({exc.message})") from None
    missing = [k for k in REQUIRED_METADATA if k not in metadata]
    if missing:
        raise InputError(f"{path}: suite metadata lacks {missing!r}")
    if metadata["format"] != FORMAT:
        raise InputError(f"{path}: suite format {metadata['format']!r}, this version reads format {FORMAT}")
    return table, metadata


def _column(table: Any, name: str, path: str | Path, arrow_type: str) -> np.ndarray:
    """A column as a numpy array, checked: present, of ``arrow_type`` (``double`` or ``int32``), no nulls."""
    if name not in table.column_names:
        raise InputError(f"{path}: missing column {name!r} (columns: {', '.join(table.column_names)})")
    column = table.column(name)
    if str(column.type) != arrow_type:
        raise InputError(f"{path}: column {name!r} has type {column.type}, expected {arrow_type}")
    if column.null_count:
        raise InputError(f"{path}: column {name!r} holds {column.null_count} nulls")
    # from the buffers: the column is of a fixed-width type and has no nulls; pyarrow's to_numpy would load pandas
    # (about 0.45 CPU-s in a process that reads a suite: a session's test generator, a campaign's worker)
    dtype = np.dtype(np.float64 if arrow_type == "double" else np.int32)
    chunks = [
        np.frombuffer(c.buffers()[1], dtype=dtype, count=len(c), offset=c.offset * dtype.itemsize)
        for c in column.chunks
    ]
    return np.concatenate(chunks) if chunks else np.empty(0, dtype)  # a copy: writable, owning its memory
