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


def test_a_list_grown_every_entry_stops_at_its_bound_with_the_file_and_the_state(tmp_path: Path) -> None:
    machine = yaml.safe_load(SETTLES.read_text())
    machine["parameters"]["max_oscillations"] = 1000
    machine["variables"]["seen"] = []
    machine["states"]["injecting"]["states"]["inside_ball"]["entry"].append("seen = seen + seen + ['in']")
    path = tmp_path / "grows.yaml"
    path.write_text(yaml.safe_dump(machine, sort_keys=False))
    chart = Statechart(load_machine(path))
    chart.start(0.0, {"stage": "injection", "distance_to_target_m": 0.01, "is_last": False})
    error = None
    for step in range(1, 60):
        distance = 0.001 if step % 2 else 0.01
        try:
            chart.step(0.1 * step, {"stage": "injection", "distance_to_target_m": distance, "is_last": False})
        except MachineError as exc:
            error = str(exc)
            break
    assert step == 29, "the 14th entry would join two lists of 8191 items"
    assert error is not None
    assert error.endswith(
        "grows.yaml: action: \"seen = seen + seen + ['in']\" at t = 2.9 s in state 'injecting.inside_ball':"
        " cannot evaluate: '+' would make a text or list of 16382 items; at most 10000"
    )
