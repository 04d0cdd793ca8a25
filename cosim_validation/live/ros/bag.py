"""rosbag2 (MCAP) files, written and read with the rosbags library (no rclpy needed).

A session writes one MCAP file, ``session.mcap`` (``session.mcap.part`` while it is written: a recorder that
dies leaves that file, which :mod:`~cosim_validation.live.ros.bag_recovery` finishes), holding every ``/cosim``
topic with the message definitions embedded, so ``ros2 bag play session.mcap``, Foxglove, the mcap library
and rosbags all open it. Reading registers unknown types from the definitions embedded in the bag, so a bag
recorded with another version of the interfaces, or by someone else, still reads.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from cosim_validation.common.config import package_root, regular_file_problem
from cosim_validation.common.exceptions import InputError
from cosim_validation.live.ros.qos import QosSpec

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


def crtk_definitions() -> dict[str, str]:
    """Return the definitions of the public CRTK messages the CRTK arms publish, by type name.

    ``{'crtk_msgs/msg/OperatingState': '<.msg text>', ...}``, from third_party/crtk_msgs in the checkout, else
    the crtk_msgs of a prefix on AMENT_PREFIX_PATH; {} if neither.
    """
    candidates = [package_root() / "third_party" / "crtk_msgs" / "msg"]
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            candidates.append(Path(prefix) / "share" / "crtk_msgs" / "msg")
    for folder in candidates:
        files = sorted(folder.glob("*.msg"))
        if files:
            return {f"crtk_msgs/msg/{f.stem}": f.read_text() for f in files}
    return {}


@lru_cache(maxsize=1)
def project_typestore() -> Any:
    """A rosbags typestore of ROS 2 Kilted plus the project's interfaces and crtk_msgs."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS2_KILTED)
    types: dict[str, Any] = {}
    for name, text in {**interface_definitions(), **crtk_definitions()}.items():
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


#: Suffix of a bag being written; the recorder renames it when the bag is finished.
PART_SUFFIX = ".part"


class _DirectFile:
    """A file written with one write(2) per call, no user-space buffer (what a SIGKILL cannot lose)."""

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        self._position = 0

    def write(self, data: bytes | bytearray | memoryview) -> int:
        view = memoryview(data)
        while view.nbytes:
            view = view[os.write(self._fd, view) :]
        self._position += len(data)
        return len(data)

    def tell(self) -> int:
        return self._position

    def flush(self) -> None:
        """Nothing is held back (every write went to the kernel)."""

    def close(self) -> None:
        os.close(self._fd)


