"""Which DDS participants a session's nodes can see: its own ROS_DOMAIN_ID and a discovery range.

Every session (``cosim session``, the launch file, the tests' ROS graphs) leases a domain id that no other
session on this machine holds, by an exclusive ``flock`` on ``<temp>/cosim-ros-domains/<id>.lock`` kept for
the session's lifetime (the kernel drops it when the process ends, however it ends); the session's nodes hold
it shared too (:func:`join_domain_lock`), so a node that outlived its launcher keeps its domain from being
leased again while it runs (a launch killed by SIGTERM leaves its nodes behind: launch's own warning,
"using SIGTERM can result in orphaned processes"). The caller's own
``ROS_DOMAIN_ID`` (0 when unset) is never leased, so nodes the user runs beside a session cannot reach it.
A domain chosen automatically must also be empty: ``cosim session`` and the launch file pass a probe
(:func:`cosim_validation.live.session.domain_probe.strangers`) that looks at each candidate's graph, and a domain
where any other ROS 2 node or topic is seen is skipped (a node that is not ours, not holding a lock).
Discovery is kept on this host by default (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``).

Facts used (ROS 2 documentation, "The ROS_DOMAIN_ID", Concepts/Intermediate/About-Domain-ID): DDS derives
its UDP ports from the domain id (7400 + 250 * domain + ...), so the highest possible id is 232, and on
Linux ids 0-101 stay clear of the ephemeral port range ("simply choose a domain ID between 0 and 101").
``ROS_AUTOMATIC_DISCOVERY_RANGE`` takes SUBNET, LOCALHOST, OFF or SYSTEM_DEFAULT (ROS 2 Iron and later,
"Improved Dynamic Discovery"); the deprecated ``ROS_LOCALHOST_ONLY`` and ``ROS_STATIC_PEERS`` of the caller
would widen or override it, so a scope's environment drops them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from cosim_validation.common.exceptions import InputError

SESSION_DOMAINS = range(1, 102)  # leased automatically: Linux-safe ids without the default 0
MAX_DOMAIN_ID = 232  # highest id whose DDS ports fit in 16 bits
DISCOVERY_RANGES = ("localhost", "subnet", "off", "system_default")
DEFAULT_DISCOVERY_RANGE = "localhost"
LOCK_DIR_ENV = "COSIM_DOMAIN_LOCK_DIR"  # tests may point the locks elsewhere
DOMAIN_LOCK_ENV = "COSIM_DOMAIN_LOCK"  # the lock file of the session's domain, for its nodes (join_domain_lock)
_DROPPED_ENV = ("ROS_LOCALHOST_ONLY", "ROS_STATIC_PEERS")
Probe = Callable[[Mapping[str, str]], list[str]]  # the nodes' environment -> what else is on their domain


@dataclass(frozen=True)
class DiscoveryScope:
    """The DDS scope of one session.

    Attributes:
        domain_id: ROS_DOMAIN_ID of every node of the session.
        discovery_range: One of :data:`DISCOVERY_RANGES`.
        chosen: ``auto`` (leased from :data:`SESSION_DOMAINS`) or ``given`` (``--domain-id``).
        occupied: Lower domains skipped because the probe saw other ROS 2 participants there.
    """

    domain_id: int
    discovery_range: str = DEFAULT_DISCOVERY_RANGE
    chosen: str = "auto"
    occupied: tuple[int, ...] = ()

    def env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: our environment) with this scope's variables set and the overriding ones removed.

        Args:
            base: The environment to start from; None: this process's (``os.environ``).
        """
        env = {k: v for k, v in (os.environ if base is None else base).items() if k not in _DROPPED_ENV}
        env["ROS_DOMAIN_ID"] = str(self.domain_id)
        env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = self.discovery_range.upper()
        env[DOMAIN_LOCK_ENV] = str(_lock_path(self.domain_id))
        return env

    @contextlib.contextmanager
    def joined(self) -> Iterator[None]:
        """Make this process's environment :meth:`env` while the block runs, and exactly what it was afterwards.

        rclpy contexts made in the block join this scope's domain.
        """
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(self.env(saved))
        try:
            yield
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def as_dict(self) -> dict[str, object]:
        """For ``summary.json`` and ``--json``."""
        data: dict[str, object] = {
            "ros_domain_id": self.domain_id,
            "discovery_range": self.discovery_range.upper(),
            "chosen": self.chosen,
        }
        if self.occupied:
            data["domains_skipped_as_occupied"] = list(self.occupied)
        return data

    def describe(self) -> str:
        """One line for the console, with what a user sets to watch the session (RViz, ``ros2 topic``)."""
        skipped = f"; skipped {', '.join(map(str, self.occupied))}: other ROS 2 nodes there" if self.occupied else ""
        return (
            f"ROS_DOMAIN_ID={self.domain_id} ({self.chosen}), ROS_AUTOMATIC_DISCOVERY_RANGE="
            f"{self.discovery_range.upper()}{skipped}"
        )


