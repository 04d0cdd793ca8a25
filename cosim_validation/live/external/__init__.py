"""An external ROS 2 node as the controller under test (docs/EXTERNAL_NODES.md).

``node_controller``: the closed-loop adapter the lockstep loop drives; ``arm_server``: the ros2_control
interfaces served to the node; ``trajectory_follow``: how a joint trajectory is checked and followed;
``sut_process``: the node's process.
"""
