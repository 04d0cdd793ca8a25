"""A bag recorded with an older version of the project's interfaces still reads: a RobotState written before it
had a ``supervisor`` field decodes with the bag's own definition, and its expected state is unsupervised."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.live.ros.bag import BagWriter, interface_definitions, read_messages
from cosim_validation.live.ros.convert import expected_labels, expected_state_from_msg

ROBOT_STATE = "cosim_validation_interfaces/msg/RobotState"


def _old_typestore() -> Any:
    """The project's types with RobotState as it was before the supervisor's mode was added."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    definitions = interface_definitions()
    store = get_typestore(Stores.ROS2_KILTED)
    types: dict[str, Any] = {}
    for name, text in definitions.items():
        types.update(get_types_from_msg(text.split("uint8 supervisor")[0] if name == ROBOT_STATE else text, name))
    store.register(types)
    return store


def _robot_state(store: Any, stage: int) -> Any:
    t = store.types
    origin = t["geometry_msgs/msg/Pose"](
        position=t["geometry_msgs/msg/Point"](x=0.0, y=0.0, z=0.0),
        orientation=t["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
    )
    header = t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](sec=2, nanosec=0), frame_id="base_link")
    q = np.array([0.1, 0.2])
    return t[ROBOT_STATE](
        header=header,
        test_id="old-0",
        robot=0,
        stage=stage,
        sample_index=4,
        joint_names=["j1", "j2"],
        setpoint=q,
        position=q,
        velocity=np.zeros(0),
        tip_pose=origin,
        has_actual_tip=False,
        actual_tip_pose=origin,
    )


def test_a_robot_state_of_an_older_bag_reads_as_unsupervised(tmp_path: Path) -> None:
    old = _old_typestore()
    assert "supervisor" not in [name for name, _ in old.fielddefs[ROBOT_STATE][1]]
    writer = BagWriter(tmp_path / "old.mcap")
    writer._store = old  # record as a session before the field existed did (its definition embedded)
    writer.add_topic("/cosim/expected", ROBOT_STATE)
    writer.write("/cosim/expected", 2_000_000_000, old.serialize_cdr(_robot_state(old, stage=3), ROBOT_STATE))
    bag = writer.close()
    (message,) = list(read_messages(bag))
    state = expected_state_from_msg(message.message)
    assert (state.stage, state.sample_index, state.supervisor) == (3, 4, 0)
    assert [int(v) for v in expected_labels(state)] == [3, 0]
    np.testing.assert_array_equal(state.q, [0.1, 0.2])