class BagWriter:
    """Writes serialized (CDR) messages into one MCAP file that stays readable up to a crash.

    Messages go into ``<path>.part`` as unchunked MCAP records, one write(2) per message, so everything
    written before the process dies (SIGKILL included) is on disk and :func:`~cosim_validation.live.ros.bag_recovery.
    recover_bag` can make a finished bag of it; :meth:`close` writes the summary and footer and renames the file
    to ``path``. Schemas are the ROS 2 message definitions (``ros2msg``), messages CDR, the profile ``ros2``
    (the MCAP ROS 2 profile, mcap.dev/spec/registry), so ``ros2 bag play``, Foxglove, rosbags and the mcap
    library read it.

    Args:
        path: The ``.mcap`` file to create (must not exist).
    """

    def __init__(self, path: str | Path) -> None:
        from mcap.writer import CompressionType, Writer

        self.path = Path(path)
        if self.path.suffix != ".mcap":
            raise InputError(f"{self.path}: a bag file must end in .mcap")
        if self.path.exists():
            raise InputError(f"{self.path}: already exists; refusing to overwrite a recording")
        self.part = self.path.with_name(self.path.name + PART_SUFFIX)
        if self.part.exists():
            raise InputError(
                f"{self.part}: an unfinished recording is there; `cosim bag recover {self.part}` finishes it"
            )
        self._store = project_typestore()
        self._file = _DirectFile(self.part)  # unbuffered: a message is on disk once written
        # the writer uses write, tell and flush only, which _DirectFile has
        # with the data section's CRC (DataEnd), so that bytes changed on disk later are noticed when it is read
        self._writer = Writer(
            self._file,  # type: ignore[arg-type]
            use_chunking=False,
            compression=CompressionType.NONE,
            enable_data_crcs=True,
        )
        self._writer.start(profile="ros2", library="cosim_validation")
        self._schemas: dict[str, int] = {}
        self._connections: dict[str, int] = {}
        self.count = 0

    def add_topic(self, topic: str, msgtype: str, qos: QosSpec | None = None) -> None:
        """Declare ``topic`` with its type (``pkg/msg/Name``) before writing to it.

        Args:
            topic: The topic's full name.
            msgtype: Its message type, ``pkg/msg/Name``, one the project's typestore knows.
            qos: The profile it is offered with, written as rosbag2's ``offered_qos_profiles``; None: none written.
        """
        from rosbags.rosbag2.metadata import dump_qos_v9

        if topic in self._connections:
            return
        if msgtype not in self._store.types:
            raise InputError(f"cannot record {topic!r}: unknown message type {msgtype!r}")
        if msgtype not in self._schemas:
            text, _ = self._store.generate_msgdef(msgtype, ros_version=2)
            self._schemas[msgtype] = self._writer.register_schema(msgtype, "ros2msg", text.encode())
        # rosbag2's offered_qos_profiles channel metadata: the v9 profile list as YAML (as rosbag2 writes it)
        profiles = yaml.safe_dump(dump_qos_v9([_qos_profile(qos)] if qos is not None else []), default_flow_style=False)
        self._connections[topic] = self._writer.register_channel(
            topic, "cdr", self._schemas[msgtype], {"offered_qos_profiles": profiles.strip()}
        )

    def has_topic(self, topic: str) -> bool:
        """Whether :meth:`add_topic` was called for ``topic``.

        Args:
            topic: The topic's full name.
        """
        return topic in self._connections

    def write(self, topic: str, log_time_ns: int, cdr: bytes | memoryview) -> None:
        """Append one serialized message received at ``log_time_ns``.

        Args:
            topic: A topic declared with :meth:`add_topic`.
            log_time_ns: When the message was received [ns]; both its log time and its publish time in the bag.
            cdr: The serialized (CDR) message.
        """
        stamp = int(log_time_ns)
        self._writer.add_message(self._connections[topic], stamp, bytes(cdr), stamp)
        self.count += 1

    def write_message(self, topic: str, log_time_ns: int, message: Any, msgtype: str) -> None:
        """Serialize a rosbags message object and append it.

        Args:
            topic: A topic declared with :meth:`add_topic`.
            log_time_ns: When the message was received [ns].
            message: The rosbags message object.
            msgtype: Its type, ``pkg/msg/Name``.
        """
        self.write(topic, log_time_ns, self._store.serialize_cdr(message, msgtype))

    def close(self) -> Path:
        """Finish the file (summary, footer), rename it to :attr:`path` and return that path."""
        self._writer.finish()  # type: ignore[no-untyped-call]
        self._file.close()
        self.part.replace(self.path)
        return self.path


def _decoders(store: Any, connections: Iterable[Any], path: Path) -> dict[int, Any]:
    """Return the typestore to decode each connection with, by connection id.

    That is ``store``, into which the types it does not know are registered from the definitions embedded in the
    bag; or, for a type it knows under another definition (a bag recorded with another version of the
    interfaces, e.g. a RobotState without its ``supervisor`` field), a store of the bag's own definitions.
    """
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    out: dict[int, Any] = {}
    own: Any = None
    for conn in connections:
        out[conn.id] = store
        text = conn.msgdef.data if conn.msgdef is not None else ""
        if conn.msgtype in store.types and not text:
            continue
        try:
            embedded = get_types_from_msg(text, conn.msgtype) if text else {}
            if conn.msgtype not in store.types:
                store.register(embedded)
            elif embedded.get(conn.msgtype, store.fielddefs[conn.msgtype]) != store.fielddefs[conn.msgtype]:
                own = own or get_typestore(Stores.ROS2_KILTED)
                own.register(embedded)
                out[conn.id] = own
        except Exception as exc:  # noqa: BLE001 - rosbags raises several parser errors
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__  # its first line:
            # a parser's error quotes the whole definition, many lines
            raise InputError(f"{path}: cannot decode topic {conn.topic!r}: type {conn.msgtype!r} ({first})") from None
    return out


def require_bag(path: str | Path) -> None:
    """Raise unless ``path`` is a bag to read: a regular file (``session.mcap``) or a folder (rosbag2).

    Args:
        path: ``session.mcap`` or a rosbag2 folder.

    Raises:
        InputError: Missing, a loop of symbolic links, a FIFO or a device (reading one would block or not end).
    """
    problem = regular_file_problem(path, folder_ok=True)
    if problem is not None:
        raise InputError(f"{path}: no such bag" if problem == "not found" else f"{path}: the bag is {problem}")


