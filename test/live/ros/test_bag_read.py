"""Reading a bag by topic: only the topics asked for, and nothing for a topic the bag does not hold (rosbags reads
every connection when it is given none; a session whose bag lacked ``/diagnostics`` once answered a read of that
topic with a KeyError)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

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
    """Flipped bits anywhere in a bag: it reads whole, or the error names the file (a flipped length or name was a
    UnicodeDecodeError, struct.error or the CDR decoder's SerdeError traceback in cosim replay; a flipped channel id
    or record length lost messages without a word, and a replay then said the verdicts differ)."""
    import random

    from cosim_validation.common.exceptions import InputError
    from cosim_validation.live.ros.bag import topics_of

    source = _bag(tmp_path / "session.mcap").read_bytes()
    rng = random.Random(11)
    damaged = tmp_path / "damaged.mcap"
    kinds: set[str] = set()
    for _ in range(300):
        data = bytearray(source)
        for _ in range(rng.choice((1, 2, 5))):
            data[rng.randrange(8, len(data))] ^= 1 << rng.randrange(8)
        damaged.write_bytes(bytes(data))
        problem = ""
        try:
            topics = topics_of(damaged)
            assert len(list(read_messages(damaged))) == 6  # every message, or an error
            for topic in set(topics) & {"/a/joint_states", "/b/joint_states"}:  # (a flipped name: another topic)
                assert len(list(read_messages(damaged, [topic]))) == 3
        except InputError as exc:
            problem = str(exc)
        if problem:
            assert problem.startswith(f"{damaged}: "), problem
            kinds.add("decoded" if "cannot be decoded" in problem else "lost" if "could be read" in problem else "file")
    assert kinds == {"decoded", "lost", "file"}  # the file's records, a message's bytes and its record were hit
