"""Turning a region name into a :class:`TargetRegion`: a target model or a configured sub-region."""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim_validation.anatomy import AnatomyModel, AnatomyScene
from cosim_validation.common.exceptions import ConfigError, InputError
from cosim_validation.testgen.model_distance import signed_distance_m
from cosim_validation.testgen.target_region import TargetRegion
from cosim_validation.testgen.testgen_config import RegionSpec, TestgenConfig

# Lattice points used to find the radius that holds a given fraction of a model's volume.
_FRACTION_SAMPLES = 200_000


def _target_model(scene: AnatomyScene, name: str) -> AnatomyModel:
    model = scene.model(name)
    if model.role != "target":
        targets = ", ".join(m.name for m in scene.targets)
        raise InputError(f"model {name!r} has role {model.role!r}, not 'target' (targets: {targets})")
    return model


def _check_not_swallowed(target: AnatomyModel, region: TargetRegion) -> None:
    """An obstacle that holds the whole target leaves nothing to test."""
    for obstacle in region.obstacles:
        if region.inside_test(obstacle).contains(target.vertices_m).all():
            raise InputError(f"obstacle {obstacle.name!r} swallows the whole target {target.name!r}")


def radius_for_fraction(region: TargetRegion, near: AnatomyModel, fraction: float) -> float:
    """Radius D such that the part of the target within D of ``near`` is ``fraction`` of its volume [m].

    Measured on a regular lattice of about 200,000 points over the target's box (deterministic).

    Args:
        region: The region whose target model is measured.
        near: The model the distances are measured to (a sub-region's ``near``), in base_link.
        fraction: The share of the target's volume that must lie within the radius, in (0, 1].
    """
    lo, hi = region.target.bounds_m
    spacing = float(np.prod(hi - lo) / _FRACTION_SAMPLES) ** (1.0 / 3.0)
    axes = [np.arange(lo[k] + spacing / 2, hi[k], spacing) for k in range(3)]
    lattice = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    inside = lattice[region.inside_test(region.target).contains(lattice)]
    distances = np.maximum(signed_distance_m(near, inside), 0.0)
    return float(np.quantile(distances, fraction, method="inverted_cdf"))


def _sub_region_models(scene: AnatomyScene, cfg: TestgenConfig, spec: RegionSpec) -> tuple[AnatomyModel, AnatomyModel]:
    """The target model of a sub-region and the model it is near (ConfigError naming the key otherwise)."""
    try:
        target = _target_model(scene, spec.model)
    except InputError as exc:
        raise ConfigError(cfg.node.source, f"{spec.key}.model", str(exc)) from None
    try:
        near = scene.model(spec.near)
    except InputError as exc:
        raise ConfigError(cfg.node.source, f"{spec.key}.near", str(exc)) from None
    return target, near


def _sub_region(scene: AnatomyScene, cfg: TestgenConfig, spec: RegionSpec) -> tuple[TargetRegion, dict[str, Any]]:
    target, near = _sub_region_models(scene, cfg, spec)
    region = TargetRegion(spec.name, target, scene.obstacles, cfg.margin_m, near, spec.within_m or 0.0)
    within = spec.within_m
    if spec.volume_fraction is not None:
        within = radius_for_fraction(region, near, spec.volume_fraction)
        region = TargetRegion(spec.name, target, scene.obstacles, cfg.margin_m, near, within)
    meta = {
        "name": spec.name,
        "model": target.name,
        "near": near.name,
        "within_m": within,
        "volume_fraction": spec.volume_fraction,
        "margin_m": cfg.margin_m,
    }
    return region, meta


def check_region_names(scene: AnatomyScene, cfg: TestgenConfig) -> str:
    """Refuse what :func:`build_region` would refuse by name alone, without building a region; say the default.

    ``testgen.target`` names a configured region or a model of role target; each region's ``model`` is a target
    model and its ``near`` a model of the scene.

    Args:
        scene: The anatomy.
        cfg: The ``testgen`` configuration.

    Raises:
        ConfigError: A name that is not there or not a target (naming the file and the key).
    """
    for spec in cfg.regions.values():
        _sub_region_models(scene, cfg, spec)
    if cfg.target in cfg.regions:
        return f"regions: {', '.join(sorted(cfg.regions))}; default {cfg.target!r}"
    try:
        if cfg.target not in scene:
            known = ", ".join([m.name for m in scene.targets] + sorted(cfg.regions))
            raise InputError(f"unknown region {cfg.target!r}; target models and regions: {known}")
        _target_model(scene, cfg.target)
    except InputError as exc:
        raise cfg.node["target"].error(str(exc)) from None
    regions = f"; regions: {', '.join(sorted(cfg.regions))}" if cfg.regions else ""
    return f"default target {cfg.target!r}{regions}"


def build_region(scene: AnatomyScene, cfg: TestgenConfig, name: str | None) -> tuple[TargetRegion, dict[str, Any]]:
    """The region ``name`` (default ``cfg.target``) and its description for the suite's metadata.

    Args:
        scene: The anatomy, placed in base_link.
        cfg: The ``testgen`` configuration: its regions, margin and default target.
        name: A target model's name or a region of ``testgen.regions``; None: ``cfg.target``.

    Raises:
        ConfigError: ``testgen.target`` names no model or region (names the file and the key).
        InputError: Unknown ``name`` (lists models and regions), not a target, or swallowed by an obstacle.
    """
    given, name = name, name or cfg.target
    try:
        return _region_named(scene, cfg, name)
    except InputError as exc:  # say where the name came from: the option, or the configuration's key
        if given is None:
            raise cfg.node["target"].error(str(exc)) from None
        raise InputError(f"--region: {exc}") from None


def _region_named(scene: AnatomyScene, cfg: TestgenConfig, name: str) -> tuple[TargetRegion, dict[str, Any]]:
    if name in cfg.regions:
        region, meta = _sub_region(scene, cfg, cfg.regions[name])
    elif name in scene:
        target = _target_model(scene, name)
        region = TargetRegion(name, target, scene.obstacles, cfg.margin_m)
        meta = {
            "name": name,
            "model": name,
            "near": None,
            "within_m": None,
            "volume_fraction": None,
            "margin_m": cfg.margin_m,
        }
    else:
        known = ", ".join([m.name for m in scene.targets] + sorted(cfg.regions))
        raise InputError(f"unknown region {name!r}; target models and regions: {known}")
    _check_not_swallowed(region.target, region)
    return region, meta
