"""Files written whole or not at all get the mode of any new file of the user's (0666 less the umask), not the
temporary file's private 0600: a hostile trial found suites, datasets and recovered bags readable by their owner
alone."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.atomic_file import write_atomic
from cosim_validation.common.exceptions import InputError
from cosim_validation.testgen.suite import Suite


@pytest.fixture(params=[0o022, 0o077, 0o002])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield int(request.param)
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_written_file_has_the_mode_of_a_new_file(tmp_path: Path, umask: int) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # what the user's umask gives any new file
    written = tmp_path / "written.txt"
    write_atomic(written, lambda tmp: tmp.write_text("y"), "a test file")
    assert written.read_text() == "y"
    assert _mode(written) == _mode(plain) == 0o666 & ~umask


def test_a_suite_is_as_readable_as_the_users_other_files(tmp_path: Path, umask: int) -> None:
    rng = np.random.default_rng(0)
    meta = {"generator": "grid", "seed": 4, "granularity_m": 0.01}
    suite = Suite.build(rng.random((3, 3)), rng.random((3, 3)), rng.integers(-1, 9, (3, 3)), rng.random(3), meta)
    path = tmp_path / "suite.parquet"
    suite.write(path)
    assert _mode(path) == 0o666 & ~umask
    assert len(Suite.read(path)) == 3


def test_a_failed_write_leaves_nothing_and_names_the_file(tmp_path: Path) -> None:
    def fail(tmp: Path) -> None:
        tmp.write_text("half")
        raise OSError(28, "No space left on device")

    target = tmp_path / "model.npz"
    with pytest.raises(InputError, match=r"model\.npz: cannot write an error model \(No space left on device\)"):
        write_atomic(target, fail, "an error model")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("links", [True, False], ids=["hard_links", "no_hard_links"])
def test_a_file_that_must_not_overwrite_refuses_one_made_meanwhile(
    tmp_path: Path, links: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also on a file system without hard links (os.link fails with EPERM there): the file is written once, a second
    write refuses, the first file's content stays and no temporary file is left."""
    import errno

    if not links:

        def no_link(source: object, target: object) -> None:
            raise PermissionError(errno.EPERM, "Operation not permitted")

        monkeypatch.setattr(os, "link", no_link)
    target = tmp_path / "record.npz"
    write_atomic(target, lambda tmp: tmp.write_text("first"), "a record", overwrite=False)
    with pytest.raises(InputError, match=r"record\.npz: already exists; refusing to overwrite it"):
        write_atomic(target, lambda tmp: tmp.write_text("second"), "a record", overwrite=False)
    assert target.read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["record.npz"]
