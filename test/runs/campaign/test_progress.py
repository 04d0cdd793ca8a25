"""The progress line counts, estimates and writes a line now and then when not on a terminal."""

from __future__ import annotations

import io

from cosim_validation.runs.campaign.progress import Progress, format_duration


def test_durations() -> None:
    assert [format_duration(s) for s in (5, 65, 3725)] == ["5s", "1m05s", "1h02m"]


def test_log_stream_gets_final_line_with_counts() -> None:
    stream = io.StringIO()
    progress = Progress(4, stream=stream)
    for i in range(4):
        progress.advance(failed=i == 2)
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith("[########################] 4/4 cases, 1 failed")
    assert "ETA 0s" in lines[-1]
    assert len(lines) <= 2  # first item and the last one, not one line per item
