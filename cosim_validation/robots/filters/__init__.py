"""Filters between a controller and a robot (offsets and their configured stack)."""
