"""How `make test` spreads the suite over its pytest-xdist processes (a pytest plugin, loaded by test/conftest.py).

Each test folder is one unit of work, run whole on one process so its shared fixtures are built once; the units go
out live ROS 2 ones and others in turn, each kind costliest first. A test that outlives its time limit
(faulthandler_exit_on_timeout, pyproject.toml) ends its process: the test is reported failed with every thread's
stack, and the rest of its unit runs on the process that replaces it, without that test (pytest-xdist would give
it to the new process to hang again, once per process it may restart).
"""

from __future__ import annotations

from typing import Any

import pytest

# directories whose files share no directory-wide fixture: each file is its own unit of work, so their live
# sessions (30-100 s each) are spread over the processes rather than queued on one
_PER_FILE = frozenset({"live/session", "live/ros", "cli"})


def work_unit(nodeid: str) -> str:
    """The xdist unit of work of a test: its folder under test/ (not its sub-folders), or its file in _PER_FILE.

    Args:
        nodeid: The test's node id, relative to the root of the run (``test/dir/test_x.py::test_y[p]``).
    """
    parts = nodeid.split("::", 1)[0].split("/")
    relative = parts[1:] if parts[0] == "test" and len(parts) > 1 else parts
    folder = "/".join(relative[:-1])
    return "/".join(relative) if folder in _PER_FILE else folder or "root"


#: a test marked slow (a live session, a campaign: 10-70 s) counts as this many others (most take well under 1 s)
#: when the units of work are ordered
_SLOW_WEIGHT = 60


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`make test` runs the suite on four processes (``-n 4 --dist loadgroup``): each unit of work (work_unit) runs
    whole on one process, so its session- and module-scoped fixtures (a reference campaign, a built case study)
    are computed once, by the process that runs it. The units go out in the order of the collection, which
    pytest_collection_modifyitems sorts (live ones and others in turn, each costliest first), so the short ones
    fill in at the end and the processes finish together.

    The units are scheduled here, not by ``xdist_group`` marks: pytest-xdist 3.8 writes a mark's group into the
    node id, which pytest 9.2 no longer reads (pytest-xdist issue 1386), so the marks split every folder over
    the processes and each built its shared fixtures twice.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnitScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """pytest-xdist's scheduling by scope, with work_unit as the scope; a test that ended its process is not
        run again."""

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def remove_node(self, node: Any) -> str | None:
            """pytest-xdist's, but the test that was running when the process ended counts as done (it is reported
            failed) before the rest of its unit goes back to the queue."""
            workload = self.assigned_work.pop(node)
            if not self._pending_of(workload):
                return None
            crashed = next(nid for unit in workload.values() for nid, done in unit.items() if not done)
            for unit in workload.values():
                if crashed in unit:
                    unit[crashed] = True
            self.workqueue.update({scope: unit for scope, unit in workload.items() if not all(unit.values())})
            for other in self.assigned_work:
                self._reschedule(other)
            return str(crashed)

    config.option.loadscopereorder = False  # keep the collection's order (xdist would sort by number of tests)
    return WorkUnitScheduling(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist process, the units of work in the order :func:`unit_order` gives (tests marked slow weigh
    _SLOW_WEIGHT, others 1); the tests of a unit keep their order. A run in one process keeps the collection's
    order."""
    if not hasattr(config, "workerinput"):
        return
    cost: dict[str, int] = {}
    live: set[str] = set()
    for item in items:
        unit = work_unit(item.nodeid)
        cost[unit] = cost.get(unit, 0) + (_SLOW_WEIGHT if item.get_closest_marker("slow") else 1)
        if item.get_closest_marker("ros") or unit.startswith("live/"):
            live.add(unit)
    rank = {unit: index for index, unit in enumerate(unit_order(cost, live))}
    items.sort(key=lambda item: rank[work_unit(item.nodeid)])


def unit_order(cost: dict[str, int], live: set[str]) -> list[str]:
    """The units of work, live and others taken in turn, each kind costliest first (ties: the order of ``cost``).

    In turn means in proportion: the kind with more units gives more of them between two of the other, so that
    both kinds run out together.

    A live unit (live ROS 2 tests: marked ros, or under test/live) spends much of its time waiting for its node
    processes and for DDS discovery; three at once leave the two cores idle. Sorted by cost alone the live units,
    with few tests each, came last (30-90 % idle over the last two of 11.9 minutes); all first, they ran three at
    a time in the middle of the run instead (30-80 % idle for five minutes). Taken in turn, a live unit's waits
    overlap another process's computing, and the short units of both kinds fill the end. A live test that takes
    more than a few seconds must be marked slow, or its unit counts as short.

    Args:
        cost: Each unit's cost (tests, slow ones weighed more), in the collection's order.
        live: The live units.
    """
    kinds = [[unit for unit in cost if (unit in live) is wanted] for wanted in (True, False)]
    place: dict[str, tuple[float, int]] = {}
    for rank, kind in enumerate(kinds):
        kind.sort(key=lambda unit: -cost[unit])  # stable: ties keep the collection's order
        place.update({unit: ((index + 1) / len(kind), rank) for index, unit in enumerate(kind)})
    return sorted(cost, key=lambda unit: place[unit])
