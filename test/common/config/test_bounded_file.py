"""The bounded reader: its limits hold exactly at their edges, and what is inside them still loads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from cosim_validation.common.config import bounded_file, load_case_config, package_root
from cosim_validation.common.config.bounded_file import (
    MAX_DEPTH,
    load_json_file,
    parse_json,
    parse_yaml,
    read_user_text,
    regular_file_problem,
)
from cosim_validation.common.exceptions import ConfigError
from test.robustness.harness import time_limit


def _nested(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


@pytest.mark.parametrize("parse", [parse_yaml, parse_json], ids=["yaml", "json"])
def test_depth_limit_is_exact(parse: object) -> None:
    """MAX_DEPTH levels load (the scalar inside is one more node in YAML); one more is refused."""
    levels = MAX_DEPTH - 1 if parse is parse_yaml else MAX_DEPTH
    assert parse(_nested(levels), "f") is not None  # type: ignore[operator]
    with pytest.raises(ConfigError, match=rf"^f: invalid (YAML|JSON) at .*nested deeper than {MAX_DEPTH} levels"):
        parse(_nested(levels + 1), "f")  # type: ignore[operator]


def test_json_brackets_inside_strings_are_not_nesting() -> None:
    text = '{"a": "' + "[" * 10_000 + '", "b": ["]]]"]}'
    assert parse_json(text, "f") == {"a": "[" * 10_000, "b": ["]]]"]}


def test_alias_expansion_limit_is_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """A list of n aliases of a one-value anchor, in a mapping: the mapping, its two keys, the anchor, the list
    and n values. With a bound of 1000 (the real one takes minutes to reach in pure-Python YAML), exactly 1000
    loads and one more is refused."""
    monkeypatch.setattr(bounded_file, "MAX_VALUES", 1000)

    def document(aliases: int) -> str:
        return "a: &a 1\nb: [" + ", ".join(["*a"] * aliases) + "]\n"

    fixed = 1 + 2 + 1 + 1
    assert len(parse_yaml(document(1000 - fixed), "f")["b"]) == 1000 - fixed
    with pytest.raises(ConfigError, match="aliases expand to more than 1000 values"):
        parse_yaml(document(1000 - fixed + 1), "f")


def test_shared_anchors_are_counted_by_expansion_not_by_text() -> None:
    """Twenty levels of two aliases each: 40 aliases in the text, 2**20 values once expanded."""
    lines = ["l0: &l0 [x]"] + [f"l{k}: &l{k} [*l{k - 1}, *l{k - 1}]" for k in range(1, 21)]
    with pytest.raises(ConfigError, match="aliases expand"):
        parse_yaml("\n".join(lines), "f")
    small = parse_yaml("\n".join(lines[:10]), "f")  # 2**9 leaves: well inside the bound
    assert small["l9"][1][0][1][0][0][1][0][0][0] == ["x"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("? [1]\n: x\n", "a mapping key is a list"),
        ("? {a: 1}\n: x\n", "a mapping key is a mapping"),
        ("a: 1\na: 2\n", "key 'a' given twice"),
        ("a: [1\n", "invalid YAML at line 2"),
    ],
)
def test_yaml_keys(text: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        parse_yaml(text, "f.yaml")


def test_regular_files_only(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop")
    with time_limit(10.0):  # opening a FIFO for reading would block until a writer came
        for path, says in ((fifo, "FIFO"), (Path("/dev/zero"), "character device"), (tmp_path, "directory")):
            with pytest.raises(ConfigError, match=f"expected a regular file, got a {says}"):
                read_user_text(path)
            assert says in str(regular_file_problem(path))
    with pytest.raises(ConfigError, match="a loop of symbolic links"):
        read_user_text(loop)
    assert regular_file_problem(loop) == "a loop of symbolic links"
    assert regular_file_problem(tmp_path / "none") == "not found"
    assert regular_file_problem(tmp_path, folder_ok=True) is None


def test_size_limit_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text("[1, 2]")
    assert read_user_text(path, max_bytes=6) == "[1, 2]"
    with pytest.raises(ConfigError, match="larger than 5 bytes"):
        read_user_text(path, max_bytes=5)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ConfigError, match=r"f\.json: not UTF-8 text \(byte 7\)"):
        load_json_file(path)


@pytest.mark.parametrize("name", sorted(p.name for p in (package_root() / "config").glob("*.yaml")))
def test_every_shipped_file_loads_as_before(name: str) -> None:
    """The bounds refuse nothing the project ships: the bounded parse equals PyYAML's."""
    path = package_root() / "config" / name
    assert parse_yaml(path.read_text(), path) == yaml.safe_load(path.read_text())


def test_shipped_case_config_loads() -> None:
    assert load_case_config(package_root() / "config" / "needle_insertion.yaml").has("robot")
