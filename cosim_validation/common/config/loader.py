"""Reading YAML configuration files into :class:`ConfigNode` trees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from cosim_validation.common.config.config_node import ConfigNode
from cosim_validation.common.exceptions import ConfigError


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that rejects a key given twice in one mapping (a silent override otherwise)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
        if key in seen:
            mark = key_node.start_mark
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} given twice (line {mark.line + 1})", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def parse_config(text: str, source: str | Path, base_dir: str | Path = "") -> ConfigNode:
    """Parse YAML text into a root :class:`ConfigNode` (a mapping).

    Args:
        text: YAML document.
        source: Name used in error messages (normally the file path).
        base_dir: Folder of relative paths in it ("" for the folder of ``source``).
    """
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "unknown position"
        raise ConfigError(source, "", f"invalid YAML at {where}: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(source, "", f"invalid YAML: {exc}") from None
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
        ConfigError: The file is missing, unreadable, not YAML or not a mapping.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(path, "", "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, "", f"cannot read: {exc}") from None
    return parse_config(text, path, base_dir)
