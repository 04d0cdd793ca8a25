"""Reading a bag by topic: only the topics asked for, and nothing for a topic the bag does not hold (rosbags reads
every connection when it is given none; a session whose bag lacked ``/diagnostics`` once answered a read of that
topic with a KeyError)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.live.ros.bag import BagWriter, project_typestore, read_messages
from cosim_validation.live.ros.qos import STATE

JOINT_STATE = "sensor_msgs/msg/JointState"


def _bag(path: Path) -> Path:
    store = project_typestore()
    js, header, stamp = (store.types[t] for t in (JOINT_STATE, "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    writer = BagWriter(path)
    for topic in ("/a/joint_states", "/b/joint_states"):
        writer.add_topic(topic, JOINT_STATE, STATE)
    for k in range(3):
        for n, topic in enumerate(("/a/joint_states", "/b/joint_states")):
            msg = js(
                header=header(stamp=stamp(sec=k, nanosec=0), frame_id=""),
                name=["joint1"],
                position=np.array([k + 0.5 * n]),
                velocity=np.zeros(0),
                effort=np.zeros(0),
            )
            writer.write_message(topic, k * 10**9 + n, msg, JOINT_STATE)
    writer.close()
    return path


def test_only_the_topics_asked_for_and_none_for_an_absent_one(tmp_path: Path) -> None:
    bag = _bag(tmp_path / "session.mcap")
    assert [m.topic for m in read_messages(bag)] == ["/a/joint_states", "/b/joint_states"] * 3
    b = [float(m.message.position[0]) for m in read_messages(bag, ["/b/joint_states"])]
    assert b == [0.5, 1.5, 2.5]
    assert list(read_messages(bag, ["/diagnostics"])) == []
    assert list(read_messages(bag, [])) == []


def test_a_damaged_bag_is_one_error_naming_it_whatever_bits_flipped(tmp_path: Path) -> None:
    """Flipped bits anywhere in a bag: it reads whole with the values written, or the error names the file (a flipped
    length or name was a UnicodeDecodeError, struct.error or SerdeError traceback in cosim replay; a flipped channel
    id or record length lost messages without a word; a flipped bit in a message's payload read as a real value)."""
    import random

    from cosim_validation.common.exceptions import InputError
    from cosim_validation.live.ros.bag import topics_of

    source = _bag(tmp_path / "session.mcap")
    written = [(m.topic, float(m.message.position[0])) for m in read_messages(source)]
    rng = random.Random(11)
    damaged = tmp_path / "damaged.mcap"
    kinds: set[str] = set()
    for _ in range(300):
        data = bytearray(source.read_bytes())
        for _ in range(rng.choice((1, 2, 5))):
            data[rng.randrange(8, len(data))] ^= 1 << rng.randrange(8)
        damaged.write_bytes(bytes(data))
        problem = ""
        try:
            topics_of(damaged)
            assert [(m.topic, float(m.message.position[0])) for m in read_messages(damaged)] == written
        except InputError as exc:
            problem = str(exc)
        if problem:
            assert problem.startswith(f"{damaged}: "), problem
            kinds.add("checksum" if "does not match its checksum" in problem else "file")
    assert kinds == {"checksum", "file"}  # the summary's records (read for the topics) and the data were hit


def test_a_flipped_bit_in_a_value_is_noticed_by_the_checksum(tmp_path: Path) -> None:
    """One flipped bit in the float of a joint position: the record is intact, the CDR decodes, and only the
    data section's CRC (written by the recorder) tells the value is not the one recorded."""
    from cosim_validation.common.exceptions import InputError

    bag = _bag(tmp_path / "session.mcap")
    data = bytearray(bag.read_bytes())
    at = bytes(data).index(np.array([1.5]).tobytes())  # /b's position at k = 1
    data[at + 7] ^= 0x01  # an exponent bit: 1.5 rad reads as 2.3e-5 rad, a plausible angle
    damaged = tmp_path / "damaged.mcap"
    damaged.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"damaged\.mcap: its data section does not match its checksum"):
        list(read_messages(damaged))
    # the same bit in a bag with no checksum (another writer's: a CRC of 0) is read as it is
    data_end = bytes(data).rindex(b"\x0f" + (4).to_bytes(8, "little"))
    data[data_end + 9 : data_end + 13] = bytes(4)
    damaged.write_bytes(bytes(data))
    assert [float(m.message.position[0]) for m in read_messages(damaged, ["/b/joint_states"])][1] != 1.5


@pytest.mark.parametrize("keep", [8, 9, 20, 0.5], ids=["magic-only", "magic-and-a-byte", "20-bytes", "half"])
def test_a_bag_cut_anywhere_is_one_error_naming_it(tmp_path: Path, keep: float) -> None:
    """A file that is only the MCAP magic was a TypeError traceback from the bag reader."""
    from cosim_validation.common.exceptions import InputError

    data = _bag(tmp_path / "session.mcap").read_bytes()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[: int(keep * len(data)) if isinstance(keep, float) else keep])
    with pytest.raises(InputError, match=r"cut\.mcap: not a readable rosbag2/MCAP file") as caught:
        list(read_messages(cut))
    assert "cosim bag recover" in str(caught.value)  # cut short: what a killed recorder leaves


def test_a_finished_bag_missing_a_record_is_not_sent_to_recovery(tmp_path: Path) -> None:
    """A record taken out of a finished bag: the error said 'MemoryError: ' and advised `cosim bag recover`, which
    is for a bag whose recorder was killed."""
    from cosim_validation.common.exceptions import InputError

    bag = _bag(tmp_path / "session.mcap")
    data = bag.read_bytes()
    at = data.index(b"\x05", data.index(b"/b/joint_states"))  # the first message record after the channels
    length = int.from_bytes(data[at + 1 : at + 9], "little")
    damaged = tmp_path / "damaged.mcap"
    damaged.write_bytes(data[:at] + data[at + 9 + length :])
    with pytest.raises(InputError, match=r"damaged\.mcap: ") as caught:
        list(read_messages(damaged))
    assert "cosim bag recover" not in str(caught.value)
    assert not str(caught.value).rstrip().endswith(":")
