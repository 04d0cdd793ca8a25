"""The study scripts of docs/ERRORS.md answer a bad input with one error line, as the CLI does."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = ("play_phase_study", "nn1_mask_study")


def _script(repo_root: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, repo_root / "scripts" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", SCRIPTS)
@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("config/dvrk_psm_insertion.yaml", "{tmp}/missing.parquet: cannot read an error dataset (not found)"),
        ("{tmp}/absent.yaml", "{tmp}/absent.yaml: file not found"),
    ],
)
def test_a_bad_input_is_one_error_line(
    repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, config: str, expected: str
) -> None:
    """A missing dataset or configuration: exit code 1 and one ``error:`` line naming the file, no traceback."""
    argv = ["--config", config.format(tmp=tmp_path), str(tmp_path / "missing.parquet")]
    code = _script(repo_root, name).main(argv)
    assert code == 1
    assert capsys.readouterr().err.splitlines() == ["error: " + expected.format(tmp=tmp_path)]
