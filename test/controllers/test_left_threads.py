"""Threads a user's call leaves running, which would keep the process from ending."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from cosim_validation.common.abandoned_calls import left_threads
from cosim_validation.controllers.plugin_controllers import CallThread


def test_a_call_s_own_thread_is_noted_and_a_pool_worker_started_meanwhile_is_not() -> None:
    release = threading.Event()
    pool = ThreadPoolExecutor(1)  # another part of the process (a node's executor) starting its worker meanwhile

    def call() -> None:
        threading.Thread(target=release.wait, name="plugin-background", daemon=False).start()
        pool.submit(lambda: None).result()

    try:
        CallThread("noting").call(call, 10.0)
        names = [t.name for t in left_threads()]
        assert "plugin-background" in names
        assert not any(name.startswith("ThreadPoolExecutor-") for name in names)
    finally:
        release.set()
        pool.shutdown()
    for thread in threading.enumerate():
        if thread.name == "plugin-background":
            thread.join(5)
    assert "plugin-background" not in [t.name for t in left_threads()]  # ended: nothing holds the process
