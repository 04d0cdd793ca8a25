"""Issue 15, item 7: a bag whose writer is killed keeps every message written before the kill, and ``cosim bag
recover`` makes a finished bag of it (a real SIGKILL of a writing process; cuts at every kind of offset)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from mcap.records import Message
from mcap.stream_reader import StreamReader

from cosim_validation.cli.main import main
from cosim_validation.common.exceptions import InputError
from cosim_validation.live.ros.bag import BagWriter, read_messages, topics_of
from cosim_validation.live.ros.bag_recovery import in_progress_bag, recover_bag
from test.live.ros.test_replay import foreign_bag

WRITER = """
import sys, time
from pathlib import Path
import numpy as np
from cosim_validation.live.ros.bag import BagWriter, project_typestore
from cosim_validation.live.ros.qos import STATE
store = project_typestore()
js, header, stamp = (store.types[t] for t in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header",
                                              "builtin_interfaces/msg/Time"))
writer = BagWriter(Path(sys.argv[1]))
writer.add_topic("/arm/joint_states", "sensor_msgs/msg/JointState", STATE)
for k in range(1_000_000):
    msg = js(header=header(stamp=stamp(sec=k, nanosec=0), frame_id=""), name=["joint1"],
             position=np.array([0.001 * k]), velocity=np.zeros(0), effort=np.zeros(0))
    writer.write_message("/arm/joint_states", k * 10**7, msg, "sensor_msgs/msg/JointState")
    print(k + 1, flush=True)  # written: on disk before this line is printed
    time.sleep(0.002)
"""


def _killed_writer(bag: Path, messages: int) -> int:
    """Start a process writing ``bag``, SIGKILL it once it wrote at least ``messages``; return how many it wrote."""
    process = subprocess.Popen([sys.executable, "-c", WRITER, str(bag)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    written = 0
    deadline = time.monotonic() + 120
    for line in process.stdout:
        written = int(line)
        if written >= messages or time.monotonic() > deadline:
            break
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    return written


def test_a_killed_writer_leaves_a_part_file_that_recover_finishes(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    bag = tmp_path / "session.mcap"
    written = _killed_writer(bag, 300)
    part = in_progress_bag(bag)
    assert part == tmp_path / "session.mcap.part"
    assert not bag.exists()
    # replaying the unfinished file: one error line that says how to recover it (a traceback before)
    assert main(["replay", str(part)]) == 1
    err = capfd.readouterr().err
    assert err.count("error:") == 1
    assert f"`cosim bag recover {part}`" in err
    assert "Traceback" not in err
    # recovered: at least every message the writer had reported written, in order, readable by everyone
    assert main(["bag", "recover", str(part), "--json"]) == 0
    report = json.loads(capfd.readouterr().out)
    assert report["bag"] == str(bag)
    assert report["finished"] is False
    assert written <= report["messages"] <= written + 1  # the kill may land between the write and the print
    positions = [m.message.position[0] for m in read_messages(bag)]
    assert len(positions) == report["messages"]
    np.testing.assert_allclose(positions, 0.001 * np.arange(len(positions)))
    assert topics_of(bag)["/arm/joint_states"] == ("sensor_msgs/msg/JointState", report["messages"])
    # the finished bag refuses to be overwritten by a second recovery
    assert main(["bag", "recover", str(part)]) == 1
    assert "already exists; refusing to overwrite it" in capfd.readouterr().err


def _message_ends(path: Path) -> list[int]:
    """Offsets where each message record of a finished bag ends."""
    with path.open("rb") as stream:
        reader = StreamReader(stream, skip_magic=False, emit_chunks=False)
        return [stream.tell() for record in reader.records if isinstance(record, Message)]


def test_every_cut_keeps_exactly_the_whole_messages_before_it(tmp_path: Path) -> None:
    """Cut a finished bag (a foreign JointState recording of 40 messages) at 25 offsets, from inside the
    header to the footer: the recovery keeps exactly the messages whose record is complete before the cut."""
    bag = tmp_path / "full.mcap"
    foreign_bag(bag, np.linspace(0.0, 1.0, 40)[:, None] * np.ones(7))
    data = bag.read_bytes()
    ends = _message_ends(bag)
    assert len(ends) == 40
    for cut in sorted({*np.linspace(ends[0] - 10, len(data), 24).astype(int), ends[17]}):
        part = tmp_path / f"cut-{cut}.mcap.part"
        part.write_bytes(data[:cut])
        recovered = recover_bag(part, tmp_path / f"cut-{cut}.mcap")
        whole = sum(1 for end in ends if end <= cut)
        assert recovered.messages == whole, cut
        if cut == len(data):
            assert recovered.finished  # the whole file: its data section ends properly
        if cut <= ends[-1]:
            assert not recovered.finished
        assert len(list(read_messages(recovered.path))) == whole


def test_an_older_chunked_bag_in_progress_is_recovered_chunk_by_chunk(tmp_path: Path) -> None:
    """Earlier versions wrote a rosbag2 folder with 1 MiB chunks: the chunks complete before the cut are kept."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    from cosim_validation.live.ros.bag import project_typestore

    store = project_typestore()
    folder = tmp_path / "session.bag-in-progress"
    writer = Writer(folder, version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    connection = writer.add_connection("/blob", "std_msgs/msg/String", typestore=store)
    text = store.types["std_msgs/msg/String"]
    for k in range(3000):  # about 3 MiB: three closed chunks and a last one
        writer.write(connection, k, store.serialize_cdr(text(data=f"{k:06d}" + "x" * 1000), "std_msgs/msg/String"))
    writer.close()
    inner = folder / "session.bag-in-progress.mcap"
    data = inner.read_bytes()
    inner.write_bytes(data[: int(len(data) * 0.8)])  # cut inside the last chunks, as a SIGKILL would
    (folder / "metadata.yaml").unlink()
    assert in_progress_bag(tmp_path / "session.mcap") == inner
    assert main(["bag", "recover", str(tmp_path)]) == 0
    recovered = [m.message.data for m in read_messages(tmp_path / "session.mcap")]
    assert 1000 <= len(recovered) < 3000
    assert recovered == [f"{k:06d}" + "x" * 1000 for k in range(len(recovered))]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"not an MCAP file"),
        (b"\x89MCAP0\r\n", r"nothing to recover \(the file ends before its MCAP header\)"),
        (b"\x89MCAP0\r\n\x01" + (40).to_bytes(8, "little") + b"ros2", r"the file ends before its MCAP header"),
        # a header whose length bytes were overwritten, in a file of 2 MB: it was called "ends before its header"
        (
            b"\x89MCAP0\r\n\x01" + b"}" * 8 + b"\x00" * 2_000_000,
            r"damaged: the MCAP header claims 9042521604759584125 bytes",
        ),
        (b"\x89MCAP0\r\n\x05" + (4).to_bytes(8, "little") + b"\x00" * 40, r"damaged: the first record is of kind 0x05"),
        (b"PK\x03\x04 a zip file", r"not an MCAP file"),
    ],
)
def test_what_cannot_be_recovered_is_an_input_error(tmp_path: Path, content: bytes, message: str) -> None:
    part = tmp_path / "x.mcap.part"
    part.write_bytes(content)
    with pytest.raises(InputError, match=message):
        recover_bag(part, tmp_path / "x.mcap")
    assert not (tmp_path / "x.mcap").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".x.mcap")]  # no temporary file left


