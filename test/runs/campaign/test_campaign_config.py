"""The ``campaign:`` section: the shipped one is valid; mistakes name the key; backends map to robots."""

from __future__ import annotations

import pytest

from cosim_validation.assembly.campaign_config import CampaignConfig
from cosim_validation.common.config import load_config, package_root, parse_config
from cosim_validation.common.exceptions import ConfigError, InputError

SOURCE = package_root() / "config" / "test-campaign.yaml"
GOOD = (
    "campaign:\n  properties: properties.yaml\n  robots: {virtual: mujoco, physical: emulated}\n"
    "  safety_property: needle_outside_forbidden_regions\n"
)


def test_shipped_section() -> None:
    config = CampaignConfig.from_config(load_config(package_root() / "config" / "needle_insertion.yaml")["campaign"])
    assert config.properties_path.name == "properties.yaml"
    assert config.properties_path.is_file()
    assert config.engines(["virtual", "physical"]) == ("mujoco", "emulated")
    assert config.engines(["emulated", "pybullet"]) == ("pybullet", "emulated")  # robot order, not given order


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            GOOD.replace("mujoco", "gazebo"),
            r"robots\.virtual: expected one of 'mujoco', 'pybullet', 'coppeliasim', got 'gazebo'",
        ),
        (GOOD.replace("properties.yaml", "none.yaml"), r"campaign\.properties: property file .*none\.yaml"),
        (GOOD + "  workers: 3\n", r"campaign\.workers: unknown key"),
        (
            GOOD.replace("  safety_property: needle_outside_forbidden_regions\n", ""),
            r"campaign\.safety_property: missing required key",
        ),
        (  # issue 15, item 3: accepted before, and Tables 2/3 vanished from the report
            GOOD.replace("needle_outside_forbidden_regions", "no_such_property"),
            r"test-campaign\.yaml: campaign\.safety_property: 'no_such_property' is not a property of "
            r".*properties\.yaml'; expected one of: .*needle_outside_forbidden_regions",
        ),
    ],
)
def test_bad_sections(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        CampaignConfig.from_config(parse_config(text, SOURCE)["campaign"])


def test_bad_backends() -> None:
    config = CampaignConfig.from_config(parse_config(GOOD, SOURCE)["campaign"])
    with pytest.raises(InputError, match="name at least one robot"):
        config.engines([])
    with pytest.raises(InputError, match=r"two backends for the physical robot \('emulated', 'emulated'\)"):
        config.engines(["physical", "emulated"])
