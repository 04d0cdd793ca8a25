"""The ``backends.emulated`` section: the shipped values load, bad values are named with file and key."""

from __future__ import annotations

from typing import Any

import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.robots.emulated.emulated_config import EmulatedArmConfig
from test.robots.virtual.plans import config_node, shipped_config_dict


def test_shipped_section_loads(config: ConfigNode) -> None:
    emulated = EmulatedArmConfig.from_config(config["backends"]["emulated"])
    assert emulated.tracker.position_noise_std_m == pytest.approx(2e-4)
    assert emulated.dynamics.joint_stiffness_nm_per_rad.shape == (7,)
    assert emulated.command_latency_s > 0


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    *path, last = dotted.split(".")
    node = data
    for key in path:
        node = node[key]
    node[last] = value


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("seed", -1, r"seed: expected an integer >= 0"),
        ("seed", 1.5, r"seed: expected an integer, got 1\.5"),
        ("command_latency_s", -0.001, r"command_latency_s: expected a number >= 0"),
        ("kinematics.joint_zero_offset_std_rad", -1e-4, r"joint_zero_offset_std_rad: expected a number >= 0"),
        ("kinematics.link_length_error_std_m", float("nan"), r"link_length_error_std_m: expected a finite number"),
        ("dynamics.coulomb_friction_nm", [1.0] * 8, r"coulomb_friction_nm: expected a list of 7"),
        ("dynamics.joint_stiffness_nm_per_rad", [0.0] * 7, r"joint_stiffness_nm_per_rad\[0\]: expected a number > 0"),
        ("dynamics.link_mass_error_rel_std", 0.9, r"link_mass_error_rel_std: expected a number <= 0\.3"),
        ("encoder.noise_std_rad", "0.1", r"encoder\.noise_std_rad: expected a number"),
        ("tracker.position_noise_std_m", -0.2, r"tracker\.position_noise_std_m: expected a number >= 0"),
        ("tracker.colour", "red", r"tracker\.colour: unknown key"),
    ],
)
def test_bad_emulated_values_are_named(key: str, value: Any, match: str) -> None:
    data = shipped_config_dict()
    _set(data["backends"]["emulated"], key, value)
    with pytest.raises(ConfigError, match=rf"test-config\.yaml: backends\.emulated\..*{match}"):
        EmulatedArmConfig.from_config(config_node(data)["backends"]["emulated"])


def test_missing_key_is_named() -> None:
    data = shipped_config_dict()
    del data["backends"]["emulated"]["tracker"]
    with pytest.raises(ConfigError, match=r"backends\.emulated\.tracker: missing required key"):
        EmulatedArmConfig.from_config(config_node(data)["backends"]["emulated"])