def read_messages(path: str | Path, topics: Iterable[str] | None = None) -> Iterator[BagMessage]:
    """Messages of an MCAP (or rosbag2 folder) in log-time order.

    Args:
        path: ``session.mcap`` or a rosbag2 folder.
        topics: Only these topics (all if None).

    Raises:
        InputError: The file is missing or not a readable bag, or a topic cannot be decoded.
    """
    from rosbags.rosbag2 import Reader, ReaderError
    from rosbags.serde import SerdeError

    path = Path(path)
    require_bag(path)
    wanted = set(topics) if topics is not None else None
    store = project_typestore()
    refuse_changed(path)
    try:
        with Reader(path) as reader:
            connections = [c for c in reader.connections if wanted is None or c.topic in wanted]
            if not connections:  # rosbags reads every connection when given none
                return
            decoders = _decoders(store, connections, path)
            read = dict.fromkeys((c.id for c in connections), 0)
            for conn, log_time, data in reader.messages(connections=connections):
                try:
                    message = decoders[conn.id].deserialize_cdr(data, conn.msgtype)
                except (SerdeError, *_DAMAGED) as exc:  # damaged bytes in a message (a flipped length)
                    raise InputError(
                        f"{path}: a {conn.msgtype} message on {conn.topic} at log time {log_time} ns cannot be "
                        f"decoded ({type(exc).__name__}: {exc}); the bag is damaged"
                    ) from None
                read[conn.id] += 1
                yield BagMessage(conn.topic, conn.msgtype, log_time, message)
            _refuse_lost(path, connections, read)
            _refuse_unplaced(path, reader.connections)
    except (ReaderError, *_DAMAGED) as exc:
        raise InputError(f"{path}: not a readable rosbag2/MCAP file ({_why(exc)}){_cut_short_hint(path)}") from None


def refuse_changed(path: Path) -> None:
    """An error when a finished MCAP file's bytes differ from what its checksums say was written.

    Unchunked MCAP has no checksum per message: a flipped bit in a message's payload was read as a real value (a
    joint angle changed, a verdict judged on it). The writer stores the CRC-32 of the data section (in DataEnd) and of
    the summary (in the footer, mcap.dev/spec); a CRC of 0 means none was computed (other writers), and a file
    whose footer or DataEnd is not where a finished file has them is left to the reader, which says what is wrong.

    Args:
        path: The bag; a rosbag2 folder is read through its MCAP file by the reader, not checked here.
    """
    if not path.is_file():
        return
    with path.open("rb") as f:
        footer_start = _footer_start(f)
        if footer_start is None or footer_start < len(MAGIC) + _DATA_END_BYTES:
            return
        f.seek(footer_start)
        summary_start, _, summary_crc = struct.unpack_from("<QQI", f.read(_FOOTER_BYTES), 9)
        data_end = (summary_start or footer_start) - _DATA_END_BYTES
        f.seek(max(data_end, 0))
        record = f.read(_DATA_END_BYTES)
        if data_end < len(MAGIC) or record[:9] != b"\x0f" + struct.pack("<Q", 4):
            return
        stored = struct.unpack_from("<I", record, 9)[0]
        if stored and _crc(f, 0, data_end) != stored:
            raise InputError(
                f"{path}: its data section does not match its checksum (bytes changed after it was "
                "written); the bag is damaged"
            )
        if summary_start and summary_crc and _crc(f, summary_start, footer_start + 25) != summary_crc:
            raise InputError(
                f"{path}: its summary does not match its checksum (bytes changed after it was "
                "written); the bag is damaged"
            )


def _footer_start(f: Any) -> int | None:
    """Where the footer of the open MCAP file ``f`` starts, if it ends as a finished one does: a footer, the magic."""
    size = f.seek(0, os.SEEK_END)
    start = size - len(MAGIC) - _FOOTER_BYTES
    if start < 0:
        return None
    f.seek(start)
    tail = f.read()
    return start if tail[0] == 0x02 and tail[_FOOTER_BYTES:] == MAGIC else None


