"""``cosim bag recover``: make a finished, readable bag of one whose recorder died before finishing it."""

from __future__ import annotations

import argparse
from pathlib import Path

from cosim_validation.cli import arg_types
from cosim_validation.cli.output import print_json
from cosim_validation.cli.output_path import check_folder, checked_output

HELP = "recover a bag cut short (a killed recorder): every message written before the cut, in a finished MCAP"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``cosim bag``.

    Args:
        parser: The ``cosim bag`` subcommand's parser, to add its arguments to.
    """
    parser.add_argument("action", choices=("recover",), help="recover: finish a bag cut short")
    parser.add_argument(
        "bag",
        type=arg_types.path,
        help="the unfinished bag: session.mcap.part (or a run directory, or an older session.bag-in-progress)",
    )
    parser.add_argument(
        "-o",
        "--output",
        default=None,
        type=arg_types.name,  # an empty one was taken as the default
        help="the finished bag to write (default: the name without .part)",
    )


def _source(given: Path) -> Path:
    """The unfinished file: ``given`` itself, or the one a run directory or its ``session.mcap`` left."""
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.live.ros.bag import PART_SUFFIX
    from cosim_validation.live.ros.bag_recovery import in_progress_bag

    if given.is_file():
        return given
    if given.name.endswith(PART_SUFFIX):  # the unfinished file itself was named: there is no other place to look
        raise InputError(f"{given}: no such file")
    bag = given / "session.mcap" if given.is_dir() else given
    found = in_progress_bag(bag)
    if found is None:
        raise InputError(
            f"{given}: no unfinished bag there (looked for {bag.name}.part and {bag.stem}.bag-in-progress/)"
        )
    return found


def run(args: argparse.Namespace) -> int:
    """Recover and print what was recovered.

    Args:
        args: The parsed ``cosim bag`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    from cosim_validation.live.ros.bag import PART_SUFFIX
    from cosim_validation.live.ros.bag_recovery import LEGACY_FOLDER_SUFFIX, recover_bag

    source = _source(Path(args.bag))
    if args.output:
        target = checked_output("-o", args.output, {"BAG": source}, (".mcap",))
    elif source.name.endswith(PART_SUFFIX):
        target = source.with_name(source.name[: -len(PART_SUFFIX)])
    elif source.parent.name.endswith(LEGACY_FOLDER_SUFFIX):
        target = source.parent.with_suffix(".mcap")
    else:
        target = source.with_name(source.stem + ".recovered.mcap")
    check_folder("-o", target)
    recovered = recover_bag(source, target)
    if args.json:
        print_json(
            {
                "source": str(recovered.source),
                "bag": str(recovered.path),
                "messages": recovered.messages,
                "topics": recovered.topics,
                "finished": recovered.finished,
                "read_bytes": recovered.read_bytes,
                "size_bytes": recovered.size_bytes,
            }
        )
    else:
        print(recovered.message())
    return 0
