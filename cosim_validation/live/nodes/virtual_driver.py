"""virtual_driver: the simulated robot (MuJoCo by default, or PyBullet) behind the driver topics."""

from __future__ import annotations

from cosim_validation.common.record import RobotRole
from cosim_validation.live.nodes.node_runtime import run_node
from cosim_validation.live.nodes.robot_driver import RobotDriver


def main(args: list[str] | None = None) -> int:
    """Run the ``virtual_driver`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation virtual_driver --ros-args -p backend:=mujoco

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(lambda: RobotDriver("virtual_driver", RobotRole.VIRTUAL), args, threads=1)


if __name__ == "__main__":
    raise SystemExit(main())