def _system_temp() -> str:
    """The machine's temporary folder, not the process's: POSIX's /tmp when there is one, else Python's choice."""
    return "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()


def lock_dir() -> Path:
    """The folder of the domain lock files, shared by every process and user of the machine.

    ``COSIM_DOMAIN_LOCK_DIR`` if set, else ``cosim-ros-domains`` in the system's temporary folder, whatever the
    process's TMPDIR: a process run with a TMPDIR of its own (a campaign worker, a test, another user's shell)
    must still see the domains the others hold, or two of them would share one.
    """
    folder = Path(os.environ.get(LOCK_DIR_ENV) or Path(_system_temp()) / "cosim-ros-domains")
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):  # sticky and writable for all, like /tmp itself
            folder.chmod(0o1777)
    return folder


def caller_domain(env: Mapping[str, str] | None = None) -> int:
    """The caller's ROS_DOMAIN_ID (0 when unset or empty, as rcl reads it).

    Args:
        env: The caller's environment; None: this process's (``os.environ``).

    Raises:
        InputError: A value that is no domain id (``abc``, ``-5``: rcl's error, or a table that spoke of domain 0) or
            whose DDS ports do not fit (``99999``: Fast DDS's "port number is too high" lines, no ``error:``).
    """
    text = (os.environ if env is None else env).get("ROS_DOMAIN_ID", "").strip()
    if not text:
        return 0
    if not text.isdigit() or int(text) > MAX_DOMAIN_ID:
        raise InputError(f"ROS_DOMAIN_ID={text!r} in the environment: expected an integer 0 to {MAX_DOMAIN_ID}")
    return int(text)


def check_discovery_range(text: str) -> str:
    """``text`` as one of :data:`DISCOVERY_RANGES` (case-insensitive).

    Args:
        text: A discovery range as the user wrote it (any case; surrounding blanks are ignored).

    Raises:
        InputError: Not one of :data:`DISCOVERY_RANGES`.
    """
    value = text.strip().lower()
    if value not in DISCOVERY_RANGES:
        raise InputError(f"discovery range {text!r}: expected one of {', '.join(DISCOVERY_RANGES)}")
    return value


def _lock_path(domain_id: int) -> Path:
    return lock_dir() / f"{domain_id}.lock"


def _try_lock(domain_id: int) -> int | None:
    """An fd holding the lock of ``domain_id``, or None if another process (session or node) holds it.

    Taken exclusively, which only succeeds while nobody holds it, then held shared so the session's nodes
    can join it (:func:`join_domain_lock`).
    """
    fd = os.open(_lock_path(domain_id), os.O_RDONLY | os.O_CREAT, 0o666)  # read-only: another user's file locks
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # not atomic: someone may slip in; then it is theirs
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def running_sessions() -> list[int]:
    """The domain ids that sessions on this machine hold now (what ``cosim dashboard --live`` can join).

    A domain is held while its lock cannot be taken exclusively; the probe gives the lock back at once (a session
    starting at that very instant skips to the next domain, as it would for any other holder).
    """
    held = []
    for path in sorted(lock_dir().glob("*.lock"), key=lambda p: (len(p.stem), p.stem)):
        if not path.stem.isdigit():
            continue
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held.append(int(path.stem))
        finally:
            os.close(fd)
    return held


def join_domain_lock(env: Mapping[str, str] | None = None) -> int | None:
    """For a node: hold its session's domain lock shared for the life of the process (None if not in a session).

    The fd is meant to stay open until the process ends; the kernel releases the lock then.

    Args:
        env: The node's environment (its ``COSIM_DOMAIN_LOCK`` names the lock file); None: this process's.
    """
    path = (os.environ if env is None else env).get(DOMAIN_LOCK_ENV)
    if not path:
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:  # taken exclusively right now by someone checking it: our session still holds it
        os.close(fd)
        return None
    return fd


