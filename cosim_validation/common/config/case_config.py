"""The case-study configuration file (``config/needle_insertion.yaml``): its sections, checked on load.

Each section is validated by the area that reads it (``anatomy``, ``robot``, ...); this module rejects what
no area reads: a misspelt section (``robotz:``) would otherwise be ignored and its defaults used silently.
"""

from __future__ import annotations

from pathlib import Path

from cosim_validation.common.config.config_node import ConfigNode
from cosim_validation.common.config.loader import load_config, parse_config

#: The top-level sections of a case-study configuration and what reads them (a module and name in the package).
CASE_SECTIONS: dict[str, str] = {
    "anatomy": "anatomy.loader.load_anatomy",
    "robot": "robots.model.robot_config.RobotConfig",
    "planning": "controllers.planning.planning_config.PlanningConfig",
    "controllers": "controllers.controllers_config.ControllersConfig",
    "validator": "controllers.planning.state_validator.ValidatorSettings",
    "testgen": "testgen.testgen_config.load_testgen_config",
    "backends": "robots.virtual.backends_config.BackendsConfig",
    "campaign": "assembly.campaign_config.CampaignConfig",
}


def checked_case_config(root: ConfigNode) -> ConfigNode:
    """``root`` after checking that it holds no section outside :data:`CASE_SECTIONS`.

    Args:
        root: The document root of a case-study configuration (a mapping).

    Raises:
        ConfigError: An unknown top-level key (names the file and the key, lists the sections).
    """
    root.reject_unknown(CASE_SECTIONS)
    return root


def load_case_config(path: str | Path, base_dir: str | Path = "") -> ConfigNode:
    """Read a case-study configuration file and check its top-level keys.

    Args:
        path: The file.
        base_dir: Folder of relative paths in it ("" for the file's folder; a run directory's copy gives the
            original's).

    Raises:
        ConfigError: The file is missing or not YAML, or holds an unknown section.
    """
    return checked_case_config(load_config(path, base_dir))


def parse_case_config(text: str, source: str | Path) -> ConfigNode:
    """:func:`load_case_config` for YAML text.

    Args:
        text: The YAML document.
        source: The file it came from, for error messages and as the folder of its relative paths.
    """
    return checked_case_config(parse_config(text, source))
