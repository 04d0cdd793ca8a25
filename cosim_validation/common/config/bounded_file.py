"""The one reader of a user's YAML and JSON files: bounded in size, depth and alias expansion.

Every file a user names (a configuration, a property set, a manifest, a summary) is read through
:func:`read_user_text`, and its YAML or JSON through :func:`parse_yaml` or :func:`parse_json`, so that a hostile
or mistaken input ends in one :class:`ConfigError` naming the file, never a hang, a memory blow-up or a
``RecursionError``:

- only a regular file is read (a FIFO would block forever, ``/dev/zero`` never ends), opened without following
  a loop of symbolic links;
- at most :data:`MAX_BYTES` bytes;
- values nested at most :data:`MAX_DEPTH` levels deep;
- YAML aliases expanding to at most :data:`MAX_VALUES` values (the "billion laughs" document is a few hundred
  bytes that expands to 10**9 values);
- YAML mapping keys are scalars, each given once.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from cosim_validation.common.exceptions import ConfigError

#: Largest file read [bytes]; the shipped configurations are a few kB, a summary of a large campaign a few MB.
MAX_BYTES = 64 * 1024 * 1024
#: Largest binary archive read whole (a trajectory record, an error model) [bytes].
MAX_ARCHIVE_BYTES = 1024 * 1024 * 1024
#: Deepest nesting of lists and mappings (the shipped files nest 6 levels).
MAX_DEPTH = 64
#: Most values a YAML document may hold once its aliases are expanded.
MAX_VALUES = 1_000_000

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def regular_file_problem(path: str | Path, folder_ok: bool = False) -> str | None:
    """What keeps ``path`` from being read as a regular file, or None when it is one.

    The reason reads "not found", "a loop of symbolic links", "a FIFO (named pipe), expected a regular file", ...
    Never blocks (a FIFO is not opened).

    Args:
        path: The file.
        folder_ok: A directory is fine too (a rosbag2 folder).
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "not found"
    except OSError as exc:
        return "a loop of symbolic links" if exc.errno == errno.ELOOP else f"cannot read: {exc.strerror or exc}"
    if stat.S_ISREG(mode) or (folder_ok and stat.S_ISDIR(mode)):
        return None
    return f"{_KINDS.get(stat.S_IFMT(mode), 'not a regular file')}, expected a regular file"


