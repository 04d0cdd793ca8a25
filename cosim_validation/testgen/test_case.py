"""One test case, as later stages (campaign, nodes) consume it; mirrors cosim_validation_interfaces/msg/TestCase."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class TestCase:
    """A source point outside every model and a target inside the target model ([Actuators 2025], 4.1).

    Attributes:
        test_id: Unique within its suite, e.g. ``3f9a0c12-0000042``.
        suite_id: Content hash of the suite ("" if none).
        frame_id: Frame of ``source_m`` and ``target_m`` (``base_link``).
        source_m: (3,) float64 where the needle insertion starts [m].
        target_m: (3,) float64 target point [m].
        cube_index: (3,) int64 (i, j, k) of the cube holding the target; -1s if none.
        granularity_m: Cube edge [m]; 0 if not from a discretization.
        generator: ``grid``, ``random``, ``adaptive`` or ``manual``.
        seed: Generator seed of the suite.
        target_depth_m: Distance from the target to the target model's boundary [m].
    """

    __test__ = False  # not a pytest test class

    test_id: str
    suite_id: str
    frame_id: str
    source_m: np.ndarray
    target_m: np.ndarray
    cube_index: np.ndarray
    granularity_m: float
    generator: str
    seed: int
    target_depth_m: float
