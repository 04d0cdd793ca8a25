"""A node started before its session's ROS 2 domain is chosen: it loads its modules, then waits at its gate.

``cosim session`` starts its node processes first and looks for an empty domain while they import (Python, numpy,
MuJoCo, open3d, the project: about 1.2 s of CPU each); the look (:mod:`.domain_probe`) is mostly waiting for
discovery. Each node process then waits at its gate, a file named in :data:`GATE_ENV`, before it creates anything
on ROS 2. The session opens the gate by writing the file: the environment variables of the chosen domain (set
and removed), which the node applies to its own environment before ``rclpy.init``. A process started without the
variable (``ros2 run``, the launch file) goes through at once.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path

GATE_ENV = "COSIM_START_GATE"
OWNER_ENV = "COSIM_START_GATE_OWNER"  # the process id of the session that will open the gate
POLL_S = 0.02  # how often a waiting node looks for its gate file (s)


def env_change(before: Mapping[str, str], after: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """What turns environment ``before`` into ``after``: the variables to set and the names to remove.

    Args:
        before: The environment a node process was started with.
        after: The environment it should run with.
    """
    changed = {name: value for name, value in after.items() if before.get(name) != value}
    return changed, sorted(name for name in before if name not in after)


def open_gate(path: Path, set_env: Mapping[str, str], unset: Sequence[str] = ()) -> None:
    """Let the node waiting on ``path`` go on, with these environment changes (written whole, then renamed).

    Args:
        path: The node's gate file (the value of :data:`GATE_ENV` it was started with).
        set_env: Variables it sets before joining ROS 2.
        unset: Variables it removes.
    """
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps({"set": dict(set_env), "unset": list(unset)}))
    os.replace(part, path)


def pass_gate(environ: MutableMapping[str, str] | None = None) -> None:
    """In a node process: wait until the session opens this process's gate, then apply its environment.

    Returns at once without :data:`GATE_ENV`. The variable is removed once passed, so a process this node starts
    (an external node under test with a domain of its own) does not wait at the same gate. A signal while waiting
    ends the process (it has nothing to finish), and so does the end of the process that started it (the session
    also asks the kernel for SIGTERM then; this covers a session that died before it could).

    Args:
        environ: The environment to change (default: the process's own).
    """
    env = os.environ if environ is None else environ
    path, owner = env.pop(GATE_ENV, None), env.pop(OWNER_ENV, "")
    if not path:
        return
    gate, parent = Path(path), int(owner) if owner.isdigit() else os.getppid()
    while not gate.exists():
        if os.getppid() != parent:  # the session is gone (perhaps before this process ran): nobody will open the gate
            raise SystemExit(1)
        time.sleep(POLL_S)
    change = json.loads(gate.read_text())
    for name in change["unset"]:
        env.pop(name, None)
    env.update(change["set"])