def read_user_bytes(path: str | Path, max_bytes: int = MAX_BYTES) -> bytes:
    """The content of the regular file ``path``, at most ``max_bytes`` long.

    Args:
        path: The file to read; it must be a regular file (not a FIFO, a device or a folder).
        max_bytes: The largest size accepted, in bytes; a longer file raises ``ConfigError``.

    Raises:
        ConfigError: Missing, a symlink loop, not a regular file, unreadable or too large.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)  # O_NONBLOCK: opening a FIFO returns at once
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise ConfigError(path, "", "file not found") from None
    except OSError as exc:
        why = "a loop of symbolic links" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        raise ConfigError(path, "", f"cannot read: {why}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ConfigError(path, "", f"expected a regular file, got {_KINDS.get(stat.S_IFMT(mode), 'something else')}")
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as file:
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ConfigError(path, "", f"larger than {max_bytes} bytes; expected a file of at most that size")
    return data


def read_user_text(path: str | Path, max_bytes: int = MAX_BYTES) -> str:
    """:func:`read_user_bytes` decoded as UTF-8.

    Args:
        path: The file to read; it must be a regular file (not a FIFO, a device or a folder).
        max_bytes: The largest size accepted, in bytes; a longer file raises ``ConfigError``.

    Raises:
        ConfigError: As :func:`read_user_bytes`, or not UTF-8 text.
    """
    data = read_user_bytes(path, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, "", f"not UTF-8 text (byte {exc.start}); expected a text file") from None


# ---------------------------------------------------------------------------------------------------- YAML
#: libyaml's parser (C) where PyYAML has it, as its wheels do: about ten times faster than the pure-Python one, which
#: took a fifth of the CPU of the tests that run cases in-process (a case-study configuration is read by every node)
if TYPE_CHECKING:
    _SafeLoader = yaml.SafeLoader
else:
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _BoundedLoader(_SafeLoader):
    """A safe loader that refuses non-scalar keys and keys given twice (nesting is bounded by :func:`_check_depth`)."""


def _check_depth(text: str) -> None:
    """Refuse ``text`` if a value in it is nested deeper than :data:`MAX_DEPTH` levels, counting the value itself.

    A scalar inside 64 lists is at level 65. One pass over the parser's events, which keep their own stack:
    composing a document nested 100,000 deep would recurse that far.
    """
    loader = _BoundedLoader(text)
    depth = 0
    try:
        while (event := loader.get_event()) is not None:  # type: ignore[no-untyped-call]
            if isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
                continue
            level = depth + 1
            if isinstance(event, yaml.CollectionStartEvent):
                depth = level
            elif not isinstance(event, yaml.NodeEvent):
                continue  # stream and document events
            if level > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark
                )
    finally:
        loader.dispose()  # type: ignore[no-untyped-call]


def _construct_mapping(loader: _BoundedLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        mark = key_node.start_mark
        if not isinstance(key_node, yaml.ScalarNode):
            kind = "list" if isinstance(key_node, yaml.SequenceNode) else "mapping"
            raise yaml.constructor.ConstructorError(None, None, f"a mapping key is a {kind}; expected a name", mark)
        key = loader.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} given twice (line {mark.line + 1})", mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_BoundedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


class _RecursiveAliasError(Exception):
    """A value that holds an alias of itself (``a: &a [*a]``): it has no end."""


def _expanded_size(node: yaml.Node, sizes: dict[int, int]) -> int:
    """How many values ``node`` holds once its aliases are expanded (``sizes``: memo by node identity).

    Raises:
        _RecursiveAliasError: ``node`` holds itself through an alias.
    """
    known = sizes.get(id(node))
    if known == -1:  # still being counted: the value is inside itself
        raise _RecursiveAliasError
    if known is not None:
        return known
    sizes[id(node)] = -1
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, sizes) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, sizes) + _expanded_size(v, sizes) for k, v in node.value)
    sizes[id(node)] = size
    return size


def parse_yaml(text: str, source: str | Path) -> Any:
    """The value of the YAML document ``text`` (None for an empty one).

    Args:
        text: The document.
        source: The file it came from, for error messages.

    Raises:
        ConfigError: Not YAML, nested too deep, aliases that expand too far, a non-scalar or repeated key.
    """
    loader = _BoundedLoader(text)
    try:
        _check_depth(text)
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node, {}) > MAX_VALUES:
            raise ConfigError(source, "", f"its aliases expand to more than {MAX_VALUES} values (an alias bomb?)")
        return loader.construct_document(node)  # type: ignore[no-untyped-call]
    except _RecursiveAliasError:
        raise ConfigError(source, "", "a value holds an alias of itself (e.g. 'a: &a [*a]'): it never ends") from None
    except yaml.MarkedYAMLError as exc:
        where = _position(text, exc.problem_mark)
        raise ConfigError(source, "", f"invalid YAML at {where}: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(source, "", f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()  # type: ignore[no-untyped-call]


def _position(text: str, mark: Any) -> str:
    """``line L, column C`` of a parser's mark (a mark past the last line, libyaml's end of file: after its end).

    Args:
        text: The document.
        mark: The parser's mark, or None.
    """
    if mark is None:
        return "unknown position"
    lines = text.split("\n")  # "a\n" has a second, empty line, where libyaml puts its end
    if mark.line >= len(lines):
        return f"line {len(lines)}, column {len(lines[-1]) + 1} (the end of the file)"
    return f"line {mark.line + 1}, column {mark.column + 1}"


def load_yaml_file(path: str | Path) -> Any:
    """:func:`parse_yaml` of the bounded regular file ``path``.

    Args:
        path: The YAML file, at most ``MAX_BYTES`` long.
    """
    return parse_yaml(read_user_text(path), path)


# ---------------------------------------------------------------------------------------------------- JSON
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _too_deep_at(text: str) -> int | None:
    """The offset where ``text`` opens its (MAX_DEPTH + 1)-th nested list or object, None if it never does."""
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif token in "]}":
            depth -= 1
    return None


def parse_json(text: str | bytes, source: str | Path, key: str = "") -> Any:
    """The value of the JSON document ``text``.

    Args:
        text: The document (bytes are decoded as UTF-8).
        source: The file it came from, for error messages.
        key: Where in ``source`` it is ("" for the whole file), e.g. a header inside an archive.

    Raises:
        ConfigError: Not UTF-8, not JSON or nested too deep.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(source, key, f"not UTF-8 text (byte {exc.start}); expected JSON") from None
    offset = _too_deep_at(text)
    if offset is not None:
        raise ConfigError(source, key, f"invalid JSON at character {offset}: nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(source, key, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


def load_json_file(path: str | Path) -> Any:
    """:func:`parse_json` of the bounded regular file ``path``.

    Args:
        path: The JSON file, at most ``MAX_BYTES`` long.
    """
    return parse_json(read_user_text(path), path)
