"""What every controller under test offers: a plan for a case, or a refusal with a reason."""

from __future__ import annotations

from typing import Protocol

from numpy.typing import ArrayLike

from cosim_validation.controllers.planning.plan import Plan


class Controller(Protocol):
    """A controller under test: a needle insertion (``straight``, ``guarded``) or a joint-space case.

    ``plan_case`` raises :class:`~cosim_validation.controllers.planning.errors.PlanningError` (with ``reason``) for bad
    input or a target it refuses or cannot reach.
    """

    name: str

    def plan_case(self, source: ArrayLike, target: ArrayLike, seed: int = 0) -> Plan:
        """The expected trajectory from the home pose for one case.

        Args:
            source: The case's source point, shape (3,), in base_link, in [m].
            target: The case's target point, shape (3,), in base_link, in [m].
            seed: The case seed: the random stream of a joint-space case; an insertion does not use it.
        """
        ...
