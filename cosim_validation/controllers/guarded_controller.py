"""A controller that keeps the whole needle path a set distance from every forbidden region, or refuses."""

from __future__ import annotations

from collections import Counter

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.controllers.controllers_config import GuardedSettings
from cosim_validation.controllers.planning.case_check import check_case
from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.controllers.planning.five_stage_planner import FiveStagePlanner
from cosim_validation.controllers.planning.plan import InsertionLine, Plan


def fibonacci_directions(n: int) -> np.ndarray:
    """(n, 3) unit vectors spread evenly over the sphere (Fibonacci lattice), deterministic.

    Args:
        n: Number of directions.
    """
    i = np.arange(n) + 0.5
    z = 1.0 - 2.0 * i / n
    r = np.sqrt(1.0 - z * z)
    phi = np.pi * (3.0 - np.sqrt(5.0)) * i
    return np.column_stack((r * np.cos(phi), r * np.sin(phi), z))


_CHUNK = 32  # candidate directions examined per batch


class GuardedController:
    """Chooses the insertion direction closest to the source-to-target line whose needle path is clear.

    Candidates are the source-to-target direction and lattice directions within ``max_deviation_rad`` of it,
    in order of deviation. A candidate needs a skin entry, a depth the needle allows, and clearance: the
    segment swept by the needle during injection (from a needle length before the entry to the target)
    keeps ``clearance_m`` from every forbidden region. The first candidates that pass are planned in full;
    the plan is accepted when every planned needle position keeps the clearance.

    Args:
        planner: The five-stage planner.
        settings: Clearance and search settings.
    """

    name = "guarded"

    def __init__(self, planner: FiveStagePlanner, settings: GuardedSettings) -> None:
        self.planner = planner
        self.settings = settings
        self._lattice = fibonacci_directions(settings.n_directions)

    def candidates(self, source_m: np.ndarray, target_m: np.ndarray) -> np.ndarray:
        """(k, 3) candidate needle axes, the direct one first, then by increasing deviation.

        Args:
            source_m: The case's source point in base_link, shape (3,), in [m].
            target_m: The case's target point in base_link, shape (3,), in [m].

        Returns:
            Unit needle directions (towards the target) in base_link, shape (k, 3): the direction from the source to the
            target first, then the lattice's directions within ``max_deviation_rad`` of it.
        """
        direct = (target_m - source_m) / np.linalg.norm(target_m - source_m)
        deviation = np.arccos(np.clip(self._lattice @ direct, -1.0, 1.0))
        keep = np.flatnonzero(deviation <= self.settings.max_deviation_rad)
        ordered = keep[np.argsort(deviation[keep], kind="stable")]
        return np.concatenate((direct[None, :], self._lattice[ordered]))

    def plan_case(self, source: ArrayLike, target: ArrayLike, seed: int = 0) -> Plan:
        """The plan of one case, or a refusal (``seed`` is not used: the search is deterministic).

        Args:
            source: The case's source point, shape (3,), in base_link, in [m].
            target: The case's target point, shape (3,), in base_link, in [m].
            seed: The case seed (not used).

        Raises:
            PlanningError: Bad input, or ``clearance`` (no direction keeps the clearance and can be planned;
                the message counts why candidates were rejected).
        """
        source_m, target_m = check_case(self.planner.world, source, target)
        axes = self.candidates(source_m, target_m)
        rejected: Counter[str] = Counter()
        attempts = 0
        for start in range(0, len(axes), _CHUNK):
            for line in self._clear_lines(target_m, axes[start : start + _CHUNK], rejected):
                if attempts == self.settings.max_attempts:
                    break
                attempts += 1
                try:
                    plan = self.planner.plan(source_m, line, self.name)
                except PlanningError as exc:
                    rejected[f"planning failed ({exc.reason})"] += 1
                    continue
                if self.planner.needle_clearance(plan.q, self.settings.clearance_m).min() >= self.settings.clearance_m:
                    return plan
                rejected["planned needle motion within the clearance"] += 1
        summary = "; ".join(f"{count} {why}" for why, count in rejected.items() if count)
        raise PlanningError(
            f"refused: no insertion direction within {np.degrees(self.settings.max_deviation_rad):.0f} deg keeps "
            f"{self.settings.clearance_m * 1e3:.1f} mm from the forbidden regions and can be planned "
            f"({len(axes)} candidates, {attempts} planned: {summary})",
            "clearance",
        )

    def _clear_lines(self, target_m: np.ndarray, axes: np.ndarray, rejected: Counter[str]) -> list[InsertionLine]:
        """Insertion lines along ``axes`` (k, 3) with a skin entry, an allowed depth and a clear needle path."""
        world = self.planner.world
        entries = world.entries_along(target_m, axes)
        depth = np.linalg.norm(target_m - entries, axis=1)
        entered = np.isfinite(depth)
        shallow = entered & (depth <= self.planner.max_depth_m)
        rejected["no skin entry"] += int(np.count_nonzero(~entered))
        rejected["too deep for the needle"] += int(np.count_nonzero(entered & ~shallow))
        idx = np.flatnonzero(shallow)
        if idx.size == 0:
            return []
        # the needle during injection sweeps the line from a needle length before the entry to the target
        starts = entries[idx] - self.planner.kinematics.needle_length_m * axes[idx]
        ends = np.ascontiguousarray(np.broadcast_to(target_m, starts.shape))
        distance, _ = world.forbidden_distance(starts, ends, self.settings.clearance_m)
        clear = idx[distance >= self.settings.clearance_m]
        rejected["needle path within the clearance of a forbidden region"] += len(idx) - len(clear)
        return [InsertionLine(target_m, axes[k], entries[k]) for k in clear]
