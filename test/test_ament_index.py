"""After ``make setup`` the package is in the ament index as after a colcon build (ros2 launch / ros2 run find it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cosim_validation.live.session.node_parameters import NODE_PARAMETERS
from cosim_validation.live.session.process_group import READY_DIR_ENV


def _share_and_prefix() -> tuple[Path, Path]:
    """Asked in a fresh process, with nothing but the environment of scripts/env.sh."""
    code = (
        "from ament_index_python.packages import get_package_prefix, get_package_share_directory as s\n"
        "print(s('cosim_validation')); print(get_package_prefix('cosim_validation'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    share, prefix = out.stdout.split()
    return Path(share), Path(prefix)


def test_share_directory_holds_the_resources(repo_root: Path) -> None:
    share, _ = _share_and_prefix()
    assert share.name == "cosim_validation"
    for relative in (
        "package.xml",
        "config/needle_insertion.yaml",
        "config/digital_twin.yaml",
        "config/properties.yaml",
        "launch/digital_twin.launch.py",
        "urdf/xmate_er3_pro.urdf",
    ):
        assert (share / relative).resolve() == (repo_root / relative).resolve(), relative
    assert len(list((share / "meshes" / "robot").glob("*.stl"))) == 9
    assert sorted(p.name for p in (share / "meshes" / "anatomy").glob("*.stl")) == [
        "heart.stl",
        "left_lung.stl",
        "right_lung.stl",
        "torso.stl",
    ]


def test_ros2_launch_finds_the_launch_file_by_walking_the_share_directory() -> None:
    """ros2launch's get_share_file_path_from_package walks the share directory with os.walk (links to folders
    are not followed), so the folders must be real; it then needs exactly one match."""
    share, _ = _share_and_prefix()
    found = [Path(root, n) for root, _, names in os.walk(share) for n in names if n == "digital_twin.launch.py"]
    assert found == [share / "launch" / "digital_twin.launch.py"]


@pytest.mark.parametrize("executable", sorted(NODE_PARAMETERS))
def test_every_node_has_an_executable_where_launch_ros_looks(executable: str) -> None:
    """launch_ros's ExecutableInPackage: <prefix>/lib/<package>/<executable>, executable."""
    _, prefix = _share_and_prefix()
    path = prefix / "lib" / "cosim_validation" / executable
    assert path.is_file()
    assert os.access(path, os.X_OK)


@pytest.mark.ros
def test_an_executable_starts_its_node(tmp_path: Path, node_env: dict[str, str]) -> None:
    _, prefix = _share_and_prefix()
    bag = tmp_path / "session.mcap"
    process = subprocess.Popen(
        [str(prefix / "lib" / "cosim_validation" / "recorder"), "--ros-args", "-p", f"output:={bag}"],
        env={**node_env, READY_DIR_ENV: str(tmp_path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "recorder").exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (tmp_path / "recorder").read_text() == str(process.pid)  # the node itself wrote its ready file
    finally:
        process.send_signal(signal.SIGINT)
        output = process.communicate(timeout=30)[0].decode()
    assert process.returncode == 0, output
    assert bag.is_file()
    assert (tmp_path / "session.skipped.json").read_text().strip() == "{}"
