"""The anatomy as the planner sees it: the skin the arm stays out of, forbidden regions, target models."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.monitor.metrics.mesh_distance import MeshDistance

if TYPE_CHECKING:
    from cosim_validation.anatomy import AnatomyScene

_FAR_M = 2.0  # rays for the skin entry start this far outside the target [m]


def _bounding_sphere(vertices_m: np.ndarray) -> tuple[np.ndarray, float]:
    """A sphere (centre (3,), radius) around the vertices (box centre, farthest vertex)."""
    center = 0.5 * (vertices_m.min(axis=0) + vertices_m.max(axis=0))
    return center, float(np.max(np.linalg.norm(vertices_m - center, axis=1)))


def segment_point_distance(a_m: np.ndarray, b_m: np.ndarray, point_m: np.ndarray) -> np.ndarray:
    """(k,) distance from segments a -> b (k, 3) to one point (3,) [m].

    Args:
        a_m: First ends of the segments, shape (k, 3), in [m].
        b_m: Second ends of the segments, shape (k, 3), in [m].
        point_m: The point, shape (3,), in the segments' frame, in [m].

    Returns:
        The distances, shape (k,), in [m].
    """
    ab = b_m - a_m
    length2 = np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-300)
    t = np.clip(np.einsum("ij,ij->i", point_m - a_m, ab) / length2, 0.0, 1.0)
    return np.asarray(np.linalg.norm(a_m + t[:, None] * ab - point_m, axis=1))


class CollisionWorld:
    """Distance queries against the anatomy of one scene, all in base_link [m].

    Args:
        scene: The placed anatomy: one ``skin`` model (required), ``obstacle`` models (forbidden regions),
            ``target`` models.

    Raises:
        PlanningError: The scene has no skin model (the insertion needs a body surface to enter through).
    """

    def __init__(self, scene: AnatomyScene) -> None:
        skin = scene.skin
        if skin is None:
            raise PlanningError(
                "the anatomy has no model with role 'skin'; planning needs the body surface", "bad_input"
            )
        self.scene = scene
        self.skin_name = skin.name
        self.skin = MeshDistance(skin.vertices_m, skin.faces)
        self.forbidden = {m.name: MeshDistance(m.vertices_m, m.faces) for m in scene.obstacles}
        self.targets = {m.name: MeshDistance(m.vertices_m, m.faces) for m in scene.targets}
        self.skin_bounds_m = skin.bounds_m
        self._spheres = {m.name: _bounding_sphere(m.vertices_m) for m in scene.obstacles}

    # ------------------------------------------------------------------ points
    def containing(self, point_m: np.ndarray, models: dict[str, MeshDistance]) -> list[str]:
        """Names of the models (from ``models``) that contain the point (3,).

        Args:
            point_m: The point in base_link, shape (3,), in [m].
            models: The models to ask, by name (for example :attr:`forbidden` or :attr:`targets`).
        """
        return [name for name, mesh in models.items() if bool(mesh.contains(point_m))]

    def skin_signed_distance(self, points_m: np.ndarray) -> np.ndarray:
        """(m,) signed distance of points (m, 3) to the skin: positive outside the body [m].

        Args:
            points_m: Points in base_link, shape (m, 3) (or anything that reshapes to it), in [m].

        Returns:
            The signed distances, shape (m,), in [m].
        """
        return self.skin.signed(np.ascontiguousarray(points_m, dtype=np.float64).reshape(-1, 3))

    # ------------------------------------------------------------------ needle
    def skin_entries(self, starts_m: np.ndarray, target_m: np.ndarray) -> np.ndarray:
        """Where needles moving from ``starts_m`` (k, 3) straight to ``target_m`` (3,) first meet the skin, (k, 3).

        Rows are NaN where the segment does not meet the skin (e.g. a target outside the body).

        Args:
            starts_m: Needle start points in base_link, shape (k, 3), in [m].
            target_m: The target in base_link, shape (3,), in [m].

        Returns:
            The skin entry points in base_link, shape (k, 3), in [m]; NaN rows where there is none.
        """
        ends = np.ascontiguousarray(np.broadcast_to(target_m, starts_m.shape))
        hit = self.skin.segment_distance(np.ascontiguousarray(starts_m), ends)
        entries: np.ndarray = starts_m + hit.t_closest[:, None] * (ends - starts_m)
        entries[~hit.contact] = np.nan
        return entries

    def entries_along(self, target_m: np.ndarray, axes: np.ndarray) -> np.ndarray:
        """Skin entries (k, 3) of needles reaching ``target_m`` along unit ``axes`` (k, 3) from far outside.

        Args:
            target_m: The target in base_link, shape (3,), in [m].
            axes: Unit needle directions (towards the target) in base_link, shape (k, 3).

        Returns:
            The skin entry points in base_link, shape (k, 3), in [m]; NaN rows where there is none.
        """
        return self.skin_entries(target_m[None, :] - _FAR_M * axes, target_m)

    def forbidden_distance(
        self, a_m: np.ndarray, b_m: np.ndarray, enough_m: float = np.inf
    ) -> tuple[np.ndarray, list[str]]:
        """Distance of needle segments a -> b (k, 3) to the nearest forbidden region, and that region's name.

        Args:
            a_m: (k, 3) first ends of the segments, in base_link [m].
            b_m: (k, 3) second ends of the segments, in base_link [m].
            enough_m: Distances at or above this need not be exact: segments whose distance to a region's
                bounding sphere already reaches it get that lower bound, without a mesh query [m].

        Returns:
            (k,) distances [m] (0 on contact or inside; inf without forbidden regions), and k names ("" if none).
        """
        k = len(a_m)
        best = np.full(k, np.inf)
        names = [""] * k
        for name, mesh in self.forbidden.items():
            center, radius = self._spheres[name]
            bound = segment_point_distance(a_m, b_m, center) - radius
            d = bound.copy()
            exact = bound < enough_m
            if exact.any():
                d[exact] = mesh.segment_distance(a_m[exact], b_m[exact]).distance_m
            closer = d < best
            best[closer] = d[closer]
            for i in np.flatnonzero(closer):
                names[i] = name
        return best, names

    def needle_touches_skin(self, a_m: np.ndarray, b_m: np.ndarray) -> np.ndarray:
        """(k,) whether needle segments a -> b (k, 3) meet or lie inside the skin.

        Args:
            a_m: First ends of the segments in base_link, shape (k, 3), in [m].
            b_m: Second ends of the segments in base_link, shape (k, 3), in [m].
        """
        return np.asarray(self.skin.segment_distance(a_m, b_m).contact)
