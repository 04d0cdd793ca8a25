"""A connection to CoppeliaSim's ZeroMQ remote API through the official client, with timeouts.

The official Python client (``coppeliasim-zmqremoteapi-client`` 2.0.4, protocol version 2) sends each
``sim.*`` call as a CBOR map over a ZeroMQ REQ socket and blocks on the answer. Version 2.0.4 waits for
that answer forever, so a CoppeliaSim that is not running would hang the caller; this module gives its
socket a receive timeout (the first contact gets ``connect_timeout_s``, as the client's later releases
do with 5 s) and turns every failure into one :class:`~cosim_validation.common.exceptions.CosimError`.
"""

from __future__ import annotations

from typing import Any

from cosim_validation.common.optional import require
from cosim_validation.robots.virtual.coppeliasim_config import CoppeliaSimConfig
from cosim_validation.robots.virtual.errors import BackendConnectionError

#: The distribution holding the official client (pinned in requirements/core.txt).
CLIENT_PACKAGE = "coppeliasim-zmqremoteapi-client==2.0.4"
#: How to start the stand-in for CoppeliaSim, for error messages.
STANDIN_COMMAND = "python scripts/coppeliasim_standin.py --config <config.yaml> --port"


class CoppeliaSimLink:
    """The ``sim`` module of one CoppeliaSim, every call bounded in time.

    Args:
        config: Host, port and timeouts.

    Raises:
        MissingDependencyError: The official client (or pyzmq) is not installed.
        BackendConnectionError: Nothing answered within ``config.connect_timeout_s``.
    """

    def __init__(self, config: CoppeliaSimConfig) -> None:
        self._config = config
        client_module = require("coppeliasim_zmqremoteapi_client", CLIENT_PACKAGE, "the CoppeliaSim robot backend")
        self._zmq = require("zmq", "pyzmq", "the CoppeliaSim robot backend")
        self._client: Any = client_module.RemoteAPIClient(host=config.host, port=config.port)
        self._socket: Any = self._client.socket
        self._socket.setsockopt(self._zmq.LINGER, 0)  # closing never waits for a server that is not there
        self._set_timeout(config.connect_timeout_s)
        self._sim: Any = None
        try:
            self._sim = self._client.require("sim")
        except self._zmq.Again:
            self.close()
            raise BackendConnectionError(
                f"no CoppeliaSim answered at {config.endpoint} within {config.connect_timeout_s:g} s; start "
                f"CoppeliaSim 4.6 or later with the arm's scene loaded and its ZeroMQ remote API on port {config.port} "
                f"(23000 by default), or the stand-in: {STANDIN_COMMAND} {config.port}"
            ) from None
        except Exception as exc:  # noqa: BLE001 - the client raises plain Exception with the server's text
            self.close()
            raise BackendConnectionError(f"{config.endpoint}: the remote API refused module 'sim': {exc}") from None
        self._set_timeout(config.call_timeout_s)

    @property
    def endpoint(self) -> str:
        """The server's endpoint, ``tcp://host:port``."""
        return self._config.endpoint

    @property
    def stand_in(self) -> str | None:
        """What the server says it is if it is the project's stand-in (its ``sim`` module's mark), else None."""
        from cosim_validation.robots.virtual.coppeliasim_scene_state import STANDIN_MARK

        mark = getattr(self._sim, STANDIN_MARK, None)
        return mark if isinstance(mark, str) else None

    def _set_timeout(self, seconds: float) -> None:
        self._socket.setsockopt(self._zmq.RCVTIMEO, max(1, round(seconds * 1000.0)))

    def const(self, name: str) -> Any:
        """The ``sim`` constant ``name`` (e.g. ``handle_world``) as the server announced it.

        Args:
            name: Name of the constant, without ``sim.``.

        Raises:
            BackendConnectionError: The server's ``sim`` module has no such constant.
        """
        value = getattr(self._sim, name, None)
        if value is None or callable(value):
            raise BackendConnectionError(f"{self.endpoint}: the server's sim module has no constant {name!r}")
        return value

    def call(self, function: str, *args: Any) -> Any:
        """``sim.<function>(*args)`` on the server; its return value (a tuple if several).

        Args:
            function: Name of the ``sim`` function, without ``sim.`` (e.g. ``getObject``).
            *args: Its arguments, as the remote API takes them.

        Raises:
            BackendConnectionError: Not connected, no answer within ``call_timeout_s``, the function is not
                served, or the server answered with an error (its text is quoted).
        """
        if self._sim is None:
            raise BackendConnectionError(f"{self.endpoint}: sim.{function}: the connection is closed")
        method = getattr(self._sim, function, None)
        if method is None or not callable(method):
            raise BackendConnectionError(f"{self.endpoint}: the server's sim module has no function {function!r}")
        try:
            return method(*args)
        except self._zmq.Again:
            self.close()  # a REQ socket without its answer cannot send again
            raise BackendConnectionError(
                f"{self.endpoint}: sim.{function} got no answer within {self._config.call_timeout_s:g} s "
                "(CoppeliaSim stopped or is blocked); the connection is closed"
            ) from None
        except self._zmq.ZMQError as exc:
            self.close()
            raise BackendConnectionError(f"{self.endpoint}: sim.{function}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - the client raises plain Exception with the server's text
            raise BackendConnectionError(f"{self.endpoint}: sim.{function}{tuple(args)!r} failed: {exc}") from None

    def close(self) -> None:
        """Close the socket and its context (idempotent; never waits)."""
        self._sim = None
        if self._client is not None:
            self._socket.close(linger=0)
            self._client.context.term()
            self._client = None
