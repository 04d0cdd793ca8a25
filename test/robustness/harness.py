"""Running one bad input through ``cosim`` in this process and judging what came back.

A bad input must end with exit code 1 and exactly one ``error:`` line on stderr naming the file and the key or
field (with ``--json``: one JSON error object on stdout and nothing on stderr), no traceback, and no output file
left behind. A failure names its class first, so a run of the corpus can be tallied (issue 15's table):
``TRACEBACK`` (an exception escaped), ``HUNG`` (past its time limit), ``WRONG`` (another exit code, no or several
error lines, a message that does not name what is wrong), ``LOST`` (an output file left half-written or claimed).
"""

from __future__ import annotations

import json
import signal
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cosim_validation.cli.main import main


@dataclass(frozen=True)
class Case:
    """One bad input: the command line, what its error must name, what must not exist afterwards.

    Attributes:
        argv: Arguments of ``cosim`` (without ``--json``).
        names: Texts the error must contain: the file and the key or field (case-sensitive).
        absent: Paths the command must not leave behind (outputs it was asked to write).
    """

    argv: list[str]
    names: tuple[str, ...]
    absent: tuple[Path, ...] = field(default_factory=tuple)


#: Warnings Python does not print outside ``__main__`` by default (a user never sees them).
_HIDDEN_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)

#: A corpus entry: builds its case inside a fresh folder, from the shared workspace.
Builder = Callable[[Path, "Workspace"], Case]


@dataclass(frozen=True)
class Workspace:
    """Valid inputs shared by the corpus, made once per session from the shipped files.

    Attributes:
        config: The shipped case-study configuration (copied, with its properties file beside it).
        properties: The shipped properties file.
        graph: The shipped session graph.
        suite: A valid suite (the campaign tests' grid suite).
        run_dir: A finished campaign run directory (the campaign tests' reference run).
        records: Exported records of one completed case: ``{"expected": path, "virtual": path, ...}``.
        bag: A valid bag (a JointState recording of someone else's arm).
    """

    config: Path
    properties: Path
    graph: Path
    suite: Path
    run_dir: Path
    records: dict[str, Path]
    bag: Path


class Hung(BaseException):  # not an Exception: no `except Exception` in the code under test swallows it
    """A case ran past its time limit (a regression to a hang fails instead of blocking the suite)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`Hung` in this (main) thread after ``seconds``, even inside a blocking ``open()``."""

    def _expired(signum: int, frame: object) -> None:
        raise Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, _expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_fast_case(case: Case, as_json: bool, capfd: pytest.CaptureFixture[str], seconds: float = 30.0) -> None:
    """:func:`run_case` within ``seconds``: a case that hangs fails with ``HUNG``."""
    try:
        with time_limit(seconds):
            run_case(case, as_json, capfd)
    except Hung as exc:
        pytest.fail(f"HUNG: cosim {' '.join(case.argv)}: {exc}")


def run_case(case: Case, as_json: bool, capfd: pytest.CaptureFixture[str]) -> None:
    """Run ``case`` and fail with TRACEBACK / WRONG / LOST unless it ends as a bad input must."""
    argv = [*case.argv, "--json"] if as_json else list(case.argv)
    capfd.readouterr()
    escaped: BaseException | None = None
    code = None
    with warnings.catch_warnings(record=True) as caught:  # what a user's terminal would show (pytest hides it)
        warnings.simplefilter("default")
        try:
            code = main(argv)
        except Hung:
            raise
        except BaseException as exc:  # noqa: BLE001 - an escaping exception is what the corpus looks for
            escaped = exc
    out, err = capfd.readouterr()
    if escaped is not None or "Traceback" in out + err:
        pytest.fail(f"TRACEBACK: cosim {' '.join(argv)}: {escaped!r}\n{err[-2000:]}")
    shown = [w for w in caught if not issubclass(w.category, _HIDDEN_BY_DEFAULT)]
    if shown:
        pytest.fail(
            f"WRONG: cosim {' '.join(argv)}: warnings printed before the error: {[str(w.message) for w in shown]}"
        )
    if code != 1:
        pytest.fail(f"WRONG: cosim {' '.join(argv)}: exit code {code}, expected 1\n{out[-1000:]}\n{err[-1000:]}")
    message = _json_error(argv, out, err) if as_json else _text_error(argv, err)
    missing = [name for name in case.names if name not in message]
    if missing:
        pytest.fail(f"WRONG: cosim {' '.join(argv)}: the error does not name {missing}: {message}")
    left = [str(p) for p in case.absent if p.exists() and not (p.is_dir() and not any(p.iterdir()))]
    if left:
        pytest.fail(f"LOST: cosim {' '.join(argv)}: left {left} behind after the error: {message}")


def _text_error(argv: Sequence[str], err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    if len(errors) != 1 or lines != errors:
        pytest.fail(f"WRONG: cosim {' '.join(argv)}: expected one error line and nothing else on stderr, got:\n{err}")
    return errors[0]


def _json_error(argv: Sequence[str], out: str, err: str) -> str:
    if err.strip():
        pytest.fail(f"WRONG: cosim {' '.join(argv)}: --json, but stderr holds:\n{err}")
    try:
        body = json.loads(out)["error"]
    except (ValueError, KeyError, TypeError):
        pytest.fail(f"WRONG: cosim {' '.join(argv)}: --json, but stdout is no JSON error object:\n{out}")
    return " ".join(str(body.get(k, "")) for k in ("message", "file", "key"))
