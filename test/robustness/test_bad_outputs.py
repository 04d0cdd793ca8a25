"""Outputs that would destroy an input, have the wrong suffix for their format, or be refused only after other
outputs were written. Every output option goes through ``cli/output_path.checked_output`` before the first
write: each case ends in one ``error:`` line naming the option, leaves every input byte for byte as it was and
leaves no output behind. None needs the shared workspace (the checks come before any input is read)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cosim_validation.common.config import package_root
from test.robustness.harness import Case, run_fast_case

SHIPPED = package_root() / "config"


def _files(folder: Path) -> dict[str, Path]:
    """Stand-ins for the inputs (their content is never read: the output check comes first)."""
    paths = {name: folder / name for name in ("ds.parquet", "model.npz", "theirs.csv", "b.mcap", "b.mcap.part")}
    for name, path in paths.items():
        path.write_bytes(f"the user's {name}\n".encode())
    shutil.copyfile(SHIPPED / "needle_insertion.yaml", folder / "case.yaml")
    shutil.copyfile(SHIPPED / "properties.yaml", folder / "properties.yaml")
    shutil.copyfile(SHIPPED / "digital_twin.yaml", folder / "graph.yaml")
    (folder / "link.npz").symlink_to(folder / "ds.parquet")
    return paths | {"case.yaml": folder / "case.yaml", "graph.yaml": folder / "graph.yaml"}


Build = Callable[[Path, dict[str, Path]], Case]


def _train(out: str, says: str) -> Build:
    return lambda f, p: Case(["errors", "train", str(p["ds.parquet"]), "-o", str(f / out)], ("-o", says), (f / out,))


CASES: dict[str, Build] = {
    "train_over_its_dataset": lambda f, p: Case(
        ["errors", "train", str(p["ds.parquet"]), "-o", str(p["ds.parquet"])], ("-o", "is the input DATASET")
    ),
    "train_over_its_dataset_by_another_name": lambda f, p: Case(
        ["errors", "train", str(p["ds.parquet"]), "-o", str(f / "x" / ".." / "ds.parquet")], ("is the input DATASET",)
    ),
    "import_as_text": lambda f, p: Case(
        ["import-crtk", str(p["theirs.csv"]), "--config", str(p["case.yaml"]), "-o", str(f / "i.txt")],
        ("-o", ".parquet or .npz"),
        (f / "i.txt",),
    ),
    "train_over_its_dataset_by_a_link": lambda f, p: Case(
        ["errors", "train", str(p["ds.parquet"]), "-o", str(f / "link.npz")], ("-o", "is the input DATASET")
    ),
    "train_over_its_config": lambda f, p: Case(
        ["errors", "train", str(p["ds.parquet"]), "--config", str(f / "m.npz"), "-o", str(f / "m.npz")],
        ("is the input --config",),
    ),
    "train_as_text": _train("m.txt", "expected a file ending in .npz"),
    # the folder was found missing only after the whole training ran, and the model was lost
    "train_into_a_missing_folder": _train("nodir/m.npz", "folder"),
    "collect_into_a_missing_folder": lambda f, p: Case(
        ["errors", "collect", "--config", str(p["case.yaml"]), "-o", str(f / "nodir" / "d.parquet")],
        ("-o", "nodir", "does not exist"),
    ),
    # '' is the working directory once resolved: the campaign wrote its run there
    "campaign_out_empty": lambda f, p: Case(
        ["campaign", "--config", str(p["case.yaml"]), "--suite", str(f / "s.parquet"), "--out", ""],
        ("--out", "empty text"),
    ),
    "train_no_suffix": _train("model", "expected a file ending in .npz"),
    "train_as_a_folder": lambda f, p: Case(  # wrote the file new.npz and said 'wrote new.npz/'
        ["errors", "train", str(p["ds.parquet"]), "-o", f"{f / 'new.npz'}/"],
        ("-o", "expected a file name, not a folder"),
        (f / "new.npz",),
    ),
    "evaluate_html_as_text": lambda f, p: Case(
        ["errors", "evaluate", str(p["ds.parquet"]), "--model", str(p["model.npz"]), "--html", str(f / "p.txt")],
        ("--html", "expected a file ending in .html"),
        (f / "p.txt",),
    ),
    "evaluate_html_over_its_model": lambda f, p: Case(
        ["errors", "evaluate", str(p["ds.parquet"]), "--model", str(p["model.npz"]), "--html", str(p["model.npz"])],
        ("--html", "is the input --model"),
    ),
    "collect_as_text": lambda f, p: Case(
        ["errors", "collect", "--config", str(p["case.yaml"]), "-o", str(f / "d.txt")],
        ("-o", "expected a file ending in .parquet"),
        (f / "d.txt",),
    ),
    "testgen_over_its_config": lambda f, p: Case(
        ["testgen", "--config", str(p["case.yaml"]), "--granularity-mm", "60", "-o", str(p["case.yaml"])],
        ("-o", "is the input --config"),
    ),
    # a result is never written over: a model trained earlier was replaced without a word (md5 changed, exit 0)
    "train_over_an_earlier_model": lambda f, p: Case(
        ["errors", "train", str(p["ds.parquet"]), "-o", str(p["model.npz"])], ("-o", "already exists; refusing")
    ),
    "collect_over_an_earlier_dataset": lambda f, p: Case(
        ["errors", "collect", "--config", str(p["case.yaml"]), "-o", str(p["ds.parquet"])], ("already exists",)
    ),
    "testgen_over_an_earlier_suite": lambda f, p: Case(
        ["testgen", "--config", str(p["case.yaml"]), "--granularity-mm", "60", "-o", str(p["ds.parquet"])],
        ("-o", "already exists; refusing to overwrite it"),
    ),
    "testgen_as_csv": lambda f, p: Case(
        ["testgen", "--config", str(p["case.yaml"]), "--granularity-mm", "60", "-o", str(f / "s.csv")],
        ("-o", ".parquet"),
        (f / "s.csv",),
    ),
    "screenshot_as_text": lambda f, p: Case(
        ["dashboard", "--bag", str(p["b.mcap"]), "--screenshot", str(f / "x.txt")],
        ("--screenshot", "expected a file ending in .png"),
        (f / "x.txt",),
    ),
    "screenshot_over_its_bag": lambda f, p: Case(
        ["dashboard", "--bag", str(p["b.mcap"]), "--screenshot", str(p["b.mcap"])],
        ("--screenshot", "is the input --bag"),
    ),
    "layout_over_its_graph": lambda f, p: Case(
        ["dashboard", "--graph", str(p["graph.yaml"]), "--foxglove-layout", str(p["graph.yaml"])],
        ("--foxglove-layout", "is the input --graph"),
    ),
    "layout_as_text": lambda f, p: Case(
        ["dashboard", "--foxglove-layout", str(f / "l.txt")], ("--foxglove-layout", ".json"), (f / "l.txt",)
    ),
    "import_over_its_csv": lambda f, p: Case(
        ["import-crtk", str(p["theirs.csv"]), "--config", str(p["case.yaml"]), "-o", str(p["theirs.csv"])],
        ("-o", "is the input INPUT"),
    ),
    "export_as_text": lambda f, p: Case(
        ["export-crtk", str(f), "x", "-o", str(f / "e.txt")], ("-o", ".mcap or .csv"), (f / "e.txt",)
    ),
    "recover_over_its_part": lambda f, p: Case(
        ["bag", "recover", str(p["b.mcap.part"]), "-o", str(p["b.mcap.part"])], ("-o", ".mcap")
    ),
    "recover_as_text": lambda f, p: Case(
        ["bag", "recover", str(p["b.mcap.part"]), "-o", str(f / "r.txt")], ("-o", ".mcap"), (f / "r.txt",)
    ),
}


def _used(folder: Path) -> Path:
    """A directory the user already keeps something in."""
    used = folder / "used"
    used.mkdir(exist_ok=True)
    (used / "notes.txt").write_text("the user's notes\n")
    return used


def _campaign_suite(folder: Path) -> Path:
    """The copy of a suite a campaign's run directory keeps (its report and --resume read it)."""
    (folder / "run" / "suites").mkdir(parents=True)
    (folder / "run" / "results.sqlite").write_bytes(b"the run's results\n")
    stored = folder / "run" / "suites" / "0123abcd.parquet"
    stored.write_bytes(b"the run's suite\n")
    return stored


