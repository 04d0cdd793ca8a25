"""``cosim``: entry point and subcommand dispatch.

Each subcommand lives in ``cosim_validation/cli/<name>.py`` and defines ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``. Subcommand modules import heavy libraries
inside ``run`` so that ``cosim --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

from cosim_validation import __version__
from cosim_validation.exceptions import CosimError

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
}


def _load(module: str) -> ModuleType:
    return importlib.import_module(f"cosim_validation.cli.{module}")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``cosim`` with ``argv`` (default: sys.argv[1:]); return the exit code.

    Bad input becomes one ``error:`` line on stderr and exit code 1, never a traceback.
    """
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        return int(args._module.run(args))
    except CosimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


def entry_point() -> None:
    """Console-script entry point; takes Ctrl-C back if the parent ignored it (:mod:`cosim_validation.interrupts`)."""
    from cosim_validation.interrupts import restore_sigint

    restore_sigint()
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
