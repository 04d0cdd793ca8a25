"""Bad cases: malformed points, targets outside the lung or inside the heart, sources inside the body."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cosim_validation.controllers import InsertionSetup
from cosim_validation.controllers.planning import PlanningError, check_case

SOURCE = [0.45, 0.0, 0.30]
TARGET = [0.44, 0.02, 0.03]


@pytest.mark.parametrize(
    ("source", "target", "reason", "message"),
    [
        (SOURCE, [np.nan, 0.0, 0.0], "bad_input", "target must be finite"),
        ([np.inf, 0.0, 0.0], TARGET, "bad_input", "source must be finite"),
        (SOURCE, [0.4, 0.0], "bad_input", r"target must be 3 numbers \[m\], got shape \(2,\)"),
        (SOURCE, "here", "bad_input", "target must be 3 numbers"),
        (SOURCE, [0.60, 0.0, -0.05], "target_outside_target_model", "outside every target model"),
        (SOURCE, [2.0, 2.0, 2.0], "target_outside_target_model", "outside every target model"),
        (SOURCE, [0.516, 0.024, 0.1], "target_in_obstacle", "inside the forbidden region 'heart'"),
        ([0.45, 0.0, 0.15], TARGET, "source_inside_body", "inside 'torso'"),
    ],
)
def test_bad_cases_are_refused_with_a_reason(
    insertion_setup: InsertionSetup, source: Any, target: Any, reason: str, message: str
) -> None:
    with pytest.raises(PlanningError, match=message) as info:
        check_case(insertion_setup.world, source, target)
    assert info.value.reason == reason
    for name in ("straight", "guarded"):
        with pytest.raises(PlanningError) as info:
            insertion_setup.controller(name).plan_case(source, target)
        assert info.value.reason == reason


def test_a_good_case_passes(insertion_setup: InsertionSetup) -> None:
    source, target = check_case(insertion_setup.world, SOURCE, TARGET)
    np.testing.assert_array_equal(target, TARGET)
    assert source.dtype == np.float64
