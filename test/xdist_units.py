"""How `make test` spreads the suite over its pytest-xdist processes (a pytest plugin, loaded by test/conftest.py).

Each test folder is one unit of work, run whole on one process so its shared fixtures are built once; the units go
out live ROS 2 ones first, each group costliest first. A test that outlives its time limit
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
    """`make test` runs the suite on three processes (``-n 3 --dist loadgroup``): each unit of work (work_unit) runs
    whole on one process, so its session- and module-scoped fixtures (a reference campaign, a built case study)
    are computed once, by the process that runs it. The units go out in the order of the collection, which
    pytest_collection_modifyitems sorts live ones first, each group costliest first, so the short ones fill in at
    the end and the processes finish together.

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
    """On an xdist process, the units with live ROS 2 tests first, then the others; within each, costliest first
    (tests marked slow weigh _SLOW_WEIGHT, others 1). The tests of a unit keep their order. A run in one process
    keeps the collection's order.

    A live test spends much of its time waiting for its node processes and for DDS discovery; at the end of the
    run, with nothing else left, three of them leave the two cores idle (measured: 30-90 % idle over the last two
    of 11.9 minutes, the live units last because they have few tests). Started first, their waits overlap the
    other processes' work, and the short tests that need the CPU throughout fill the end.
    """
    if not hasattr(config, "workerinput"):
        return
    cost: dict[str, int] = {}
    first: dict[str, int] = {}
    live: set[str] = set()
    for index, item in enumerate(items):
        unit = work_unit(item.nodeid)
        cost[unit] = cost.get(unit, 0) + (_SLOW_WEIGHT if item.get_closest_marker("slow") else 1)
        first.setdefault(unit, index)
        if item.get_closest_marker("ros"):
            live.add(unit)
    items.sort(key=lambda item: _order(work_unit(item.nodeid), live, cost, first))


def _order(unit: str, live: set[str], cost: dict[str, int], first: dict[str, int]) -> tuple[bool, int, int]:
    """The sort key of a unit of work: live ones first, then costliest first, then in the collection's order."""
    return unit not in live, -cost[unit], first[unit]
