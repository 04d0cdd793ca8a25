"""Worker processes that end when the process that started them dies.

A campaign's parent killed outright (SIGKILL, the OOM killer) left its spawned workers (about 600 MB each)
and multiprocessing's resource tracker running for minutes, re-parented to PID 1. A worker calls
:func:`exit_with_parent` once at start:

- on Linux the kernel sends it SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``, see prctl(2));
  this works even while the worker is busy in compiled code;
- everywhere, a daemon thread checks every ``poll_s`` whether the parent is still its parent
  (``os.getppid()`` changes when an orphan is re-parented) and ends the process if not.

The resource tracker then ends by itself: it exits when the last process holding its pipe (the parent and
the workers) is gone.
"""

from __future__ import annotations

import os
import signal
import threading
import time

from cosim_validation.common.process_kernel import signal_on_parent_death


def _watch(parent_pid: int, poll_s: float) -> None:
    while True:
        time.sleep(poll_s)
        if os.getppid() != parent_pid:
            os._exit(1)  # the parent is gone: nobody will read this worker's results


def exit_with_parent(parent_pid: int, poll_s: float = 0.5) -> None:
    """End this process when its parent dies (call once, early, in a worker process).

    Args:
        parent_pid: The pid of the process that started this one, as that process saw itself (``os.getpid()``
            there, handed over with the worker's arguments), so a parent that died before this call is noticed.
        poll_s: How often the fallback thread checks the parent [s].
    """
    signal_on_parent_death(signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(1)  # the parent died before the death signal was armed
    threading.Thread(target=_watch, args=(parent_pid, poll_s), name="parent-watch", daemon=True).start()
