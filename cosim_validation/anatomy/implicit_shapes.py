"""Implicit solids for the procedural models: negative inside, positive outside.

The values are not distances; only their sign and continuity matter (the models are meshed by
bisection on the zero crossing). Combinations follow the usual min/max rules.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# (N, 3) float64 points [m] -> (N,) float64 values, negative inside.
Implicit = Callable[[np.ndarray], np.ndarray]


def ellipsoid(center_m: np.ndarray, semi_axes_m: np.ndarray, R: np.ndarray | None = None) -> Implicit:
    """An ellipsoid.

    Args:
        center_m: The centre in the model frame, shape (3,), in [m].
        semi_axes_m: The semi-axes along the ellipsoid's own axes, shape (3,), in [m].
        R: Rotation of the ellipsoid's axes into the model frame (columns = axes), shape (3, 3); None: identity.
    """
    center = np.asarray(center_m, dtype=np.float64)
    axes = np.asarray(semi_axes_m, dtype=np.float64)
    rotation = np.eye(3) if R is None else np.asarray(R, dtype=np.float64)

    def value(points: np.ndarray) -> np.ndarray:
        local = (points - center) @ rotation
        return np.asarray(np.sqrt(np.sum((local / axes) ** 2, axis=1)) - 1.0)

    return value


def superellipsoid(center_m: np.ndarray, semi_axes_m: np.ndarray, exponents: np.ndarray) -> Implicit:
    """``sum(|(p - c) / a|^e) < 1``: a rounded box for large exponents.

    Args:
        center_m: The centre ``c`` in the model frame, shape (3,), in [m].
        semi_axes_m: The semi-axes ``a`` along x, y, z of the model frame, shape (3,), in [m].
        exponents: The exponent ``e`` of each axis, shape (3,).
    """
    center = np.asarray(center_m, dtype=np.float64)
    axes = np.asarray(semi_axes_m, dtype=np.float64)
    powers = np.asarray(exponents, dtype=np.float64)

    def value(points: np.ndarray) -> np.ndarray:
        return np.asarray(np.sum(np.abs((points - center) / axes) ** powers, axis=1) - 1.0)

    return value


def half_space(point_m: np.ndarray, outward_normal: np.ndarray) -> Implicit:
    """Points behind the plane through ``point_m`` with ``outward_normal`` (signed distance).

    Args:
        point_m: A point of the plane in the model frame, shape (3,), in [m].
        outward_normal: The plane's normal, pointing outside, shape (3,); normalised here.
    """
    point = np.asarray(point_m, dtype=np.float64)
    normal = np.asarray(outward_normal, dtype=np.float64)
    normal = normal / np.linalg.norm(normal)

    def value(points: np.ndarray) -> np.ndarray:
        return np.asarray((points - point) @ normal)

    return value


def tapered_column(base_center_m: np.ndarray, height_m: float, base_semi_axes_m: np.ndarray, taper: float) -> Implicit:
    """A vertical (+y) dome: elliptic sections (x, z) shrinking from the base to an apex.

    The section at height fraction t in [0, 1] has semi-axes ``base_semi_axes_m * (1 - t**taper)**0.5``;
    ``taper`` > 2 keeps the lower part wide and narrows the top like a lung apex.

    Args:
        base_center_m: The centre of the base section in the model frame, shape (3,), in [m].
        height_m: From the base to the apex, along +y, in [m].
        base_semi_axes_m: The base section's semi-axes along x and z, shape (2,), in [m].
        taper: The exponent of the height fraction in the section's shrinking.
    """
    base = np.asarray(base_center_m, dtype=np.float64)
    semi = np.asarray(base_semi_axes_m, dtype=np.float64)

    def value(points: np.ndarray) -> np.ndarray:
        t = np.clip((points[:, 1] - base[1]) / height_m, 0.0, 1.0)
        scale = np.sqrt(np.maximum(1.0 - t**taper, 1e-12))
        radial = np.sqrt(((points[:, 0] - base[0]) / semi[0]) ** 2 + ((points[:, 2] - base[2]) / semi[1]) ** 2)
        above = points[:, 1] - (base[1] + height_m)
        return np.asarray(np.maximum(radial / scale - 1.0, above))

    return value


def intersection(*bodies: Implicit) -> Implicit:
    """Points inside every body.

    Args:
        *bodies: The bodies to intersect (at least one).
    """

    def value(points: np.ndarray) -> np.ndarray:
        return np.asarray(np.max(np.stack([body(points) for body in bodies]), axis=0))

    return value


def difference(body: Implicit, *cut: Implicit) -> Implicit:
    """Points inside ``body`` and outside every ``cut``.

    Args:
        body: The body to cut from.
        *cut: The bodies removed from ``body`` (none: ``body`` itself).
    """
    return intersection(body, *(negated(c) for c in cut))


def negated(body: Implicit) -> Implicit:
    """The complement of ``body``.

    Args:
        body: The body whose inside and outside are swapped.
    """

    def value(points: np.ndarray) -> np.ndarray:
        return -body(points)

    return value


def grown(body: Implicit, amount: float) -> Implicit:
    """``body`` with its level set moved outward by ``amount`` (in the body's value units).

    Args:
        body: The body to grow.
        amount: How far to move the level set, in the body's value units (in [m] only for a signed distance such as
            :func:`half_space`); negative shrinks the body.
    """

    def value(points: np.ndarray) -> np.ndarray:
        return body(points) - amount

    return value


def affine(body: Implicit, scale: np.ndarray, offset_m: np.ndarray) -> Implicit:
    """``body`` mapped by ``p -> scale * p + offset_m`` (per-axis positive scale).

    Args:
        body: The body to map.
        scale: The positive scale of each axis, shape (3,).
        offset_m: The offset added after scaling, shape (3,), in [m].
    """
    s = np.asarray(scale, dtype=np.float64)
    o = np.asarray(offset_m, dtype=np.float64)

    def value(points: np.ndarray) -> np.ndarray:
        return body((points - o) / s)

    return value
