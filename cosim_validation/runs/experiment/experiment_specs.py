"""Seed 000's research questions as experiment definitions (full and ``--quick``) on the embedded models.

* RQ1 (5.2.2): grid vs random on the whole left lung at three coarse granularities, k = 3 targets per
  cube for the grid, as many random targets as grid targets; the safety property is the needle
  avoiding the heart. Tables 2, Figures 6-9.
* RQ2 (5.2.3): the same comparison on the 7 % of the left lung next to the heart at 20, 10, 5 and 2 mm.
  Table 3, Figures 8-10.
* RQ3 (5.2.4): virtual vs physical (emulated ER3 Pro) deviations from the expected trajectory on at least
  50 collision-free cases (random targets over the left lung; cases violating a property are left out).
  Table 4, Figure 11.
"""

from __future__ import annotations

from dataclasses import dataclass

from cosim_validation.common.exceptions import InputError


@dataclass(frozen=True)
class ExperimentSpec:
    """One experiment.

    Attributes:
        name: ``rq1``, ``rq2``, ``rq3``.
        question: The research question, in words.
        region: Target model or configured sub-region the targets are drawn in (None: ``testgen.target``).
        granularities_m: Cube edges of the grid/random pairs (coarse to fine); empty for RQ3.
        per_cube: k, grid targets per non-empty cube.
        random_cases: RQ3: random targets drawn (enough to keep >= ``min_clean`` after filtering).
        min_clean: RQ3: collision-free completed cases required.
        backends: Robots the cases run on.
        seed: Generator seed of every suite.
    """

    name: str
    question: str
    region: str | None
    granularities_m: tuple[float, ...]
    per_cube: int
    random_cases: int = 0
    min_clean: int = 0
    backends: tuple[str, ...] = ("virtual",)
    seed: int = 0


_RQ1 = "RQ1: is the discretization effective in ensuring coverage (grid vs random, whole left lung)?"
_RQ2 = "RQ2: does simulation-based validation reveal deficiencies (sub-model near the heart, grid vs random)?"
_RQ3 = "RQ3: does the virtual robot predict the physical one (deviations from the expected trajectory)?"

EXPERIMENTS: dict[tuple[str, bool], ExperimentSpec] = {
    ("rq1", False): ExperimentSpec("rq1", _RQ1, None, (0.04, 0.03, 0.02), 3),
    ("rq1", True): ExperimentSpec("rq1", _RQ1, None, (0.08, 0.07, 0.06), 2),
    ("rq2", False): ExperimentSpec("rq2", _RQ2, "heart_side_7pct", (0.02, 0.01, 0.005, 0.002), 3),
    ("rq2", True): ExperimentSpec("rq2", _RQ2, "heart_side_7pct", (0.03, 0.02), 2),
    ("rq3", False): ExperimentSpec("rq3", _RQ3, None, (), 1, 120, 50, ("virtual", "physical")),
    ("rq3", True): ExperimentSpec("rq3", _RQ3, None, (), 1, 16, 5, ("virtual", "physical")),
}


def experiment_spec(name: str, quick: bool, granularities_mm: tuple[float, ...] | None = None) -> ExperimentSpec:
    """The definition of experiment ``name`` (``--quick`` or full), optionally at other granularities [mm].

    Args:
        name: ``rq1``, ``rq2`` or ``rq3``.
        quick: The ``--quick`` version (minutes on 2 cores) instead of the full one.
        granularities_mm: Cube edges [mm] in place of the definition's, in any order (they are sorted coarse
            to fine); None: the definition's.

    Raises:
        InputError: Unknown experiment, or granularities for RQ3 or not > 0.
    """
    key = (name, quick)
    if key not in EXPERIMENTS:
        names = sorted({n for n, _ in EXPERIMENTS})
        raise InputError(f"unknown experiment {name!r}; expected one of: {', '.join(names)}, adaptive")
    spec = EXPERIMENTS[key]
    if granularities_mm is None:
        return spec
    if not spec.granularities_m:
        raise InputError(f"--granularities-mm: {name} has no granularities (it draws random targets)")
    if not granularities_mm or any(not g > 0 for g in granularities_mm):
        raise InputError(f"--granularities-mm: expected numbers > 0, got {list(granularities_mm)!r}")
    return ExperimentSpec(
        **{**vars(spec), "granularities_m": tuple(sorted((g * 1e-3 for g in granularities_mm), reverse=True))}
    )
