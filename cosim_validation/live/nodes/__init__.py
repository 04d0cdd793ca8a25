"""rclpy nodes: thin adapters over the core (convert -> call core -> convert -> publish), one per file."""
