"""A node whose ROS teardown hangs exits by itself, with the code it earned and its stacks in the log."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cosim_validation.live.session.process_group import ProcessGroup

SCRIPT = textwrap.dedent(
    """
    import sys, time
    from cosim_validation.live.nodes.node_runtime import teardown_watchdog

    with teardown_watchdog("stuck_node", 0.5, int(sys.argv[1])):
        time.sleep(float(sys.argv[2]))  # stands for a destroy_node() that does not return
    print("teardown finished", flush=True)
    """
)


def run(code: int, block_s: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(code), str(block_s)], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("code", [0, 1])
def test_hung_teardown_exits_with_the_nodes_code(code: int) -> None:
    done = run(code, block_s=60)
    assert done.returncode == code, done.stderr
    assert "stuck_node: ROS teardown still running after 0.5 s; exiting without it" in done.stderr
    assert 'File "<string>", line 6' in done.stderr  # the main thread's stack: where it hung
    assert "teardown finished" not in done.stdout


def test_quick_teardown_is_left_alone() -> None:
    done = run(0, block_s=0.05)
    assert done.returncode == 0
    assert done.stdout.strip() == "teardown finished"
    assert "still running" not in done.stderr


GIL_SCRIPT = textwrap.dedent(
    """
    import ctypes
    from cosim_validation.live.nodes.node_runtime import teardown_watchdog

    with teardown_watchdog("stuck_node", 0.5, 0):
        ctypes.PyDLL(None).sleep(30)  # a C call that keeps the GIL, as rclpy's destroy_node was seen to
    """
)


def test_a_teardown_hung_holding_the_gil_ends_with_status_1_and_the_launcher_names_it(tmp_path: Path) -> None:
    """The watchdog's Python timer cannot run; faulthandler's thread dumps the stacks and ends the process at
    0.5 s more, and the launcher recognises the dump (``teardown_hung``) instead of calling it a failed node."""
    from cosim_validation.live.session.process_group import teardown_hung

    done = subprocess.run([sys.executable, "-c", GIL_SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "still running" not in done.stderr  # the Python timer never ran
    assert teardown_hung(done.stderr), done.stderr
    assert not teardown_hung(run(0, block_s=60).stderr)  # the Python timer's exit is no hang of the GIL
    assert not teardown_hung("[INFO] [1.0] [markers]: ready\nTimeout (0:00:02.500000)! in a message\n")
    # the session reads the node's log as the node wrote it; the stacks of a node with many threads come after the
    # dump's first line (the tail of a log, prefixed with the node's name for messages, never matched)
    group = ProcessGroup(tmp_path)
    stacks = "".join(f'  File "executor.py", line {k}, in spin\n' for k in range(400))
    (group.log_dir / "markers.log").write_text(f"[INFO] [markers]: ready\n{done.stderr}{stacks}")
    (group.log_dir / "monitor.log").write_text(run(0, block_s=60).stderr)
    assert group.hung_in_teardown("markers")
    assert not group.hung_in_teardown("monitor")
    assert not group.hung_in_teardown("recorder")  # no log at all
