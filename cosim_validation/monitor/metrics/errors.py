"""Errors of the metrics package."""

from __future__ import annotations

from cosim_validation.common.exceptions import InputError


class MetricInputError(InputError):
    """An array handed to a distance or similarity kernel is not acceptable.

    The message names the argument, what was expected and what came.
    """
