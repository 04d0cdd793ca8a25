"""quiet_stdout silences file descriptors 1 and 2 in the main thread only: they belong to the whole process."""

from __future__ import annotations

import os
import threading

from cosim_validation.common.optional import quiet_stdout


def _target(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


def test_the_main_thread_is_silenced_and_a_thread_takes_nothing_from_it() -> None:
    before = (_target(1), _target(2))
    with quiet_stdout():
        assert (_target(1), _target(2)) == (os.devnull, os.devnull)
    assert (_target(1), _target(2)) == before
    seen: list[tuple[str, str]] = []

    def in_a_thread() -> None:
        with quiet_stdout():
            seen.append((_target(1), _target(2)))  # what the main thread prints to meanwhile

    thread = threading.Thread(target=in_a_thread)
    thread.start()
    thread.join()
    assert seen == [before]
