"""A trained multi-layer perceptron with its normalisers, evaluated by a numba kernel (no learning library).

Seed 001's networks are small MLPs with ReLU hidden layers and a linear output, trained on z-scored inputs and
outputs. :class:`Network` holds exactly what a model file stores (weights, biases, the four normalisers) and
folds the normalisers into the first and last layer once, so evaluating a row is the plain layer loop of
:func:`_forward` (a few microseconds for [Barragan et al. 2024]'s 16-32 network, benchmarks/bench_errors.py); many
rows at once
go through numpy's matrix products. It equals scikit-learn's ``predict`` of the
network it was taken from to rounding (tested).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from cosim_validation.error_injection.error_types import ModelFileError
from cosim_validation.error_injection.features import FeatureSpec

#: From this many rows on, :meth:`Network.predict` uses numpy's matrix products instead of the row kernel.
BATCH_ROWS = 64


@njit(cache=True)
def _forward(x: np.ndarray, params: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """(n, sizes[-1]) outputs of the folded network for inputs ``x`` (n, sizes[0]); ReLU between layers."""
    n = x.shape[0]
    widest = 0
    for s in sizes:
        widest = max(widest, s)
    out = np.empty((n, sizes[-1]))
    a = np.empty(widest)
    b = np.empty(widest)
    n_layers = sizes.shape[0] - 1
    for row in range(n):
        for i in range(sizes[0]):
            a[i] = x[row, i]
        offset = 0
        for layer in range(n_layers):
            n_in, n_out = sizes[layer], sizes[layer + 1]
            bias = offset + n_in * n_out
            for j in range(n_out):
                b[j] = params[bias + j]
            for i in range(n_in):
                ai = a[i]
                base = offset + i * n_out
                for j in range(n_out):
                    b[j] += ai * params[base + j]
            last = layer == n_layers - 1
            for j in range(n_out):
                a[j] = b[j] if last or b[j] > 0.0 else 0.0
            offset = bias + n_out
        for j in range(sizes[-1]):
            out[row, j] = a[j]
    return out


@dataclass(frozen=True)
class Network:
    """One error network: features -> J joint offsets [rad | m].

    Attributes:
        features: What it takes.
        weights: Per layer (n_in, n_out) matrices, input layer first.
        biases: Per layer (n_out,) vectors.
        x_mean, x_std: (F,) input normalisers (z = (x - mean) / std).
        y_mean, y_std: (J,) output normalisers (y = z std + mean).
    """

    features: FeatureSpec
    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    x_mean: np.ndarray
    x_std: np.ndarray
    y_mean: np.ndarray
    y_std: np.ndarray
    _params: np.ndarray = field(init=False, repr=False, compare=False)
    _sizes: np.ndarray = field(init=False, repr=False, compare=False)
    _layers: tuple[tuple[np.ndarray, np.ndarray], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_shapes(self)
        weights = [np.asarray(w, dtype=np.float64) for w in self.weights]
        biases = [np.asarray(b, dtype=np.float64) for b in self.biases]
        weights[0] = weights[0] / self.x_std[:, None]  # fold (x - mean) / std into the first layer
        biases[0] = biases[0] - (self.x_mean / self.x_std) @ self.weights[0]
        weights[-1] = weights[-1] * self.y_std[None, :]  # and z std + mean into the last
        biases[-1] = biases[-1] * self.y_std + self.y_mean
        params = np.concatenate([np.concatenate((w.ravel(), b)) for w, b in zip(weights, biases, strict=True)])
        sizes = np.array([weights[0].shape[0], *(w.shape[1] for w in weights)], dtype=np.int64)
        object.__setattr__(self, "_layers", tuple(zip(weights, biases, strict=True)))
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_sizes", sizes)

    @property
    def hidden_layers(self) -> tuple[int, ...]:
        """Widths of the hidden layers."""
        return tuple(int(w.shape[1]) for w in self.weights[:-1])

    def predict(self, x: np.ndarray) -> np.ndarray:
        """(n, J) offsets of (n, F) features (or (J,) of one (F,) row).

        Args:
            x: Features, shape (n, F) or (F,).
        """
        x = np.asarray(x, dtype=np.float64)
        if x.ndim == 1:
            return _forward(x[None, :], self._params, self._sizes)[0]  # type: ignore[no-any-return]
        if x.shape[0] < BATCH_ROWS:
            return _forward(np.ascontiguousarray(x), self._params, self._sizes)
        for i, (w, b) in enumerate(self._layers):  # many rows: matrix products (BLAS) beat the row loop
            x = x @ w + b
            if i < len(self._layers) - 1:
                x = np.maximum(x, 0.0)
        return x


def check_shapes(net: Network) -> None:
    """Raise :class:`ModelFileError` unless the layers chain from F features to J outputs, all finite.

    Args:
        net: The network to check.
    """
    f, j = net.features.n_features, net.features.n_joints
    if not net.weights or len(net.weights) != len(net.biases):
        raise ModelFileError(f"network: {len(net.weights)} weight matrices for {len(net.biases)} bias vectors")
    width = f
    for i, (w, b) in enumerate(zip(net.weights, net.biases, strict=True)):
        if w.ndim != 2 or w.shape[0] != width or b.shape != (w.shape[1],):
            raise ModelFileError(f"network: layer {i}: weights {w.shape} and bias {b.shape} after {width} inputs")
        width = w.shape[1]
    if width != j:
        raise ModelFileError(f"network: {width} outputs, expected one per joint ({j})")
    for name, value, n in (
        ("x_mean", net.x_mean, f),
        ("x_std", net.x_std, f),
        ("y_mean", net.y_mean, j),
        ("y_std", net.y_std, j),
    ):
        if np.shape(value) != (n,):
            raise ModelFileError(f"network: {name} has shape {np.shape(value)}, expected ({n},)")
    arrays = (*net.weights, *net.biases, net.x_mean, net.x_std, net.y_mean, net.y_std)
    if not all(np.isfinite(a).all() for a in arrays):
        raise ModelFileError("network: weights or normalisers are not all finite")
    if (np.asarray(net.x_std) <= 0).any() or (np.asarray(net.y_std) <= 0).any():
        raise ModelFileError("network: normaliser std must be > 0")
