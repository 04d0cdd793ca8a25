"""Play / pause / seek controls for a recorded session (``cosim dashboard --bag``)."""

from __future__ import annotations

import time
from collections.abc import Callable

from cosim_validation.live.dashboard.bag_player import BagPlayer
from cosim_validation.live.dashboard.qt_binding import load_qt

SLIDER_STEPS = 1000
TICK_MS = 50  # wall-clock period of playback steps


class PlayerBar:
    """A play/pause button, a seek slider and the time, driving a :class:`BagPlayer`.

    Args:
        player: The bag's player.
        on_change: Called after the cursor moved (the dashboard redraws).
    """

    def __init__(self, player: BagPlayer, on_change: Callable[[], None]) -> None:
        qt = load_qt()
        w = qt.QtWidgets
        self.player, self._on_change = player, on_change
        self.widget = w.QWidget()
        self.widget.setObjectName("player_bar")
        layout = w.QHBoxLayout(self.widget)
        layout.setContentsMargins(0, 0, 0, 0)
        self.button = w.QPushButton("play")
        self.button.setObjectName("play_button")
        self.button.clicked.connect(self.toggle)
        self.slider = w.QSlider(qt.QtCore.Qt.Horizontal)
        self.slider.setObjectName("seek_slider")
        self.slider.setRange(0, SLIDER_STEPS)
        self.slider.sliderMoved.connect(self._seek_steps)
        self.label = w.QLabel()
        for item in (self.button, self.slider, self.label):
            layout.addWidget(item)
        self._timer = qt.QtCore.QTimer(self.widget)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._last = time.monotonic()
        self.sync()

    def toggle(self) -> None:
        """Play if paused, pause if playing."""
        if self.player.playing:
            self.player.pause()
            self._timer.stop()
        else:
            self.player.play()
            self._last = time.monotonic()
            self._timer.start()
        self.sync()

    def seek(self, t_s: float) -> None:
        """Move the cursor to ``t_s`` seconds after the bag's start and redraw.

        Args:
            t_s: Cursor position in seconds after the bag's first event, in [s]; clamped to the bag.
        """
        self.player.seek(t_s)
        self.sync()
        self._on_change()

    def _seek_steps(self, steps: int) -> None:
        self.seek(self.player.duration_s * steps / SLIDER_STEPS)

    def _tick(self) -> None:
        now = time.monotonic()
        playing = self.player.advance(now - self._last)
        self._last = now
        if not playing:
            self._timer.stop()
        self.sync()
        self._on_change()

    def sync(self) -> None:
        """Show the player's state: button text, slider position, time."""
        self.button.setText("pause" if self.player.playing else "play")
        duration = self.player.duration_s
        self.slider.blockSignals(True)
        self.slider.setValue(round(SLIDER_STEPS * self.player.position_s / duration) if duration else 0)
        self.slider.blockSignals(False)
        self.label.setText(f"{self.player.position_s:6.1f} / {duration:.1f} s  (x{self.player.rate:g})")
