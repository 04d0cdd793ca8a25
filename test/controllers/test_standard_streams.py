"""The command's standard streams while a user's code runs on a :class:`CallThread`."""

from __future__ import annotations

import io
import sys
import threading
import time

import pytest

from cosim_validation.controllers.plugin_controllers import CallHungError, CallThread
from cosim_validation.controllers.standard_streams import GUARD, KeptOpen


def _own_streams(monkeypatch: pytest.MonkeyPatch) -> tuple[io.StringIO, io.StringIO]:
    """The command's streams for one test, set in its body (pytest sets its own between a fixture and the test); the
    monkeypatch puts pytest's back."""
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    return out, err


def _closes_and_redirects() -> str:
    sys.stdout.close()
    sys.stderr = io.StringIO()  # the user's own file
    print("the plugin's line")
    return "planned"


def test_a_call_that_closes_stdout_and_moves_stderr_leaves_the_commands_streams(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out, err = _own_streams(monkeypatch)
    result, _ = CallThread("closer").call(_closes_and_redirects, 10.0)
    assert result == "planned"
    assert sys.stdout is out
    assert sys.stderr is err
    assert not out.closed
    assert "the plugin's line" in out.getvalue()
    print("ours", file=sys.stderr)
    assert err.getvalue() == "ours\n"
    assert GUARD.running == 0


def test_an_abandoned_call_does_not_put_back_streams_that_went_stale(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A call abandoned after its limit returns later: by then the streams it found may have been replaced (a test
    framework swaps them between tests); putting them back broke the next test's output ("I/O operation on closed
    file")."""
    out, _ = _own_streams(monkeypatch)
    release = threading.Event()
    returned = threading.Event()

    def hangs() -> None:
        release.wait(30)
        returned.set()

    with pytest.raises(CallHungError):
        CallThread("hangs").call(hangs, 0.2)
    assert sys.stdout is out  # the command's own again at once, not a wrapper
    later = io.StringIO()
    sys.stdout = later  # the next test's streams
    release.set()
    assert returned.wait(10)
    time.sleep(0.2)  # the abandoned thread is past its call
    assert sys.stdout is later
    assert GUARD.running == 0


def test_overlapping_calls_on_two_threads_unwrap_once_both_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out, err = _own_streams(monkeypatch)
    first_in, second_done = threading.Event(), threading.Event()
    seen: list[object] = []

    def first() -> None:
        first_in.set()
        second_done.wait(10)
        seen.append(sys.stdout)

    def second() -> None:
        assert first_in.wait(10)
        seen.append(sys.stdout)

    worker = threading.Thread(target=lambda: CallThread("first").call(first, 20.0))
    worker.start()
    CallThread("second").call(second, 20.0)
    assert isinstance(sys.stdout, KeptOpen)  # the first call still runs: still wrapped
    second_done.set()
    worker.join(20)
    assert all(isinstance(stream, KeptOpen) for stream in seen)
    assert sys.stdout is out
    assert sys.stderr is err
    assert GUARD.running == 0
