"""How values are written in the dashboard's tables (shared by the Qt view and the Foxglove bridge)."""

from __future__ import annotations

import math


def margin_text(margin: float, unit: str) -> str:
    """A verdict's margin in display units: mm for metres, degrees for radians; "-" when unknown.

    Args:
        margin: The verdict's margin in ``unit``; NaN when unknown.
        unit: The margin's unit: ``m`` (shown in mm), ``rad`` (shown in degrees) or ``1``.
    """
    if math.isnan(margin):
        return "-"
    if math.isinf(margin):
        return "inf" if margin > 0 else "-inf"
    if unit == "m":
        return f"{margin * 1000:.3f} mm"
    if unit == "rad":
        return f"{math.degrees(margin):.3f} deg"
    return f"{margin:g}"
