"""Where a network has seen data, and an offset that shrinks smoothly to zero away from it.

A network learned on a box of joint space answers anywhere, and outside its training data it answers with what it
extrapolates: on held-out motion outside the training box the injected offsets can make the simulated robot worse
than none (docs/ERRORS.md). A :class:`Guard` keeps, per network, its *training support* in the network's z-scored
feature space (z = (x - mean) / std, the network's own input normalisers):

- the box of the training inputs, per feature (min, max): the distance outside it per feature, and as a vector
  norm ``d_box``;
- up to :data:`MAX_POINTS` training inputs and the radius ``r`` within which every training input has one of them
  (itself excluded): ``d_nn`` is how much farther than ``r`` an input is from its nearest kept input (0 inside
  the cloud); it catches inputs inside the box but in a corner of it with no data;

and the distance d = max(d_box, d_nn). The offset is multiplied by a weight w(d) that is 1 on the support (d = 0),
falls as half a cosine to 0 at d = ``width`` and is 0 beyond: continuous and with a continuous slope, so the
injected offset never jumps. The guard also holds a per-joint mask: joints whose offsets did not lower the
validation error by at least :data:`MASK_MIN_GAIN` (joint offsets against no offset, on validation rows the
network was not fitted to) are not injected.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from cosim_validation.error_injection.error_types import ModelFileError

#: Most training inputs a guard keeps for the nearest-neighbour distance.
MAX_POINTS = 300
#: Default taper width [z-scored feature units, i.e. training standard deviations].
DEFAULT_WIDTH = 1.0
#: Share of the validation error a joint's offsets must remove to be injected. The validation blocks lie among
#: the training rows, so a gain of a few per cent there is noise that new motion does not keep (on the emulated
#: PSM, wrist offsets that removed 2-9 % of it doubled the rotation gap on held-out motion: docs/ERRORS.md).
MASK_MIN_GAIN = 0.1


@dataclass(frozen=True)
class Spread:
    """Per joint, the residual of a network's (guarded, masked) offsets on its validation blocks, as an AR(1) process.

    Sampling it (:meth:`step`) gives the injected error a distribution instead of a point: e_k = phi e_(k-1) +
    sqrt(1 - phi^2) sigma n_k, n_k standard normal, whose stationary spread is sigma and whose lag-1 correlation is
    phi, as the residuals' own.

    Attributes:
        sigma: (J,) standard deviation of the residual, in the joint's unit ([rad], or [m] for a prismatic joint), >= 0.
        phi: (J,) its lag-1 autocorrelation between consecutive rows, in (-1, 1).
    """

    sigma: np.ndarray
    phi: np.ndarray

    def __post_init__(self) -> None:
        sigma, phi = np.asarray(self.sigma, dtype=np.float64), np.asarray(self.phi, dtype=np.float64)
        if sigma.ndim != 1 or phi.shape != sigma.shape:
            raise ModelFileError(f"spread: sigma {sigma.shape} and phi {phi.shape}: expected one of each per joint")
        if not (np.isfinite(sigma).all() and (sigma >= 0).all() and np.isfinite(phi).all() and (np.abs(phi) < 1).all()):
            raise ModelFileError("spread: expected finite sigma >= 0 and phi within (-1, 1) per joint")
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "phi", phi)

    def to_json(self) -> dict[str, list[float]]:
        """``{"sigma": [...], "phi": [...]}``, per joint: the model header's and the training report's form."""
        return {"sigma": self.sigma.tolist(), "phi": self.phi.tolist()}

    def step(self, previous: np.ndarray, normal: np.ndarray) -> np.ndarray:
        """The next (J,) residual after ``previous`` (J,), from ``normal`` (J,) standard normal numbers.

        Args:
            previous: The residual of the step before, in the joint's unit (zeros at a case's start).
            normal: Standard normal numbers, one per joint.
        """
        return self.phi * previous + np.sqrt(1.0 - self.phi**2) * self.sigma * normal  # type: ignore[no-any-return]


def residual_spread(residual: np.ndarray, consecutive: np.ndarray) -> Spread:
    """The :class:`Spread` of validation residuals ``residual`` (n, J).

    Args:
        residual: Target minus the injected offset on the validation rows, shape (n, J), in the joint's unit.
        consecutive: (n - 1,) bool: row i + 1 directly follows row i in the data (the lag-1 pairs).
    """
    residual = np.asarray(residual, dtype=np.float64)
    if not len(residual):
        return Spread(np.zeros(residual.shape[1]), np.zeros(residual.shape[1]))
    sigma = residual.std(axis=0)
    pairs = np.flatnonzero(consecutive)
    centred = residual - residual.mean(axis=0)
    num = (centred[pairs] * centred[pairs + 1]).sum(axis=0)
    den = np.sqrt((centred[pairs] ** 2).sum(axis=0) * (centred[pairs + 1] ** 2).sum(axis=0))
    phi = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    return Spread(sigma, np.clip(phi, -0.99, 0.99))


@dataclass(frozen=True)
class Guard:
    """The training support of one network and its per-joint mask.

    Attributes:
        lower, upper: (F,) the box of the z-scored training inputs.
        points: (m, F) z-scored training inputs (a subsample).
        radius: Nearest-neighbour radius of the training inputs (z units).
        width: Distance beyond the support at which the offset reaches zero (z units), > 0.
        mask: (J,) bool, the joints whose offsets are injected.
        spread: What the network leaves unexplained on its validation blocks (:class:`Spread`); None: not known
            (a model made before it was stored).
    """

    lower: np.ndarray
    upper: np.ndarray
    points: np.ndarray
    radius: float
    width: float
    mask: np.ndarray
    spread: Spread | None = None
    _arrays: tuple[np.ndarray, np.ndarray, np.ndarray] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        f = np.shape(self.lower)
        if len(f) != 1 or np.shape(self.upper) != f or np.ndim(self.points) != 2 or np.shape(self.points)[1:] != f:
            raise ModelFileError(
                f"guard: box {np.shape(self.lower)}, {np.shape(self.upper)} and points "
                f"{np.shape(self.points)} do not match"
            )
        if len(self.points) == 0 or np.ndim(self.mask) != 1:
            raise ModelFileError("guard: expected at least one support point and a mask per joint")
        if self.spread is not None and len(self.mask) and self.spread.sigma.shape != np.shape(self.mask):
            raise ModelFileError(f"guard: a spread of {len(self.spread.sigma)} joints for {len(self.mask)} joints")
        values = (self.lower, self.upper, self.points, self.radius, self.width)
        if not all(np.isfinite(v).all() for v in values) or not self.width > 0 or not self.radius >= 0:
            raise ModelFileError("guard: support not finite, or its width not > 0 or its radius < 0")
        lower, upper, points = (
            np.ascontiguousarray(a, dtype=np.float64) for a in (self.lower, self.upper, self.points)
        )
        object.__setattr__(self, "_arrays", (lower, upper, points))  # as the kernel takes them, made once

    def distance(self, z: np.ndarray) -> np.ndarray:
        """Distance of z-scored inputs from the training support (0 on it).

        Args:
            z: Network inputs z-scored with the training mean and standard deviation, shape (n, F).

        Returns:
            The distances in z-score units, shape (n,).
        """
        z = np.ascontiguousarray(z, dtype=np.float64)
        lower, upper, points = self._arrays
        return _support_distance(z, lower, upper, points, float(self.radius))

    def weight(self, z: np.ndarray) -> np.ndarray:
        """(n,) w in [0, 1]: 1 on the support, a half cosine down to 0 at ``width``, 0 beyond.

        Args:
            z: Network inputs z-scored with the training mean and standard deviation, shape (n, F).
        """
        d = np.clip(self.distance(z) / self.width, 0.0, 1.0)
        return 0.5 * (1.0 + np.cos(np.pi * d))


@njit(cache=True)
def _support_distance(
    z: np.ndarray, lower: np.ndarray, upper: np.ndarray, points: np.ndarray, radius: float
) -> np.ndarray:
    """(n,) max(distance outside the box, distance to the nearest point beyond ``radius``) of each row of ``z``.

    A loop kernel: one row (the injector's case) costs microseconds, not a dozen numpy calls.
    """
    n, f = z.shape
    out = np.empty(n)
    for row in range(n):
        box = 0.0
        for k in range(f):
            excess = max(lower[k] - z[row, k], 0.0) + max(z[row, k] - upper[k], 0.0)
            box += excess * excess
        nearest = np.inf
        for i in range(points.shape[0]):
            d2 = 0.0
            for k in range(f):
                diff = z[row, k] - points[i, k]
                d2 += diff * diff
            nearest = min(nearest, d2)
        out[row] = max(np.sqrt(box), max(np.sqrt(nearest) - radius, 0.0))
    return out


def _squared_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, m) squared distances between the rows of ``a`` (n, F) and ``b`` (m, F)."""
    return np.maximum((a * a).sum(1)[:, None] - 2.0 * a @ b.T + (b * b).sum(1)[None, :], 0.0)  # type: ignore[no-any-return]


def support_of(z: np.ndarray, seed: int, width: float = DEFAULT_WIDTH) -> Guard:
    """The support of z-scored training inputs ``z`` (n, F), every joint injected (mask set later).

    The radius is the largest distance of a training input from its nearest kept point (itself excluded), so every
    training input is on the support.

    Args:
        z: Training inputs z-scored with the network's normalisers, shape (n, F).
        seed: Seed of the subsample of at most :data:`MAX_POINTS` kept points.
        width: Distance beyond the support at which the offset reaches zero [z units], > 0.
    """
    z = np.asarray(z, dtype=np.float64)
    rng = np.random.default_rng(seed)
    kept = np.sort(rng.choice(len(z), size=MAX_POINTS, replace=False)) if len(z) > MAX_POINTS else np.arange(len(z))
    points = z[kept]
    radius = 0.0
    if len(points) > 1:
        for start in range(0, len(z), 2000):
            d2 = _squared_distances(z[start : start + 2000], points)
            cols = np.flatnonzero((kept >= start) & (kept < start + 2000))
            d2[kept[cols] - start, cols] = np.inf  # a kept point is not its own neighbour
            radius = max(radius, float(np.sqrt(d2.min(axis=1)).max()))
    return Guard(z.min(axis=0), z.max(axis=0), points, radius, width, np.ones(0, dtype=bool))


def joint_mask(target: np.ndarray, predicted: np.ndarray, min_gain: float = MASK_MIN_GAIN) -> np.ndarray:
    """(J,) bool: the joints whose predicted offsets improve on no offset by at least ``min_gain``.

    Args:
        target: The offsets to predict, shape (n, J).
        predicted: The predicted offsets, shape (n, J).
        min_gain: The share by which the mean squared error against ``target`` must be below that of no offset.
    """
    return ((target - predicted) ** 2).mean(axis=0) < (1.0 - min_gain) * (target**2).mean(axis=0)  # type: ignore[no-any-return]
