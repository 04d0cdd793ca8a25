"""Strict JSON files for run outputs (summary.json, experiment.json): NaN and infinities become null.

They are read and written through :mod:`cosim_validation.runs.campaign.stores`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.runs.campaign import stores
from cosim_validation.runs.campaign.stores import write_text


def jsonable(value: Any) -> Any:
    """Plain JSON values: numpy scalars and arrays as Python ones, NaN and infinities as None.

    Args:
        value: A value, or dicts, lists and tuples of them (nested); dict keys become strings, tuples lists.
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented strict JSON, atomically (a failed write leaves the old file whole).

    Args:
        path: The JSON file to (re)write.
        data: What to write, made plain by :func:`jsonable`.

    Raises:
        StoreError: The file cannot be written (naming it: a full disk, permissions).
    """
    write_text(path, json.dumps(jsonable(data), indent=2, allow_nan=False) + "\n")


def read_json(path: Path, remedy: str = "") -> dict[str, Any]:
    """Read a JSON object (``remedy``: what to do if it is damaged).

    Args:
        path: The JSON file.
        remedy: What the user should do if the file is damaged, for the error's message.

    Raises:
        StoreError: The file cannot be read, is not JSON, or holds no object (naming it).
    """
    return stores.read_json(path, remedy)
