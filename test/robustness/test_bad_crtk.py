"""Bad CRTK driver settings (issue 17): an unknown flavour, a robot without a CRTK interface, a malformed namespace
are one clear error naming the parameter, before the driver waits for anything."""

from __future__ import annotations

import pytest

from cosim_validation.exceptions import InputError
from cosim_validation.ros import crtk_topics


@pytest.mark.parametrize(
    ("model", "flavour", "expected"),
    [
        ("dvrk_psm", "kuka", "parameter 'flavour': 'kuka' has no CRTK interface; expected dvrk or raven"),
        ("xmate_er3_pro", "", "parameter 'flavour': 'xmate_er3_pro' has no CRTK interface; expected dvrk or raven"),
    ],
)
def test_a_robot_or_flavour_without_crtk_is_refused(model: str, flavour: str, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        crtk_topics.flavour_of(model, flavour)
    assert str(caught.value).startswith(expected)
    assert "dvrk_psm (dvrk), raven2 (raven)" in str(caught.value)


@pytest.mark.parametrize("namespace", ["PSM1", "/PSM1/", "//PSM1", ""])
def test_a_malformed_namespace_is_refused(namespace: str) -> None:
    with pytest.raises(InputError, match=r"parameter 'namespace': expected an absolute ROS namespace like /PSM1"):
        crtk_topics.topic(namespace, "measured_js")


def test_the_flavours_of_the_surgical_arms() -> None:
    assert crtk_topics.flavour_of("dvrk_psm") == "dvrk"
    assert crtk_topics.flavour_of("raven2") == "raven"
    assert crtk_topics.flavour_of("xmate_er3_pro", "dvrk") == "dvrk"  # a flavour given is used as it is
    assert crtk_topics.topic("/arm1", "servo_jp") == "/arm1/servo_jp"
