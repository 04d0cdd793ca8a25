"""The stand-in speaks the remote API's protocol version 2 on the wire: CBOR maps over REQ/REP, ``ret`` or ``err``
answers, the ``sim`` module described by ``zmqRemoteApi.info``; bad requests get an ``err`` and it keeps serving."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import cbor2
import pytest
import zmq

from cosim_validation.robots.virtual.coppeliasim_scene_state import CONSTANTS, SERVED


@pytest.fixture
def request_socket(coppeliasim_port: int) -> Iterator[Any]:
    context = zmq.Context()
    socket = context.socket(zmq.REQ)
    socket.setsockopt(zmq.RCVTIMEO, 10_000)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(f"tcp://127.0.0.1:{coppeliasim_port}")
    yield socket
    socket.close()
    context.term()


def _ask(socket: Any, request: Any, raw: bytes | None = None) -> dict[str, Any]:
    socket.send(raw if raw is not None else cbor2.dumps(request))
    answer = cbor2.loads(socket.recv())
    assert isinstance(answer, dict)
    return answer


def test_info_describes_exactly_the_served_functions_and_constants(request_socket: Any) -> None:
    first = {"func": "zmqRemoteApi.require", "args": ["sim"], "argsL": 1, "uuid": "t", "ver": 2, "lang": "python"}
    assert _ask(request_socket, first) == {"ret": []}
    info = _ask(request_socket, {"func": "zmqRemoteApi.info", "args": ["sim"], "uuid": "t"})["ret"][0]
    assert {k for k, v in info.items() if v == {"func": {}}} == set(SERVED)
    assert {k: v["const"] for k, v in info.items() if "const" in v} == CONSTANTS


@pytest.mark.parametrize(
    ("request_map", "raw", "error"),
    [
        ({"func": "sim.getSimulationTime", "args": [], "ver": 1}, None, "protocol version 1 is not supported"),
        (None, b"\xff\x00 not cbor", "the request is not CBOR"),
        ([1, 2], None, "expected a map with a string 'func'"),
        ({"func": "sim.getSimulationTime", "args": 5}, None, "expected 'args' to be an array"),
        ({"func": "sim.loadScene", "args": ["x.ttt"]}, None, "function 'sim.loadScene' is not served"),
        ({"func": "zmqRemoteApi.require", "args": ["simIK"]}, None, "module 'simIK' is not served"),
        ({"func": "sim.getJointPosition", "args": [1]}, None, "expected a joint handle, got 1"),
        ({"func": "sim.getJointPosition", "args": []}, None, "sim.getJointPosition: bad arguments []"),
        ({"func": "sim.setJointTargetPosition", "args": [2, "x"]}, None, "expected a finite position, got 'x'"),
        ({"func": "sim.getObject", "args": ["joint1"]}, None, "expected an absolute object path"),
        ({"func": "sim.getObject", "args": ["/joint9"]}, None, "object does not exist: /joint9"),
    ],
)
def test_bad_requests_get_an_error_and_serving_goes_on(
    request_socket: Any, request_map: Any, raw: bytes | None, error: str
) -> None:
    answer = _ask(request_socket, request_map, raw)
    assert set(answer) == {"err"}
    assert error in answer["err"]
    assert _ask(request_socket, {"func": "sim.getObject", "args": ["/joint9", {"noError": True}]}) == {"ret": [-1]}


def test_stepping_rules(request_socket: Any) -> None:
    """Stopped: no step; time step set only while stopped and in whole physics steps; start needs stepping mode."""
    stopped = {"func": "sim.getSimulationState", "args": []}
    if _ask(request_socket, stopped)["ret"] != [CONSTANTS["simulation_stopped"]]:
        _ask(request_socket, {"func": "sim.stopSimulation", "args": []})
    assert "not running" in _ask(request_socket, {"func": "sim.step", "args": []})["err"]
    level = _ask(request_socket, {"func": "sim.setStepping", "args": [False]})["ret"][0]
    try:
        if level == 0:  # nobody else holds stepping mode: starting must be refused
            answer = _ask(request_socket, {"func": "sim.startSimulation", "args": []})
            assert "stepping mode only" in answer["err"]
        param = CONSTANTS["floatparam_simulation_time_step"]
        assert "whole number" in _ask(request_socket, {"func": "sim.setFloatParam", "args": [param, 0.0025]})["err"]
        assert _ask(request_socket, {"func": "sim.setFloatParam", "args": [param, 0.002]}) == {"ret": [1]}
        assert _ask(request_socket, {"func": "sim.getSimulationTimeStep", "args": []}) == {"ret": [0.002]}
        _ask(request_socket, {"func": "sim.setStepping", "args": [True]})
        assert _ask(request_socket, {"func": "sim.startSimulation", "args": []}) == {"ret": [1]}
        assert (
            "only change while stopped"
            in _ask(request_socket, {"func": "sim.setFloatParam", "args": [param, 0.001]})["err"]
        )
        assert _ask(request_socket, {"func": "sim.step", "args": []}) == {"ret": []}
        assert _ask(request_socket, {"func": "sim.getSimulationTime", "args": []}) == {"ret": [0.002]}
        assert _ask(request_socket, {"func": "sim.stopSimulation", "args": []}) == {"ret": [1]}
        assert _ask(request_socket, {"func": "sim.getSimulationTime", "args": []}) == {"ret": [0.0]}
    finally:
        _ask(request_socket, {"func": "sim.setStepping", "args": [False]})


def _standin_script() -> Any:
    import importlib.util

    from cosim_validation.common.config import package_root

    path = package_root() / "scripts" / "coppeliasim_standin.py"
    spec = importlib.util.spec_from_file_location("coppeliasim_standin_script", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_standin_bad_inputs_are_one_error_line(
    coppeliasim_port: int, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _standin_script()
    cases = [
        (["--config", str(tmp_path / "none.yaml"), "--port", "0"], "none.yaml: file not found"),
        (["--port", "70000"], "--port: expected 0..65535, got 70000"),
        (["--port", str(coppeliasim_port)], f"cannot listen on tcp://127.0.0.1:{coppeliasim_port}"),
    ]
    for argv, message in cases:
        assert script.main(argv) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1
        assert err[0].startswith("error: ")
        assert message in err[0]
