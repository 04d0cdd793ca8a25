"""Reading YAML configuration files into :class:`ConfigNode` trees (through the bounded reader)."""

from __future__ import annotations

from pathlib import Path

from cosim_validation.common.config.bounded_file import parse_yaml, read_user_text
from cosim_validation.common.config.config_node import ConfigNode
from cosim_validation.common.exceptions import ConfigError


def parse_config(text: str, source: str | Path, base_dir: str | Path = "") -> ConfigNode:
    """Parse YAML text into a root :class:`ConfigNode` (a mapping).

    Args:
        text: YAML document.
        source: Name used in error messages (normally the file path).
        base_dir: Folder of relative paths in it ("" for the folder of ``source``).

    Raises:
        ConfigError: Not YAML (or beyond the bounds of :mod:`bounded_file`), or not a mapping.
    """
    data = parse_yaml(text, source)
    if not isinstance(data, dict):
        raise ConfigError(source, "", f"expected a mapping at the top level, got {type(data).__name__}")
    return ConfigNode(data, str(source), "", str(base_dir))


def load_config(path: str | Path, base_dir: str | Path = "") -> ConfigNode:
    """Read a YAML configuration file.

    Args:
        path: The file.
        base_dir: Folder of relative paths in it ("" for the file's folder; a run directory's copy of a
            configuration gives the original's folder).

    Raises:
        ConfigError: The file is missing, not a regular file, too large, unreadable, not YAML or not a mapping.
    """
    return parse_config(read_user_text(path), path, base_dir)
