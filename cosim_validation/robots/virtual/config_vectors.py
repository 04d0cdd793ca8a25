"""Per-joint vectors read from configuration, each element checked against its bounds."""

from __future__ import annotations

import numpy as np

from cosim_validation.common.config import ConfigNode

#: The largest value of a per-joint physical parameter unless its reader says otherwise: gains, dampings, frictions
#: and stiffnesses of the shipped arms are below 1e5 (SI units); 1e300 was taken and ran
MAX_JOINT_PARAMETER = 1e7


def joint_vector(
    node: ConfigNode,
    n_joints: int,
    *,
    minimum: float | None = None,
    exclusive_minimum: float | None = None,
    maximum: float = MAX_JOINT_PARAMETER,
) -> np.ndarray:
    """A list of ``n_joints`` finite numbers within the bounds.

    Args:
        node: The list node (errors name its file and key, e.g. ``backends.servo.kp_nm_per_rad[3]``).
        n_joints: Required length J.
        minimum: Inclusive lower bound of every element.
        exclusive_minimum: Exclusive lower bound of every element.
        maximum: Inclusive upper bound of every element (default :data:`MAX_JOINT_PARAMETER`).

    Returns:
        (J,) float64 array.

    Raises:
        ConfigError: Not a list, wrong length, or an element out of bounds.
    """
    items = node.elements()
    if len(items) != n_joints:
        raise node.error(f"expected a list of {n_joints} numbers (one per joint), got {len(items)}: {node.value!r}")
    values = [item.to_float(minimum=minimum, exclusive_minimum=exclusive_minimum, maximum=maximum) for item in items]
    return np.array(values, dtype=np.float64)
