"""Live sessions over ROS 2: the session graph, the dashboard, the ROS layer and its nodes."""
