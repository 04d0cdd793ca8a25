"""A stand-in for CoppeliaSim: the remote API (protocol version 2) served with the project's MuJoCo arm behind it.

For tests and machines without CoppeliaSim. It serves exactly the ``sim`` functions the CoppeliaSim backend
calls (:class:`~cosim_validation.robots.virtual.coppeliasim_scene_state.StandinScene`), so the official
client, unmodified, drives it as it drives CoppeliaSim. Start it with ``scripts/coppeliasim_standin.py``.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cosim_validation.common.config import load_config
from cosim_validation.common.exceptions import CosimError
from cosim_validation.common.optional import require
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.model.mujoco_compile import compile_spec
from cosim_validation.robots.virtual.backends_config import BackendsConfig
from cosim_validation.robots.virtual.coppeliasim_config import CoppeliaSimConfig
from cosim_validation.robots.virtual.coppeliasim_protocol import RemoteApiServer
from cosim_validation.robots.virtual.coppeliasim_scene_state import CONSTANTS, StandinScene
from cosim_validation.robots.virtual.mujoco_arm import MujocoArm
from cosim_validation.robots.virtual.mujoco_model import add_servo, load_arm_spec


class StandinBindError(CosimError):
    """The stand-in cannot listen on the requested address."""


def build_scene(config_path: str | Path) -> StandinScene:
    """The stand-in's scene for the robot of the configuration at ``config_path``.

    The objects get the aliases the backend looks for with the configuration's ``backends.coppeliasim``
    paths: the last segment of ``base_path`` and ``tip_path``, the URDF joint names.

    Args:
        config_path: The case-study configuration (robot, servo, ``backends.coppeliasim`` paths).

    Raises:
        ConfigError: A bad value in the configuration.
        RobotModelError: MuJoCo cannot build the arm.
    """
    config = load_config(config_path)
    robot = RobotConfig.from_config(config["robot"])
    kinematics = robot.kinematics
    backends = config["backends"]
    shared = BackendsConfig.from_config(backends, kinematics.n_joints)
    scene = CoppeliaSimConfig.from_config(backends.get("coppeliasim"))
    spec = load_arm_spec(kinematics)
    add_servo(spec, shared.servo, shared.physics_timestep_s)
    arm = MujocoArm(compile_spec(spec, str(kinematics.chain.urdf_path)))
    arm.reset(robot.home_q)
    base_alias = scene.base_path.rstrip("/").rsplit("/", 1)[-1]
    tip_alias = scene.tip_path.rstrip("/").rsplit("/", 1)[-1]
    return StandinScene(arm, kinematics.joint_names, base_alias, tip_alias)


def bind(host: str, port: int) -> tuple[Any, int]:
    """A REP socket bound on ``host``:``port`` (0: a free port) and the port it got.

    Args:
        host: Address to listen on (``127.0.0.1`` for this machine only).
        port: TCP port; 0 picks a free one.

    Raises:
        StandinBindError: The address is taken or not local.
    """
    zmq = require("zmq", "pyzmq", "the CoppeliaSim stand-in")
    socket = zmq.Context.instance().socket(zmq.REP)
    socket.setsockopt(zmq.LINGER, 0)
    try:
        if port == 0:
            return socket, int(socket.bind_to_random_port(f"tcp://{host}"))
        socket.bind(f"tcp://{host}:{port}")
    except zmq.ZMQError as exc:
        socket.close()
        raise StandinBindError(f"cannot listen on tcp://{host}:{port}: {exc}") from None
    return socket, port


def serve(config_path: str | Path, host: str, port: int, ready: Callable[[str], None]) -> int:
    """Serve the stand-in until SIGTERM or SIGINT; returns the number of requests answered.

    Args:
        config_path: The case-study configuration (robot, servo, ``backends.coppeliasim`` paths).
        host: Address to listen on (``127.0.0.1`` for this machine only).
        port: TCP port; 0 picks a free one.
        ready: Called once with the endpoint ``tcp://host:port`` when requests are accepted.
    """
    scene = build_scene(config_path)
    server = RemoteApiServer(scene.functions(), CONSTANTS)
    socket, bound = bind(host, port)

    def stop(signum: int, frame: Any) -> None:
        server.stop_requested = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        ready(f"tcp://{host}:{bound}")
        server.serve(socket)
    finally:
        socket.close(linger=0)
    return server.requests
