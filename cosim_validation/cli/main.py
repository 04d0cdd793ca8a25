"""``cosim``: entry point and subcommand dispatch.

Each subcommand lives in ``cosim_validation/cli/<name>.py`` and defines ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``. Subcommand modules import heavy libraries
inside ``run`` so that ``cosim --help`` stays fast.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import signal
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

from cosim_validation import __version__
from cosim_validation.cli.json_document import document_stream, json_document, keep_stdout_for_the_document
from cosim_validation.common.abandoned_calls import end_process
from cosim_validation.common.exceptions import ConfigError, CosimError, InputError
from cosim_validation.common.interrupts import interrupted

# subcommand name -> module under cosim_validation.cli
SUBCOMMANDS: dict[str, str] = {
    "doctor": "doctor",
    "demo": "demo",
    "replay": "replay",
    "session": "session",
    "testgen": "testgen",
    "check": "check",
    "run-case": "run_case",
    "campaign": "campaign",
    "report": "report",
    "experiment": "experiment",
    "supervisor": "supervisor",
    "dashboard": "dashboard",
    "bag": "bag",
    "export": "export",
    "export-crtk": "export_crtk",
    "import-crtk": "import_crtk",
    "hazards": "hazards",
    "errors": "errors",
}


def _load(module: str) -> ModuleType:
    return importlib.import_module(f"cosim_validation.cli.{module}")


class UsageError(InputError):
    """A command line argparse refused (unknown option, missing or malformed value)."""


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors are :class:`UsageError` (one ``error:`` line, exit code 1).

    Not a usage block and exit code 2; ``--help`` and ``--version`` still print and exit 0.
    """

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every subcommand."""
    parser = _Parser(
        prog="cosim",
        description="Co-simulation validation of autonomous surgical-robot software.",
    )
    parser.add_argument("--version", action="version", version=f"cosim_validation {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module_name in SUBCOMMANDS.items():
        module = _load(module_name)
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        p.add_argument("--json", action="store_true", help="print machine-readable JSON instead of text")
        module.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def error_object(exc: BaseException) -> dict[str, Any]:
    """What ``--json`` prints for an error: ``{"error": {"message", "kind", and "file" / "key" when known}}``.

    Args:
        exc: The error that ended the command.
    """
    body: dict[str, Any] = {"message": str(exc), "kind": type(exc).__name__}
    if isinstance(exc, ConfigError):
        body |= {"file": exc.source, "key": exc.key}
    elif isinstance(exc, OSError) and exc.filename is not None:
        body["file"] = str(exc.filename)
    elif isinstance(getattr(exc, "source", None), str):
        body["file"] = exc.source  # type: ignore[attr-defined]
    return {"error": body}


def _report(exc: BaseException, as_json: bool) -> int:
    """One ``error:`` line on stderr, or the error object on stdout with ``--json``; exit code 1."""
    if as_json:
        print(json.dumps(error_object(exc), indent=2), file=document_stream())
    else:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
    return 1


#: The longest error line printed whole [characters]: a message quoting a value of the user's (an expression
#: nested 3,000 parentheses deep) keeps its start (the file and key) and its end (what was expected) around a note
MAX_ERROR_LINE = 1000


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and not isinstance(exc, CosimError):
        where = f"{exc.filename}: " if exc.filename is not None else ""
        return _shortened(f"{where}{exc.strerror or exc}")
    # a multi-line message (an expression and a caret under its column) folds into one line; the caret, which
    # points at nothing once folded, is left out: the message names the column
    return _shortened(" ".join(line.strip() for line in str(exc).split("\n") if line.strip(" ^")).strip())


def _shortened(line: str) -> str:
    """``line``, or its first and last parts around how many characters were left out when it is too long."""
    if len(line) <= MAX_ERROR_LINE:
        return line
    head, tail = MAX_ERROR_LINE * 3 // 5, MAX_ERROR_LINE // 3
    return f"{line[:head]} ... ({len(line) - head - tail} characters left out) ... {line[-tail:]}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``cosim`` with ``argv`` (default: sys.argv[1:]); return the exit code.

    Bad input becomes one ``error:`` line on stderr and exit code 1, never a traceback (with ``--json``: an
    error object on stdout). An OSError that escapes (a file that cannot be read or written, a full disk) is
    reported the same way, naming the file.

    Args:
        argv: The command line after the program's name; None: ``sys.argv[1:]``.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in args_list
    try:
        args = build_parser().parse_args(args_list)
    except UsageError as exc:
        return _report(exc, as_json)
    with json_document() if as_json else contextlib.nullcontext():
        try:
            return int(args._module.run(args))
        except KeyboardInterrupt:
            return _interrupted()
        except BrokenPipeError as exc:
            if _reader_gone():  # `cosim ... | head`: the reader has what it wanted; nothing to say to anyone
                return 1
            return _report(exc, as_json)
        except (CosimError, OSError) as exc:
            return _interrupted() if interrupted(exc) else _report(exc, as_json)
        except Exception as exc:
            if interrupted(exc):  # e.g. an ImportError of a compiled module whose init a Ctrl-C broke
                return _interrupted()
            raise


def _reader_gone() -> bool:
    """Whether standard output is a pipe whose reader has closed it (writing there is what broke).

    A broken pipe to something else (a node's stdin) is an error to report; this one is the shell's ``| head``.
    """
    import select

    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        broken = any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no real descriptor (captured, closed)
        return False
    if broken:
        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)  # nothing left to flush at exit
    return broken


def _interrupted() -> int:
    print("error: interrupted", file=sys.stderr)
    return 130


def entry_point() -> None:
    """Console-script entry point; takes Ctrl-C back if the parent ignored it.

    See :mod:`cosim_validation.common.interrupts`.
    """
    from cosim_validation.common.interrupts import forget_handled_interrupt, restore_sigint

    restore_sigint()
    # a user's plugin runs off the main thread, where it cannot set a handler: its signal.alarm() only killed the
    # command (exit 142, nothing said); no part of cosim uses SIGALRM
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    try:
        code = main()
        sys.stdout.flush()  # here, not at exit: a block-buffered pipe whose reader left fails on this flush (exit 120)
        if "--json" in sys.argv[1:]:
            keep_stdout_for_the_document()
    except BrokenPipeError:  # the reader of stdout went away while an error object was written (| head)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        code = 1
    forget_handled_interrupt()  # main() handled any Ctrl-C: the exit status is its own, not a death by SIGINT
    # the outcome is decided and written: a Ctrl-C while the interpreter ends (it joins a background thread, e.g. a
    # session's bag-check world still loading after an early error) would only turn the status into a traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    end_process(code)  # a call left running on its thread: no finalization under it (it aborted the process)
    sys.exit(code)


if __name__ == "__main__":
    entry_point()
