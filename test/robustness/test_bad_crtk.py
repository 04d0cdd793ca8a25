"""Bad CRTK inputs (issue 17): driver settings (an unknown flavour, a robot without a CRTK interface, a malformed
namespace: one clear error naming the parameter, before the driver waits for anything), and records in and out
(``cosim export-crtk`` / ``import-crtk``: a missing topic, column or joint is one error line)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.config import package_root
from cosim_validation.common.exceptions import InputError
from cosim_validation.live.ros import crtk_topics
from test.robustness.harness import Case, Workspace, run_case


@pytest.mark.parametrize(
    ("model", "flavour", "expected"),
    [
        ("dvrk_psm", "kuka", "parameter 'flavour': 'kuka' has no CRTK interface; expected dvrk or raven"),
        ("xmate_er3_pro", "", "parameter 'flavour': 'xmate_er3_pro' has no CRTK interface; expected dvrk or raven"),
    ],
)
def test_a_robot_or_flavour_without_crtk_is_refused(model: str, flavour: str, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        crtk_topics.flavour_of(model, flavour)
    assert str(caught.value).startswith(expected)
    assert "dvrk_psm (dvrk), raven2 (raven)" in str(caught.value)


@pytest.mark.parametrize("namespace", ["PSM1", "/PSM1/", "//PSM1", ""])
def test_a_malformed_namespace_is_refused(namespace: str) -> None:
    with pytest.raises(InputError, match=r"parameter 'namespace': expected an absolute ROS namespace like /PSM1"):
        crtk_topics.topic(namespace, "measured_js")


def test_the_flavours_of_the_surgical_arms() -> None:
    assert crtk_topics.flavour_of("dvrk_psm") == "dvrk"
    assert crtk_topics.flavour_of("raven2") == "raven"
    assert crtk_topics.flavour_of("xmate_er3_pro", "dvrk") == "dvrk"  # a flavour given is used as it is
    assert crtk_topics.topic("/arm1", "servo_jp") == "/arm1/servo_jp"


# ---------------------------------------------------------------- cosim export-crtk / import-crtk (issue 17 item 5)
def _case_id(ws: Workspace) -> str:
    from cosim_validation.runs.campaign.results_db import ResultsDB

    with ResultsDB.open(ws.run_dir / "results.sqlite") as db:
        return next(c.test_id for c in db.cases() if c.outcome == "completed")


def _exported(folder: Path, ws: Workspace, name: str) -> Path:
    path = folder / name
    assert main(["export-crtk", str(ws.run_dir), _case_id(ws), "-o", str(path)]) == 0
    return path


def _csv_without(column: str) -> Callable[[Path, Workspace], Case]:
    def build(folder: Path, ws: Workspace) -> Case:
        path = _exported(folder, ws, "run.csv")
        lines = path.read_text().splitlines()
        drop = lines[0].split(",").index(column)
        path.write_text("\n".join(",".join(c for i, c in enumerate(line.split(",")) if i != drop) for line in lines))
        out = folder / "d.parquet"
        return Case(["import-crtk", str(path), "--config", str(ws.config), "-o", str(out)], (str(path), column), (out,))

    return build


def _import(source: Callable[[Path, Workspace], Path], *names: str, extra: tuple[str, ...] = ()) -> Any:
    def build(folder: Path, ws: Workspace) -> Case:
        path, out = source(folder, ws), folder / "d.parquet"
        argv = ["import-crtk", str(path), "--config", str(ws.config), "-o", str(out), *extra]
        return Case(argv, (str(path), *names), (out,))

    return build


def _psm_config(folder: Path, ws: Workspace) -> list[str]:
    return ["--config", str(package_root() / "config" / "dvrk_psm_insertion.yaml")]


def _csv_of_two_recordings(folder: Path, ws: Workspace) -> Case:
    """A CSV holding the case twice (time starts again): one record is one recording."""
    path = _exported(folder, ws, "run.csv")
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines, *lines[1:]]) + "\n")
    out = folder / "d.npz"
    argv = ["import-crtk", str(path), "--config", str(ws.config), "-o", str(out)]
    says = (str(path), "column 'time_s'", f"in row {len(lines)} is not after", "expected increasing times")
    return Case(argv, says, (out,))


def _onto_a_record(folder: Path, ws: Workspace) -> Case:
    out = folder / "d.npz"
    out.write_bytes(b"mine")
    return Case(["import-crtk", str(ws.bag), "--config", str(ws.config), "-o", str(out)], (str(out), "already exists"))


CRTK_IO: dict[str, Callable[[Path, Workspace], Case]] = {
    "import:no_crtk_topics": _import(lambda f, ws: ws.bag, "setpoint_js", "/my_arm/joint_states"),
    "import:missing_topic": _import(lambda f, ws: ws.bag, "'/my_arm/setpoint_js'", extra=("--namespace", "/my_arm")),
    "import:csv_missing_column": _csv_without("measured_joint3_rad"),
    "import:csv_not_parquet": lambda f, ws: Case(
        ["import-crtk", str(ws.bag), "--config", str(ws.config), "-o", str(f / "d.csv")], ("-o", ".parquet")
    ),
    "import:another_robot": lambda f, ws: Case(
        ["import-crtk", str(_exported(f, ws, "er3.mcap")), *_psm_config(f, ws), "-o", str(f / "d.parquet")],
        ("er3.mcap", "'/xmate_er3_pro/setpoint_js'", "joint 'yaw' missing"),
        (f / "d.parquet",),
    ),
    "import:record_of_another_robot": lambda f, ws: Case(
        ["import-crtk", str(_exported(f, ws, "er3.mcap")), *_psm_config(f, ws), "-o", str(f / "d.npz")],
        ("er3.mcap", "'/xmate_er3_pro/setpoint_js'", "joint 'yaw' missing"),
        (f / "d.npz",),
    ),
    "import:record_of_two_recordings": _csv_of_two_recordings,
    "import:record_onto_a_file": _onto_a_record,
    "export:unknown_case": lambda f, ws: Case(
        ["export-crtk", str(ws.run_dir), "no-such-case", "-o", str(f / "x.mcap")], ("'no-such-case'",), (f / "x.mcap",)
    ),
    "export:no_such_folder": lambda f, ws: Case(  # it said 'x.mcap.part: No such file or directory'
        ["export-crtk", str(ws.run_dir), _case_id(ws), "-o", str(f / "gone" / "x.mcap")],
        ("-o", "folder", "gone' does not exist"),
        (f / "gone",),
    ),
    "export:wrong_suffix": lambda f, ws: Case(
        ["export-crtk", str(ws.run_dir), "any", "-o", str(f / "x.txt")], ("x.txt", ".mcap"), (f / "x.txt",)
    ),
}


@pytest.mark.parametrize("name", sorted(CRTK_IO))
def test_bad_crtk_record_inputs(
    name: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]
) -> None:
    run_case(CRTK_IO[name](tmp_path, workspace), sorted(CRTK_IO).index(name) % 2 == 1, capfd)
