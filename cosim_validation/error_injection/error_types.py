"""The errors of learned error injection: a dataset, a model file or a calibration that cannot be used."""

from __future__ import annotations

from cosim_validation.common.exceptions import CosimError, InputError


class DatasetError(InputError):
    """A dataset file (Parquet or CSV) is missing, malformed, or has too few usable rows."""


class ModelFileError(InputError):
    """An error-model file is missing, truncated, malformed, or made for another robot."""


class CalibrationError(CosimError):
    """Hand-eye calibration cannot be solved from the given poses (too few, or motion that leaves it open)."""
