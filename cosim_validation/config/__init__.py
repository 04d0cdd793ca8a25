"""Typed, validated configuration: YAML files become :class:`ConfigNode` trees with clear errors."""

from cosim_validation.config.config_node import ConfigNode
from cosim_validation.config.loader import load_config, parse_config
from cosim_validation.config.package_paths import package_root, resolve_resource

__all__ = ["ConfigNode", "load_config", "package_root", "parse_config", "resolve_resource"]
