"""The ``backends.coppeliasim`` section: where CoppeliaSim listens and where the arm sits in its scene.

.. code-block:: yaml

    backends:
      coppeliasim:
        host: localhost            # the machine running CoppeliaSim (or the stand-in)
        port: 23000                # its ZeroMQ remote API port (23000 for the first CoppeliaSim instance)
        connect_timeout_s: 5.0     # first contact: no answer within this -> one clear error, no hang
        call_timeout_s: 30.0       # any later call
        time_step_s: 0.001         # CoppeliaSim's simulation time step; default backends.physics_timestep_s
        base_path: /base_link      # the arm's base object; poses are read relative to it
        joint_path: /{joint}       # each joint's object path, {joint} = the URDF joint name
        tip_path: /needle_tip      # the dummy at the needle tip, its +z along the needle

The whole section, and each key, is optional; the defaults are the values above (the port is CoppeliaSim's
default, 23000 + process id 0; the paths are those ``scripts/coppeliasim_scene.py`` gives the objects).
"""

from __future__ import annotations

from dataclasses import dataclass

from cosim_validation.common.config import ConfigNode

_KEYS = ("host", "port", "connect_timeout_s", "call_timeout_s", "time_step_s", "base_path", "joint_path", "tip_path")


@dataclass(frozen=True)
class CoppeliaSimConfig:
    """How to reach CoppeliaSim and find the arm in its scene.

    Attributes:
        host: Host name or address of the remote API server.
        port: Its TCP port (the remote API's ``zmqRemoteApi.rpcPort``).
        connect_timeout_s: Longest wait for the first answer [s].
        call_timeout_s: Longest wait for any later answer [s] (a step of a heavy scene may take a while).
        time_step_s: The simulation time step the backend sets [s]; None: ``backends.physics_timestep_s``.
            One step costs one remote call plus one per joint whose target moved, so a coarser step is cheaper;
            setpoint ramps stay exact as long as setpoint periods are whole numbers of steps.
        base_path: Object path of the arm's base (CoppeliaSim path syntax, e.g. ``/base_link``).
        joint_path: Object path of a joint with ``{joint}`` standing for its URDF name.
        tip_path: Object path of the needle-tip dummy.
    """

    host: str = "localhost"
    port: int = 23000
    connect_timeout_s: float = 5.0
    call_timeout_s: float = 30.0
    time_step_s: float | None = None
    base_path: str = "/base_link"
    joint_path: str = "/{joint}"
    tip_path: str = "/needle_tip"

    @property
    def endpoint(self) -> str:
        """The server's ZeroMQ endpoint, ``tcp://host:port``."""
        return f"tcp://{self.host}:{self.port}"

    def joint_paths(self, joint_names: tuple[str, ...]) -> tuple[str, ...]:
        """The object path of each joint named in ``joint_names``.

        Args:
            joint_names: URDF names of the joints, each put in place of ``{joint}`` in :attr:`joint_path`.
        """
        return tuple(self.joint_path.replace("{joint}", name) for name in joint_names)

    @classmethod
    def from_config(cls, node: ConfigNode | None) -> CoppeliaSimConfig:
        """Read ``backends.coppeliasim`` (``node`` is that section, None if absent).

        Args:
            node: The ``backends.coppeliasim`` section, or None for the defaults.
        """
        if node is None:
            return cls()
        node.reject_unknown(_KEYS)
        defaults = cls()
        values: dict[str, object] = {}
        if (host := node.get("host")) is not None:
            values["host"] = _non_empty(host)
        if (port := node.get("port")) is not None:
            values["port"] = port.to_int(minimum=1, maximum=65535)
        for key in ("connect_timeout_s", "call_timeout_s"):
            if (timeout := node.get(key)) is not None:
                values[key] = timeout.to_float(exclusive_minimum=0.0, maximum=3600.0)
        if (step := node.get("time_step_s")) is not None:
            values["time_step_s"] = step.to_float(exclusive_minimum=0.0, maximum=0.1)
        for key in ("base_path", "joint_path", "tip_path"):
            if (path := node.get(key)) is not None:
                values[key] = _object_path(path)
        joint_path = str(values.get("joint_path", defaults.joint_path))
        if "{joint}" not in joint_path:
            raise node["joint_path"].error(
                f"expected a path containing {{joint}} (the joint's name), got {joint_path!r}"
            )
        return cls(**values)  # type: ignore[arg-type]


def _non_empty(node: ConfigNode) -> str:
    text = node.to_str()
    if not text.strip():
        raise node.error("expected a host name or address, got an empty string")
    return text


def _object_path(node: ConfigNode) -> str:
    path = node.to_str()
    if not path.startswith("/"):
        raise node.error(f"expected an absolute CoppeliaSim object path starting with '/', got {path!r}")
    return path
