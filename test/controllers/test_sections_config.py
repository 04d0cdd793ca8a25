"""The ``planning``, ``controllers`` and ``validator`` sections: shipped values load, bad values name their key."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.controllers import ControllersConfig
from cosim_validation.controllers.planning import PlanningConfig, ValidatorSettings
from test.controllers.planning.setup_fixtures import CONFIG_PATH

READERS = {
    "planning": PlanningConfig.from_config,
    "controllers": ControllersConfig.from_config,
    "validator": ValidatorSettings.from_config,
}


def _with(section: str, path: tuple[str, ...], value: Any) -> ConfigNode:
    root = load_config(CONFIG_PATH)
    data = copy.deepcopy(root[section].value)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return ConfigNode(data, root.source, section)


def test_shipped_sections_load() -> None:
    root = load_config(CONFIG_PATH)
    planning = PlanningConfig.from_config(root["planning"])
    assert planning.sampling_rate_hz == 10.0
    assert planning.dt_s == pytest.approx(0.1)
    assert ControllersConfig.from_config(root["controllers"]).default in ("straight", "guarded")
    assert ValidatorSettings.from_config(root["validator"]).forbidden_clearance_m > 0


@pytest.mark.parametrize(
    ("section", "path", "value", "key", "message"),
    [
        ("planning", ("sampling_rate_hz",), 0.0, "planning.sampling_rate_hz", "expected a number >= 1.0"),
        ("planning", ("default_source_m",), [0.4, 0.0], "planning.default_source_m", "expected a list of 3 numbers"),
        ("planning", ("injection", "velocity_m_s"), -1.0, "planning.injection.velocity_m_s", ">= 0.001"),
        ("planning", ("joint_velocity_scale",), 1.5, "planning.joint_velocity_scale", "<= 1.0"),
        ("planning", ("ompl", "planner"), "PRM*", "planning.ompl.planner", "expected one of 'RRTConnect'"),
        ("planning", ("approach", "speed"), 1.0, "planning.approach.speed", "unknown key"),
        (
            "controllers",
            ("default",),
            "careful",
            "controllers.default",
            "unknown controller 'careful'; expected one of: straight, guarded",
        ),
        ("controllers", ("guarded", "clearance_m"), -0.01, "controllers.guarded.clearance_m", ">= 0.0"),
        ("controllers", ("guarded", "n_directions"), 0, "controllers.guarded.n_directions", ">= 1"),
        ("validator", ("self_collision",), "yes", "validator.self_collision", "expected true or false"),
        ("validator", ("velocity_tolerance",), 0.5, "validator.velocity_tolerance", ">= 1.0"),
    ],
)
def test_bad_values_name_their_key(section: str, path: tuple[str, ...], value: Any, key: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        READERS[section](_with(section, path, value))
    assert info.value.key == key