def test_a_writer_refuses_an_unfinished_recording_in_its_place(tmp_path: Path) -> None:
    (tmp_path / "session.mcap.part").write_bytes(b"\x89MCAP0\r\n")
    with pytest.raises(InputError, match=r"session\.mcap\.part: an unfinished recording is there"):
        BagWriter(tmp_path / "session.mcap")
    assert os.path.getsize(tmp_path / "session.mcap.part") == 8


def _message_spans(path: Path) -> list[tuple[int, int]]:
    """(start, end) offsets of each message record of a bag."""
    with path.open("rb") as stream:
        reader = StreamReader(stream, skip_magic=False, emit_chunks=False)
        spans, start = [], stream.tell()
        for record in reader.records:
            if isinstance(record, Message):
                spans.append((start, stream.tell()))
            start = stream.tell()
        return spans


@pytest.mark.parametrize(
    ("field", "value"),
    [("length", 2**40), ("length", 3), ("length", 0), ("opcode", 0x77)],
    ids=["past-the-end", "too-short", "zero", "unknown-opcode"],
)
def test_a_damaged_record_in_the_middle_is_skipped_and_said(tmp_path: Path, field: str, value: int) -> None:
    """A flipped length in message 17 of 40 of an unfinished bag: the recovery kept the 16 before it and said the bag
    was "cut short" there, though 23 whole messages followed. It goes on after the damaged record, keeps those 23,
    and names the bytes it skipped. A damaged opcode (one MCAP does not define, which the mcap reader skips without
    a word) lost its message silently: it is named too."""
    bag = tmp_path / "full.mcap"
    foreign_bag(bag, np.linspace(0.0, 1.0, 40)[:, None] * np.ones(7))
    spans = _message_spans(bag)
    data = bytearray(bag.read_bytes()[: spans[-1][1]])  # unfinished: no DataEnd, summary or footer
    start, end = spans[16]
    if field == "length":
        data[start + 1 : start + 9] = value.to_bytes(8, "little")
    else:
        data[start] = value
    part = tmp_path / "session.mcap.part"
    part.write_bytes(bytes(data))
    recovered = recover_bag(part, tmp_path / "session.mcap")
    assert recovered.messages == 39
    assert recovered.skipped == ((start, end),)
    assert (
        f"(unfinished, its last record whole; damaged records skipped, their messages lost: bytes {start}-{end})"
        in (recovered.message())
    )
    positions = [m.message.position[0] for m in read_messages(recovered.path)]
    np.testing.assert_allclose(positions, np.delete(np.linspace(0.0, 1.0, 40), 16))


def test_a_finished_bag_that_fails_its_checksum_is_not_recovered(tmp_path: Path) -> None:
    """A finished bag whose bytes changed later: recovering it wrote the damaged values into a new bag with fresh
    checksums ("it was complete"), which every reader then took as recorded."""
    bag = tmp_path / "full.mcap"
    foreign_bag(bag, np.linspace(0.0, 1.0, 40)[:, None] * np.ones(7))
    start, _ = _message_spans(bag)[5]
    data = bytearray(bag.read_bytes())
    data[start + 60] ^= 0x08
    bag.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"full\.mcap: its data section does not match its checksum .*; a recovery "):
        recover_bag(bag, tmp_path / "out.mcap")
    assert not (tmp_path / "out.mcap").exists()
