"""The embedded anatomical models, made by this project: left and right lung, heart, torso.

All four are built in the PATIENT frame of the HuBMAP / Visible Human Male meshes (x = patient left,
y = superior, z = anterior; metres), so a real mesh in that frame (e.g. ``heart.stl``) replaces a
built-in one under the same patient pose. Sizes are those of an adult male: the heart fills the
bounding box of the VH Male heart, (-0.043, 0.423, -0.015) -> (0.081, 0.529, 0.090) m; each lung is
about 0.27 m tall with a concave base over the diaphragm dome and an impression of the heart on its
medial side, the left one with the cardiac notch on its anterior border; the torso is a closed
rounded box around the thorax, about 4 cm outside the lungs, through which the needle enters.

Every model is a radial graph over an icosphere (see :mod:`radial_mesh`): watertight, outward
wound and deterministic (same arrays, bit for bit, on every call).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from cosim_validation.anatomy import implicit_shapes as shapes
from cosim_validation.anatomy.implicit_shapes import Implicit
from cosim_validation.anatomy.radial_mesh import radial_mesh
from cosim_validation.common.disk_cache import load_arrays, source_digest, store_arrays

# modules whose code decides the built-in meshes (the disk cache is keyed by their source)
_GENERATOR_MODULES = (
    "cosim_validation.anatomy.builtin_models",
    "cosim_validation.anatomy.implicit_shapes",
    "cosim_validation.anatomy.radial_mesh",
)

BUILTIN_NAMES: tuple[str, ...] = ("left_lung", "right_lung", "heart", "torso")

# Bounding box of the VH Male heart (HuBMAP heart.stl) in the patient frame [m].
HEART_BOUNDS_M = np.array([[-0.0434, 0.4234, -0.0150], [0.0809, 0.5288, 0.0902]])
# How far the lungs stay from the heart's surface, in units of the heart's normalised implicit
# (about 0.12 * 0.05 m = 6 mm on the heart's short axes).
_HEART_CLEARANCE = 0.12


class BuiltinMesh(NamedTuple):
    """A built-in model's surface in the patient frame.

    Attributes:
        vertices_m: (V, 3) float64 [m], patient frame.
        faces: (F, 3) int64, outward winding.
    """

    vertices_m: np.ndarray
    faces: np.ndarray


def _heart_unfitted() -> Implicit:
    """An egg-shaped heart, long axis from the base (right, posterior, superior) to the apex."""
    apex_axis = np.array([1.0, -0.75, 0.65])
    apex_axis /= np.linalg.norm(apex_axis)
    side = np.cross(apex_axis, [0.0, 0.0, 1.0])
    side /= np.linalg.norm(side)
    R = np.column_stack([apex_axis, side, np.cross(apex_axis, side)])
    semi = np.array([0.068, 0.050, 0.046])

    def value(points: np.ndarray) -> np.ndarray:
        local = points @ R
        along = np.clip(local[:, 0] / semi[0], -1.0, 1.0)
        narrowing = 1.0 - 0.22 * along  # the apex end is narrower than the base
        q = local / semi
        return np.asarray(np.sqrt(q[:, 0] ** 2 + (q[:, 1] ** 2 + q[:, 2] ** 2) / narrowing**2) - 1.0)

    return value


@lru_cache(maxsize=1)
def _heart() -> tuple[Implicit, BuiltinMesh]:
    """The heart implicit and mesh, scaled and moved onto the VH Male heart's bounding box."""
    body = _heart_unfitted()
    vertices, faces = radial_mesh(body, np.zeros(3), np.array([0.06, 0.05, 0.05]), 0.2, subdivisions=4)
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    scale = (HEART_BOUNDS_M[1] - HEART_BOUNDS_M[0]) / (hi - lo)
    offset = HEART_BOUNDS_M[0] - lo * scale
    return shapes.affine(body, scale, offset), BuiltinMesh(vertices * scale + offset, faces)


