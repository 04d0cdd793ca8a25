"""Example controllers under test for cosim_validation (docs/CONTROLLERS.md)."""
