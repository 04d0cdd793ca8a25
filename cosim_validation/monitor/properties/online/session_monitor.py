"""One monitor per robot of a session, fed from one stream of samples (the live monitor node's core)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cosim_validation.common.record import RobotRole
from cosim_validation.monitor.properties.context import MonitorContext
from cosim_validation.monitor.properties.errors import TraceError
from cosim_validation.monitor.properties.kpis.specs import KpiSpec
from cosim_validation.monitor.properties.online.monitor import OnlineMonitor
from cosim_validation.monitor.properties.property_set import CompiledProperty, PropertySet
from cosim_validation.monitor.properties.sample import Sample
from cosim_validation.monitor.properties.verdict import Kpi, Verdict


class SessionMonitor:
    """Routes every sample to the monitors that need it.

    A robot's samples go to its own monitor, the EXPECTED samples to the plan's monitor and, as the reference, to
    every other robot's monitor.

    Args:
        properties: A property set (compiled once here) or compiled properties.
        context: Joints, needle, obstacles, self-collision model, target, constants of the case.
        robots: The robots checked (default: the plan, the virtual and the physical robot).
        kpis: KPI definitions (default: those of the property set).
        machines: Names of shipped behaviour machines run on every robot (default: those of the property set).
    """

    def __init__(
        self,
        properties: PropertySet | Sequence[CompiledProperty],
        context: MonitorContext,
        robots: Iterable[RobotRole] = tuple(RobotRole),
        kpis: Sequence[KpiSpec] | None = None,
        machines: Sequence[str] | None = None,
    ) -> None:
        if isinstance(properties, PropertySet):
            kpis = properties.kpis if kpis is None else kpis
            machines = properties.machines if machines is None else machines
            compiled: Sequence[CompiledProperty] = properties.compile(context)
            context = properties.with_context(context)
        else:
            compiled = properties
        self.monitors = {RobotRole(r): OnlineMonitor(compiled, context, RobotRole(r), kpis, machines) for r in robots}

    def push(self, sample: Sample) -> list[Verdict]:
        """Take one sample of any robot; return the verdicts that changed (e.g. first violations).

        Args:
            sample: A sample of a robot this session checks, or an EXPECTED sample (it goes to every monitor).

        Raises:
            TraceError: A sample of a robot this session does not check, or any error of :meth:`OnlineMonitor.push`.
        """
        robot = RobotRole(sample.robot)
        if robot is RobotRole.EXPECTED:
            return [v for monitor in self.monitors.values() for v in monitor.push(sample)]
        if robot not in self.monitors:
            checked = ", ".join(r.label for r in self.monitors)
            raise TraceError(f"session monitor got a {robot.label} sample; it checks: {checked}")
        return self.monitors[robot].push(sample)

    def end_expected(self) -> list[Verdict]:
        """The plan is complete (robot samples after its end pair with its last sample)."""
        return [v for monitor in self.monitors.values() for v in monitor.end_expected()]

    def finish(self) -> dict[RobotRole, list[Verdict]]:
        """Final verdicts per robot."""
        return {robot: monitor.finish() for robot, monitor in self.monitors.items()}

    def kpis(self) -> dict[RobotRole, list[Kpi]]:
        """KPIs per robot (after :meth:`finish`)."""
        return {robot: monitor.kpis() for robot, monitor in self.monitors.items()}
