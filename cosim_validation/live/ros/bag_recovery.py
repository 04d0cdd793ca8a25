"""Finishing a bag whose recorder died: every MCAP record written before the cut, in a readable file.

A SIGKILLed recorder left ``session.bag-in-progress/...mcap`` without a footer, which readers refuse ("File
end magic is invalid"), and the session still said it wrote ``session.mcap``. An MCAP file is a
sequence of length-prefixed records (mcap.dev/spec): whatever precedes the cut can be read in order, and the
last record, if incomplete, is dropped. :func:`recover_bag` reads the records with the mcap library's stream
reader until the data ends or stops making sense, and writes them into a new MCAP with summary and footer.
Both the files of :class:`~cosim_validation.live.ros.bag.BagWriter` (``session.mcap.part``, unchunked) and those of
earlier versions (a rosbag2 folder ``session.bag-in-progress`` with a chunked MCAP inside) are recovered;
in a chunked file, a chunk cut short is lost as a whole. A record damaged in the middle (a flipped length) does not
end the recovery: the reader looks for the next whole message record of a known channel after it and goes on from
there, and the result says which bytes were skipped.
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosim_validation.common.atomic_file import put_in_place
from cosim_validation.common.exceptions import InputError
from cosim_validation.live.ros.bag import MAGIC, PART_SUFFIX, refuse_changed

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
        read_bytes: Where the last whole record read ends; the rest (if any) was cut short.
        size_bytes: Size of the source.
        skipped: Byte ranges ``(start, stop)`` of damaged records the recovery went past (their messages are lost).
    """

    source: Path
    path: Path
    messages: int
    topics: int
    finished: bool
    read_bytes: int
    size_bytes: int
    skipped: tuple[tuple[int, int], ...] = ()

    def message(self) -> str:
        """One line for the user."""
        if self.finished:
            cut = "its data section ended properly" if self.skipped else "it was complete"
        elif self.read_bytes == self.size_bytes:
            cut = "unfinished, its last record whole"
        else:
            cut = f"cut short after {self.read_bytes} of {self.size_bytes} bytes"
        if self.skipped:
            ranges = ", ".join(f"{a}-{b}" for a, b in self.skipped)
            cut += f"; damaged records skipped, their messages lost: bytes {ranges}"
        topics = f"{self.topics} topic{'' if self.topics == 1 else 's'}"
        return f"recovered {self.messages} messages on {topics} from {self.source} ({cut}) into {self.path}"


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


def _records(stream: Any, start: int, size: int) -> Iterator[tuple[Any, int]]:
    """Yield the records from offset ``start`` on, each with the offset where it ends (a chunk's: the chunk's).

    They come until the data ends or breaks off: a record cut short, a length past the data, a record that does not
    parse, or an opcode MCAP does not define (mcap.dev/spec: 0x01-0x0F; the mcap reader skips an unknown one without
    a word, so a damaged opcode lost its message silently). A private record (0x80-0xFF) is passed over.
    """
    from mcap.exceptions import McapError
    from mcap.records import Chunk
    from mcap.stream_reader import StreamReader, breakup_chunk

    at = start
    while at + 9 <= size:
        stream.seek(at)
        opcode, length = struct.unpack("<BQ", stream.read(9))
        end = at + 9 + length
        if end > size or not (0x01 <= opcode <= 0x0F or opcode >= 0x80):
            return
        if opcode >= 0x80:
            at = end
            continue
        stream.seek(at)
        try:
            record = next(StreamReader(stream, skip_magic=True, emit_chunks=True).records)
            records = breakup_chunk(record) if isinstance(record, Chunk) else [record]
        except (McapError, EOFError, ValueError, IndexError, UnicodeDecodeError, struct.error, StopIteration):
            return  # the cut, or damage: everything before it was complete
        for item in records:
            yield item, end
        at = end


