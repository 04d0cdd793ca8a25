"""A node process that crashes in C (a segmentation fault) leaves every thread's Python stack in its log, so a
crash at start is never an empty log."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import ctypes
    from cosim_validation.live.nodes.node_runtime import run_node

    def build_the_engine():
        ctypes.string_at(0)  # reads address 0: a segmentation fault, as in a C extension

    run_node(build_the_engine)
    """
)


def test_a_segmentation_fault_in_a_node_writes_its_stack(node_env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, env=node_env)
    assert done.returncode == -signal.SIGSEGV, done.stderr
    assert "Fatal Python error: Segmentation fault" in done.stderr, done.stderr
    assert "in build_the_engine" in done.stderr, done.stderr  # where it crashed
