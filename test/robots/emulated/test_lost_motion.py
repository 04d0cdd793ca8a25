"""The play operator: the link trails by half the play after a monotone move and holds within the play."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.robots.emulated.lost_motion import LostMotion

WIDTH = np.array([0.0, 2e-3, 4e-3])


@pytest.fixture
def play() -> LostMotion:
    p = LostMotion(WIDTH)
    p.reset(np.zeros(3))
    return p


def test_centred_after_reset(play: LostMotion) -> None:
    np.testing.assert_array_equal(play.link_rad, np.zeros(3))


def test_trails_by_half_the_play_after_a_monotone_move(play: LostMotion) -> None:
    for motor in np.linspace(0.0, 0.1, 50):
        link = play.update(np.full(3, motor))
    np.testing.assert_allclose(link, 0.1 - WIDTH / 2)


def test_small_reversal_inside_the_play_does_not_move_the_link(play: LostMotion) -> None:
    play.update(np.full(3, 0.1))
    before = play.link_rad
    link = play.update(np.full(3, 0.1) - WIDTH / 2)  # back by half the play: the slack is taken up only
    np.testing.assert_allclose(link, before)


def test_reversal_changes_the_side(play: LostMotion) -> None:
    """Hysteresis: the same motor angle gives two link angles depending on the direction of approach."""
    play.update(np.full(3, 0.05))
    from_below = play.update(np.full(3, 0.02 + 1e-3 * 0))
    play.update(np.full(3, -0.05))
    from_above = play.update(np.full(3, 0.02))
    np.testing.assert_allclose(from_below - from_above, WIDTH, atol=1e-15)


@pytest.mark.parametrize("motor", [0.3, -0.7, 1e-4])
def test_link_always_within_the_play(play: LostMotion, motor: float) -> None:
    link = play.update(np.full(3, motor))
    assert np.all(np.abs(link - motor) <= WIDTH / 2 + 1e-15)
