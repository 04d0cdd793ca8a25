"""Inputs too deep, too big or not a file: every file a user names is read by one bounded reader
(``common/config/bounded_file.py``), so each of these ends in one ``error:`` line naming the file, fast.

Each case runs under a time limit: a regression to a hang (a FIFO opened for reading, ``/dev/zero`` read to its
end, an alias bomb expanded) fails as ``HUNG`` instead of blocking the suite. None needs the shared workspace.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from cosim_validation.common.config import package_root
from cosim_validation.common.config.bounded_file import MAX_BYTES
from test.robustness.harness import Case, run_fast_case

SHIPPED = package_root() / "config"


def _deep_flow(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


def _deep_mapping(levels: int) -> str:
    return "{a: " * levels + "1" + "}" * levels


def _deep_block(levels: int) -> str:
    return "".join(f"{'  ' * k}k{k}:\n" for k in range(levels)) + f"{'  ' * levels}1\n"


def _bomb(levels: int = 9) -> str:
    """The "billion laughs": each anchor a list of nine aliases of the previous one (9**levels values)."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{k}: &l{k} [{', '.join([f'*l{k - 1}'] * 9)}]" for k in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def _config_with(folder: Path, section: str, key: str, value_yaml: str) -> str:
    """The shipped configuration with ``section.key`` set to the YAML text ``value_yaml``."""
    text = (SHIPPED / "needle_insertion.yaml").read_text()
    shutil.copyfile(SHIPPED / "properties.yaml", folder / "properties.yaml")
    return text.replace(f"\n{section}:\n", f"\n{section}:\n  {key}: {value_yaml}\n", 1)


def _mapping_bomb(levels: int) -> str:
    """Mappings of two aliases of the previous one: 2**levels values."""
    lines = ["b0: &b0 {x: 1, y: 1}"] + [f"b{k}: &b{k} {{p: *b{k - 1}, q: *b{k - 1}}}" for k in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------------------- bad content of a YAML file
#: name: (the configuration's content made in the folder, what the error must say)
YAML_TEXTS: dict[str, tuple[Callable[[Path], str | bytes], str]] = {
    "deep_list_under_known_key": (lambda f: _config_with(f, "testgen", "target", _deep_flow(5000)), "nested deeper"),
    "deep_list_just_over": (lambda f: _config_with(f, "testgen", "target", _deep_flow(64)), "nested deeper than 64"),
    "deep_mapping": (lambda f: _config_with(f, "robot", "limits_extra", _deep_mapping(3000)), "nested deeper"),
    "deep_block_mapping": (lambda f: _deep_block(2000), "nested deeper"),
    "deep_top_level_list": (lambda f: _deep_flow(100000), "nested deeper"),
    "key_is_list": (lambda f: _config_with(f, "testgen", "[1, 2]", "3"), "a mapping key is a list"),
    "key_is_mapping": (lambda f: "? {a: 1}\n: 3\n", "a mapping key is a mapping"),
    "key_is_alias_of_list": (lambda f: "x: &x [1]\n? *x\n: 2\n", "a mapping key is a list"),
    "alias_bomb": (lambda f: _bomb(), "aliases expand to more than"),
    "alias_bomb_under_known_key": (
        lambda f: _config_with(f, "testgen", "regions", "*l9").replace("\nanatomy:", _bomb() + "\nanatomy:", 1),
        "aliases expand to more than",
    ),
    "alias_bomb_mappings": (lambda f: _mapping_bomb(25), "aliases expand to more than"),
    # a value that holds itself: a RecursionError traceback when its size was counted
    "recursive_alias_list": (lambda f: "a: &a [*a]\n", "holds an alias of itself"),
    "recursive_alias_mapping": (lambda f: "a: &a {b: 1, c: *a}\n", "holds an alias of itself"),
    "recursive_alias_deeper": (lambda f: "a: &a [1, [2, {x: *a}]]\n", "holds an alias of itself"),
    "not_utf8": (lambda f: b"robot:\n  urdf: \xff\xfe\n", "not UTF-8 text"),
}


def _yaml_case(name: str, folder: Path) -> Case:
    make, says = YAML_TEXTS[name]
    config = folder / "case.yaml"
    content = make(folder)
    config.write_bytes(content if isinstance(content, bytes) else content.encode())
    out = folder / "out" / "suite.parquet"
    argv = ["testgen", "--config", str(config), "--granularity-mm", "60", "-o", str(out)]
    return Case(argv, ("case.yaml", says), (out.parent,))


# -------------------------------------------------------------------------------- not a regular file, or too big
def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _loop(path: Path) -> None:
    os.symlink(path.with_name("other"), path)
    os.symlink(path, path.with_name("other"))


def _too_big(path: Path) -> None:
    with path.open("wb") as file:  # sparse: no disk used
        file.truncate(MAX_BYTES + 1)


#: name: (makes the bad file at the path it is given, what the error must say)
NOT_FILES: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (_fifo, "FIFO"),
    "directory": (lambda p: p.mkdir(), "directory"),
    "symlink_loop": (_loop, "loop of symbolic links"),
    "dev_zero": (lambda p: p.symlink_to("/dev/zero"), "character device"),
    "too_big": (_too_big, "larger than"),
}