def _session_force_model(folder: Path) -> Path:
    """A file a run directory lists in its inputs.json (here a supervised run's needle force model)."""
    (folder / "run" / "inputs").mkdir(parents=True)
    entry = {"role": "needle_force", "original": "../f.npz", "copy": "inputs/needle_force-f.npz", "sha256": "0" * 64}
    (folder / "run" / "inputs.json").write_text(json.dumps({"needle_force": entry}))
    stored = folder / "run" / "inputs" / "needle_force-f.npz"
    stored.write_bytes(b"the run's force model\n")
    return stored


def _machine_copy(folder: Path, name: str | None = None) -> Path:
    """The shipped supervisor machine and its goals file copied into ``folder/sv`` (renamed inside: ``name``)."""
    (folder / "sv").mkdir(exist_ok=True)
    for file in ("needle_insertion.yaml", "needle_insertion.goals.yaml"):
        shutil.copyfile(SHIPPED / "supervisor" / file, folder / "sv" / file)
    machine = folder / "sv" / "needle_insertion.yaml"
    if name is not None:
        text = machine.read_text(encoding="utf-8")
        machine.write_text(text.replace("machine: needle_insertion", f"machine: {json.dumps(name)}", 1), "utf-8")
    return machine


CASES["supervisor_check_into_the_folder_of_its_machine"] = lambda f, p: Case(
    ["supervisor", "check", str(_machine_copy(f)), "--out", str(f / "sv")], ("--out", "holds the input MACHINE")
)
CASES["supervisor_machine_named_as_a_path"] = lambda f, p: Case(
    ["supervisor", "check", str(_machine_copy(f, "../../escaped")), "--out", str(f / "out")],
    ("machine", "'../../escaped' is not a name"),
    (f / "out", f / "escaped.smv", f.parent / "escaped.smv"),
)
CASES["testgen_over_a_campaigns_stored_suite"] = lambda f, p: Case(
    ["testgen", "--config", str(p["case.yaml"]), "--granularity-mm", "60", "-o", str(_campaign_suite(f))],
    ("-o", "the copy of a suite the run directory", "keeps"),
)
CASES["train_over_a_runs_stored_input"] = lambda f, p: Case(
    ["errors", "train", str(p["ds.parquet"]), "-o", str(_session_force_model(f))],
    ("-o", "the copy of the needle_force input the run directory", "inputs.json"),
)


