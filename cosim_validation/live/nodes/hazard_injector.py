"""hazard_injector: the robot_proxy node under its issue-19 name, injecting hazard scenarios ([Li et al. 2016]).

One implementation: :class:`~cosim_validation.live.nodes.robot_proxy.RobotProxy` with ``hazards:SCENARIO`` filters
(:class:`~cosim_validation.hazards.hazard_filter.HazardFilter`), between the controller and a robot's driver; the
start and end of every injection window go to ``/cosim/hazards/events`` (``cosim_validation_interfaces/Alert``,
code ``fault_start`` / ``fault_end``, message ``SCENARIO: window N: ...``), which the recorder puts in the bag.
"""

from __future__ import annotations

from cosim_validation.live.nodes.node_runtime import run_node
from cosim_validation.live.nodes.robot_proxy import RobotProxy


class HazardInjector(RobotProxy):
    """The proxy node named ``hazard_injector`` (its parameters: ``node_parameters.py``)."""

    def __init__(self) -> None:
        super().__init__("hazard_injector")


def main(args: list[str] | None = None) -> int:
    """Run the ``hazard_injector`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation hazard_injector --ros-args -p robot:=physical -p filters:=['hazards:sudden_jump']

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(HazardInjector, args, threads=3)


if __name__ == "__main__":
    raise SystemExit(main())
