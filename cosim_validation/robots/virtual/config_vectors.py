"""Per-joint vectors read from configuration, each element checked against its bounds."""

from __future__ import annotations

import numpy as np

from cosim_validation.common.config import ConfigNode


def joint_vector(
    node: ConfigNode,
    n_joints: int,
    *,
    minimum: float | None = None,
    exclusive_minimum: float | None = None,
) -> np.ndarray:
    """A list of ``n_joints`` finite numbers within the bounds.

    Args:
        node: The list node (errors name its file and key, e.g. ``backends.servo.kp_nm_per_rad[3]``).
        n_joints: Required length J.
        minimum: Inclusive lower bound of every element.
        exclusive_minimum: Exclusive lower bound of every element.

    Returns:
        (J,) float64 array.

    Raises:
        ConfigError: Not a list, wrong length, or an element out of bounds.
    """
    items = node.elements()
    if len(items) != n_joints:
        raise node.error(f"expected a list of {n_joints} numbers (one per joint), got {len(items)}: {node.value!r}")
    values = [item.to_float(minimum=minimum, exclusive_minimum=exclusive_minimum) for item in items]
    return np.array(values, dtype=np.float64)
