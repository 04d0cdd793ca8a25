"""The repository is a valid ROS 2 package pair that colcon finds with the documented command."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from catkin_pkg.package import parse_package


@pytest.mark.parametrize(
    ("folder", "name", "build_type"),
    [
        (".", "cosim_validation", "ament_python"),
        ("cosim_validation_interfaces", "cosim_validation_interfaces", "ament_cmake"),
    ],
)
def test_package_xml_is_valid_format_3(repo_root: Path, folder: str, name: str, build_type: str) -> None:
    package = parse_package(repo_root / folder / "package.xml")  # validates strictly
    assert package.name == name
    assert package.package_format == 3
    assert package.get_build_type() == build_type


def test_colcon_lists_both_packages(repo_root: Path, tmp_path: Path) -> None:
    colcon = shutil.which("colcon")
    assert colcon, "colcon is installed by make setup"
    out = subprocess.run(
        [colcon, "--log-base", str(tmp_path / "log"), "list", "--base-paths", ".", "cosim_validation_interfaces"],
        cwd=repo_root,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    rows = sorted(tuple(line.split("\t")) for line in out.stdout.strip().splitlines())
    assert rows == [
        ("cosim_validation", ".", "(ros.ament_python)"),
        ("cosim_validation_interfaces", "cosim_validation_interfaces", "(ros.ament_cmake)"),
    ]


def test_wheel_installs_ament_marker_package_xml_and_urdf(repo_root: Path, tmp_path: Path) -> None:
    """What colcon/pip install puts in share/: the ament index marker, package.xml, the robot model."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), "."],
        cwd=repo_root,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("cosim_validation-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    data = "cosim_validation-0.1.0.data/data/share"
    for expected in (
        f"{data}/ament_index/resource_index/packages/cosim_validation",
        f"{data}/cosim_validation/package.xml",
        f"{data}/cosim_validation/plugin.xml",
        f"{data}/cosim_validation/urdf/xmate_er3_pro.urdf",
        "cosim_validation/py.typed",
        "cosim_validation/cli/main.py",
    ):
        assert expected in names


def test_every_node_is_a_console_script_with_declared_parameters(repo_root: Path, tmp_path: Path) -> None:
    """``ros2 run cosim_validation <node>`` works for every node; each node's parameters are declared once."""
    import importlib

    from cosim_validation.live.session.node_parameters import NODE_PARAMETERS

    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), "."],
        cwd=repo_root,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("cosim_validation-*.whl")
    with zipfile.ZipFile(wheel) as z:
        entry_points = z.read("cosim_validation-0.1.0.dist-info/entry_points.txt").decode()
    scripts = {
        line.split("=")[0].strip(): line.split("=")[1].strip() for line in entry_points.splitlines() if "=" in line
    }
    assert scripts["cosim"] == "cosim_validation.cli.main:entry_point"
    assert set(NODE_PARAMETERS) <= set(scripts)
    for node in NODE_PARAMETERS:
        module, function = scripts[node].split(":")
        assert callable(getattr(importlib.import_module(module), function))


def test_python_requires_is_the_version_the_tools_check(repo_root: Path) -> None:
    """setup.py's python_requires, ruff's target-version and mypy's python_version name one Python (3.11)."""
    import ast
    import tomllib

    tools = tomllib.loads((repo_root / "pyproject.toml").read_text())["tool"]
    setup_call = next(
        node
        for node in ast.walk(ast.parse((repo_root / "setup.py").read_text()))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setup"
    )
    requires = next(k.value for k in setup_call.keywords if k.arg == "python_requires")
    assert isinstance(requires, ast.Constant)
    assert requires.value == f">={tools['mypy']['python_version']}"
    assert tools["ruff"]["target-version"] == "py" + tools["mypy"]["python_version"].replace(".", "")
    assert sys.version_info[:2] >= tuple(int(p) for p in tools["mypy"]["python_version"].split("."))
