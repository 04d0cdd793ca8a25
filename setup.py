"""ament_python packaging of cosim_validation (the repository root is the ROS 2 package)."""

import os
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "cosim_validation"

# One entry per node (ros2 run cosim_validation <node>); the list grows with cosim_validation/live/nodes.
NODES: list[str] = [
    "test_generator",
    "controller",
    "virtual_driver",
    "physical_driver",
    "monitor",
    "recorder",
    "markers",
    "foxglove_bridge",
    "robot_proxy",
    "hazard_injector",
    "error_injector",
    "crtk_driver",
    "crtk_emulator",
    "ros2_control_driver",
    "controller_manager_emulator",
]


def data_files() -> list[tuple[str, list[str]]]:
    """Files installed under share/cosim_validation for ROS tools (launch, config, robot model, meshes).

    Every file below the folders, by sub-folder: meshes/robot (the link visuals) and, when made by
    ``python scripts/make_meshes.py anatomy`` before the build, meshes/anatomy.
    """
    files = [
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml", "plugin.xml"]),  # plugin.xml: the rqt plugin (dashboard)
    ]
    by_folder: dict[str, list[str]] = {}
    for folder in ("launch", "config", "urdf", "meshes"):
        for path in sorted(glob(f"{folder}/**/*", recursive=True)):
            if os.path.isfile(path) and not os.path.basename(path).startswith("."):
                by_folder.setdefault(os.path.dirname(path), []).append(path)
    files += [(f"share/{PACKAGE}/{folder}", paths) for folder, paths in sorted(by_folder.items())]
    return files


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    package_data={PACKAGE: ["py.typed", "data/*", "data/**/*"]},
    data_files=data_files(),
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="cosim_validation maintainers",
    maintainer_email="maintainers@cosim-validation.org",
    description="Co-simulation validation of autonomous surgical-robot software (ROS 2).",
    license="Apache-2.0",
    python_requires=">=3.11",  # as ruff target-version and mypy python_version in pyproject.toml
    entry_points={
        "console_scripts": [f"cosim = {PACKAGE}.cli.main:entry_point"]
        + [f"{node} = {PACKAGE}.live.nodes.{node}:main" for node in NODES],
    },
)
