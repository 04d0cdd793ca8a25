"""What the framework serves to an external controller under test: the ros2_control interfaces of a real arm
(a joint trajectory controller's action and topic, joint states, the clock). ``trajectory_follow`` is ROS-free;
``arm_server`` is the rclpy side."""