RUN_DIRS: dict[str, Build] = {  # every run-directory option: not an input, not a file, not a directory in use
    "campaign_into_a_used_directory": lambda f, p: Case(
        ["campaign", "--suite", str(p["ds.parquet"]), "--out", str(_used(f))], ("--out", "already holds", "--resume")
    ),
    "campaign_over_its_suite": lambda f, p: Case(
        ["campaign", "--suite", str(p["ds.parquet"]), "--out", str(p["ds.parquet"])], ("--out", "is the input --suite")
    ),
    "session_over_its_graph": lambda f, p: Case(
        ["session", "--config", str(p["graph.yaml"]), "--out", str(p["graph.yaml"])], ("--out", "is the input --config")
    ),
    "session_into_a_used_directory": lambda f, p: Case(
        ["session", "--config", str(p["graph.yaml"]), "--out", str(_used(f))], ("--out", "already holds", "notes.txt")
    ),
    "hazards_into_a_used_directory": lambda f, p: Case(
        ["hazards", "run", "--config", str(p["case.yaml"]), "--suite", str(p["ds.parquet"]), "--out", str(_used(f))],
        ("--out", "already holds", "--resume"),
    ),
    "hazards_over_its_config": lambda f, p: Case(
        [
            "hazards",
            "run",
            "--config",
            str(p["case.yaml"]),
            "--suite",
            str(p["ds.parquet"]),
            "--out",
            str(p["case.yaml"]),
        ],
        ("--out", "is the input --config"),
    ),
    "experiment_over_its_config": lambda f, p: Case(
        ["experiment", "rq1", "--config", str(p["case.yaml"]), "--out", str(p["case.yaml"])],
        ("--out", "is the input --config"),
    ),
    "experiment_into_a_used_directory": lambda f, p: Case(
        ["experiment", "rq1", "--config", str(p["case.yaml"]), "--out", str(_used(f))],
        ("--out", "already holds", "--resume"),
    ),
    "demo_into_a_used_directory": lambda f, p: Case(["demo", "--out", str(_used(f))], ("--out", "already holds")),
    "export_into_its_run_directory": lambda f, p: Case(
        ["export", str(f), "-o", str(f / "x" / "..")], ("-o", "is the input RUN_DIR")
    ),
    "export_into_a_file": lambda f, p: Case(["export", str(f), "-o", str(p["theirs.csv"])], ("-o", "is a file")),
    "supervisor_check_over_its_machine": lambda f, p: Case(
        ["supervisor", "check", str(p["case.yaml"]), "--out", str(p["case.yaml"])], ("--out", "is the input MACHINE")
    ),
}
CASES |= RUN_DIRS


