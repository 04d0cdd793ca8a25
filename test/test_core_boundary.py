"""The ROS-free core never imports rclpy, ROS message packages or the ROS layer of the project."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "cosim_validation"
# Everything below cosim_validation is core except these layers (folder paths below the package).
NON_CORE = {("live", "nodes"), ("live", "ros"), ("live", "external"), ("live", "moveit"), ("cli",)}
FORBIDDEN_ROOTS = {
    "rclpy",
    "rcl_interfaces",
    "builtin_interfaces",
    "cosim_validation_interfaces",
    "launch",
    "launch_ros",
}


def _core_modules() -> list[Path]:
    files = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if any(parts[: len(layer)] == layer for layer in NON_CORE):
            continue
        files.append(path)
    return files


def _forbidden(name: str) -> bool:
    root = name.split(".")[0]
    if root in FORBIDDEN_ROOTS or root.endswith("_msgs") or root.startswith("rosidl"):
        return True
    return any(
        tuple(name.split(".")[1 : 1 + len(layer)]) == layer
        for layer in NON_CORE
        if name.startswith("cosim_validation.")
    )


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def test_core_has_modules() -> None:
    assert len(_core_modules()) >= 5


@pytest.mark.parametrize("path", _core_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_module_imports_no_ros(path: Path) -> None:
    bad = [f"line {line}: import {name}" for line, name in _imports(path) if _forbidden(name)]
    assert not bad, f"{path.relative_to(PACKAGE)} imports ROS or the ROS layer: {bad}"


def test_importing_every_core_module_loads_no_ros() -> None:
    """Dynamic check: importing the whole core in a fresh interpreter loads no ROS module."""
    modules = []
    for path in _core_modules():
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules.append(".".join(parts))
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'rclpy', 'cosim_validation_interfaces'}"
        " or m.split('.')[0].endswith('_msgs'))\n"
        "print(json.dumps(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
