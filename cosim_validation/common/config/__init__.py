"""Typed, validated configuration: YAML files become :class:`ConfigNode` trees with clear errors."""

from cosim_validation.common.config.bounded_file import (
    load_json_file,
    load_yaml_file,
    parse_json,
    parse_yaml,
    read_user_bytes,
    read_user_text,
    regular_file_problem,
)
from cosim_validation.common.config.case_config import CASE_SECTIONS, load_case_config, parse_case_config
from cosim_validation.common.config.config_node import ConfigNode
from cosim_validation.common.config.loader import load_config, parse_config
from cosim_validation.common.config.package_paths import package_root, resolve_resource

__all__ = [
    "CASE_SECTIONS",
    "ConfigNode",
    "load_case_config",
    "load_config",
    "load_json_file",
    "load_yaml_file",
    "package_root",
    "parse_case_config",
    "parse_config",
    "parse_json",
    "parse_yaml",
    "read_user_bytes",
    "read_user_text",
    "regular_file_problem",
    "resolve_resource",
]
