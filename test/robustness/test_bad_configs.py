"""Bad case-study configurations, generated from the shipped ``config/needle_insertion.yaml``: every mapping gets
an unknown key, every scalar a value of the wrong kind (numbers also NaN), every number list the wrong length.
The anatomy and testgen sections go through ``cosim testgen``, the others through ``cosim campaign`` (whose
parent process checks every section its workers read), a sample through the other subcommands."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from cosim_validation.common.config import package_root
from test.robustness.harness import Case, Workspace, run_case

SHIPPED = yaml.safe_load((package_root() / "config" / "needle_insertion.yaml").read_text())
TESTGEN_SECTIONS = ("anatomy", "testgen")


def _key(path: tuple[str | int, ...]) -> str:
    """The dotted key path as ConfigNode names it: ``anatomy.models[0].name``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _walk(tree: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str, tuple[str | int, ...], Any]]:
    """(mutation, path, new value) for every mapping, scalar and number list below ``tree``."""
    out: list[tuple[str, tuple[str | int, ...], Any]] = []
    if isinstance(tree, dict):
        out.append(("unknown_key", (*path, "bogus_key"), 1))
        for key, value in tree.items():
            out += _walk(value, (*path, key))
    elif isinstance(tree, list) and tree and all(isinstance(v, (int, float)) for v in tree):
        out.append(("text", (*path, 0), "abc"))
        out.append(("short_list", path, tree[:-1]))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            out += _walk(value, (*path, i))
    elif isinstance(tree, bool):
        out.append(("text", path, "sometimes"))
    elif isinstance(tree, (int, float)):
        out.append(("text", path, "abc"))
        out.append(("nan", path, math.nan))
    elif isinstance(tree, str):
        out.append(("number", path, 42))
    return out


MUTATIONS = {f"{_key(path)}:{kind}": (path, value) for kind, path, value in _walk(SHIPPED)}


def _mutated(path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    tree = yaml.safe_load(yaml.safe_dump(SHIPPED))
    node = tree
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return tree


def _build(name: str, folder: Path, ws: Workspace) -> Case:
    path, value = MUTATIONS[name]
    config = folder / "case.yaml"
    (folder / "properties.yaml").write_text(ws.properties.read_text())
    config.write_text(yaml.safe_dump(_mutated(path, value), sort_keys=False))
    out = folder / "out"
    key = _key(path)
    if path[0] in TESTGEN_SECTIONS:
        argv = ["testgen", "--config", str(config), "--granularity-mm", "60", "-o", str(out / "suite.parquet")]
        return Case(argv, ("case.yaml", key), (out,))
    argv = ["campaign", "--config", str(config), "--suite", str(ws.suite), "--backends", "virtual,physical"]
    return Case([*argv, "--workers", "1", "--out", str(out)], ("case.yaml", key), (out,))


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_bad_config(name: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]) -> None:
    as_json = sorted(MUTATIONS).index(name) % 2 == 1  # every other case asks for the JSON error object
    run_case(_build(name, tmp_path, workspace), as_json, capfd)


def _unknown_section(folder: Path, ws: Workspace) -> Path:
    """The shipped configuration with the section ``robotz:`` (a typo of ``robot:``) added."""
    config = folder / "case.yaml"
    (folder / "properties.yaml").write_text(ws.properties.read_text())
    config.write_text(ws.config.read_text() + "\nrobotz:\n  needle_length_m: 0.2\n")
    return config


OTHER_COMMANDS = {
    "run-case": lambda c, ws, out: ["run-case", "--config", str(c), "--target", "0.45", "0.0", "0.05"],
    "check": lambda c, ws, out: ["check", str(ws.records["virtual"]), "--config", str(c)],
    "replay": lambda c, ws, out: ["replay", str(ws.bag), "--config", str(c)],
    "experiment": lambda c, ws, out: ["experiment", "rq3", "--quick", "--config", str(c), "--out", str(out)],
    "testgen": lambda c, ws, out: [
        "testgen",
        "--config",
        str(c),
        "--granularity-mm",
        "60",
        "-o",
        str(out / "s.parquet"),
    ],
    "campaign": lambda c, ws, out: ["campaign", "--config", str(c), "--suite", str(ws.suite), "--out", str(out)],
}


@pytest.mark.parametrize("command", sorted(OTHER_COMMANDS))
def test_unknown_section_in_every_command(
    command: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 15, item 13: ``robotz:`` was accepted silently (the robot section's defaults used instead)."""
    config = _unknown_section(tmp_path, workspace)
    out = tmp_path / "out"
    argv = OTHER_COMMANDS[command](config, workspace, out)
    run_case(Case(argv, ("case.yaml", "robotz: unknown key; expected one of: anatomy"), (out,)), False, capfd)


#: Values of the right kind that mean something wrong (issue 15, item 13): each names the file and the key.
MEANINGS = {
    "patient_pose_in_mm": (("anatomy", "patient_pose", "xyz_m"), [535, 500, 60], "in millimetres it would be"),
    "unknown_target": (("testgen", "target"), "spleen", "unknown region 'spleen'"),
}


@pytest.mark.parametrize("name", sorted(MEANINGS))
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_value_that_means_something_wrong(
    name: str, as_json: bool, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]
) -> None:
    path, value, says = MEANINGS[name]
    config = tmp_path / "case.yaml"
    (tmp_path / "properties.yaml").write_text(workspace.properties.read_text())
    config.write_text(yaml.safe_dump(_mutated(path, value), sort_keys=False))
    out = tmp_path / "out" / "suite.parquet"
    argv = ["testgen", "--config", str(config), "--granularity-mm", "60", "-o", str(out)]
    run_case(Case(argv, ("case.yaml", _key(path), says), (out,)), as_json, capfd)
