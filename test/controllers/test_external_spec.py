"""``controllers.default.external``: an external ROS 2 node named in the case study; every bad setting is one error
naming the file and the key."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from cosim_validation.common.exceptions import ConfigError
from cosim_validation.controllers.external_spec import ADAPTER_TARGET, ExternalSpec
from test.controllers.test_plugin_loading import controllers

PYTHON = sys.executable


def test_an_external_node_is_a_plugin_of_the_adapter(tmp_path: Path) -> None:
    config = controllers({"external": {"command": f"{PYTHON} -m my_node --ros-args -p a:=1"}, "time_limit_s": 40})
    spec = config.plugin
    assert spec is not None
    assert spec.target == ADAPTER_TARGET
    assert config.default == spec.name == f"external-{Path(PYTHON).name}"
    assert spec.time_limit_s == 40.0
    external = ExternalSpec.from_options(dict(spec.options))
    assert external.command == (PYTHON, "-m", "my_node", "--ros-args", "-p", "a:=1")
    assert (external.controller, external.action) == ("arm_controller", "/run_test_case")
    assert external.real_time_factor == 1.0
    assert external.domain_id is None


def test_settings_are_read() -> None:
    given = {
        "command": PYTHON,
        "controller": "/xmate_arm_controller",
        "action": "/my_ns/run_case",
        "real_time_factor": 8,
        "startup_timeout_s": 12,
        "accept_timeout_s": 2,
        "domain_id": 77,
        "discovery_range": "off",
        "path_tolerance_rad": 0.1,
        "goal_tolerance_rad": 0.01,
        "goal_time_tolerance_s": 0.5,
    }
    spec = controllers({"external": given}).plugin
    assert spec is not None
    external = ExternalSpec.from_options(dict(spec.options))
    assert external.controller == "xmate_arm_controller"
    assert (external.action, external.real_time_factor, external.domain_id) == ("/my_ns/run_case", 8.0, 77)
    assert (external.path_tolerance_rad, external.goal_tolerance_rad, external.goal_time_tolerance_s) == (
        0.1,
        0.01,
        0.5,
    )


@pytest.mark.parametrize(
    ("external", "key", "expected"),
    [
        ({"command": ""}, "controllers.default.external.command", "empty string"),
        ({"command": "no_such_program_anywhere --x"}, "controllers.default.external.command", "not found on PATH"),
        ({"command": "./missing.sh"}, "controllers.default.external.command", "not found in"),
        # a file that is not a program: every case aborted with "Permission denied"
        ({"command": "./README.md"}, "controllers.default.external.command", "is not executable"),
        ({"command": "'unclosed"}, "controllers.default.external.command", "cannot split"),
        (
            {"command": f"{PYTHON} --log {{logdir}}"},
            "controllers.default.external.command",
            "unknown placeholder {logdir}",
        ),
        ({"command": f"{PYTHON} -p 'x:={{a: 1}}'"}, "controllers.default.external.command", "unknown placeholder {a"),
        ({"command": f"{PYTHON} --x {{domain_id"}, "controllers.default.external.command", "literal brace"),
        ({"command": "{log_dir}/node --x"}, "controllers.default.external.command", "cannot hold a placeholder"),
        ({"command": PYTHON, "real_time_factor": 0}, "controllers.default.external.real_time_factor", "> 0"),
        ({"command": PYTHON, "real_time_factor": -2.0}, "controllers.default.external.real_time_factor", "> 0"),
        ({"command": PYTHON, "startup_timeout_s": 0}, "controllers.default.external.startup_timeout_s", "> 0"),
        ({"command": PYTHON, "domain_id": 233}, "controllers.default.external.domain_id", "<= 232"),
        ({"command": PYTHON, "path_tolerance_rad": -0.1}, "controllers.default.external.path_tolerance_rad", ">= 0"),
        ({"command": PYTHON, "controller": "arm controller"}, "controllers.default.external.controller", "ROS name"),
        ({"command": PYTHON, "action": "/run//case"}, "controllers.default.external.action", "ROS name"),
        ({"command": PYTHON, "discovery_range": "lan"}, "controllers.default.external.discovery_range", "one of"),
        ({"command": PYTHON, "comand": "x"}, "controllers.default.external.comand", "unknown key"),
        ({"command": PYTHON, "cwd": "no/such/folder"}, "controllers.default.external.cwd", "not a folder"),
        ("run my node", "controllers.default.external", "expected a mapping"),
        ({"command": PYTHON, "interface": "moveit"}, "controllers.default.external.interface", "one of"),
        ({"command": PYTHON, "namespace": "/PSM1"}, "controllers.default.external.namespace", "interface: crtk"),
        (
            {"command": PYTHON, "interface": "crtk", "flavour": "kuka"},
            "controllers.default.external.flavour",
            "one of",
        ),
        (
            {"command": PYTHON, "interface": "crtk", "namespace": "PSM 1"},
            "controllers.default.external.namespace",
            "ROS name",
        ),
        (
            {"command": PYTHON, "interface": "crtk", "namespace": "PSM2"},
            "controllers.default.external.namespace",
            "absolute",
        ),
        (
            {"command": PYTHON, "interface": "crtk", "namespace": "/1psm"},
            "controllers.default.external.namespace",
            "digit",
        ),
        (
            {"command": PYTHON, "interface": "crtk", "tracker_namespace": "ndi"},
            "controllers.default.external.tracker_namespace",
            "absolute",
        ),
        ({"command": PYTHON, "controller": "2arm"}, "controllers.default.external.controller", "digit"),
        (
            {"command": PYTHON, "interface": "crtk", "controller": "arm"},
            "controllers.default.external.controller",
            "interface: ros2_control",
        ),
        (
            {"command": PYTHON, "interface": "crtk", "goal_tolerance_rad": 0.1},
            "controllers.default.external.goal_tolerance_rad",
            "interface: ros2_control",
        ),
    ],
)
def test_bad_settings_name_the_key(external: Any, key: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        controllers({"external": external})
    text = str(caught.value)
    assert text.startswith(f"case.yaml: {key}:"), text
    assert expected in text, text


def test_external_and_plugin_are_exclusive_and_take_no_options() -> None:
    with pytest.raises(ConfigError, match="exactly one of"):
        controllers({"external": {"command": PYTHON}, "plugin": "a.b:c"})
    with pytest.raises(ConfigError, match="not 'options'"):
        controllers({"external": {"command": PYTHON}, "options": {"gain": 1}})


def test_crtk_settings_are_read() -> None:
    plain = ExternalSpec.from_options(dict(controllers({"external": {"command": PYTHON}}).plugin.options))  # type: ignore[union-attr]
    assert (plain.interface, plain.namespace, plain.flavour) == ("ros2_control", "", "")
    given = {"command": PYTHON, "interface": "crtk", "flavour": "raven", "tracker_namespace": "/ndi"}
    crtk = ExternalSpec.from_options(dict(controllers({"external": given}).plugin.options))  # type: ignore[union-attr]
    assert (crtk.interface, crtk.namespace, crtk.flavour, crtk.tracker_namespace) == ("crtk", "/arm1", "raven", "/ndi")
    unnamed = {"command": PYTHON, "interface": "crtk"}  # the flavour of the robot model, settled by the adapter
    crtk = ExternalSpec.from_options(dict(controllers({"external": unnamed}).plugin.options))  # type: ignore[union-attr]
    assert (crtk.namespace, crtk.flavour) == ("", "")


def test_command_placeholders_are_filled_at_each_start() -> None:
    from cosim_validation.controllers.external_spec import fill_command

    spec = controllers({"external": {"command": f"{PYTHON} --out {{log_dir}}/d{{domain_id}}.txt -p 'x:={{{{a: 1}}}}'"}})
    command = spec.plugin.options["command"]  # type: ignore[union-attr]
    assert fill_command(tuple(command), 7, "/runs/r1/logs") == (
        PYTHON,
        "--out",
        "/runs/r1/logs/d7.txt",
        "-p",
        "x:={a: 1}",
    )