def _next_message(data: bytes, start: int, channels: dict[int, int], first_log_time: int) -> int | None:
    """The offset of the first whole message record at or after ``start`` that the recovery can go on from.

    A candidate is a Message record (opcode 0x05, mcap.dev/spec) that fits in the data, is on a channel already
    read, is logged no earlier than the first message read, and is followed by the end of the data or by another
    record's opcode: bytes inside a damaged record that merely look like a message are not taken for one.
    """
    at = data.find(b"\x05", start)
    while at != -1 and at + 31 <= len(data):
        length, channel, _, log_time = struct.unpack_from("<QHIQ", data, at + 1)
        end = at + 9 + length
        if (
            length >= 22
            and end <= len(data)
            and channel in channels
            and log_time >= first_log_time
            and (end == len(data) or 0x01 <= data[end] <= 0x0F)
        ):
            return at
        at = data.find(b"\x05", at + 1)
    return None


class _Copy:
    """Copies schemas, channels and messages into a writer, renumbering them."""

    def __init__(self, writer: Any) -> None:
        self.writer = writer
        self.schemas: dict[int, int] = {0: 0}
        self.channels: dict[int, int] = {}
        self.messages = 0
        self.first_log_time = 0

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
            self.first_log_time = self.first_log_time if self.messages else record.log_time
            self.messages += 1


#: An MCAP header holds a profile and a library name: a few dozen bytes (mcap's writers), far below this.
_MAX_HEADER_BYTES = 64 * 1024
_HEADER_OPCODE = 0x01


def _header_problem(data: bytes) -> str:
    """Why the record after the magic of ``data`` is no MCAP header: the file ends before it, or it is damaged."""
    start = len(MAGIC)
    if len(data) < start + 9:
        return "the file ends before its MCAP header"
    opcode, length = data[start], struct.unpack_from("<Q", data, start + 1)[0]
    if opcode != _HEADER_OPCODE:
        return f"damaged: the first record is of kind 0x{opcode:02x}, not an MCAP header"
    if length > _MAX_HEADER_BYTES:
        return f"damaged: the MCAP header claims {length} bytes, where a header holds a few dozen"
    if start + 9 + length > len(data):
        return "the file ends before its MCAP header"
    return "damaged: the MCAP header does not parse"


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
        if stream.read(8) != MAGIC:
            raise InputError(f"{source}: not an MCAP file (no MCAP magic at the start)")
        try:
            refuse_changed(source)
        except InputError as exc:  # a finished bag damaged later: a recovery would sign its damaged bytes anew
            raise InputError(f"{exc}; a recovery cannot tell the damaged bytes from the rest") from None
        stream.seek(0)
        data = stream.read()  # for the search past a damaged record
        records = _records(stream, len(MAGIC), len(data))
        header, read_bytes = next(records, (None, 0))
        if not isinstance(header, Header):
            raise InputError(f"{source}: nothing to recover ({_header_problem(data)})")
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                writer = Writer(out, compression=CompressionType.NONE, enable_data_crcs=True)
                writer.start(profile=header.profile, library=header.library)
                copy, finished = _Copy(writer), False
                skipped: list[tuple[int, int]] = []
                search = 0
                while True:
                    for record, end in records:
                        if isinstance(record, (DataEnd, Footer)):
                            finished = True
                            break
                        copy.take(record)
                        read_bytes = end
                    # a record that does not parse: at the end (cut short) or in the middle (damaged)
                    search = max(search, read_bytes) + 1
                    resume = None if finished else _next_message(data, search, copy.channels, copy.first_log_time)
                    if resume is None:
                        break
                    if skipped and skipped[-1][0] == read_bytes:  # the last resume did not parse after all
                        skipped[-1] = (read_bytes, resume)
                    else:
                        skipped.append((read_bytes, resume))
                    search = resume
                    records = _records(stream, resume, len(data))
                writer.finish()  # type: ignore[no-untyped-call]
            put_in_place(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return RecoveredBag(
        source, target, copy.messages, len(copy.channels), finished, read_bytes, len(data), tuple(skipped)
    )
