"""make_backend: every name builds its backend; unknown names list the valid ones."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.robots.emulated.emulated_er3_pro import EmulatedEr3Pro
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.registry import BACKEND_NAMES, ENGINES, make_backend
from cosim_validation.robots.virtual import BackendInputError
from cosim_validation.robots.virtual.mujoco_backend import MujocoBackend
from cosim_validation.robots.virtual.pybullet_backend import PybulletBackend
from test.robots.virtual.plans import config_node, shipped_config_dict


@pytest.mark.parametrize(
    ("name", "cls"), [("mujoco", MujocoBackend), ("pybullet", PybulletBackend), ("emulated", EmulatedEr3Pro)]
)
def test_each_name_builds_its_backend(config: ConfigNode, kinematics: Kinematics, name: str, cls: type) -> None:
    backend = make_backend(name, config, kinematics)
    assert isinstance(backend, cls)
    assert backend.name == name
    backend.close()


def test_none_means_the_configured_default(config: ConfigNode, kinematics: Kinematics) -> None:
    assert make_backend(None, config, kinematics).name == config["backends"]["default"].value == "mujoco"


@pytest.mark.parametrize("name", ["gazebo", "MuJoCo", ""])
def test_unknown_names_list_the_valid_ones(config: ConfigNode, kinematics: Kinematics, name: str) -> None:
    with pytest.raises(
        BackendInputError,
        match=rf"unknown backend {name!r}; expected one of: mujoco, pybullet, coppeliasim, emulated, ros2_control",
    ):
        make_backend(name, config, kinematics)
    assert BACKEND_NAMES == ("mujoco", "pybullet", "coppeliasim", "emulated", "ros2_control")


def test_seed_overrides_the_configured_arm(config: ConfigNode, kinematics: Kinematics) -> None:
    arms = [make_backend("emulated", config, kinematics, seed=s) for s in (None, 0, 1)]
    offsets = [arm.perturbation.joint_zero_offset_rad for arm in arms if isinstance(arm, EmulatedEr3Pro)]
    np.testing.assert_array_equal(offsets[0], offsets[1])  # the configured seed is 0
    assert not np.array_equal(offsets[1], offsets[2])


def test_bad_config_is_reported_before_building(kinematics: Kinematics) -> None:
    data = shipped_config_dict()
    data["backends"]["servo"]["kd_nms_per_rad"] = [1.0] * 3
    with pytest.raises(ConfigError, match=r"test-config\.yaml: backends\.servo\.kd_nms_per_rad: expected a list of 7"):
        make_backend("mujoco", config_node(data), kinematics)


def test_missing_section_is_named(kinematics: Kinematics) -> None:
    data = shipped_config_dict()
    del data["backends"]
    with pytest.raises(ConfigError, match=r"test-config\.yaml: backends: missing required key"):
        make_backend("mujoco", config_node(data), kinematics)


def test_unknown_default_is_named_with_file_and_key(kinematics: Kinematics) -> None:
    data = shipped_config_dict()
    data["backends"]["default"] = "gazebo"
    expected = r"backends\.default: expected one of 'mujoco', 'pybullet', 'coppeliasim', 'emulated', 'ros2_control'"
    with pytest.raises(ConfigError, match=expected):
        make_backend(None, config_node(data), kinematics)


def test_every_engine_declares_its_role() -> None:
    assert {name: e.role.label for name, e in ENGINES.items()} == {
        "mujoco": "virtual",
        "pybullet": "virtual",
        "coppeliasim": "virtual",
        "emulated": "physical",
        "ros2_control": "physical",
    }
