"""The ``testgen:`` section of a configuration: targets, margins, sub-regions and the source box.

.. code-block:: yaml

    testgen:
      target: left_lung              # model (role target) or region used when no --region is given
      margin_m: 0.0                  # targets stay more than this outside every obstacle [m]
      max_attempts_per_cube: 2000    # grid: candidates drawn per partial cube before giving up on it
      max_attempts: 100000000        # random: candidates drawn at most
      source_region: {center_m: [0.45, 0.0, 0.30], half_extent_m: [0.04, 0.04, 0.02]}  # base_link
      regions:                       # sub-regions of a target model
        near_heart: {model: left_lung, near: heart, within_m: 0.03}
        heart_side_7pct: {model: left_lung, near: heart, volume_fraction: 0.07}
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.config.config_node import MAX_CLEARANCE_M, MAX_POINT_M
from cosim_validation.testgen.source_region import SourceRegion


@dataclass(frozen=True)
class RegionSpec:
    """A configured sub-region of ``model``.

    The part of ``model`` within ``within_m`` of ``near``, or the ``volume_fraction`` of ``model`` closest to ``near``.
    """

    name: str
    model: str
    near: str
    within_m: float | None
    volume_fraction: float | None
    key: str


@dataclass(frozen=True, eq=False)
class TestgenConfig:
    """Validated ``testgen:`` section.

    Attributes:
        target: Default region (a target model's or a sub-region's name).
        margin_m: Clearance from obstacles [m], >= 0.
        max_attempts_per_cube: Grid generator's bound per partial cube, >= 1.
        max_attempts: Random generator's bound on candidates, >= 1.
        source_region: Where sources are drawn.
        regions: Sub-regions by name.
        node: The section itself (for error messages and the suite's metadata).
    """

    __test__ = False

    target: str
    margin_m: float
    max_attempts_per_cube: int
    max_attempts: int
    source_region: SourceRegion
    regions: dict[str, RegionSpec]
    node: ConfigNode


def _region(name: str, node: ConfigNode) -> RegionSpec:
    node.reject_unknown(("model", "near", "within_m", "volume_fraction"))
    has_within, has_fraction = node.has("within_m"), node.has("volume_fraction")
    if has_within == has_fraction:
        raise node.error("expected exactly one of 'within_m' or 'volume_fraction'")
    within = node["within_m"].to_float(minimum=0.0) if has_within else None
    fraction = node["volume_fraction"].to_float(exclusive_minimum=0.0, maximum=1.0) if has_fraction else None
    return RegionSpec(name, node["model"].to_str(), node["near"].to_str(), within, fraction, node.key)


def _source_region(node: ConfigNode) -> SourceRegion:
    node.reject_unknown(("center_m", "half_extent_m", "toward_target_m"))
    half = node["half_extent_m"].to_vector(3, maximum=MAX_POINT_M)
    if np.any(half < 0):
        raise node["half_extent_m"].error(f"expected half extents >= 0, got {node['half_extent_m'].value!r}")
    toward = node["toward_target_m"].to_float(minimum=0.0, maximum=1.0) if node.has("toward_target_m") else 0.0
    return SourceRegion(node["center_m"].to_vector(3, minimum=-MAX_POINT_M, maximum=MAX_POINT_M), half, toward)


def load_testgen_config(section: ConfigNode) -> TestgenConfig:
    """Validate the ``testgen`` mapping (``config["testgen"]``).

    Args:
        section: The ``testgen`` mapping of a case-study configuration.

    Raises:
        ConfigError: Missing, unknown or malformed keys (named with file and key path).
    """
    section.reject_unknown(("target", "margin_m", "max_attempts_per_cube", "max_attempts", "source_region", "regions"))
    regions = {}
    if section.has("regions"):
        regions = {name: _region(name, node) for name, node in section["regions"].items()}
    return TestgenConfig(
        target=section["target"].to_str(),
        margin_m=section["margin_m"].to_float(minimum=0.0, maximum=MAX_CLEARANCE_M),
        max_attempts_per_cube=section["max_attempts_per_cube"].to_int(minimum=1),
        max_attempts=section["max_attempts"].to_int(minimum=1),
        source_region=_source_region(section["source_region"]),
        regions=regions,
        node=section,
    )
