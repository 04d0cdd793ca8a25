"""A node whose ROS teardown hangs exits by itself, with the code it earned and its stacks in the log."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

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
