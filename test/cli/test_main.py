"""``cosim`` builds every subcommand's parser on each call (``cosim --help`` lists them all), so the parser must not
import what only running a subcommand needs: the case assembly, the anatomy meshes, the physics and ROS 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: modules that take seconds to import between them (trimesh and scipy through the anatomy, numba through the
#: kinematics, the physics engines, rclpy); none of them is needed to parse a command line
HEAVY = (
    "cosim_validation.assembly",
    "cosim_validation.anatomy",
    "cosim_validation.live.nodes",
    "trimesh",
    "scipy",
    "numba",
    "mujoco",
    "pybullet",
    "open3d",
    "rclpy",
    "pandas",
    "pyarrow",
)


def test_building_the_parser_imports_no_heavy_module() -> None:
    # a fresh interpreter: the test process has imported everything already
    code = (
        "import sys\n"
        "from cosim_validation.cli.main import build_parser\n"
        "build_parser()\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "", f"imported while building the parser: {done.stdout.strip()}"


def test_help_lists_every_subcommand() -> None:
    from cosim_validation.cli.main import SUBCOMMANDS

    done = subprocess.run(
        [sys.executable, "-m", "cosim_validation.cli.main", "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    for name in SUBCOMMANDS:
        assert name in done.stdout, name


def test_a_reader_that_goes_away_ends_the_command_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "case.yaml"
    bad.write_text("controllers: [1, 2]\n")
    command = [sys.executable, "-m", "cosim_validation.cli.main", "check", "--json", "--config", str(bad), "x.npz"]
    # stdout block-buffered, as a pipe is by default: the write then fails only when it is flushed (it was at the
    # interpreter's exit: "Exception ignored ... BrokenPipeError", exit 120, whenever PYTHONUNBUFFERED was not set)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as process:
        assert process.stdout is not None
        process.stdout.close()  # as `| head -0` does: the error object has nowhere to go
        _, err = process.communicate(timeout=120)
    assert process.returncode == 1
    assert b"Traceback" not in err, err.decode()


def test_a_reader_that_took_what_it_wanted_gets_no_error_line(tmp_path: Path) -> None:
    # `cosim testgen ... | true`: the suite is written, then its line finds the pipe closed; the shell's reader
    # left on purpose, so stderr stays empty (it said "error: Broken pipe"), and the status still says it was cut
    suite = tmp_path / "suite.parquet"
    command = [sys.executable, "-m", "cosim_validation.cli.main", "testgen", "--granularity-mm", "20", "-o", str(suite)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")  # the line is written, and fails, inside the command
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as process:
        assert process.stdout is not None
        process.stdout.close()
        _, err = process.communicate(timeout=300)
    assert (process.returncode, err.decode()) == (1, "")
    assert suite.stat().st_size > 0


def test_the_resume_command_of_a_json_campaign_answers_in_json_too() -> None:
    from cosim_validation.cli.campaign import resume_command
    from cosim_validation.cli.main import build_parser

    line = ["campaign", "--suite", "s.parquet", "--backends", "virtual", "--out", "runs/a b", "--workers", "1"]
    plain = resume_command(build_parser().parse_args(line))
    as_json = resume_command(build_parser().parse_args([*line, "--json"]))
    prefix = "cosim campaign --config config/needle_insertion.yaml --suite s.parquet --backends virtual --workers 1"
    assert plain == f"{prefix} --out 'runs/a b' --resume"
    assert as_json == f"{prefix} --json --out 'runs/a b' --resume"


def test_an_error_quoting_a_huge_value_keeps_its_start_and_end(tmp_path: Path) -> None:
    # a property nested 3,000 parentheses deep was echoed whole: one error line of 6,158 characters
    from cosim_validation.cli.main import MAX_ERROR_LINE

    region = "r" * 5000
    command = [sys.executable, "-m", "cosim_validation.cli.main", "testgen", "--granularity-mm", "20"]
    done = subprocess.run(
        [*command, "--region", region, "-o", str(tmp_path / "s.parquet")], capture_output=True, text=True, timeout=300
    )
    (line,) = done.stderr.splitlines()
    assert done.returncode == 1
    assert line.startswith("error: --region: unknown region 'rrr"), line[:80]
    assert len(line) <= len("error: ") + MAX_ERROR_LINE + 60
    assert " characters left out) ... " in line
    assert line.endswith("'; target models and regions: left_lung, right_lung, heart_side_7pct, near_heart")