def _crc(f: Any, start: int, stop: int) -> int:
    """CRC-32 of the bytes ``[start, stop)`` of the open file ``f``."""
    f.seek(start)
    crc, left = 0, stop - start
    while left > 0:
        block = f.read(min(left, 1 << 20))
        if not block:
            break
        crc, left = zlib.crc32(block, crc), left - len(block)
    return crc


#: MCAP's magic, and the sizes of a footer and of a DataEnd record (opcode, length, fields; mcap.dev/spec)
MAGIC = b"\x89MCAP0\r\n"
_FOOTER_BYTES = 1 + 8 + 8 + 8 + 4
_DATA_END_BYTES = 1 + 8 + 4


def _refuse_lost(path: Path, connections: Iterable[Any], read: dict[int, int]) -> None:
    """An error when fewer messages of a topic were read than the bag's own counts (its summary) say it holds.

    rosbags skips a record it cannot place (a flipped bit in a message's channel id or in a record's length) without
    a word: a replay then judged what was left and said the verdicts differ.
    """
    for conn in connections:
        if conn.msgcount and read[conn.id] < conn.msgcount:
            raise InputError(
                f"{path}: {read[conn.id]} of the {conn.msgcount} messages on {conn.topic} could be read (the others' "
                f"records are damaged); the bag is damaged"
            )


def _refuse_unplaced(path: Path, connections: Iterable[Any]) -> None:
    """An error when an MCAP file's summary counts more messages than its channels hold.

    A flipped bit in a channel's id leaves that channel's messages on no channel: rosbags skips them, and counts
    none for the topic.
    """
    if not path.is_file():  # a rosbag2 folder: its metadata counts per topic only
        return
    from mcap.exceptions import McapError
    from mcap.reader import make_reader

    try:
        with path.open("rb") as f:
            summary = make_reader(f).get_summary()
    except (McapError, *_DAMAGED):
        return  # rosbags read it: what the summary lacks, its own checks covered
    statistics = summary.statistics if summary is not None else None
    placed = sum(conn.msgcount for conn in connections)
    if statistics is not None and placed < statistics.message_count:
        raise InputError(
            f"{path}: {statistics.message_count - placed} of its {statistics.message_count} messages are on no "
            "channel the bag describes (their channel's record is damaged); the bag is damaged"
        )


#: What the bag reader (rosbags) and the CDR decoder raise on damaged bytes, besides ReaderError: a flipped bit in a
#: record's length or a name was a UnicodeDecodeError or struct.error traceback in cosim replay
_DAMAGED = (
    UnicodeDecodeError,
    struct.error,
    ValueError,
    TypeError,
    IndexError,
    KeyError,
    EOFError,
    OverflowError,
    MemoryError,
    OSError,
)


def _why(exc: BaseException) -> str:
    """The reader's own error as it is; another exception with its name (it says where the bytes broke)."""
    if type(exc).__name__ == "ReaderError":
        return str(exc)
    if isinstance(exc, MemoryError):  # a record length far past the file, read as a size to allocate
        return "damaged: a record's length is far beyond the file"
    return f"damaged: {type(exc).__name__}: {exc}" if str(exc) else f"damaged: {type(exc).__name__}"


def _cut_short_hint(path: Path) -> str:
    """How to read a bag whose writer died before finishing it."""
    if not (path.name.endswith(PART_SUFFIX) or path.suffix == ".mcap") or _ends_finished(path):
        return ""  # a finished bag (its footer is there) was not cut short: recovering it would not help
    return f"; if its recorder was killed, `cosim bag recover {path}` makes a finished bag of what it wrote"


def _ends_finished(path: Path) -> bool:
    """Whether the file ends as a finished MCAP does: a footer record, then the magic."""
    try:
        with path.open("rb") as f:
            return _footer_start(f) is not None
    except OSError:
        return False


def topics_of(path: str | Path) -> dict[str, tuple[str, int]]:
    """``{topic: (msgtype, message count)}`` of a bag.

    Args:
        path: ``session.mcap`` or a rosbag2 folder.
    """
    from rosbags.rosbag2 import Reader, ReaderError

    require_bag(path)
    try:
        with Reader(Path(path)) as reader:
            return {c.topic: (c.msgtype, c.msgcount) for c in reader.connections}
    except (ReaderError, FileNotFoundError, *_DAMAGED) as exc:
        raise InputError(
            f"{path}: not a readable rosbag2/MCAP file ({_why(exc)}){_cut_short_hint(Path(path))}"
        ) from None
