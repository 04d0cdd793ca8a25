"""The server side of CoppeliaSim's ZeroMQ remote API, protocol version 2, for the stand-in.

Written from the protocol's description (CoppeliaRobotics/zmqRemoteApi, ``PROTOCOL.md``) and what the
official Python client 2.0.4 sends: a REP socket answers one CBOR map per request.

* request: ``{"func": "sim.getObject", "args": [...], "argsL": n, "uuid": ..., "ver": 2, "lang": ...,
  "timeout": ...}``; ``ver``, ``lang`` and ``timeout`` come with a client's first request only;
* answer: ``{"ret": [values...]}`` on success, ``{"err": "text"}`` on failure;
* meta calls: ``zmqRemoteApi.require(name)`` loads a module, ``zmqRemoteApi.info(name)`` describes it as a
  map ``{member: {"func": {}} | {"const": value} | {nested members}}``, from which the client builds its
  ``sim`` object (functions become remote calls, constants plain attributes).

The stand-in never asks the client to run callbacks and never answers ``_*wait*_`` or ``_*repeat*_``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cosim_validation.common.exceptions import CosimError
from cosim_validation.common.optional import require

#: The protocol version spoken (CoppeliaSim >= 4.6.0).
PROTOCOL_VERSION = 2
#: How long one wait for a request lasts before the server looks at its stop flag [ms].
POLL_MS = 200


class RemoteCallError(CosimError):
    """A served function refuses its arguments or the scene's state; the client gets the text as ``err``."""


class RemoteApiServer:
    """Answers remote API requests for one module, ``sim``, with the given functions and constants.

    Args:
        functions: ``sim`` function name (without ``sim.``) -> Python callable taking the request's args.
        constants: ``sim`` constant name -> value (int, float or str).
    """

    def __init__(self, functions: Mapping[str, Callable[..., Any]], constants: Mapping[str, Any]) -> None:
        self._functions = dict(functions)
        self._constants = dict(constants)
        self._cbor = require("cbor2", "cbor2", "the CoppeliaSim stand-in")
        self._zmq = require("zmq", "pyzmq", "the CoppeliaSim stand-in")
        self.requests = 0
        self.stop_requested = False

    def info(self, name: str) -> dict[str, Any]:
        """The ``zmqRemoteApi.info`` description of module ``name``.

        Args:
            name: The module's name; only ``sim`` is served.
        """
        if name != "sim":
            raise RemoteCallError(f"module {name!r} is not served (this stand-in serves 'sim' only)")
        members: dict[str, Any] = {f: {"func": {}} for f in self._functions}
        members.update({c: {"const": v} for c, v in self._constants.items()})
        return members

    def answer(self, request: Any) -> dict[str, Any]:
        """The answer map to one decoded request (never raises for a bad request).

        Args:
            request: The decoded CBOR request, a map with ``func`` and ``args`` (anything else gets an ``err``).
        """
        if not isinstance(request, dict) or not isinstance(request.get("func"), str):
            return {"err": f"expected a map with a string 'func', got {request!r}"}
        version = request.get("ver", PROTOCOL_VERSION)
        if version != PROTOCOL_VERSION:
            return {"err": f"remote API protocol version {version!r} is not supported; this server speaks 2"}
        args = request.get("args", [])
        if not isinstance(args, list):
            return {"err": f"{request['func']}: expected 'args' to be an array, got {args!r}"}
        try:
            return {"ret": self._dispatch(request["func"], args)}
        except RemoteCallError as exc:
            return {"err": str(exc)}
        except TypeError as exc:  # wrong number of arguments for the Python function
            return {"err": f"{request['func']}: bad arguments {args!r}: {exc}"}

    def _dispatch(self, func: str, args: list[Any]) -> list[Any]:
        if func == "zmqRemoteApi.require":
            self.info(*args)
            return []
        if func == "zmqRemoteApi.info":
            return [self.info(*args)]
        module, _, name = func.partition(".")
        if module != "sim" or name not in self._functions:
            raise RemoteCallError(f"function {func!r} is not served by the stand-in")
        result = self._functions[name](*args)
        if result is None:
            return []
        return list(result) if isinstance(result, tuple) else [result]

    def serve(self, socket: Any) -> None:
        """Answer requests on the bound REP ``socket`` until :attr:`stop_requested` is set.

        Args:
            socket: A bound ZeroMQ REP socket (e.g. from
                :func:`~cosim_validation.robots.virtual.coppeliasim_standin.bind`).
        """
        poller = self._zmq.Poller()
        poller.register(socket, self._zmq.POLLIN)
        while not self.stop_requested:
            if not poller.poll(POLL_MS):
                continue
            raw = socket.recv()
            try:
                request = self._cbor.loads(raw)
            except Exception as exc:  # noqa: BLE001 - cbor2 raises several decoder errors
                reply: dict[str, Any] = {"err": f"the request is not CBOR: {exc}"}
            else:
                reply = self.answer(request)
            self.requests += 1
            socket.send(self._cbor.dumps(reply))
