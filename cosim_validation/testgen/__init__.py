"""Coverage-oriented test generation ([Actuators 2025], section 4.1) over irregular 3-D models.

The target region (a target model, minus obstacles and a margin, optionally cut to a sub-region)
is discretized into cubes classified full / partial / empty; the ``grid`` generator draws k valid
targets per non-empty cube, the ``random`` baseline draws over the region's box; suites hold
TestCase columns and metadata in a Parquet file.
"""

from cosim_validation.testgen.cube_grid import CubeClass, CubeGrid
from cosim_validation.testgen.generators import Targets, grid_targets, random_targets
from cosim_validation.testgen.inside_test import InsideTest
from cosim_validation.testgen.region_builder import build_region, radius_for_fraction
from cosim_validation.testgen.source_region import SourceRegion
from cosim_validation.testgen.suite import Suite
from cosim_validation.testgen.suite_metrics import SuiteMetrics, suite_metrics
from cosim_validation.testgen.target_region import TargetRegion
from cosim_validation.testgen.test_case import TestCase
from cosim_validation.testgen.testgen import METHODS, TestgenRequest, discretize, generate_suite
from cosim_validation.testgen.testgen_config import RegionSpec, TestgenConfig, load_testgen_config

__all__ = [
    "METHODS",
    "CubeClass",
    "CubeGrid",
    "InsideTest",
    "RegionSpec",
    "SourceRegion",
    "Suite",
    "SuiteMetrics",
    "TargetRegion",
    "Targets",
    "TestCase",
    "TestgenConfig",
    "TestgenRequest",
    "build_region",
    "discretize",
    "generate_suite",
    "grid_targets",
    "load_testgen_config",
    "radius_for_fraction",
    "random_targets",
    "suite_metrics",
]
