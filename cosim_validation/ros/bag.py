"""rosbag2 (MCAP) files, written and read with the rosbags library (no rclpy needed).

A session writes one MCAP file, ``session.mcap``, holding every ``/cosim`` topic with the message
definitions embedded, so ``ros2 bag play session.mcap``, Foxglove, the mcap library and rosbags all open
it. Reading registers unknown types from the definitions embedded in the bag, so a bag recorded with
another version of the interfaces, or by someone else, still reads.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from cosim_validation.config import package_root
from cosim_validation.exceptions import InputError
from cosim_validation.ros.qos import QosSpec

INTERFACES = "cosim_validation_interfaces"


class BagMessage(NamedTuple):
    """One message read from a bag."""

    topic: str
    msgtype: str
    log_time_ns: int
    message: Any  # a rosbags message object (attribute access like an rclpy message)


def interface_definitions() -> dict[str, str]:
    """``{'cosim_validation_interfaces/msg/Verdict': '<.msg text>', ...}`` of the project's messages.

    Looked up in the source checkout first, then in every prefix of AMENT_PREFIX_PATH.
    """
    candidates = [package_root() / INTERFACES / "msg"]
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            candidates.append(Path(prefix) / "share" / INTERFACES / "msg")
    for folder in candidates:
        files = sorted(folder.glob("*.msg"))
        if files:
            return {f"{INTERFACES}/msg/{f.stem}": f.read_text() for f in files}
    raise InputError(f"cannot find the {INTERFACES} message definitions (looked in {', '.join(map(str, candidates))})")


@lru_cache(maxsize=1)
def project_typestore() -> Any:
    """A rosbags typestore of ROS 2 Kilted plus the project's interfaces."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS2_KILTED)
    types: dict[str, Any] = {}
    for name, text in interface_definitions().items():
        types.update(get_types_from_msg(text, name))
    store.register(types)
    return store


def _qos_profile(spec: QosSpec) -> Any:
    from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

    infinite = QosTime(sec=0x7FFFFFFF, nsec=0xFFFFFFFF)
    return Qos(
        history=QosHistory.KEEP_LAST,
        depth=spec.depth,
        reliability=QosReliability.RELIABLE if spec.reliability == "reliable" else QosReliability.BEST_EFFORT,
        durability=QosDurability.TRANSIENT_LOCAL if spec.durability == "transient_local" else QosDurability.VOLATILE,
        deadline=infinite,
        lifespan=infinite,
        liveliness=QosLiveliness.AUTOMATIC,
        liveliness_lease_duration=infinite,
        avoid_ros_namespace_conventions=False,
    )


class BagWriter:
    """Writes serialized (CDR) messages into one MCAP file.

    rosbags writes a rosbag2 folder; on :meth:`close` the MCAP file is moved to ``path`` and the folder
    removed, so the run directory holds a single ``session.mcap``.

    Args:
        path: The ``.mcap`` file to create (must not exist).
    """

    def __init__(self, path: str | Path) -> None:
        from rosbags.rosbag2 import StoragePlugin, Writer

        self.path = Path(path)
        if self.path.suffix != ".mcap":
            raise InputError(f"{self.path}: a bag file must end in .mcap")
        if self.path.exists():
            raise InputError(f"{self.path}: already exists; refusing to overwrite a recording")
        self._folder = self.path.with_suffix(".bag-in-progress")
        if self._folder.exists():
            shutil.rmtree(self._folder)
        self._store = project_typestore()
        self._writer = Writer(self._folder, version=9, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._connections: dict[str, Any] = {}
        self.count = 0

    def add_topic(self, topic: str, msgtype: str, qos: QosSpec | None = None) -> None:
        """Declare ``topic`` with its type (``pkg/msg/Name``) before writing to it."""
        if topic in self._connections:
            return
        if msgtype not in self._store.types:
            raise InputError(f"cannot record {topic!r}: unknown message type {msgtype!r}")
        profiles = [_qos_profile(qos)] if qos is not None else []
        self._connections[topic] = self._writer.add_connection(
            topic, msgtype, typestore=self._store, offered_qos_profiles=profiles
        )

    def has_topic(self, topic: str) -> bool:
        """Whether :meth:`add_topic` was called for ``topic``."""
        return topic in self._connections

    def write(self, topic: str, log_time_ns: int, cdr: bytes | memoryview) -> None:
        """Append one serialized message received at ``log_time_ns``."""
        self._writer.write(self._connections[topic], int(log_time_ns), cdr)
        self.count += 1

    def write_message(self, topic: str, log_time_ns: int, message: Any, msgtype: str) -> None:
        """Serialize a rosbags message object and append it."""
        self.write(topic, log_time_ns, self._store.serialize_cdr(message, msgtype))

    def close(self) -> Path:
        """Finish the file (summary, index) and return its path."""
        self._writer.close()
        produced = self._folder / f"{self._folder.name}.mcap"
        produced.replace(self.path)
        shutil.rmtree(self._folder, ignore_errors=True)
        return self.path


def _register_embedded_types(store: Any, connections: Iterable[Any]) -> None:
    from rosbags.typesys import get_types_from_msg

    for conn in connections:
        if conn.msgtype in store.types:
            continue
        try:
            store.register(get_types_from_msg(conn.msgdef.data, conn.msgtype))
        except Exception as exc:  # noqa: BLE001 - rosbags raises several parser errors
            raise InputError(f"cannot decode topic {conn.topic!r}: type {conn.msgtype!r} ({exc})") from None


def read_messages(path: str | Path, topics: Iterable[str] | None = None) -> Iterator[BagMessage]:
    """Messages of an MCAP (or rosbag2 folder) in log-time order.

    Args:
        path: ``session.mcap`` or a rosbag2 folder.
        topics: Only these topics (all if None).

    Raises:
        InputError: The file is missing or not a readable bag, or a topic cannot be decoded.
    """
    from rosbags.rosbag2 import Reader, ReaderError

    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such bag")
    wanted = set(topics) if topics is not None else None
    store = project_typestore()
    try:
        with Reader(path) as reader:
            connections = [c for c in reader.connections if wanted is None or c.topic in wanted]
            _register_embedded_types(store, connections)
            for conn, log_time, data in reader.messages(connections=connections):
                yield BagMessage(conn.topic, conn.msgtype, log_time, store.deserialize_cdr(data, conn.msgtype))
    except ReaderError as exc:
        raise InputError(f"{path}: not a readable rosbag2/MCAP file ({exc})") from None


def topics_of(path: str | Path) -> dict[str, tuple[str, int]]:
    """``{topic: (msgtype, message count)}`` of a bag."""
    from rosbags.rosbag2 import Reader, ReaderError

    try:
        with Reader(Path(path)) as reader:
            return {c.topic: (c.msgtype, c.msgcount) for c in reader.connections}
    except (ReaderError, FileNotFoundError) as exc:
        raise InputError(f"{path}: not a readable rosbag2/MCAP file ({exc})") from None
