"""The shipped scene and testgen configuration, loaded once."""

from __future__ import annotations

import pytest

from cosim_validation.anatomy import AnatomyScene, load_anatomy
from cosim_validation.common.config import ConfigNode, load_config, resolve_resource
from cosim_validation.testgen import TestgenConfig, load_testgen_config


@pytest.fixture(scope="session")
def config() -> ConfigNode:
    return load_config(resolve_resource("config/needle_insertion.yaml"))


@pytest.fixture(scope="session")
def scene(config: ConfigNode) -> AnatomyScene:
    return load_anatomy(config["anatomy"])


@pytest.fixture(scope="session")
def testgen_cfg(config: ConfigNode) -> TestgenConfig:
    return load_testgen_config(config["testgen"])
