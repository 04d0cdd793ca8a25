"""Printing results as aligned text tables or JSON."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from cosim_validation.cli.json_document import document_stream
from cosim_validation.runs.campaign.json_file import jsonable


def to_json(data: Any) -> str:
    """Strict JSON (NaN and infinities become null, numpy values become plain ones).

    Args:
        data: What to write: dicts (keys become strings), lists, tuples, numpy arrays and scalars, plain
            values.
    """
    return json.dumps(jsonable(data), indent=2, sort_keys=False, allow_nan=False)


def warn_line(message: str) -> None:
    """Print ``message`` as one ``warning:`` line on stderr (stdout, and a JSON document on it, stay whole).

    Args:
        message: The warning, one line.
    """
    print(f"warning: {message}", file=sys.stderr)


def print_json(data: Any) -> None:
    """Print ``data`` as strict JSON on stdout (the command's document, :mod:`~cosim_validation.cli.json_document`).

    Args:
        data: As :func:`to_json` takes it.
    """
    print(to_json(data), file=document_stream())


def format_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """An aligned plain-text table; numbers are right-aligned.

    Args:
        headers: The column titles.
        rows: The rows, each with one cell per header; floats are shown with 4 significant digits (no
            decimals from 10000 on), NaN and infinities as ``-``.
    """
    text_rows = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in text_rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    numeric = [all(_is_number(r[i]) for r in text_rows) and bool(text_rows) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)]
        return "  ".join(parts).rstrip()

    out = [line(list(headers)), line(["-" * w for w in widths])]
    out += [line(r) for r in text_rows]
    return "\n".join(out)


def _cell(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(float(value)):
            return "-"
        return f"{float(value):.4g}" if abs(float(value)) < 1e4 else f"{float(value):.0f}"
    return str(value)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return text == "-"
    return True
