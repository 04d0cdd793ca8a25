"""The shipped behaviour tests (issue 6, item 4), written in the machine DSL.

- :func:`stage_order`: the stages occur in the order initialization, approach, injection,
  extraction, reset (none skipped, none repeated, none longer than ``max_stage_s``).
- :func:`no_retraction_during_injection`: during injection the needle never moves back out faster
  than ``speed_tolerance_m_s`` (a nested machine tracks advancing / holding).
- :func:`settles_at_target`: the tip ends the injection inside a ball of ``radius_m`` around the target,
  having entered that ball at most ``max_oscillations + 1`` times (each leaving and re-entering is one
  oscillation around the target).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from cosim_validation.common.record import Stage
from cosim_validation.common.record.stage import CASE_STAGES
from cosim_validation.monitor.properties.errors import PropertyError
from test.monitor.properties.lt4r_reference.fuzzy import fuzzy_scalar
from test.monitor.properties.lt4r_reference.machine import ANY, EOF, GREEN, RED, Machine, Snapshot, Vars


def _set(name: str, value: object) -> Callable[[Snapshot, Vars], None]:
    def action(snap: Snapshot, v: Vars) -> None:
        setattr(v, name, value)

    return action


def _in_stage(stage: Stage) -> Callable[[Snapshot, Vars], bool]:
    def event(snap: Snapshot, v: Vars) -> bool:
        return snap.stage == stage

    return event


def stage_order(max_stage_s: float = 120.0) -> Machine:
    """Stages in the order of a case; every stage at most ``max_stage_s`` [s] (a stuck controller fails)."""
    m = Machine("stage_order", start="waiting", variables={"allowed": (Stage.INITIALIZATION,)}, requires=("stages",))
    m.description = "stages occur in the order initialization, approach, injection, extraction, reset"
    m.state("waiting")
    for i, stage in enumerate(CASE_STAGES):
        following = CASE_STAGES[i + 1 : i + 2]
        m.state(stage.label, on_entry=_set("allowed", (stage, *following)))
    m.state(GREEN).state(RED)
    for stage in CASE_STAGES:
        m.event(f"in_{stage.label}", _in_stage(stage))
    m.event("out_of_order", lambda s, v: s.stage not in v.allowed)
    m.on("in_initialization", "waiting", "initialization")
    for before, after in itertools.pairwise(CASE_STAGES):
        m.on(f"in_{after.label}", before.label, after.label)
    for stage in CASE_STAGES:
        m.after(max_stage_s, stage.label, RED)
    m.on("out_of_order", ANY, RED)  # wildcard: after the in-order transitions above
    m.on(EOF, Stage.RESET.label, GREEN)
    for state in ("waiting", *(s.label for s in CASE_STAGES[:-1])):
        m.on(EOF, state, RED)  # the case ended early
    return m


def no_retraction_during_injection(speed_tolerance_m_s: float = 1e-3) -> Machine:
    """During injection, the tip's speed along the needle never goes below -``speed_tolerance_m_s``."""

    def speed(s: Snapshot) -> object:
        return fuzzy_scalar(s.insertion_speed_m_s, speed_tolerance_m_s)

    advance = Machine("advance", start="advancing")
    advance.state("advancing").state("holding")
    advance.event("stopped", lambda s, v: speed(s) == 0.0)
    advance.event("moving_in", lambda s, v: speed(s) > 0.0)  # type: ignore[operator]
    advance.event("retracting", lambda s, v: speed(s) < 0.0)  # type: ignore[operator]
    advance.on("stopped", "advancing", "holding").on("moving_in", "holding", "advancing")
    advance.exit("retracting", ANY, RED)

    m = Machine("no_retraction_during_injection", start="outside", requires=("stages",))
    m.description = "the needle never moves back out during injection"
    m.state("outside").state("injecting", machine=advance).state("done").state(GREEN).state(RED)
    m.event("injection_starts", lambda s, v: s.stage == Stage.INJECTION)
    m.event("injection_over", lambda s, v: s.stage != Stage.INJECTION)
    m.on("injection_starts", "outside", "injecting").on("injection_over", "injecting", "done")
    m.on(EOF, "done", GREEN).on(EOF, "injecting", GREEN)
    return m


def settles_at_target(radius_m: float = 0.003, max_oscillations: int = 2, tolerance_m: float = 2e-4) -> Machine:
    """The tip ends injection within ``radius_m`` of the target after at most ``max_oscillations`` re-entries.

    Distances are compared fuzzily (``distance ~ tolerance_m``) so that noise at the ball's surface
    is not counted as oscillation.
    """

    def dist(s: Snapshot) -> object:
        return fuzzy_scalar(s.distance_to_target_m, tolerance_m)

    def count_entry(s: Snapshot, v: Vars) -> None:
        v.entries += 1
        v.inside = True

    ball = Machine("target_ball", start="outside_ball")
    ball.state("outside_ball", on_entry=_set("inside", False)).state("inside_ball", on_entry=count_entry)
    ball.event("enters", lambda s, v: dist(s) < radius_m)  # type: ignore[operator]
    ball.event("leaves", lambda s, v: dist(s) > radius_m)  # type: ignore[operator]
    # entering once more than allowed exits to red in the parent (checked before the nested transitions)
    ball.event("enters_too_often", lambda s, v: dist(s) < radius_m and v.entries > max_oscillations)  # type: ignore[operator]
    ball.exit("enters_too_often", "outside_ball", RED)
    ball.on("enters", "outside_ball", "inside_ball").on("leaves", "inside_ball", "outside_ball")

    m = Machine(
        "settles_at_target",
        start="approaching",
        variables={"entries": 0, "inside": False},
        requires=("stages", "target"),
    )
    m.description = f"the tip settles within {radius_m} m of the target, oscillating at most {max_oscillations} times"
    m.state("approaching").state("injecting", machine=ball).state("settled")
    m.state(GREEN).state(RED)
    m.event("injection_starts", lambda s, v: s.stage == Stage.INJECTION)
    m.event("ended_inside", lambda s, v: s.stage != Stage.INJECTION and v.inside)
    m.event("ended_outside", lambda s, v: s.stage != Stage.INJECTION and not v.inside)
    m.on("injection_starts", "approaching", "injecting")
    m.on("ended_inside", "injecting", "settled").on("ended_outside", "injecting", RED)
    m.on(EOF, "settled", GREEN)
    return m


#: Shipped machines by name (factories with the default parameters).
SHIPPED: dict[str, Callable[[], Machine]] = {
    "stage_order": stage_order,
    "no_retraction_during_injection": no_retraction_during_injection,
    "settles_at_target": settles_at_target,
}


def shipped(name: str) -> Machine:
    """A shipped machine by name."""
    if name not in SHIPPED:
        raise PropertyError(name, f"unknown machine; shipped machines: {', '.join(SHIPPED)}")
    return SHIPPED[name]()
