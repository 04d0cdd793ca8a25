"""Types of command-line values shared by several commands, checked where argparse reads them."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

from cosim_validation.common.config.config_node import MAX_POINT_M, MAX_SEED

N = TypeVar("N", int, float)

#: The largest case seed (a 63-bit hash of the suite's seed and the test id)
MAX_CASE_SEED = 2**63 - 1
#: The most epochs of a training (each is a pass over the dataset: a million would run for days)
MAX_EPOCHS = 100_000


def seed(text: str) -> int:
    """A random seed: an integer that fits 32 bits, as every generator the project seeds takes it.

    Args:
        text: The option's value.

    Raises:
        argparse.ArgumentTypeError: Not an integer in 0..2**32-1 (4294967296 was taken and wrapped around).
    """
    return _number(text, int, lambda v: 0 <= v <= MAX_SEED, f"an integer 0 to {MAX_SEED}")


def case_seed(text: str) -> int:
    """A case's seed, as a session's ``error_collection`` case draws it: an integer that fits 63 bits.

    Args:
        text: The option's value.

    Raises:
        argparse.ArgumentTypeError: Not an integer in 0..2**63-1.
    """
    return _number(text, int, lambda v: 0 <= v <= MAX_CASE_SEED, f"an integer 0 to {MAX_CASE_SEED}")


def epochs(text: str) -> int:
    """A training's upper bound on epochs: an integer from 1 to ``MAX_EPOCHS``.

    Args:
        text: The option's value.

    Raises:
        argparse.ArgumentTypeError: Not an integer in 1..MAX_EPOCHS (0 was refused deep in the training, without
            naming the option).
    """
    return _number(text, int, lambda v: 1 <= v <= MAX_EPOCHS, f"an integer 1 to {MAX_EPOCHS}")


def coordinate(text: str) -> float:
    """One coordinate of a point in base_link [m], finite and within ``MAX_POINT_M`` of the base, as a configured point.

    Args:
        text: The option's value.

    Raises:
        argparse.ArgumentTypeError: Not a number, not finite, or farther than the bound (1e300 overflowed).
    """
    expected = f"a coordinate within +-{MAX_POINT_M:g} m of the base"
    return _number(text, float, lambda v: math.isfinite(v) and abs(v) <= MAX_POINT_M, expected)


def _number(text: str, kind: Callable[[str], N], within: Callable[[N], bool], expected: str) -> N:
    """``text`` read by ``kind`` if ``within`` holds for it, else an argparse error saying what was ``expected``."""
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if not within(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text}")
    return value


def path(text: str) -> str:
    """A file or folder named on the command line: not empty (an empty one read as '.', the working directory).

    Args:
        text: The option's value.

    Raises:
        argparse.ArgumentTypeError: Empty.
    """
    if not text:
        raise argparse.ArgumentTypeError("expected a path, got an empty text")
    return text


def name(text: str) -> str:
    """A name that is not empty (an empty one was taken as "the default").

    Args:
        text: The option's value.

    Raises:
        argparse.ArgumentTypeError: Empty or only spaces.
    """
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a name, got an empty text (leave the option out for the default)")
    return text


class Once(argparse.Action):
    """An option that may be given once: a second ``--detector tip_mm=5`` replaced the first without a word."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        """Store ``values``, or end with a usage error if the option was given before."""
        if getattr(namespace, f"_{self.dest}_given", False):
            parser.error(f"argument {option_string}: given twice; expected it once (join its keys with commas)")
        setattr(namespace, f"_{self.dest}_given", True)
        setattr(namespace, self.dest, values)
