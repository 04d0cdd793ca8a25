"""Configuration values are validated on load with errors that name file, key and problem."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.config import load_config, parse_config
from cosim_validation.common.exceptions import ConfigError

DOC = """
robot:
  needle_length_m: 0.15
  home_q: [0, 0.5, 0, 1.0, 0, 0.5, 0]
  name: er3_pro
  enabled: true
anatomy:
  models:
    - {name: lung, unit: mm}
    - {name: heart, unit: cm}
"""


@pytest.fixture
def root() -> object:
    return parse_config(DOC, "cfg.yaml")


def test_values_come_back_typed(root) -> None:  # type: ignore[no-untyped-def]
    robot = root["robot"]
    assert robot["needle_length_m"].to_float(exclusive_minimum=0) == 0.15
    np.testing.assert_array_equal(robot["home_q"].to_vector(7), [0, 0.5, 0, 1.0, 0, 0.5, 0])
    assert robot["name"].to_str(choices=["er3_pro"]) == "er3_pro"
    assert robot["enabled"].to_bool() is True
    assert root.get("absent") is None


@pytest.mark.parametrize(
    ("get", "message"),
    [
        (lambda r: r["robot"]["missing_m"], r"cfg.yaml: robot.missing_m: missing required key \(keys here: .*name"),
        (
            lambda r: r["anatomy"]["models"].elements()[1]["unit"].to_str(choices=["m", "mm"]),
            r"cfg.yaml: anatomy.models\[1\].unit: expected one of 'm', 'mm', got 'cm'",
        ),
        (lambda r: r["robot"]["home_q"].to_vector(6), r"robot.home_q: expected a list of 6 numbers, got 7"),
        (lambda r: r["robot"]["needle_length_m"].to_float(minimum=1.0), r"expected a number >= 1.0, got 0.15"),
        (lambda r: r["robot"]["name"].to_float(), r"robot.name: expected a number, got 'er3_pro'"),
        (lambda r: r["robot"]["enabled"].to_int(), r"robot.enabled: expected an integer, got True"),
        (lambda r: r["robot"].reject_unknown(["needle_length_m"]), r"robot.home_q: unknown key; expected one of"),
    ],
)
def test_bad_values_name_file_key_and_problem(root, get, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match=message):
        get(root)


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("x: 5e-1", "(YAML reads 5e-1 as text: write 5.0e-1)"),  # it said only "expected a number, got '5e-1'"
        ("x: 1e300", "(YAML reads 1e300 as text: write 1.0e+300)"),
        ("x: '0.5'", "(a number in quotes is text: write it without them)"),
    ],
)
def test_a_number_read_as_text_says_why(text: str, hint: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(text, "c.yaml")["x"].to_float()
    assert str(error.value).endswith(hint), error.value
    if "write " in hint and "quotes" not in hint:  # the spelling it suggests is read as a number
        suggested = hint.split("write ")[1].rstrip(")")
        assert isinstance(parse_config(f"x: {suggested}", "c.yaml")["x"].to_float(), float)


def test_nan_is_not_a_number_here() -> None:
    with pytest.raises(ConfigError, match="expected a finite number"):
        parse_config("x: .nan", "c.yaml")["x"].to_float()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: [1, 2", r"c.yaml: invalid YAML at line 1"),
        ("- 1\n- 2\n", r"c.yaml: expected a mapping at the top level, got list"),
        ("a: 1\na: 2\n", r"key 'a' given twice \(line 2\)"),
    ],
)
def test_bad_documents(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(text, "c.yaml")


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope.yaml: file not found"):
        load_config(tmp_path / "nope.yaml")


def test_relative_paths_are_taken_from_the_config_folder(tmp_path: Path) -> None:
    cfg = tmp_path / "sub" / "c.yaml"
    cfg.parent.mkdir()
    cfg.write_text("mesh: meshes/lung.stl\n")
    assert load_config(cfg)["mesh"].to_path() == tmp_path / "sub" / "meshes" / "lung.stl"
