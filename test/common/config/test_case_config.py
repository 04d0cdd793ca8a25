"""The case-study file's sections: each names the code that reads it, and a section nothing reads is refused."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from cosim_validation.common.config import CASE_SECTIONS, load_case_config, package_root, parse_case_config
from cosim_validation.common.exceptions import ConfigError


@pytest.mark.parametrize("section", sorted(CASE_SECTIONS))
def test_every_section_names_the_code_that_reads_it(section: str) -> None:
    module, _, name = CASE_SECTIONS[section].rpartition(".")
    assert callable(getattr(importlib.import_module(f"cosim_validation.{module}"), name))


def test_the_shipped_case_studies_use_known_sections_only() -> None:
    for path in sorted((package_root() / "config").glob("*insertion.yaml")):
        assert set(load_case_config(path).keys()) <= set(CASE_SECTIONS), path


def test_a_misspelt_section_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"robotz: unknown key; expected one of: anatomy, backends, campaign"):
        parse_case_config("robotz: {}\n", tmp_path / "c.yaml")
