"""The built-in anatomy as STL files of the package, and where a loaded model's file goes in a viewer.

``make setup`` (``scripts/make_meshes.py anatomy``) exports every built-in model in the patient frame to
``meshes/anatomy/<name>.stl`` (2.6 MB together, made at set-up rather than shipped). A viewer shows a model
from its file as a ``visualization_msgs/Marker`` MESH_RESOURCE with ``package://cosim_validation/...``:
:func:`mesh_resource` gives the marker's pose only after checking that the file, so placed, is the model
the session loaded (every triangle corner within ``tolerance_m``), so a stale export or a model posed or
repaired differently never shows as something it is not; the caller then falls back to a triangle list.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from cosim_validation.anatomy import AnatomyModel
from cosim_validation.anatomy.builtin_models import BUILTIN_NAMES, builtin_mesh
from cosim_validation.common.config import package_root
from cosim_validation.common.exceptions import InputError
from cosim_validation.robots.visuals.package_uri import package_uri
from cosim_validation.robots.visuals.stl_binary import read_stl, write_stl

ANATOMY_MESH_FOLDER = "meshes/anatomy"
BUILTIN_SOURCE = "builtin:"


class MeshResource(NamedTuple):
    """A model shown from a package file.

    Attributes:
        uri: ``package://cosim_validation/meshes/anatomy/<name>.stl``.
        T_frame_mesh: (4, 4) float64 pose of the file's frame in the model's frame (base_link).
        residual_m: Largest distance between a placed file corner and the model's corner [m].
    """

    uri: str
    T_frame_mesh: np.ndarray
    residual_m: float


class MeshMismatchError(InputError):
    """The package has no file for a model, or its file is not that model."""


def anatomy_path(builtin_name: str) -> str:
    """The STL file of a built-in model, relative to the package root.

    Args:
        builtin_name: Name of the built-in model (without ``builtin:``).
    """
    return f"{ANATOMY_MESH_FOLDER}/{builtin_name}.stl"


def export_builtin_anatomy(package_dir: str | Path) -> list[Path]:
    """Write every built-in model (patient frame, metres) to ``package_dir/meshes/anatomy/<name>.stl``.

    Args:
        package_dir: The package root (its ``meshes/anatomy`` folder is made if missing).
    """
    folder = Path(package_dir) / ANATOMY_MESH_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in BUILTIN_NAMES:
        mesh = builtin_mesh(name)
        triangles = np.asarray(mesh.vertices_m)[np.asarray(mesh.faces)]
        written.append(write_stl(Path(package_dir) / anatomy_path(name), triangles, f"cosim_validation {name}"))
    return written


def rigid_fit(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(4, 4) rotation + translation taking (N, 3) ``source`` points closest to ``target`` (Kabsch).

    Args:
        source: Points to move, shape (N, 3).
        target: Corresponding points, shape (N, 3), in the same unit.

    Returns:
        The rigid transform, shape (4, 4), its translation in the points' unit; it minimises the squared distances of
        the moved ``source`` to ``target``.
    """
    source_centre, target_centre = source.mean(axis=0), target.mean(axis=0)
    U, _, Vt = np.linalg.svd((source - source_centre).T @ (target - target_centre))
    d = np.sign(np.linalg.det(Vt.T @ U.T))
    T = np.eye(4)
    T[:3, :3] = Vt.T @ np.diag([1.0, 1.0, d]) @ U.T
    T[:3, 3] = target_centre - T[:3, :3] @ source_centre
    return T


def mesh_resource(model: AnatomyModel, root: Path | None = None, tolerance_m: float = 1e-6) -> MeshResource:
    """The package file showing ``model`` and its pose in the model's frame.

    Args:
        model: The loaded model, its vertices in base_link [m]; only a built-in one (``builtin:<name>``) has a file.
        root: The package root; None for :func:`~cosim_validation.common.config.package_root`.
        tolerance_m: Largest distance allowed between a placed file corner and the model's corner, in [m].

    Raises:
        MeshMismatchError: The model is not a built-in one, its file is missing, or the file placed by the
            best rigid fit is farther than ``tolerance_m`` from the model somewhere.
    """
    if not model.source.startswith(BUILTIN_SOURCE):
        raise MeshMismatchError(f"{model.name}: the package ships files of built-in models only ({model.source})")
    relative = anatomy_path(model.source[len(BUILTIN_SOURCE) :])
    path = (root or package_root()) / relative
    if not path.is_file():
        raise MeshMismatchError(f"{model.name}: {path} is missing (made by make setup)")
    in_file = read_stl(path).reshape(-1, 3)
    loaded = model.vertices_m[model.faces].reshape(-1, 3)
    if in_file.shape != loaded.shape:
        raise MeshMismatchError(f"{model.name}: {path} has {len(in_file) // 3} triangles, the model {len(loaded) // 3}")
    T = rigid_fit(in_file, loaded)
    residual = float(np.max(np.linalg.norm(in_file @ T[:3, :3].T + T[:3, 3] - loaded, axis=1)))
    if residual > tolerance_m:
        raise MeshMismatchError(f"{model.name}: {path} differs from the loaded model by up to {residual:.3g} m")
    return MeshResource(package_uri(relative), T, residual)
