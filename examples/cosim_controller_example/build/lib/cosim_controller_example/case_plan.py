"""Which way the arm can do a case: resolved rate from where it rests, else a source posture found from the target.

The resolved-rate initialization keeps the arm's posture family (elbow and wrist flips cannot be crossed by a
continuous Cartesian motion). A deep target may need another family: then the needle pose at the target is
solved by resolved rate from deterministic seeds, the line is followed back from there to the source on the
nominal model, and the initialization moves there in joint space first. Each candidate is checked by running
the whole case on the nominal model (:func:`~cosim_controller_example.insertion_case.dry_run`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from cosim_controller_example.insertion_case import InsertionCase, ServoSettings, dry_run
from cosim_controller_example.resolved_rate import RateLimits, pose_error, resolved_rate_step
from cosim_controller_example.urdf_chain import UrdfChain

N_SEEDS = 24  # joint vectors tried for the target pose, after the rest pose (deterministic)


class UnreachableError(Exception):
    """No way found to follow the line from the source to the target with the needle along it."""


def plan_case(
    chain: UrdfChain,
    limits: RateLimits,
    settings: ServoSettings,
    source_m: np.ndarray,
    target_m: np.ndarray,
    q_rest: np.ndarray,
) -> tuple[InsertionCase, int]:
    """A fresh :class:`InsertionCase` the nominal arm can do, and its number of control periods.

    Raises:
        UnreachableError: With the reason of the resolved-rate attempt, when no seed gave a posture either.
    """
    reach = sum(float(np.linalg.norm(j.T_origin[:3, 3])) for j in chain.joints) + chain.needle_length_m
    for name, point in (("source", source_m), ("target", target_m)):
        if np.linalg.norm(point) > reach:
            raise UnreachableError(
                f"{name} {np.linalg.norm(point):.3f} m from the base, beyond the arm's reach ({reach:.3f} m)"
            )
    first = InsertionCase(chain, limits, settings, source_m, target_m, q_rest)
    why, ticks = dry_run(first)
    if not why:
        return InsertionCase(chain, limits, settings, source_m, target_m, q_rest), ticks
    for posture in _source_postures(chain, limits, source_m, target_m, q_rest):
        trial = InsertionCase(chain, limits, settings, source_m, target_m, q_rest, posture)
        again, ticks = dry_run(trial)
        if not again:
            return InsertionCase(chain, limits, settings, source_m, target_m, q_rest, posture), ticks
    raise UnreachableError(f"target unreachable along the line from the source: {why}; no other posture found")


def _source_postures(
    chain: UrdfChain, limits: RateLimits, source_m: np.ndarray, target_m: np.ndarray, q_rest: np.ndarray
) -> Iterator[np.ndarray]:
    """Source postures reached by following the line back from target solutions (the rest pose's seed first)."""
    axis = (target_m - source_m) / np.linalg.norm(target_m - source_m)
    rng = np.random.default_rng(0)
    lower, upper = chain.lower + limits.margin, chain.upper - limits.margin
    seeds = [q_rest] + [rng.uniform(np.maximum(lower, -np.pi), np.minimum(upper, np.pi)) for _ in range(N_SEEDS)]
    for seed in seeds:
        q = _converge(chain, limits, seed, target_m, axis, seed)
        if q is None:
            continue
        back = _follow_line(chain, limits, q, target_m, source_m, axis)
        if back is not None:
            yield back


def _converge(
    chain: UrdfChain, limits: RateLimits, q: np.ndarray, goal_m: np.ndarray, axis: np.ndarray, rest: np.ndarray
) -> np.ndarray | None:
    """Resolved rate to a pose with a posture pull to ``rest``: the joint vector, or None if it stalls."""
    for _ in range(200):
        q = resolved_rate_step(chain, q, goal_m, axis, limits, rest)
        if pose_error(chain, q, goal_m, axis).within(1e-5, 1e-4):
            return q
    return None


def _follow_line(
    chain: UrdfChain, limits: RateLimits, q: np.ndarray, start_m: np.ndarray, end_m: np.ndarray, axis: np.ndarray
) -> np.ndarray | None:
    """Follow the line from ``start_m`` to ``end_m`` in 5 mm steps: the joint vector at the end, or None."""
    n = max(1, int(np.ceil(np.linalg.norm(end_m - start_m) / 0.005)))
    for point in np.linspace(start_m, end_m, n + 1)[1:]:
        for _ in range(5):
            q = resolved_rate_step(chain, q, point, axis, limits, q)
        if not pose_error(chain, q, point, axis).within(1e-4, 1e-3):
            return None
    return _converge(chain, limits, q, end_m, axis, q)
