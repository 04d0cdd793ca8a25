"""How much of the needle lies in each tissue: exact intervals along needle segments, vectorised over samples.

Each tissue is a closed mesh (an :class:`~cosim_validation.anatomy.AnatomyModel`: the torso for the chest
wall, a lung, the heart). A point inside several meshes belongs to the first in precedence order (the heart
before the lung before the torso), so nested and touching models share no length.

For a batch of needle segments (holder -> tip), open3d lists every crossing of every segment with every
mesh (``RaycastingScene.list_intersections``). The crossings cut each segment into pieces; each piece lies
wholly inside or outside each mesh, which the occupancy of its midpoint tells (counting crossings instead
would be fooled by a segment through a vertex or an edge, which hits several triangles at one point). A
piece's length goes to the first mesh holding it. The tip's tissue is the owner of the last piece, and its
depth the length of the trailing run of pieces with that owner.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.open3d_import import load_open3d

MAX_LAYERS = 16


class NeedleInTissue(NamedTuple):
    """Where n needle segments lie.

    Attributes:
        length_m: (n, L) length of each needle inside each layer (exclusive, by precedence) [m].
        tip_layer: (n,) index of the layer holding the tip, -1 outside every layer.
        tip_depth_m: (n,) length of the needle's last run inside the tip's layer (0 outside) [m].
        needle_length_m: (n,) holder-to-tip length [m].
    """

    length_m: NDArray[np.float64]
    tip_layer: NDArray[np.int64]
    tip_depth_m: NDArray[np.float64]
    needle_length_m: NDArray[np.float64]


class _Mesh:
    """One closed mesh in an open3d raycasting scene, stored relative to its box centre (float32)."""

    def __init__(self, vertices_m: NDArray[np.float64], faces: NDArray[np.int64]) -> None:
        o3d = load_open3d("needle force model (tissue intervals)")
        self.o3c: Any = o3d.core
        self.origin_m = 0.5 * (vertices_m.min(axis=0) + vertices_m.max(axis=0))
        self.scene: Any = o3d.t.geometry.RaycastingScene()
        local = np.ascontiguousarray(vertices_m - self.origin_m, dtype=np.float32)
        self.scene.add_triangles(self.o3c.Tensor(local), self.o3c.Tensor(np.ascontiguousarray(faces, np.uint32)))

    def crossings(
        self, a_m: NDArray[np.float64], b_m: NDArray[np.float64]
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """(segment index, t in (0, 1]) of every crossing of segments a -> b with the surface."""
        rays = np.concatenate([a_m - self.origin_m, b_m - a_m], axis=1).astype(np.float32)
        hits = self.scene.list_intersections(self.o3c.Tensor(rays))
        ray = hits["ray_ids"].numpy().astype(np.int64)
        t = hits["t_hit"].numpy().astype(np.float64)
        keep = (t > 0.0) & (t <= 1.0)
        return ray[keep], t[keep]

    def inside(self, points_m: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Whether each point lies inside the mesh (ray parity)."""
        local = self.o3c.Tensor(np.ascontiguousarray(points_m - self.origin_m, dtype=np.float32))
        occupancy: NDArray[np.bool_] = self.scene.compute_occupancy(local).numpy() > 0.5
        return occupancy


