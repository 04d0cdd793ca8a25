"""One validation of what a run will build: a campaign's check before it touches its run directory
(:func:`check_spec`) and the assembly's constructor refuse the same choices with the same words (both call
:func:`check_choices`)."""

from __future__ import annotations

import pytest

from cosim_validation.assembly import AssemblySpec, CaseAssembly
from cosim_validation.assembly.spec_check import check_spec
from cosim_validation.common.exceptions import CosimError

CONFIG = "config/needle_insertion.yaml"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            AssemblySpec(CONFIG, ("mujoco",), filters=(("physical", "offset:joint2=0.001"),)),
            "filter physical=offset:joint2=0.001: the physical robot is not run here (robots: virtual)",
        ),
        (
            AssemblySpec(CONFIG, ("mujoco",), supervisor_scenario="config/supervisor/scenario_example.yaml"),
            "a supervisor scenario needs a supervisor (--supervisor or campaign.supervisor)",
        ),
        (
            AssemblySpec(CONFIG, ("mujoco",), stop_on_alarm=True),
            "stop on alarm needs a hazard detector (--detector) and a task supervisor (--supervisor)",
        ),
    ],
    ids=["filter_for_a_robot_not_run", "scenario_without_supervisor", "stop_on_alarm_without_detector"],
)
def test_a_campaign_and_an_assembly_refuse_the_same_choices_alike(spec: AssemblySpec, message: str) -> None:
    with pytest.raises(CosimError) as checked:
        check_spec(spec)
    with pytest.raises(CosimError) as built:
        CaseAssembly(spec)
    assert str(checked.value) == str(built.value) == message
