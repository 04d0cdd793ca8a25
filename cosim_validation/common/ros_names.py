"""What a ROS name (a topic, service or namespace) may hold, without ROS.

Tokens of letters, digits and '_', none starting with a digit, between '/' (design.ros2.org, "Topic and Service name
mapping to DDS"). Checked where a name is configured, so a bad one is an error naming the key, not rclpy's exception
from inside a node or a worker.
"""

from __future__ import annotations

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/")


def ros_name_problem(text: str, absolute: bool = False) -> str | None:
    """Why ``text`` is not a ROS name (None: it is).

    Args:
        text: The name, e.g. ``/controller_manager`` or ``arm_controller``.
        absolute: It must start with '/'.
    """
    tokens = text.strip("/").split("/")
    if (
        not text.strip("/")
        or not set(text) <= _NAME_CHARS
        or text[-1] == "/"
        or "//" in text
        or any(not t or t[0].isdigit() for t in tokens)
    ):
        return (
            f"expected a ROS name (letters, digits and '_', not starting with a digit, '/' between parts), got {text!r}"
        )
    if absolute and not text.startswith("/"):
        return f"expected an absolute ROS namespace, starting with '/' (like /PSM1), got {text!r}"
    return None