class TissueLayers:
    """Closed tissue meshes in precedence order, and needle segments measured against them.

    Args:
        names: Layer names, highest precedence first.
        meshes: (vertices_m (V, 3), faces (F, 3)) of each layer, in base_link [m].
    """

    def __init__(self, names: Sequence[str], meshes: Sequence[tuple[ArrayLike, ArrayLike]]) -> None:
        if not 1 <= len(names) <= MAX_LAYERS or len(names) != len(meshes):
            raise InputError(
                f"expected 1..{MAX_LAYERS} layers with one mesh each, got {len(names)} names, {len(meshes)} meshes"
            )
        self.names = tuple(names)
        self._meshes = [_Mesh(np.asarray(v, dtype=np.float64), np.asarray(f, dtype=np.int64)) for v, f in meshes]
        masks = np.arange(1 << len(names))
        lowest = (masks & -masks).astype(np.float64)
        self._owner = np.where(masks > 0, np.log2(np.maximum(lowest, 1.0)).astype(np.int64), -1)

    def along_needle(self, holder_m: ArrayLike, tip_m: ArrayLike) -> NeedleInTissue:
        """Lengths inside each layer, the tip's layer and depth, for segments holder -> tip ((n, 3) each).

        Args:
            holder_m: The needle holder (mount) points in base_link, shape (n, 3), in [m].
            tip_m: The needle tip points in base_link, shape (n, 3), in [m].

        Raises:
            InputError: The two are not finite arrays of one shape.
        """
        a = np.ascontiguousarray(np.asarray(holder_m, dtype=np.float64).reshape(-1, 3))
        b = np.ascontiguousarray(np.asarray(tip_m, dtype=np.float64).reshape(-1, 3))
        if a.shape != b.shape or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            raise InputError(f"holder_m and tip_m must be finite (n, 3) arrays of one shape, got {a.shape}, {b.shape}")
        n = a.shape[0]
        crossings = [mesh.crossings(a, b) for mesh in self._meshes]
        ray = np.concatenate([np.arange(n), *(c[0] for c in crossings)])
        t = np.concatenate([np.zeros(n), *(c[1] for c in crossings)])
        seg_ray, t0, t1 = _pieces(ray, t)
        mid = a[seg_ray] + (0.5 * (t0 + t1))[:, None] * (b - a)[seg_ray]
        mask = np.zeros(seg_ray.shape, dtype=np.int64)
        for j, mesh in enumerate(self._meshes):
            mask |= mesh.inside(mid).astype(np.int64) << j
        return self._summarise(n, seg_ray, t0, t1, self._owner[mask], np.linalg.norm(b - a, axis=1))

    def _summarise(
        self,
        n: int,
        seg_ray: NDArray[np.int64],
        t0: NDArray[np.float64],
        t1: NDArray[np.float64],
        owner: NDArray[np.int64],
        needle: NDArray[np.float64],
    ) -> NeedleInTissue:
        length = np.zeros((n, len(self.names)))
        inside = owner >= 0
        np.add.at(length, (seg_ray[inside], owner[inside]), (t1 - t0)[inside] * needle[seg_ray[inside]])
        tip_layer = np.full(n, -1, dtype=np.int64)
        last = np.r_[seg_ray[1:] != seg_ray[:-1], True]  # pieces are sorted by t within each segment
        tip_layer[seg_ray[last]] = owner[last]
        entry = np.zeros(n)
        other = owner != tip_layer[seg_ray]
        np.maximum.at(entry, seg_ray[other], t1[other])
        depth = np.where(tip_layer >= 0, (1.0 - entry) * needle, 0.0)
        return NeedleInTissue(length, tip_layer, depth, needle)


#: Crossings closer than this (in t) are one: a segment through a mesh vertex or edge hits several triangles.
MERGE_T = 1e-9


def _pieces(
    ray: NDArray[np.int64], t: NDArray[np.float64]
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """The pieces between consecutive crossings of every segment: (segment, t0, t1), sorted by segment and t.

    ``ray``/``t`` hold every crossing and one entry at t = 0 per segment (its start).
    """
    order = np.lexsort((t, ray))
    ray, t = ray[order], t[order]
    keep = np.r_[True, (ray[1:] != ray[:-1]) | (np.diff(t) > MERGE_T)]
    ray, t = ray[keep], t[keep]
    last = np.r_[ray[1:] != ray[:-1], True]
    t_next = np.where(last, 1.0, np.r_[t[1:], 1.0])
    nonzero = t_next > t
    return ray[nonzero], t[nonzero], t_next[nonzero]
