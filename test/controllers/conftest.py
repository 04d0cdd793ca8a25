"""Fixtures of the controller tests."""

from test.controllers.planning.setup_fixtures import behind_heart, insertion_setup, lung_grid

__all__ = ["behind_heart", "insertion_setup", "lung_grid"]
