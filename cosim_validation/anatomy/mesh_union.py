"""The union of closed bodies (manifold3d), used by the mesh checks (overlap volume) and the repair."""

from __future__ import annotations

from typing import Any

import numpy as np


def union_manifold(bodies: list[Any]) -> Any:
    """The union of closed ``trimesh.Trimesh`` bodies as a ``manifold3d.Manifold``."""
    import manifold3d

    parts = [
        manifold3d.Manifold(
            manifold3d.Mesh64(
                vert_properties=np.ascontiguousarray(b.vertices, dtype=np.float64),
                tri_verts=np.ascontiguousarray(b.faces, dtype=np.uint64),
            )
        )
        for b in bodies
    ]
    return manifold3d.Manifold.batch_boolean(parts, manifold3d.OpType.Add)