_TARGET = ("--target", "0.45", "0.0", "0.05")

#: role: builds the command reading the bad file ``bad`` from the folder; the error names ``bad``'s name
ROLES: dict[str, Callable[[Path, Path], tuple[list[str], tuple[Path, ...]]]] = {
    "config": lambda f, bad: (
        ["testgen", "--config", str(bad), "--granularity-mm", "60", "-o", str(f / "out" / "s.parquet")],
        (f / "out",),
    ),
    "campaign.properties": lambda f, bad: (
        [
            "run-case",
            "--config",
            str(_pointing(f, "properties: properties.yaml", f"properties: {bad.name}")),
            *_TARGET,
        ],
        (),
    ),
    "suite_campaign": lambda f, bad: (
        ["campaign", "--config", str(SHIPPED / "needle_insertion.yaml"), "--suite", str(bad), "--out", str(f / "run")],
        (f / "run",),
    ),
    "suite_session": lambda f, bad: (["session", "--suite", str(bad), "--out", str(f / "run")], (f / "run",)),
    "record": lambda f, bad: (["check", str(bad)], ()),
    "dataset": lambda f, bad: (["errors", "train", str(bad), "-o", str(f / "m.npz")], (f / "m.npz",)),
    # a CSV is read by pandas, which blocked for ever on a FIFO named *.csv
    "dataset_csv": lambda f, bad: (["errors", "train", str(bad), "-o", str(f / "m.npz")], (f / "m.npz",)),
    "calibrate_csv": lambda f, bad: (["errors", "calibrate", str(bad)], ()),
    "import_csv": lambda f, bad: (
        ["import-crtk", "--config", str(SHIPPED / "needle_insertion.yaml"), str(bad), "-o", str(f / "i.parquet")],
        (f / "i.parquet",),
    ),
    "bag": lambda f, bad: (["replay", str(bad)], ()),
    "supervisor": lambda f, bad: (
        ["run-case", "--config", str(SHIPPED / "needle_insertion.yaml"), "--supervisor", str(bad), *_TARGET],
        (),
    ),
}


def _pointing(folder: Path, old: str, new: str) -> Path:
    """A copy of the shipped configuration in ``folder`` with ``old`` replaced by ``new``."""
    config = folder / "case.yaml"
    config.write_text((SHIPPED / "needle_insertion.yaml").read_text().replace(old, new, 1))
    return config


_SUFFIX = {
    "record": ".npz",
    "dataset": ".parquet",
    "bag": ".mcap",
    "suite_campaign": ".parquet",
    "dataset_csv": ".csv",
    "calibrate_csv": ".csv",
    "import_csv": ".csv",
}


def _not_file_case(kind: str, role: str, folder: Path) -> Case:
    make, says = NOT_FILES[kind]
    bad = folder / f"bad{_SUFFIX.get(role, '.yaml')}"
    make(bad)
    argv, absent = ROLES[role](folder, bad)
    return Case(argv, (bad.name, says), absent)


def _corpus() -> dict[str, Callable[[Path], Case]]:
    cases: dict[str, Callable[[Path], Case]] = {f"yaml:{n}": lambda f, n=n: _yaml_case(n, f) for n in YAML_TEXTS}
    for kind in NOT_FILES:
        for role in ROLES:
            if kind == "too_big" and role in ("bag", "dataset", "suite_campaign", "suite_session", "record"):
                continue  # archives: their own readers bound them (Parquet, MCAP and npz hold a size in them)
            if kind == "directory" and role == "bag":
                continue  # a rosbag2 bag is a folder
            cases[f"{kind}:{role}"] = lambda f, k=kind, r=role: _not_file_case(k, r, f)
    return cases


CORPUS = _corpus()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_bounded_input(name: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    run_fast_case(CORPUS[name](tmp_path), sorted(CORPUS).index(name) % 2 == 1, capfd)


def test_the_bomb_is_a_bomb() -> None:
    """The alias bomb is a valid YAML document PyYAML itself builds (as shared references) in no time: only the
    bound refuses it, so the cases above test the bound, not a parse error."""
    tree = yaml.safe_load(_bomb(3))
    assert len(tree["l3"]) == 9
    assert tree["l3"][0] is tree["l2"]
