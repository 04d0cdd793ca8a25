"""Message classes by their ROS type name (``pkg/msg/Name``), for nodes that handle topics generically."""

from __future__ import annotations

import importlib
from typing import Any


def message_class(msgtype: str) -> Any:
    """The rclpy message class of ``pkg/msg/Name``.

    Args:
        msgtype: The type name, ``pkg/msg/Name``.
    """
    package, kind, name = msgtype.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)