def check_domain_request(domain_id: int | None, discovery_range: str) -> None:
    """Refuse what :meth:`DomainLease.acquire` would refuse before looking at any domain.

    Args:
        domain_id: The domain the user gave (``--domain-id``), or None.
        discovery_range: The discovery range the user gave.

    Raises:
        InputError: The domain id is out of range, the caller's ROS_DOMAIN_ID is no domain id, or the discovery
            range is unknown.
    """
    check_discovery_range(discovery_range)
    if domain_id is None:
        caller_domain()  # the automatic choice avoids the caller's domain: a bad one is refused before any write
    if domain_id is not None and not 0 <= domain_id <= MAX_DOMAIN_ID:
        raise InputError(f"--domain-id {domain_id}: expected 0..{MAX_DOMAIN_ID} (DDS ports must fit in 16 bits)")


def _candidates(domain_id: int | None, env: Mapping[str, str] | None) -> list[int]:
    if domain_id is not None:
        return [domain_id]
    own = caller_domain(env)
    return [d for d in SESSION_DOMAINS if d != own]


class DomainLease:
    """A domain held for one session: the lock is kept until :meth:`release` or the process ends.

    Use as a context manager (``with DomainLease.acquire() as scope:``) or, where the session outlives any
    block (a launch file), keep the object for the life of the process.
    """

    def __init__(self, scope: DiscoveryScope, fd: int) -> None:
        self.scope = scope
        self._fd: int | None = fd

    @classmethod
    def acquire(
        cls,
        domain_id: int | None = None,
        discovery_range: str = DEFAULT_DISCOVERY_RANGE,
        env: Mapping[str, str] | None = None,
        probe: Probe | None = None,
    ) -> DomainLease:
        """Lease ``domain_id`` if given, else the lowest free one of :data:`SESSION_DOMAINS`.

        Args:
            domain_id: The domain the user gave (``--domain-id``), or None to choose one.
            discovery_range: One of :data:`DISCOVERY_RANGES`.
            env: The caller's environment (default: ours); its own domain is never chosen.
            probe: For a domain chosen here: given the nodes' environment, what else is on the domain (a
                domain where it finds anything is skipped). A given domain is not probed: the user chose it.

        Raises:
            InputError: The given domain is out of range or leased by another session, or every session
                domain is leased or occupied, or the discovery range is unknown.
        """
        check_domain_request(domain_id, discovery_range)
        scope_range = check_discovery_range(discovery_range)
        occupied: list[int] = []
        for candidate in _candidates(domain_id, env):
            fd = _try_lock(candidate)
            if fd is None:
                continue
            scope = DiscoveryScope(candidate, scope_range, "auto" if domain_id is None else "given", tuple(occupied))
            if domain_id is None and probe is not None and probe(scope.env(env)):
                os.close(fd)  # someone who is not a cosim session is there: not ours to take
                occupied.append(candidate)
                continue
            return cls(scope, fd)
        if domain_id is not None:
            raise InputError(f"--domain-id {domain_id}: another cosim session on this machine is using it")
        others = f" ({len(occupied)} of them by other ROS 2 nodes)" if occupied else ""
        raise InputError(f"every session domain ({SESSION_DOMAINS.start}-{SESSION_DOMAINS.stop - 1}) is in use{others}")

    def release(self) -> None:
        """Give the domain back (closing the only descriptor releases the lock)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> DiscoveryScope:
        return self.scope

    def __exit__(self, *exc: object) -> None:
        self.release()


def next_scope(
    domain_id: int | None = None, discovery_range: str = DEFAULT_DISCOVERY_RANGE, env: Mapping[str, str] | None = None
) -> DiscoveryScope:
    """The scope a session started now would get (the lease is taken and given back at once).

    Args:
        domain_id: The domain the user gave (``--domain-id``), or None to choose one.
        discovery_range: One of :data:`DISCOVERY_RANGES`.
        env: The caller's environment (default: ours); its own domain is never chosen.

    Raises:
        InputError: As :meth:`DomainLease.acquire` (no domain is probed for other ROS 2 nodes here).
    """
    with DomainLease.acquire(domain_id, discovery_range, env) as scope:
        return scope
