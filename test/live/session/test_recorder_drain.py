"""The launcher's wait for the recorder to drain: a count that stands while the recorder's own timer goes on is
quiet; a count that stands because the recorder got no CPU (its timer stood too) is not."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


def test_no_progress_file_or_an_exited_node_is_not_waited_for(
    group: ProcessGroup, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each answer comes at the first look, without waiting (a wait for them would have run into its limit)."""
    import cosim_validation.live.session.process_group as process_group

    naps: list[float] = []

    class Clock:  # the module's clock, its naps counted: a wait naps between looks
        sleep = staticmethod(naps.append)

        def __getattr__(self, name: str) -> Any:
            return getattr(time, name)

    monkeypatch.setattr(process_group, "time", Clock())
    assert group.wait_quiet("recorder", timeout_s=60.0) is False  # no progress file: not a recorder
    (group.ready_dir / "recorder.progress").write_text("5 1")
    group.processes["recorder"].kill()
    group.processes["recorder"].wait()
    assert group.wait_quiet("recorder", timeout_s=60.0) is False
    assert naps == []


_SIGINT_TIME = (
    "import signal, sys, time\n"
    "def stop(*_):\n"
    "    open(sys.argv[1], 'w').write(repr(time.time()))\n"
    "    raise SystemExit(0)\n"
    "signal.signal(signal.SIGINT, stop)\n"
    "open(sys.argv[1] + '.ready', 'w').close()\n"
    "time.sleep(60)\n"
)


@pytest.mark.parametrize("drain_first", [True, False], ids=["completed", "ctrl_c"])
def test_after_a_completed_session_the_recorder_drains_before_any_node_stops(tmp_path: Path, drain_first: bool) -> None:
    """The other nodes get SIGINT only once the recorder stopped writing (it took what they sent while they could
    still deliver it); after a Ctrl-C they get it at once."""
    group = ProcessGroup(tmp_path)
    for name in ("monitor", "recorder"):
        command = [sys.executable, "-c", _SIGINT_TIME, str(tmp_path / f"{name}.sigint")]
        group.processes[name] = subprocess.Popen(command, start_new_session=True)
    deadline = time.monotonic() + 30.0
    for name in ("monitor", "recorder"):  # their SIGINT handlers are in place
        while not (tmp_path / f"{name}.sigint.ready").exists():
            assert group.processes[name].poll() is None, f"{name} exited"
            assert time.monotonic() < deadline, f"{name} did not start in 30 s"
            time.sleep(0.01)
    stop = threading.Event()
    writing_until = time.time() + 1.5  # the recorder writes a backlog for 1.5 s, then only its timer runs

    def content(tick: int) -> str:
        return f"{tick if time.time() < writing_until else 10**6} {tick}"

    thread = _write_every(group.ready_dir / "recorder.progress", content, stop)
    try:
        codes = group.stop(grace_s=3.0, last=["recorder"], drain_s=10.0, drain_first=drain_first)
    finally:
        stop.set()
        thread.join()
    assert codes == {"monitor": 0, "recorder": 0}
    monitor_stopped = float((tmp_path / "monitor.sigint").read_text())
    recorder_stopped = float((tmp_path / "recorder.sigint").read_text())
    assert recorder_stopped > monitor_stopped  # the recorder is always stopped last
    if drain_first:
        assert monitor_stopped > writing_until
    else:
        assert monitor_stopped < writing_until
