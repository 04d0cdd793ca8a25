"""The suite a session runs when none is given: a grid suite of the configured target, made into the run directory.

``cosim session`` and ``launch/digital_twin.launch.py`` both call :func:`make_default_suite`, so a session
started either way without a suite runs the same cases.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from cosim_validation.live.session.graph import GraphSpec

DEFAULT_GRANULARITY_M = 0.02  # one case per 20 mm cube: 633 cases over the built-in left lung
DEFAULT_CONFIG = "config/needle_insertion.yaml"
DEFAULT_SUITE_FILE = "suite.parquet"  # in the run directory


class DefaultSuite(NamedTuple):
    """The suite made for a session."""

    path: Path
    cases: int
    description: str  # e.g. "633 grid cases (20 mm, 1 per cube)"


def graph_config_file(graph: GraphSpec) -> str:
    """The case-study configuration the graph's nodes read (the first node's ``config`` parameter).

    Args:
        graph: The session graph; without a node that has a ``config`` parameter, the default configuration
            (:data:`DEFAULT_CONFIG`) is returned.
    """
    return next((str(n.parameters["config"]) for n in graph.nodes if "config" in n.parameters), DEFAULT_CONFIG)


def make_default_suite(graph: GraphSpec, run_dir: Path) -> DefaultSuite:
    """Write ``run_dir/suite.parquet``: a grid suite (20 mm cubes, one case each, seed 0) of the target region.

    Args:
        graph: The session graph (its nodes' configuration file gives the anatomy and test generation).
        run_dir: The run directory (created if missing).
    """
    from cosim_validation.anatomy import load_anatomy
    from cosim_validation.common.config import load_config, resolve_resource
    from cosim_validation.testgen import TestgenRequest, generate_suite, load_testgen_config

    config = load_config(resolve_resource(graph_config_file(graph)))
    request = TestgenRequest(method="grid", granularity_m=DEFAULT_GRANULARITY_M, per_cube=1, seed=0)
    suite, _ = generate_suite(load_anatomy(config["anatomy"]), load_testgen_config(config["testgen"]), request)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / DEFAULT_SUITE_FILE
    suite.write(path)
    description = f"{len(suite)} grid cases ({DEFAULT_GRANULARITY_M * 1000:.0f} mm, 1 per cube)"
    return DefaultSuite(path, len(suite), description)
