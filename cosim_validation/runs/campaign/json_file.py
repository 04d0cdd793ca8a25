"""Strict JSON files for run outputs (summary.json, experiment.json): NaN and infinities become null."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.common.config import load_json_file
from cosim_validation.common.exceptions import ConfigError


def jsonable(value: Any) -> Any:
    """Plain JSON values: numpy scalars and arrays as Python ones, NaN and infinities as None."""
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
    """Write ``data`` as indented strict JSON."""
    path.write_text(json.dumps(jsonable(data), indent=2, allow_nan=False) + "\n")


def read_json(path: Path) -> dict[str, Any]:
    """Read a JSON object (through the bounded reader).

    Raises:
        ConfigError: Not a regular file, too large, not JSON, nested too deep or not an object.
    """
    data = load_json_file(path)
    if not isinstance(data, dict):
        raise ConfigError(path, "", f"expected a JSON object, got a JSON {type(data).__name__}")
    return data
