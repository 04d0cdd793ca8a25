"""p2p: row-wise and broadcast Euclidean distances, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.monitor.metrics import MetricInputError, p2p


def test_single_points_and_rows() -> None:
    assert p2p([0, 0, 0], [3, 4, 0]) == 5.0
    a = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    np.testing.assert_allclose(p2p(a, a[::-1]), [np.sqrt(3.0)] * 2)
    np.testing.assert_allclose(p2p(a, [1.0, 1.0, 1.0]), [np.sqrt(3.0), 0.0])
    np.testing.assert_allclose(p2p([0.0, 0.0], np.eye(2)), [1.0, 1.0])


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        (np.zeros(3), np.zeros(2), "same dimension"),
        (np.zeros((2, 3)), np.zeros((3, 3)), "same number of points"),
        (np.zeros(3), [0.0, np.nan, 0.0], "b: coordinates must be finite"),
        (np.zeros(3), "abc", "b: expected an integer or floating array"),
    ],
)
def test_bad_input(a: object, b: object, match: str) -> None:
    with pytest.raises(MetricInputError, match=match):
        p2p(a, b)  # type: ignore[arg-type]
