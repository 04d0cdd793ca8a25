"""Suite files: round trip, TestCase view, clear errors on bad files, atomic writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.testgen import Suite, TestCase
from cosim_validation.testgen.suite import METADATA_KEY


@pytest.fixture
def suite() -> Suite:
    rng = np.random.default_rng(0)
    n = 50
    return Suite.build(
        rng.random((n, 3)),
        rng.random((n, 3)),
        rng.integers(-1, 9, (n, 3)),
        rng.random(n),
        {"generator": "grid", "seed": 4, "granularity_m": 0.01, "models": [{"name": "left_lung", "sha256": "ab"}]},
    )


def test_round_trip_keeps_every_value(suite: Suite, tmp_path: Path) -> None:
    path = tmp_path / "suite.parquet"
    suite.write(path)
    back = Suite.read(path)
    for name in ("source_m", "target_m", "cube_index", "target_depth_m"):
        assert np.array_equal(getattr(back, name), getattr(suite, name))
    assert back.metadata == suite.metadata
    assert back.suite_id == suite.suite_id
    assert len(back) == 50
    assert pq.read_table(path).column("test_id").to_pylist() == suite.test_ids
    assert not list(tmp_path.glob(".*.tmp"))  # the temporary file was renamed, not left behind


def test_a_suite_written_in_row_groups_reads_back_whole(suite: Suite, tmp_path: Path) -> None:
    """A suite another tool wrote in several row groups (Parquet's chunks: each column read as 7 pieces) gives the
    same arrays, writable and owning their memory."""
    path = tmp_path / "suite.parquet"
    suite.write(path)
    pq.write_table(pq.read_table(path), path, row_group_size=7)
    assert pq.ParquetFile(path).num_row_groups == 8
    back = Suite.read(path)
    for name in ("source_m", "target_m", "cube_index", "target_depth_m"):
        assert np.array_equal(getattr(back, name), getattr(suite, name)), name
        assert getattr(back, name).flags.writeable, name
    assert back.suite_id == suite.suite_id


def test_reading_a_suite_loads_no_pandas(suite: Suite, tmp_path: Path) -> None:
    """pyarrow's read_table and to_numpy load pandas (about 0.45 CPU-s), in every process that reads a suite: a
    session's test generator node, each campaign worker; the suite reader does without."""
    path = tmp_path / "suite.parquet"
    suite.write(path)
    probe = f"import sys\nfrom cosim_validation.testgen import Suite\nSuite.read({str(path)!r})\n"
    probe += "print('pandas' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


def test_case_view_mirrors_the_message(suite: Suite) -> None:
    case = suite.case(3)
    assert isinstance(case, TestCase)
    assert case.test_id == f"{suite.suite_id[:8]}-0000003"
    assert case.suite_id == suite.suite_id
    assert case.frame_id == "base_link"
    assert case.generator == "grid"
    assert case.seed == 4
    assert case.granularity_m == 0.01
    np.testing.assert_array_equal(case.target_m, suite.target_m[3])
    np.testing.assert_array_equal(case.cube_index, suite.cube_index[3])
    assert suite.case(-1).test_id == suite.test_ids[-1]
    assert [c.test_id for c in suite] == suite.test_ids
    with pytest.raises(InputError, match="case index 50 out of range for 50 cases"):
        suite.case(50)


def test_suite_id_is_a_content_hash(suite: Suite) -> None:
    moved = suite.target_m.copy()
    moved[0, 0] += 1e-9
    other = Suite.build(
        suite.source_m,
        moved,
        suite.cube_index,
        suite.target_depth_m,
        {k: v for k, v in suite.metadata.items() if k not in ("suite_id", "format", "frame_id", "unit")},
    )
    same = Suite.build(
        suite.source_m,
        suite.target_m,
        suite.cube_index,
        suite.target_depth_m,
        {k: v for k, v in suite.metadata.items() if k not in ("suite_id", "format", "frame_id", "unit")},
    )
    assert same.suite_id == suite.suite_id != other.suite_id


def _rewrite(path: Path, table: pa.Table) -> None:
    pq.write_table(table, path)


@pytest.mark.parametrize(
    ("damage", "match"),
    [
        (lambda t: t.drop_columns(["target_y_m"]), r"missing column 'target_y_m'"),
        (
            lambda t: t.set_column(t.schema.get_field_index("cube_j"), "cube_j", pa.array(["a"] * t.num_rows)),
            r"column 'cube_j' has type string, expected int32",
        ),
        (
            lambda t: t.set_column(
                t.schema.get_field_index("target_depth_m"),
                "target_depth_m",
                pa.array([None] * t.num_rows, pa.float64()),
            ),
            r"column 'target_depth_m' holds 50 nulls",
        ),
        (lambda t: t.replace_schema_metadata({}), r"not a cosim_validation suite"),
        (lambda t: t.replace_schema_metadata({METADATA_KEY: b'{"format": 1}'}), r"suite metadata lacks \['suite_id'"),
        (
            lambda t: t.replace_schema_metadata(
                {
                    METADATA_KEY: json.dumps(
                        {
                            "format": 99,
                            "suite_id": "x",
                            "frame_id": "b",
                            "generator": "g",
                            "seed": 0,
                            "granularity_m": 0.0,
                            "unit": "m",
                        }
                    ).encode()
                }
            ),
            r"suite format 99, this version reads format 1",
        ),
    ],
)
def test_bad_files_name_the_file_and_the_column(suite: Suite, tmp_path: Path, damage: object, match: str) -> None:
    path = tmp_path / "bad.parquet"
    suite.write(path)
    _rewrite(path, damage(pq.read_table(path)))  # type: ignore[operator]
    with pytest.raises(InputError, match=rf"bad\.parquet: {match}"):
        Suite.read(path)


def test_absent_and_non_parquet_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nowhere\.parquet: suite file not found"):
        Suite.read(tmp_path / "nowhere.parquet")
    (tmp_path / "text.parquet").write_text("not parquet")
    with pytest.raises(InputError, match=r"text\.parquet: not a readable Parquet file"):
        Suite.read(tmp_path / "text.parquet")


def test_writing_into_a_missing_folder_fails_cleanly(suite: Suite, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"folder .*missing.* does not exist"):
        suite.write(tmp_path / "missing" / "suite.parquet")
