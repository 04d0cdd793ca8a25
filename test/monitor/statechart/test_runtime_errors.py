"""A guard or action that cannot be evaluated at run time names the file, the key, the time and the state."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cosim_validation.common.config import package_root
from cosim_validation.monitor.statechart.errors import MachineError
from cosim_validation.monitor.statechart.loader import load_machine
from cosim_validation.monitor.statechart.runtime import Statechart

SETTLES = package_root() / "config" / "behaviours" / "settles_at_target.yaml"


def _machine(folder: Path, guards: dict[str, str]) -> Path:
    machine = yaml.safe_load(SETTLES.read_text())
    machine["guards"] |= guards
    path = folder / "settles.yaml"
    path.write_text(yaml.safe_dump(machine, sort_keys=False))
    return path


def test_a_guard_dividing_by_zero_names_the_file_and_the_transition(tmp_path: Path) -> None:
    path = _machine(tmp_path, {"injection_starts": 'stage == "injection" and 1 / (radius_m - radius_m) > 0'})
    chart = Statechart(load_machine(path))
    chart.start(0.0, {"stage": "approach", "distance_to_target_m": 0.1, "is_last": False})
    with pytest.raises(
        MachineError,
        match=r"settles\.yaml: transitions\[0\]\.guard: 'injection_starts' at t = 0\.5 s"
        r" in state 'approaching': cannot evaluate: float division by zero",
    ):
        chart.step(0.5, {"stage": "injection", "distance_to_target_m": 0.1, "is_last": False})