def _hazards(*extra: str) -> Build:
    def build(f: Path, p: dict[str, Path]) -> Case:
        out = f / "hz"
        argv = ["hazards", "run", "--config", str(p["case.yaml"]), "--suite", str(f / "s.parquet"), "--out", str(out)]
        return Case([*argv, *extra], (extra[0],), (out,))

    return build


for _name, _extra in {
    "margin_below_one": ("--margin", "0.5"),
    "margin_one": ("--margin", "1"),
    "margin_nan": ("--margin", "nan"),
    "margin_inf": ("--margin", "inf"),
    "margin_negative": ("--margin", "-2"),
    "margin_1e300": ("--margin", "1e300"),  # every detector off: 0 % detected, exit 0
    "threshold_a_kilometre": ("--threshold-mm", "1e6"),
    "calibration_missing": ("--calibration", "no/such/run"),
    "scenarios_empty": ("--scenarios", ""),  # ran every scenario, as `all`
    "scenarios_commas": ("--scenarios", " , ,"),
}.items():
    CASES[f"hazards_{_name}"] = _hazards(*_extra)


def _hazards_damaged_calibration(f: Path, p: dict[str, Path]) -> Case:
    """A calibration run whose database is damaged: refused before the first campaign (it was after all of them)."""
    calibration = f / "cal"
    calibration.mkdir()
    (calibration / "results.sqlite").write_bytes(bytes(range(256)) * 64)
    out = f / "hz"
    argv = ["hazards", "run", "--config", str(p["case.yaml"]), "--suite", str(f / "s.parquet"), "--out", str(out)]
    return Case([*argv, "--calibration", str(calibration)], ("results.sqlite",), (out,))


def _hazards_unknown_joint(f: Path, p: dict[str, Path]) -> Case:
    """A library scenario on a joint the arm does not have: refused before the first campaign, naming the library."""
    library = f / "h_var.yaml"
    library.write_text((SHIPPED / "hazards.yaml").read_text().replace("variables: [joint1]", "variables: [joint99]", 1))
    out = f / "hz"
    argv = ["hazards", "run", "--config", str(p["case.yaml"]), "--suite", str(f / "s.parquet"), "--out", str(out)]
    argv += ["--library", str(library), "--threshold-mm", "1", "--scenarios", "command_delay,sudden_jump"]
    return Case(argv, ("h_var.yaml", "joint99"), (out,))


CASES["hazards_calibration_damaged"] = _hazards_damaged_calibration
CASES["hazards_library_unknown_joint"] = _hazards_unknown_joint


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_output(name: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    inputs = _files(tmp_path)
    before = {path: path.read_bytes() for path in inputs.values()}
    case = CASES[name](tmp_path, inputs)
    run_fast_case(case, sorted(CASES).index(name) % 2 == 1, capfd)
    changed = [str(path) for path, content in before.items() if path.read_bytes() != content]
    assert not changed, f"an input was changed: {changed}"
