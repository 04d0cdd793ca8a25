"""The launcher's wait for the recorder to drain: a count that stands while the recorder's own timer goes on is
quiet; a count that stands because the recorder got no CPU (its timer stood too) is not."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cosim_validation.live.session.process_group import ProcessGroup


@pytest.fixture
def group(tmp_path: Path) -> Iterator[ProcessGroup]:
    group = ProcessGroup(tmp_path)
    group.processes["recorder"] = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield group
    group.processes["recorder"].kill()
    group.processes["recorder"].wait()


def _write_every(path: Path, content: Callable[[int], str], stop: threading.Event) -> threading.Thread:
    path.write_text(content(0))

    def run() -> None:
        tick = 0
        while not stop.wait(0.05):
            tick += 1
            part = path.with_suffix(".part")
            part.write_text(content(tick))
            part.replace(path)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(
    ("content", "quiet"),
    [
        (lambda tick: f"120 {tick}", True),  # drained: the timer runs, nothing more to write
        (lambda tick: "120 7", False),  # starved: neither the count nor the timer moves
        (lambda tick: f"{120 + tick} {tick}", False),  # still writing a backlog
        (lambda tick: "120", True),  # a bare count (no rounds): standing still for the wall time is enough
    ],
    ids=["drained", "starved", "writing", "bare-count"],
)
def test_wait_quiet_tells_drained_from_starved(group: ProcessGroup, content: Callable[[int], str], quiet: bool) -> None:
    stop = threading.Event()
    thread = _write_every(group.ready_dir / "recorder.progress", content, stop)
    try:
        start = time.monotonic()
        assert group.wait_quiet("recorder", quiet_s=0.3, timeout_s=2.0, rounds=3) is quiet
        waited = time.monotonic() - start
    finally:
        stop.set()
        thread.join()
    assert waited >= 0.3 if quiet else waited >= 2.0


def test_no_progress_file_or_an_exited_node_is_not_waited_for(group: ProcessGroup) -> None:
    start = time.monotonic()
    assert group.wait_quiet("recorder", timeout_s=5.0) is False  # no progress file: not a recorder
    (group.ready_dir / "recorder.progress").write_text("5 1")
    group.processes["recorder"].kill()
    group.processes["recorder"].wait()
    assert group.wait_quiet("recorder", timeout_s=5.0) is False
    assert time.monotonic() - start < 1.0
