"""A minimal Foxglove WebSocket protocol client for tests (websocket-client).

Protocol facts from the public spec (foxglove/ws-protocol, docs/spec.md, v1): the subprotocol is
``foxglove.websocket.v1`` (foxglove-sdk 0.30's server answers 400 to it and takes ``foxglove.sdk.v1``,
the SDK's name for the same framing, so both are offered); the server sends JSON text frames ``serverInfo``
and ``advertise`` (channels with id, topic, encoding, schemaName, schema, schemaEncoding); a client subscribes with
``{"op": "subscribe", "subscriptions": [{"id", "channelId"}]}``; messages arrive as binary frames: opcode
0x01, subscription id (uint32 LE), log time (uint64 LE, ns), payload. A ``status`` message reports errors.
Seen with foxglove-sdk 0.30.3: a subscription sent as soon as a channel is advertised is sometimes answered with
the status "Unknown channel ID: N" (the server logs "attempted to subscribe to unknown channel"); this client then
subscribes again (the retries are kept in the capture).
"""

from __future__ import annotations

import json
import re
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any

SUBPROTOCOLS = ["foxglove.sdk.v1", "foxglove.websocket.v1"]
MESSAGE_DATA = 0x01
KEEP_PER_CHANNEL = 5000
UNKNOWN_CHANNEL = re.compile(r"Unknown channel ID: (\d+)")
MAX_RETRIES = 50


@dataclass
class Capture:
    """What the client saw."""

    server_info: dict[str, Any] = field(default_factory=dict)
    channels: dict[int, dict[str, Any]] = field(default_factory=dict)  # channel id -> advertisement
    messages: dict[int, list[tuple[int, bytes]]] = field(default_factory=dict)  # channel id -> (log time, payload)
    error: str = ""
    text_ops: list[dict[str, Any]] = field(default_factory=list)
    retries: dict[int, int] = field(default_factory=dict)  # channel id -> subscribe requests sent again

    def by_topic(self, topic: str) -> tuple[dict[str, Any], list[tuple[int, bytes]]]:
        """The advertisement and the messages of ``topic``."""
        for cid, channel in self.channels.items():
            if channel["topic"] == topic:
                return channel, self.messages.get(cid, [])
        raise KeyError(f"{topic} was not advertised; advertised: {sorted(c['topic'] for c in self.channels.values())}")


class FoxgloveClient(threading.Thread):
    """Connects to ``ws://host:port`` (retrying until ``connect_timeout_s``), subscribes to every advertised
    channel and records messages until the server closes the connection or :meth:`stop` is called."""

    def __init__(self, port: int, host: str = "127.0.0.1", connect_timeout_s: float = 240.0) -> None:
        super().__init__(daemon=True)
        self.url, self.connect_timeout_s = f"ws://{host}:{port}", connect_timeout_s
        self.capture = Capture()
        self._stop_flag = threading.Event()
        self._next_sub = 1
        self._subs: dict[int, int] = {}  # subscription id -> channel id

    def stop(self) -> None:
        """Ask the thread to finish."""
        self._stop_flag.set()

    def run(self) -> None:
        import websocket

        deadline = time.monotonic() + self.connect_timeout_s
        ws = None
        while ws is None and not self._stop_flag.is_set():
            try:
                ws = websocket.create_connection(self.url, subprotocols=SUBPROTOCOLS, timeout=1.0)
            except (OSError, websocket.WebSocketException):
                if time.monotonic() > deadline:
                    self.capture.error = f"could not connect to {self.url}"
                    return
                time.sleep(0.2)
        if ws is None:
            return
        try:
            self._receive(ws)
        finally:
            ws.close()

    def _receive(self, ws: Any) -> None:
        import websocket

        while not self._stop_flag.is_set():
            try:
                opcode, data = ws.recv_data()
            except websocket.WebSocketTimeoutException:
                continue
            except (websocket.WebSocketConnectionClosedException, OSError):
                return
            if opcode == websocket.ABNF.OPCODE_TEXT:
                self._on_text(ws, json.loads(data))
            elif opcode == websocket.ABNF.OPCODE_BINARY and data and data[0] == MESSAGE_DATA:
                sub_id, log_time = struct.unpack_from("<IQ", data, 1)
                kept = self.capture.messages.setdefault(self._subs[sub_id], [])
                if len(kept) < KEEP_PER_CHANNEL:
                    kept.append((log_time, bytes(data[13:])))
            elif opcode == websocket.ABNF.OPCODE_CLOSE:
                return

    def _on_text(self, ws: Any, message: dict[str, Any]) -> None:
        self.capture.text_ops.append(message)
        unknown = UNKNOWN_CHANNEL.fullmatch(str(message.get("message", ""))) if message.get("op") == "status" else None
        if unknown is not None:  # foxglove-sdk 0.30.3 may not know a channel it has just advertised: ask again
            channel_id = int(unknown.group(1))
            self.capture.retries[channel_id] = self.capture.retries.get(channel_id, 0) + 1
            if self.capture.retries[channel_id] <= MAX_RETRIES:
                time.sleep(0.05)
                sub_id = next(s for s, c in self._subs.items() if c == channel_id)
                ws.send(json.dumps({"op": "subscribe", "subscriptions": [{"id": sub_id, "channelId": channel_id}]}))
        elif message.get("op") == "serverInfo":
            self.capture.server_info = message
        elif message.get("op") == "advertise":
            subscriptions = []
            for channel in message["channels"]:
                self.capture.channels[channel["id"]] = channel
                self._subs[self._next_sub] = channel["id"]
                subscriptions.append({"id": self._next_sub, "channelId": channel["id"]})
                self._next_sub += 1
            ws.send(json.dumps({"op": "subscribe", "subscriptions": subscriptions}))
