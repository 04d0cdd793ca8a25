"""``package://cosim_validation/<path>`` URIs: what RViz, Foxglove and robot_state_publisher users resolve.

A ROS tool resolves ``package://<pkg>/<path>`` to ``<share directory of pkg>/<path>`` through the ament index
(``ament_index_python.get_package_share_directory``; ``make setup`` registers this package, see README).
Here the share directory is :func:`cosim_validation.common.config.package_root`: the checkout, or the install's
``share/cosim_validation``, which hold the same ``config/``, ``urdf/`` and ``meshes/``.
"""

from __future__ import annotations

from pathlib import Path

from cosim_validation.common.config import package_root
from cosim_validation.common.exceptions import InputError

PACKAGE_URI_PREFIX = "package://cosim_validation/"


def package_uri(relative: str | Path) -> str:
    """The URI of a file of this package, e.g. ``meshes/robot/link1.stl``.

    Args:
        relative: Path of the file relative to the package root.
    """
    text = Path(relative).as_posix()
    if Path(relative).is_absolute() or text.startswith("../"):
        raise InputError(f"{relative!r}: expected a path inside the package")
    return PACKAGE_URI_PREFIX + text


def resolve_package_uri(uri: str, root: Path | None = None) -> Path:
    """The file a ``package://cosim_validation/...`` URI names (it need not exist).

    Args:
        uri: A ``package://cosim_validation/...`` URI.
        root: The package root; None for :func:`~cosim_validation.common.config.package_root`.

    Raises:
        InputError: The URI names another package or is not a package URI.
    """
    if not uri.startswith(PACKAGE_URI_PREFIX):
        raise InputError(f"{uri!r}: expected a URI starting with {PACKAGE_URI_PREFIX!r}")
    return (root or package_root()) / uri[len(PACKAGE_URI_PREFIX) :]


def with_file_paths(urdf_text: str, root: Path | None = None) -> str:
    """``urdf_text`` with this package's URIs replaced by absolute file paths.

    For PyBullet, which cannot resolve ``package://``; MuJoCo drops URDF visuals and pinocchio reads only what it is
    asked for.

    Args:
        urdf_text: The URDF's text.
        root: The package root; None for :func:`~cosim_validation.common.config.package_root`.
    """
    return urdf_text.replace(PACKAGE_URI_PREFIX, (root or package_root()).resolve().as_posix() + "/")
