"""error_injector: [Barragan et al. 2024]'s injector.

It is the ``robot_proxy`` node with the ``errors`` filter of a model file.

One implementation (:mod:`cosim_validation.live.nodes.robot_proxy`) under the issue's node name: put it in a
graph YAML in front of the simulated robot's driver and the session moves that driver under ``/cosim/<robot>/raw/``::

  - name: virtual_errors
    executable: error_injector
    parameters: {config: config/needle_insertion.yaml, robot: virtual, model: models/er3pro.npz}

Every setpoint of the controller reaches the simulated robot as setpoint + NN1 + NN2, its readings come back
as its encoders would report them
(:mod:`cosim_validation.error_injection.injection`); the same filter wraps the batch robot of
``cosim campaign --filter virtual=errors:model=PATH``.
"""

from __future__ import annotations

from cosim_validation.live.nodes.node_runtime import run_node
from cosim_validation.live.nodes.robot_proxy import RobotProxy


def main(args: list[str] | None = None) -> int:
    """Run the ``error_injector`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation error_injector --ros-args -p robot:=virtual -p model:=models/er3pro.npz

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(lambda: RobotProxy("error_injector"), args, threads=3)


if __name__ == "__main__":
    raise SystemExit(main())
