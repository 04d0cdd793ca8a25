"""Is anybody on a ROS 2 domain? A short look at its graph before a session takes it.

A session's nodes see every participant in their domain (within the discovery range): a node that is not ours
publishing on ``/clock`` or ``/cosim/expected`` would be recorded and monitored as if it were the session's. The
file locks of :mod:`discovery_scope` keep cosim sessions apart; this probe finds everybody else. It starts one
throw-away process (:mod:`cosim_validation.live.ros.graph_probe`) with the session's own environment (domain id
and discovery range, so it sees exactly what the session's nodes would), which creates one node there and watches
the graph for at most :data:`PROBE_S` seconds, stopping as soon as anything that is not the probe shows up.

DDS facts used (DDS-RTPS 2.5, 8.5.3 "The Simple Participant Discovery Protocol"): every participant announces
itself periodically, and Fast DDS (the default RMW here) does so every 3 s by default
(``leaseDuration_announcementperiod``). A participant already running is therefore seen within 3 s even when the
first announcements cross; measured on a 2-core machine: found after 0.2-3.0 s, so :data:`PROBE_S` is 3 s plus a margin.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping

from cosim_validation.common.exceptions import CosimError

PROBE_S = 5.0  # how long an empty domain is watched before it is called empty (s, steady clock)
START_LIMIT_S = 60.0  # importing rclpy and creating a participant, on a loaded machine (s)
PROBE_ATTEMPTS = 2  # a probe killed by a signal before it answered is started once more


class DomainProbeError(CosimError):
    """The probe process could not look at the domain."""


def strangers(env: Mapping[str, str], window_s: float = PROBE_S) -> list[str]:
    """What is on the domain of ``env`` besides the probe: ``node /ns/name`` and ``topic /name`` entries.

    Args:
        env: The environment of the session's nodes (``ROS_DOMAIN_ID``, ``ROS_AUTOMATIC_DISCOVERY_RANGE``).
        window_s: The longest the graph is watched (s); an empty domain costs all of it.

    Raises:
        DomainProbeError: The probe process failed or did not answer in time.
    """
    domain = env.get("ROS_DOMAIN_ID", "?")
    attempt = 0
    while True:
        attempt += 1
        done = _run_probe(env, window_s, domain)
        last = done.stdout.strip().splitlines()[-1:] or [""]
        try:
            found = json.loads(last[0])
        except json.JSONDecodeError:
            found = None
        if isinstance(found, list) and done.returncode <= 0:  # answered (a crash in its teardown loses nothing)
            return [str(item) for item in found]
        if done.returncode >= 0 or attempt == PROBE_ATTEMPTS:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            tries = f"; {attempt} tries" if attempt > 1 else ""
            raise DomainProbeError(f"domain {domain}: the graph probe failed (exit {done.returncode}: {tail}{tries})")
        # killed by a signal before it answered (a middleware crash): look once more


def _run_probe(env: Mapping[str, str], window_s: float, domain: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cosim_validation.live.ros.graph_probe", str(window_s)]
    try:
        return subprocess.run(
            command, env=dict(env), capture_output=True, text=True, timeout=window_s + START_LIMIT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise DomainProbeError(f"domain {domain}: the graph probe did not answer within {START_LIMIT_S:g} s") from None
