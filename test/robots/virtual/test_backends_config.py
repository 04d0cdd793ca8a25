"""The shared ``backends`` section: the shipped values load, bad values are named with file and key."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.robots.registry import BACKEND_NAMES
from cosim_validation.robots.virtual import BackendsConfig
from test.robots.virtual.plans import config_node, shipped_config_dict


def test_shipped_section_loads(config: ConfigNode) -> None:
    shared = BackendsConfig.from_config(config["backends"])
    assert shared.default in BACKEND_NAMES
    assert shared.physics_timestep_s == pytest.approx(0.002)  # the virtual engines; the emulated arm 1 ms
    assert shared.servo.n_joints == 7
    assert np.all(shared.servo.kp_nm_per_rad > 0)


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    *path, last = dotted.split(".")
    node = data
    for key in path:
        node = node[key]
    node[last] = value


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("backends.physics_timestep_s", 0.0, r"backends\.physics_timestep_s: expected a number >= 1e-05"),
        ("backends.physics_timestep_s", 0.05, r"backends\.physics_timestep_s: expected a number <= 0\.01"),
        ("backends.servo.kp_nm_per_rad", [1.0] * 6, r"backends\.servo\.kp_nm_per_rad: expected a list of 7"),
        (
            "backends.servo.kp_nm_per_rad",
            [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0],
            r"kp_nm_per_rad\[2\]: expected a number > 0",
        ),
        (
            "backends.servo.kd_nms_per_rad",
            [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, "x"],
            r"kd_nms_per_rad\[6\]: expected a number",
        ),
        ("backends.servo.armature_kg_m2", [-0.1] * 7, r"armature_kg_m2\[0\]: expected a number >= 0"),
        ("backends.servo.gravity_compensation", "yes", r"gravity_compensation: expected true or false"),
        ("backends.servo.kpp", 1.0, r"backends\.servo\.kpp: unknown key"),
    ],
)
def test_bad_shared_values_are_named(key: str, value: Any, match: str) -> None:
    data = shipped_config_dict()
    _set(data, key, value)
    with pytest.raises(ConfigError, match=match):
        BackendsConfig.from_config(config_node(data)["backends"])
