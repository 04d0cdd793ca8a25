"""Generating suites for experiments from one configuration (the anatomy is loaded once)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cosim_validation.anatomy import AnatomyScene, load_anatomy
from cosim_validation.common.config import ConfigNode, load_case_config
from cosim_validation.testgen import (
    Suite,
    SuiteMetrics,
    TestgenConfig,
    TestgenRequest,
    generate_suite,
    load_testgen_config,
)


@dataclass(frozen=True)
class SuiteMaker:
    """The anatomy and the ``testgen`` section of a configuration, ready to generate suites."""

    config: ConfigNode
    scene: AnatomyScene
    testgen: TestgenConfig

    @classmethod
    def from_config(cls, path: Path) -> SuiteMaker:
        """Load the configuration's anatomy and ``testgen`` section.

        Args:
            path: The case-study configuration file.
        """
        config = load_case_config(path)
        return cls(config, load_anatomy(config["anatomy"]), load_testgen_config(config["testgen"]))

    def make(self, request: TestgenRequest) -> tuple[Suite, SuiteMetrics]:
        """A suite and its coverage metrics from the project's generator.

        Args:
            request: Method, cube edge [m], targets per cube, count, region and seed of the suite.
        """
        return generate_suite(self.scene, self.testgen, request)

    def generate(self, request: TestgenRequest, path: Path) -> Suite:
        """Generate a suite and write it to ``path``.

        Args:
            request: As :meth:`make` takes it.
            path: The Parquet file to write.
        """
        suite, _ = self.make(request)
        suite.write(path)
        return suite
