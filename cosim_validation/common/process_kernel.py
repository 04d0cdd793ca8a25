"""What the Linux kernel does for a process on request (prctl(2)): a signal when its parent dies, a name of its own.

Every process the project starts (a session's nodes, the node host and the nodes it forks, a campaign's workers,
an external node under test) asks for a signal when its parent dies, so that a launcher killed by SIGKILL leaves
nothing running. Elsewhere than Linux the requests do nothing and say so in their return value.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent thread dies
_PR_SET_NAME = 15  # prctl(2): the process's name, at most 15 bytes (ps -e, top, pgrep)


def _prctl(option: int, value: int | ctypes.c_char_p) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        return int(ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def signal_on_parent_death(sig: int) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent dies; whether it was granted.

    The request does not cover a parent that died before it: compare :func:`os.getppid` with the parent's pid
    afterwards.

    Args:
        sig: The signal, e.g. ``signal.SIGTERM``.
    """
    return _prctl(_PR_SET_PDEATHSIG, int(sig))


def set_process_name(name: str) -> bool:
    """Give this process ``name`` (its first 15 bytes) in ps -e, top and pgrep; whether it was granted.

    Args:
        name: The name.
    """
    return _prctl(_PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]))


def own_group_ended_with_parent() -> None:
    """Make this process the leader of a process group of its own, ended by SIGTERM when its parent dies.

    Meant as ``preexec_fn`` of :class:`subprocess.Popen` (it runs in the child between fork and exec) and for a
    forked child: the launcher stops the process and what it started through the group, and the kernel stops it
    when the launcher is killed outright.
    """
    os.setpgrp()
    signal_on_parent_death(signal.SIGTERM)  # not Linux: the process group still lets the launcher stop the child
