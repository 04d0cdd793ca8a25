"""`cosim dashboard`: a bag rendered off-screen to a PNG, the layout written, bad input as one error line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.config import package_root
from cosim_validation.common.exceptions import InputError
from cosim_validation.live.dashboard.foxglove_graph import with_foxglove_bridge
from cosim_validation.live.session.graph import load_graph


@pytest.mark.ros
@pytest.mark.slow
def test_bag_screenshot_at_a_time(session_bag: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cosim_validation.live.dashboard.qt_binding import load_qt

    out = tmp_path / "dash.png"
    assert main(["dashboard", "--bag", str(session_bag), "--screenshot", str(out), "--at", "5", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["screenshot"] == str(out.resolve())
    assert info["cases"] == 1  # 5 s into the bag: the first case runs
    assert info["finished"] == 0
    image = load_qt().QtGui.QImage(str(out))
    assert (image.width(), image.height()) == (1400, 900)
    assert main(["dashboard", "--bag", str(session_bag), "--screenshot", str(out)]) == 0  # default: the end
    text = capsys.readouterr().out
    assert "2 cases (2 finished)" in text
    assert f"wrote {out}" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["dashboard"], "give --bag FILE"),
        (["dashboard", "--bag", "no/such.mcap", "--screenshot", "x.png"], "no/such.mcap: no such bag"),
        (["dashboard", "--bag", "b.mcap", "--screenshot", "no/such/folder/x.png"], "does not exist"),
        (["dashboard", "--bag", "b.mcap", "--screenshot", "x.png", "--max-points", "1"], "--max-points must be >= 2"),
        (["dashboard", "--live", "--domain-id", "300", "--screenshot", "x.png"], "--domain-id must be within 0..232"),
        # a negative time listened for none and said "after -1 s"; 1e9 s was a Qt OverflowError traceback
        (["dashboard", "--live", "--screenshot", "x.png", "--at", "-1"], "--at -1: with --live, the seconds to listen"),
        (["dashboard", "--live", "--screenshot", "x.png", "--at", "1e9"], "expected (0, 3600]"),
        (["dashboard", "--live", "--screenshot", "x.png", "--at", "nan"], "--at nan"),
        (["dashboard", "--bag", "b.mcap", "--screenshot", "x.png", "--extra-topic", "bad topic"], "--extra-topic: "),
        (["dashboard", "--foxglove-layout", "no/such/folder/l.json"], "does not exist"),
    ],
)
def test_bad_input_is_one_error_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: ")
    assert message in err[0]


@pytest.mark.ros
@pytest.mark.slow
def test_bag_time_outside_the_bag(session_bag: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dashboard", "--bag", str(session_bag), "--screenshot", str(tmp_path / "x.png"), "--at", "1e6"]) == 1
    assert "--at 1e+06: the bag" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_layout_written_from_the_graph(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "layout.json"
    assert main(["dashboard", "--foxglove-layout", str(out)]) == 0
    assert out.read_text() == (package_root() / "config" / "foxglove_layout.json").read_text()


def test_foxglove_bridge_node_added_to_the_graph() -> None:
    graph = load_graph(package_root() / "config" / "digital_twin.yaml")
    with_bridge = with_foxglove_bridge(graph, 9001)
    node = with_bridge.node("foxglove_bridge")
    assert (node.parameters["port"], node.parameters["host"], node.required) == (9001, "127.0.0.1", False)
    assert node.parameters["robots"] == ["virtual", "physical"]
    with pytest.raises(InputError, match="already has a node named"):
        with_foxglove_bridge(with_bridge, 9001)
    for port in (70000, 0):  # 0 would be any free port, and the session would print ws://127.0.0.1:0
        with pytest.raises(InputError, match=r"1\.\.65535"):
            with_foxglove_bridge(graph, port)


@pytest.mark.parametrize("port", ["70000", "0"])
def test_session_refuses_a_bad_foxglove_port(port: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["session", "--foxglove", port, "--out", str(tmp_path / "run")]) == 1
    assert f"--foxglove port must be within 1..65535, got {port}" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.ros
def test_bridge_on_a_taken_port_is_one_error_line(node_env: dict[str, str], repo_root: Path) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [
            sys.executable,
            "-m",
            "cosim_validation.live.nodes.foxglove_bridge",
            "--ros-args",
            "-p",
            f"port:={port}",
        ]
        done = subprocess.run(command, cwd=repo_root, env=node_env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: foxglove_bridge: cannot serve on 127.0.0.1:{port}: {errors[0].split(': ', 3)[-1]}"]
    assert "Address already in use" in errors[0]
    assert "Traceback" not in done.stderr
