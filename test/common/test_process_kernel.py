"""The kernel's requests every launched process makes: a name of its own, and an end when its parent is killed."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from test.subprocesses import alive

# A parent that starts a grandchild asking for SIGTERM on its parent's death, prints the grandchild's pid, then
# waits to be killed.
PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", '''
import time
from cosim_validation.common.process_kernel import own_group_ended_with_parent, set_process_name
own_group_ended_with_parent()
set_process_name("orphan_to_be_no_longer_than_15")
print("armed", flush=True)
time.sleep(300)
'''], stdout=subprocess.PIPE, text=True)
assert child.stdout.readline().strip() == "armed"
print(child.pid, flush=True)
time.sleep(300)
"""


def test_a_process_is_named_and_ends_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert Path(f"/proc/{child}/comm").read_text().strip() == "orphan_to_be_no", "the first 15 bytes of its name"
        assert alive(child)
        parent.send_signal(signal.SIGKILL)  # no chance to stop its child itself
        parent.wait(timeout=30)
        deadline = time.monotonic() + 60  # the kernel's signal is immediate; the margin is for a loaded machine
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(child), "the kernel ended the child with its parent"
    finally:
        parent.kill()
        parent.wait(timeout=30)


def test_the_requests_are_granted_on_linux() -> None:
    probe = "from cosim_validation.common.process_kernel import *; import signal; "
    probe += "print(signal_on_parent_death(signal.SIGTERM), set_process_name('probe'))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["True", "True"]
