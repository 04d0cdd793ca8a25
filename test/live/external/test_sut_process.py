"""The node under test's process: started in a group of its own, its death reported with its last output, stopped
with everything it started even when it ignores SIGINT."""

from __future__ import annotations

import os
import sys
import tempfile
import time

import pytest

from cosim_validation.live.external.sut_process import NodeProcess, NodeUnderTestError

PY = sys.executable


def wait_for(condition, seconds: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_node_that_exits_is_reported_with_its_last_output(tmp_path) -> None:  # type: ignore[no-untyped-def]
    script = "import sys; print('loading'); print('error: no robot_description', flush=True); sys.exit(3)"
    node = NodeProcess([PY, "-c", script], str(tmp_path), dict(os.environ))
    node.start()
    assert wait_for(lambda: not node.running())
    problem = node.exit_problem()
    assert problem.startswith("the node under test exited with code 3"), problem
    assert "error: no robot_description" in problem
    node.restart()
    assert node.starts == 2
    node.stop()
    assert node.exit_problem() == "the node under test was not started"


def test_the_last_output_is_the_nodes_words_without_colours_or_shared_memory_notices(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # as a node's stderr reads when Fast DDS finds a shared-memory port locked by another process (seen in CI beside
    # a second run): the notice in colour, then the node's own reason
    shm = (
        "\x1b[37;1m2026-11-30 01:29:56.616 \x1b[31;1m[\x1b[37;1mRTPS_TRANSPORT_SHM\x1b[31;1m Error] "
        "\x1b[37mFailed init_port fastdds_port7007: open_and_lock_file failed\x1b[34;1m -> Function "
        "\x1b[36mopen_port_internal\x1b[m"
    )
    script = (
        f"import sys; print('\\x1b[33m[WARN] no tool frame\\x1b[0m'); print({shm!r}); "
        "print('error: no robot_description', flush=True); sys.exit(3)"
    )
    node = NodeProcess([PY, "-c", script], str(tmp_path), dict(os.environ))
    node.start()
    assert wait_for(lambda: not node.running())
    problem = node.exit_problem()
    node.stop()
    assert problem.endswith("its last output: [WARN] no tool frame | error: no robot_description"), problem


def test_stop_takes_down_the_group_even_when_sigint_is_ignored(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pid_file = tmp_path / "child.pid"
    # a "launch" that ignores SIGINT and starts a child of its own, as ros2 launch starts nodes
    script = (
        "import signal, subprocess, sys, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
        f"c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
        f"open({str(pid_file)!r}, 'w').write(str(c.pid)); time.sleep(600)"
    )
    node = NodeProcess([PY, "-c", script], str(tmp_path), dict(os.environ))
    node.start()
    assert wait_for(pid_file.exists)
    assert wait_for(lambda: pid_file.read_text().strip() != "")
    child = int(pid_file.read_text())
    assert node.running()
    assert alive(child)
    node.stop()
    assert not node.running()
    assert wait_for(lambda: not alive(child)), "the node's child outlived it"


def test_a_program_that_cannot_run_is_an_error(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "node.sh"
    script.write_text("#!/bin/sh\n")  # not executable
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    node = NodeProcess([str(script)], str(tmp_path), dict(os.environ))
    with pytest.raises(NodeUnderTestError, match="cannot start the node under test"):
        node.start()
    assert list(scratch.iterdir()) == []  # its empty log is not left behind
    assert node.output_tail() == ""


def test_placeholders_name_the_domain_and_a_folder_for_the_nodes_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from cosim_validation.controllers.plugin_api import RunLogs

    script = "import pathlib, sys; pathlib.Path(sys.argv[1], 'args.txt').write_text(sys.argv[2] + ' ' + sys.argv[3])"
    command = [PY, "-c", script, "{log_dir}", "d{domain_id}", "{{literal}}"]
    env = {**os.environ, "ROS_DOMAIN_ID": "42"}
    in_run = NodeProcess(command, str(tmp_path), env, RunLogs(tmp_path / "logs"))
    in_run.start()
    assert wait_for(lambda: not in_run.running())
    in_run.stop()
    assert (tmp_path / "logs" / "args.txt").read_text() == "d42 {literal}"
    alone = NodeProcess([PY, "-c", "import time; time.sleep(30)", "{log_dir}"], str(tmp_path), env)
    alone.start()
    scratch = alone.filled_command()[-1]
    assert os.path.isdir(scratch)
    assert scratch.startswith(tempfile.gettempdir())  # outside a run: a temporary folder ...
    alone.stop()
    assert not os.path.exists(scratch)  # ... removed when the node stops
