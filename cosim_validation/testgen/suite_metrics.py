"""Coverage metrics of a suite: the columns of [Actuators 2025]'s Tables 2 and 3."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from cosim_validation.testgen.cube_grid import CubeClass, CubeGrid


@dataclass(frozen=True)
class SuiteMetrics:
    """What a suite covers and what it cost.

    Attributes:
        generator: ``grid`` or ``random``.
        granularity_m: Cube edge [m].
        nonempty_cubes: Cubes holding valid targets (full + partial): [Actuators 2025]'s "discretized areas".
        full_cubes: Cubes entirely inside the region (no check needed).
        partial_cubes: Cubes cut by the region's boundary.
        full_share: full_cubes / nonempty_cubes.
        valid_cases: Test cases in the suite.
        points_generated: Candidate targets drawn, valid or not (checked or, in full cubes and leaves, not).
        covered_cubes: Non-empty cubes holding at least one case.
        coverage: covered_cubes / nonempty_cubes.
        max_cases_per_cube: The largest number of cases in one cube.
        gave_up_cubes: Partial cubes that yielded fewer than k (but some) targets (grid), or 1 if the
            random generator stopped before its count.
        lattice_empty_cubes: Cubes the classification could not prove empty that hold no valid target:
            their refinement proved it, or no candidate and no point of a 16^3 lattice was valid;
            counted as empty (not in nonempty_cubes).
        generation_s: Wall time of classification and generation [s] (not of depths and sources).
    """

    generator: str
    granularity_m: float
    nonempty_cubes: int
    full_cubes: int
    partial_cubes: int
    full_share: float
    valid_cases: int
    points_generated: int
    covered_cubes: int
    coverage: float
    max_cases_per_cube: int
    gave_up_cubes: int
    lattice_empty_cubes: int
    generation_s: float

    def as_dict(self) -> dict[str, object]:
        """Plain values for JSON."""
        return asdict(self)


def suite_metrics(
    generator: str,
    grid: CubeGrid,
    classes: np.ndarray,
    cube_index: np.ndarray,
    points_generated: int,
    gave_up_cubes: int,
    lattice_empty_cubes: int,
    generation_s: float,
) -> SuiteMetrics:
    """Metrics of cases whose targets lie in cubes ``cube_index`` (N, 3) of a classified grid.

    Args:
        generator: The generator's name.
        grid: The classified grid.
        classes: Every cube's :class:`CubeClass`, shape (nx, ny, nz).
        cube_index: The cube of each case's target, shape (N, 3), int64, -1s if none.
        points_generated: Candidate targets drawn, valid or not.
        gave_up_cubes: Partial cubes that yielded fewer than k (but some) targets (see :class:`SuiteMetrics`).
        lattice_empty_cubes: Cubes the classification could not prove empty that hold no valid target.
        generation_s: Wall time of classification and generation, in [s].
    """
    full = int(np.sum(classes == CubeClass.FULL))
    partial = int(np.sum(classes == CubeClass.PARTIAL))
    nonempty = full + partial
    inside = cube_index[(cube_index >= 0).all(axis=1)]
    counts = np.bincount(grid.flat(inside), minlength=grid.n_cubes) if len(inside) else np.zeros(grid.n_cubes)
    counted = counts * (classes.ravel() != CubeClass.EMPTY)
    covered = int(np.count_nonzero(counted))
    return SuiteMetrics(
        generator=generator,
        granularity_m=grid.granularity_m,
        nonempty_cubes=nonempty,
        full_cubes=full,
        partial_cubes=partial,
        full_share=full / nonempty if nonempty else 0.0,
        valid_cases=len(cube_index),
        points_generated=int(points_generated),
        covered_cubes=covered,
        coverage=covered / nonempty if nonempty else 0.0,
        max_cases_per_cube=int(counts.max()) if len(inside) else 0,
        gave_up_cubes=int(gave_up_cubes),
        lattice_empty_cubes=int(lattice_empty_cubes),
        generation_s=float(generation_s),
    )
