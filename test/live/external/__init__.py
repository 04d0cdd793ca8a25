"""Tests of cosim_validation.live.external."""
