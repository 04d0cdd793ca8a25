"""Checking and normalising the arrays handed to the metric kernels.

Every public function of :mod:`cosim_validation.monitor.metrics` passes its array arguments through here, so the
rules are the same everywhere:

- integer and float arrays (any byte order, any strides) are accepted and converted to C-contiguous
  float64; a C-contiguous float64 array is used as is, without a copy;
- bool, complex, object and string arrays are rejected;
- NaN or infinite coordinates are rejected (the kernels work on squared distances with min/max, where a
  NaN would silently compare false and produce a wrong distance instead of an error);
- a trajectory or a point set must have at least ``min_points`` rows; shapes and dimensions must match.

Every rejection raises :class:`MetricInputError` naming the argument and quoting the offending value.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosim_validation.monitor.metrics.errors import MetricInputError

Float64Array = NDArray[np.float64]


def _describe(value: object) -> str:
    """Short description of a rejected value for an error message."""
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape!r} and dtype {value.dtype.name!r}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def as_float_array(name: str, value: ArrayLike) -> Float64Array:
    """``value`` as a C-contiguous float64 array of any shape, finite.

    Args:
        name: Argument name for the error message.
        value: Anything numpy can turn into a real (integer or floating) array.

    Raises:
        MetricInputError: If it is not numeric-real or holds NaN or an infinity.
    """
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise MetricInputError(f"{name}: expected a numeric array, got {_describe(value)} ({exc})") from None
    if array.dtype.kind not in "iuf":
        raise MetricInputError(
            f"{name}: expected an integer or floating array, got dtype {array.dtype.name!r} ({_describe(value)})"
        )
    array = np.ascontiguousarray(array, dtype=np.float64)
    if not np.isfinite(array).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
        raise MetricInputError(f"{name}: coordinates must be finite, got {float(array[bad])!r} at index {bad!r}")
    return array


def as_points(name: str, value: ArrayLike, *, dim: int | None = None, min_points: int = 1) -> Float64Array:
    """``value`` as an (n, d) C-contiguous float64 array of finite points.

    Args:
        name: Argument name for the error message.
        value: (n, d) points; a single point (d,) is NOT accepted here (use :func:`as_point_or_points`).
        dim: Required d, or None for any d >= 1.
        min_points: Smallest accepted n.

    Raises:
        MetricInputError: Wrong number of axes, wrong d, fewer than ``min_points`` rows, bad dtype, NaN/inf.
    """
    array = as_float_array(name, value)
    if array.ndim != 2:
        expected = f"(n, {dim})" if dim is not None else "(n, d)"
        raise MetricInputError(f"{name}: expected shape {expected}, got {_describe(array)}")
    if dim is not None and array.shape[1] != dim:
        raise MetricInputError(f"{name}: expected points of dimension {dim}, got shape {array.shape!r}")
    if array.shape[1] < 1:
        raise MetricInputError(f"{name}: points need at least one coordinate, got shape {array.shape!r}")
    if array.shape[0] < min_points:
        raise MetricInputError(f"{name}: expected at least {min_points} point(s), got shape {array.shape!r}")
    return array


def as_point_or_points(name: str, value: ArrayLike, *, dim: int | None = None) -> tuple[Float64Array, bool]:
    """``value`` as (n, d) points, also accepting one point (d,).

    Args:
        name: Argument name for the error message.
        value: (n, d) points (n = 0 accepted) or one point (d,).
        dim: Required d, or None for any d >= 1.

    Returns:
        The (n, d) array (n = 1 for a single point) and whether a single point was given.
    """
    array = as_float_array(name, value)
    if array.ndim == 1:
        return as_points(name, array[None, :], dim=dim), True
    return as_points(name, array, dim=dim, min_points=0), False


def same_dimension(name_a: str, a: Float64Array, name_b: str, b: Float64Array) -> None:
    """Raise :class:`MetricInputError` unless the (n, d) arrays ``a`` and ``b`` share d.

    Args:
        name_a: Argument name of ``a`` for the error message.
        a: Checked points, shape (n, d).
        name_b: Argument name of ``b`` for the error message.
        b: Checked points, shape (m, d).
    """
    if a.shape[1] != b.shape[1]:
        raise MetricInputError(
            f"{name_a} and {name_b} must have the same dimension, got shapes {a.shape!r} and {b.shape!r}"
        )


def as_distance(name: str, value: object, *, allow_zero: bool = True) -> float:
    """``value`` as a finite float distance, >= 0 (or > 0 when ``allow_zero`` is False).

    Args:
        name: Argument name for the error message.
        value: The distance, a Python or numpy int or float (bool is rejected), in the unit of the
            coordinates it is compared with, usually [m].
        allow_zero: Whether 0.0 is accepted.

    Raises:
        MetricInputError: Not a real number, NaN, infinite, negative (or zero when not allowed).
    """
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise MetricInputError(f"{name}: expected a number [m], got {_describe(value)}")
    number = float(value)
    if not np.isfinite(number) or number < 0.0 or (number == 0.0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise MetricInputError(f"{name}: expected a finite distance {bound} [m], got {value!r}")
    return number