def _lung(side: float) -> Implicit:
    """A lung on the patient's left (side = +1) or right (side = -1), before the heart is carved out."""
    left = side > 0
    base_y = 0.368 if left else 0.382
    column = shapes.tapered_column(
        np.array([side * (0.083 if left else 0.087), base_y, -0.012]),
        0.268 if left else 0.256,
        np.array([0.064, 0.100]) if left else np.array([0.070, 0.104]),
        taper=2.6,
    )
    dome = shapes.ellipsoid(np.array([side * 0.075, 0.305 if left else 0.325, -0.005]), np.array([0.105, 0.100, 0.135]))
    mediastinum = shapes.half_space(np.array([side * 0.018, 0.0, 0.0]), np.array([-side, 0.0, 0.0]))
    spine = shapes.ellipsoid(np.array([0.0, 0.5, -0.085]), np.array([0.042, 0.5, 0.045]))
    return shapes.difference(shapes.intersection(column, mediastinum), dome, spine)


def _left_lung_body() -> Implicit:
    heart, _ = _heart()
    # The cardiac notch: the anterior border of the left lung recedes over the heart's apex.
    notch = shapes.ellipsoid(np.array([0.050, 0.440, 0.095]), np.array([0.055, 0.060, 0.050]))
    return shapes.difference(_lung(+1.0), shapes.grown(heart, _HEART_CLEARANCE), notch)


def _right_lung_body() -> Implicit:
    heart, _ = _heart()
    return shapes.difference(_lung(-1.0), shapes.grown(heart, _HEART_CLEARANCE))


def _torso_body() -> Implicit:
    return shapes.superellipsoid(
        np.array([0.0, 0.505, -0.005]), np.array([0.178, 0.205, 0.135]), np.array([4.0, 6.0, 4.0])
    )


@lru_cache(maxsize=len(BUILTIN_NAMES))
def builtin_mesh(name: str) -> BuiltinMesh:
    """The surface of the built-in model ``name`` (one of :data:`BUILTIN_NAMES`), patient frame.

    Generating a lung takes seconds, so the result is kept on disk (:mod:`cosim_validation.common.disk_cache`),
    keyed by the generator's source code: a changed generator never reads an old mesh.

    Args:
        name: One of :data:`BUILTIN_NAMES`: ``left_lung``, ``right_lung``, ``heart`` or ``torso``.

    Raises:
        KeyError: ``name`` is not a built-in model (callers turn this into a ConfigError).
    """
    if name not in BUILTIN_NAMES:
        raise KeyError(name)
    key = f"anatomy-{name}-{source_digest(_GENERATOR_MODULES)}"
    arrays = load_arrays(key)
    if arrays is not None:
        return _frozen(arrays["vertices_m"], arrays["faces"])
    mesh = _generate(name)
    store_arrays(key, {"vertices_m": mesh.vertices_m, "faces": mesh.faces})
    return mesh


def _frozen(vertices: np.ndarray, faces: np.ndarray) -> BuiltinMesh:
    vertices, faces = np.ascontiguousarray(vertices, np.float64), np.ascontiguousarray(faces, np.int64)
    vertices.setflags(write=False)
    faces.setflags(write=False)
    return BuiltinMesh(vertices, faces)


def _generate(name: str) -> BuiltinMesh:
    if name == "heart":
        return _heart()[1]
    if name == "left_lung":
        vertices, faces = radial_mesh(
            _left_lung_body(), np.array([0.100, 0.470, -0.030]), np.array([0.06, 0.13, 0.10]), 0.22
        )
    elif name == "right_lung":
        vertices, faces = radial_mesh(
            _right_lung_body(), np.array([-0.090, 0.470, -0.020]), np.array([0.06, 0.13, 0.10]), 0.22
        )
    elif name == "torso":
        vertices, faces = radial_mesh(
            _torso_body(), np.array([0.0, 0.505, -0.005]), np.array([0.18, 0.2, 0.14]), 0.4, subdivisions=4
        )
    else:
        raise KeyError(name)
    return _frozen(vertices, faces)
