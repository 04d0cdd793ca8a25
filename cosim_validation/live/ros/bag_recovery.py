"""Finishing a bag whose recorder died: every MCAP record written before the cut, in a readable file.

A SIGKILLed recorder left ``session.bag-in-progress/...mcap`` without a footer, which readers refuse ("File
end magic is invalid"), and the session still said it wrote ``session.mcap``. An MCAP file is a
sequence of length-prefixed records (mcap.dev/spec): whatever precedes the cut can be read in order, and the
last record, if incomplete, is dropped. :func:`recover_bag` reads the records with the mcap library's stream
reader until the data ends or stops making sense, and writes them into a new MCAP with summary and footer.
Both the files of :class:`~cosim_validation.live.ros.bag.BagWriter` (``session.mcap.part``, unchunked) and those of
earlier versions (a rosbag2 folder ``session.bag-in-progress`` with a chunked MCAP inside) are recovered;
in a chunked file, a chunk cut short is lost as a whole.
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosim_validation.common.exceptions import InputError
from cosim_validation.live.ros.bag import PART_SUFFIX

#: Where an earlier version left a bag being written (a rosbag2 folder next to ``session.mcap``).
LEGACY_FOLDER_SUFFIX = ".bag-in-progress"


@dataclass(frozen=True)
class RecoveredBag:
    """What :func:`recover_bag` made.

    Attributes:
        source: The bag cut short.
        path: The finished bag written.
        messages: Messages recovered.
        topics: Channels (topics) recovered.
        finished: Whether the source was complete after all (its data section ended properly).
        read_bytes: Bytes of the source read as whole records; the rest (if any) was cut short.
        size_bytes: Size of the source.
    """

    source: Path
    path: Path
    messages: int
    topics: int
    finished: bool
    read_bytes: int
    size_bytes: int

    def message(self) -> str:
        """One line for the user."""
        cut = "it was complete" if self.finished else f"cut short after {self.read_bytes} of {self.size_bytes} bytes"
        return f"recovered {self.messages} messages on {self.topics} topics from {self.source} ({cut}) into {self.path}"


def in_progress_bag(bag: Path) -> Path | None:
    """The unfinished file of the bag that should be at ``bag`` (``session.mcap``), if its recorder left one.

    Args:
        bag: The finished bag's path, e.g. ``session.mcap``.
    """
    part = bag.with_name(bag.name + PART_SUFFIX)
    if part.is_file():
        return part
    legacy = bag.with_suffix(LEGACY_FOLDER_SUFFIX)
    found = sorted(legacy.glob("*.mcap")) if legacy.is_dir() else []
    return found[0] if found else None


def _records(stream: Any) -> Iterator[tuple[Any, int]]:
    """Yield the stream's records, each with the offset where it ends.

    They come until the data ends or breaks off (a cut record, a bad length, a bad checksum).
    """
    from mcap.exceptions import McapError
    from mcap.stream_reader import StreamReader

    reader = StreamReader(stream, skip_magic=False, emit_chunks=False)
    try:
        for record in reader.records:
            yield record, stream.tell()
    except (McapError, EOFError, ValueError, IndexError, UnicodeDecodeError, struct.error):
        return  # the cut: everything before it was complete


class _Copy:
    """Copies schemas, channels and messages into a writer, renumbering them."""

    def __init__(self, writer: Any) -> None:
        self.writer = writer
        self.schemas: dict[int, int] = {0: 0}
        self.channels: dict[int, int] = {}
        self.messages = 0

    def take(self, record: Any) -> None:
        from mcap.records import Channel, Message, Schema

        if isinstance(record, Schema) and record.id not in self.schemas:
            self.schemas[record.id] = self.writer.register_schema(record.name, record.encoding, record.data)
        elif isinstance(record, Channel) and record.id not in self.channels and record.schema_id in self.schemas:
            self.channels[record.id] = self.writer.register_channel(
                record.topic, record.message_encoding, self.schemas[record.schema_id], dict(record.metadata)
            )
        elif isinstance(record, Message) and record.channel_id in self.channels:
            self.writer.add_message(
                self.channels[record.channel_id], record.log_time, record.data, record.publish_time, record.sequence
            )
            self.messages += 1


def recover_bag(source: str | Path, target: str | Path) -> RecoveredBag:
    """Write every complete record of the MCAP ``source`` (possibly cut short) into the finished bag ``target``.

    The target is written to a temporary file and renamed into place, so it is never half a file.

    Args:
        source: The MCAP file cut short (``session.mcap.part``, or the ``.mcap`` in a ``.bag-in-progress`` folder).
        target: The finished bag to write (must not exist; its folder must).

    Raises:
        InputError: ``source`` is missing, not an MCAP file, or holds not even a header; ``target`` exists.
    """
    from mcap.records import DataEnd, Footer, Header
    from mcap.writer import CompressionType, Writer

    source, target = Path(source), Path(target)
    if not source.is_file():
        raise InputError(f"{source}: no such bag file")
    if target.exists():
        raise InputError(f"{target}: already exists; refusing to overwrite it")
    with source.open("rb") as stream:
        if stream.read(8) != b"\x89MCAP0\r\n":
            raise InputError(f"{source}: not an MCAP file (no MCAP magic at the start)")
        stream.seek(0)
        records = _records(stream)
        header, read_bytes = next(records, (None, 0))
        if not isinstance(header, Header):
            raise InputError(f"{source}: nothing to recover (the file ends before its MCAP header)")
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                writer = Writer(out, compression=CompressionType.NONE)
                writer.start(profile=header.profile, library=header.library)
                copy, finished = _Copy(writer), False
                for record, end in records:
                    if isinstance(record, (DataEnd, Footer)):
                        finished = True
                        break
                    copy.take(record)
                    read_bytes = end
                writer.finish()  # type: ignore[no-untyped-call]
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return RecoveredBag(source, target, copy.messages, len(copy.channels), finished, read_bytes, source.stat().st_size)
