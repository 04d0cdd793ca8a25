"""Where the package's shipped resources (config/, urdf/, meshes/, launch/) live.

From a source checkout (editable install) they sit beside the Python package; from a colcon or
pip install they sit in ``share/cosim_validation``.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path

from cosim_validation.common.exceptions import CosimError

PACKAGE = "cosim_validation"


@lru_cache(maxsize=1)
def package_root() -> Path:
    """The folder holding ``config/``, ``urdf/`` and ``package.xml`` of this package."""
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "package.xml").is_file() and (checkout / "config").is_dir():
        return checkout
    share = Path(sys.prefix) / "share" / PACKAGE
    if (share / "package.xml").is_file():
        return share
    try:
        from ament_index_python.packages import get_package_share_directory  # not a ROS message package

        return Path(get_package_share_directory(PACKAGE))
    except Exception as exc:  # noqa: BLE001 - any failure means: not found
        raise CosimError(f"cannot find the {PACKAGE} resources (config/, urdf/): {exc}") from None


def resolve_resource(relative: str | Path) -> Path:
    """An existing path given relative to the current directory or to :func:`package_root`.

    Args:
        relative: e.g. ``config/needle_insertion.yaml``.
    """
    path = Path(relative).expanduser()
    if path.is_absolute() or path.exists():
        return path
    shipped = package_root() / path
    return shipped if shipped.exists() else path
