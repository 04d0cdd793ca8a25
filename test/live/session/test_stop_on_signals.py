"""A node's SIGINT or SIGTERM ends its spin wherever the main thread is when it comes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# The signal comes while the main thread holds the stop future's lock, as it does for a moment in rclpy's
# add_done_callback when the spin starts: a handler that completed the future in the main thread waited for
# itself there for good (a recorder stopped just after its ready file, about once in 300 starts under load).
SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, time
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions
    from cosim_validation.live.nodes.node_runtime import stop_on_signals

    rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
    executor = SingleThreadedExecutor()
    stopped = stop_on_signals(executor)
    with stopped._lock:
        os.kill(os.getpid(), int(sys.argv[1]))
        time.sleep(0.3)  # the interpreter runs the Python-level handler here, lock held
    executor.spin_until_future_complete(stopped, timeout_sec=20)
    print("stopped by", stopped.result() if stopped.done() else None, flush=True)
    rclpy.try_shutdown()
    """
)


@pytest.mark.parametrize("signum", [2, 15])
def test_a_signal_while_the_main_thread_holds_the_future_lock_stops_the_spin(signum: int) -> None:
    try:
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(signum)], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the process did not end: the signal's handler waited for the lock its own thread held")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"stopped by {signum}"
