"""Training one error network with scikit-learn's MLP ([Barragan et al. 2024]'s hyper-parameters by default), seeded.

Seed 001 (Table I) trains both networks with two ReLU hidden layers of 16 and 32 neurons, Adam, the MSE loss,
batch size 32 and learning rate 0.0064, on z-scored inputs and outputs; it tuned these on a validation split of
the training data. :func:`train_network` does the same with :class:`sklearn.neural_network.MLPRegressor`
(``alpha`` is its L2 penalty, 0 here for the plain MSE loss), stops when the validation loss stops improving,
and returns a :class:`~cosim_validation.error_injection.mlp.Network` that no longer needs scikit-learn.
:func:`search` tries a small grid of alternatives and keeps the one with the lowest validation loss.
Same data and seed, same network (scikit-learn's Adam on one thread is deterministic).
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.optional import require
from cosim_validation.error_injection.error_types import DatasetError
from cosim_validation.error_injection.features import FeatureSpec
from cosim_validation.error_injection.mlp import Network

#: Fewest usable rows a network is trained on (a 16-32 network has about a thousand weights).
MIN_TRAINING_ROWS = 200


@dataclass(frozen=True)
class TrainingSettings:
    """Hyper-parameters of one network (defaults: [Barragan et al. 2024], Table I).

    Attributes:
        hidden_layers: Widths of the hidden layers.
        batch_size: Rows per Adam step.
        learning_rate: Adam's initial step.
        max_epochs: Upper bound on passes over the data.
        patience: Epochs without validation improvement before stopping.
        validation_fraction: Share of the rows held out to stop on (and to compare settings).
        alpha: L2 penalty (0: the plain MSE loss of [Barragan et al. 2024]).
        seed: Weight initialisation, shuffling and the validation split.
    """

    hidden_layers: tuple[int, ...] = (16, 32)
    batch_size: int = 32
    learning_rate: float = 0.0064
    max_epochs: int = 400
    patience: int = 25
    validation_fraction: float = 0.15
    alpha: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.hidden_layers or any(int(w) < 1 for w in self.hidden_layers):
            raise InputError(f"hidden layers: expected widths >= 1, got {list(self.hidden_layers)!r}")
        if self.batch_size < 1 or self.max_epochs < 1 or self.patience < 1:
            raise InputError("batch size, max epochs and patience must be >= 1")
        if not (0.0 < self.learning_rate < 1.0):
            raise InputError(f"learning rate: expected a number in (0, 1), got {self.learning_rate!r}")
        if not (0.05 <= self.validation_fraction <= 0.5):
            raise InputError(f"validation fraction: expected 0.05 to 0.5, got {self.validation_fraction!r}")
        if not (self.alpha >= 0.0):
            raise InputError(f"alpha: expected a number >= 0, got {self.alpha!r}")

    def to_json(self) -> dict[str, Any]:
        """As stored in a model's meta."""
        return asdict(self) | {"hidden_layers": list(self.hidden_layers)}


@dataclass(frozen=True)
class TrainedNetwork:
    """A network and how its training went.

    Attributes:
        network: The result.
        settings: What it was trained with.
        epochs: Passes over the data.
        validation_mse: Mean squared error on the validation rows, in normalised units.
        train_rows: Rows trained on (validation rows included).
    """

    network: Network
    settings: TrainingSettings
    epochs: int
    validation_mse: float
    train_rows: int

    def to_json(self) -> dict[str, Any]:
        """Settings and losses."""
        return {
            "settings": self.settings.to_json(),
            "epochs": self.epochs,
            "validation_mse": self.validation_mse,
            "rows": self.train_rows,
        }


def _normaliser(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = values.mean(axis=0)
    std = values.std(axis=0)
    return mean, np.where(std > 1e-12, std, 1.0)  # a constant column (a direction never set) is left as is


def check_rows(x: np.ndarray, y: np.ndarray, what: str) -> None:
    """Raise :class:`DatasetError` for too few rows or non-finite values.

    Args:
        x: Features, shape (n, F).
        y: Targets, shape (n, J).
        what: The network's name in messages.
    """
    if x.shape[0] != y.shape[0]:
        raise DatasetError(f"{what}: {x.shape[0]} feature rows for {y.shape[0]} target rows")
    if x.shape[0] < MIN_TRAINING_ROWS:
        raise DatasetError(
            f"{what}: {x.shape[0]} usable rows, at least {MIN_TRAINING_ROWS} are needed to train a network"
        )
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise DatasetError(f"{what}: features or targets are not all finite")


def train_network(
    spec: FeatureSpec, x: np.ndarray, y: np.ndarray, settings: TrainingSettings, what: str = "network"
) -> TrainedNetwork:
    """Fit one network to features ``x`` (n, F) and joint-offset targets ``y`` (n, J).

    Args:
        spec: The feature set of ``x``.
        x: Features, shape (n, F).
        y: Joint-offset targets, shape (n, J), in [rad] (or [m] for a prismatic joint).
        settings: The network's hyper-parameters.
        what: The network's name in messages.

    Raises:
        DatasetError: Too few rows (naming :data:`MIN_TRAINING_ROWS`) or non-finite values.
    """
    check_rows(x, y, what)
    sklearn_mlp = require("sklearn.neural_network", "scikit-learn", "training error networks")
    x_mean, x_std = _normaliser(x)
    y_mean, y_std = _normaliser(y)
    regressor = sklearn_mlp.MLPRegressor(
        hidden_layer_sizes=tuple(settings.hidden_layers),
        activation="relu",
        solver="adam",
        alpha=settings.alpha,
        batch_size=settings.batch_size,
        learning_rate_init=settings.learning_rate,
        max_iter=settings.max_epochs,
        early_stopping=True,
        validation_fraction=settings.validation_fraction,
        n_iter_no_change=settings.patience,
        tol=0.0,
        random_state=settings.seed,
        shuffle=True,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at max_epochs: the epochs are reported instead
        regressor.fit((x - x_mean) / x_std, (y - y_mean) / y_std)
    network = Network(
        spec,
        tuple(np.asarray(w, dtype=np.float64) for w in regressor.coefs_),
        tuple(np.asarray(b, dtype=np.float64) for b in regressor.intercepts_),
        x_mean,
        x_std,
        y_mean,
        y_std,
    )
    best_score = float(regressor.best_validation_score_)  # R^2 averaged over outputs (z-scored: 1 - MSE)
    return TrainedNetwork(network, settings, int(regressor.n_iter_), 1.0 - best_score, int(x.shape[0]))


#: The alternatives :func:`search` tries around [Barragan et al. 2024]'s choice.
SEARCH_GRID: dict[str, tuple[Any, ...]] = {
    "hidden_layers": ((16, 32), (32, 32), (64, 64)),
    "learning_rate": (0.0064, 0.002),
    "batch_size": (32, 64),
}


def search(
    spec: FeatureSpec, x: np.ndarray, y: np.ndarray, base: TrainingSettings, what: str = "network"
) -> tuple[TrainedNetwork, list[dict[str, Any]]]:
    """Train every combination of :data:`SEARCH_GRID` and keep the lowest validation loss.

    Args:
        spec: The feature set of ``x``.
        x: Features, shape (n, F).
        y: Joint-offset targets, shape (n, J), in [rad] (or [m] for a prismatic joint).
        base: The hyper-parameters whose layers, learning rate and batch size the grid replaces.
        what: The network's name in messages.

    Returns:
        The best network and one row per trial (settings, epochs, validation MSE).
    """
    trials: list[TrainedNetwork] = []
    for layers in SEARCH_GRID["hidden_layers"]:
        for rate in SEARCH_GRID["learning_rate"]:
            for batch in SEARCH_GRID["batch_size"]:
                settings = replace(base, hidden_layers=layers, learning_rate=rate, batch_size=batch)
                trials.append(train_network(spec, x, y, settings, what))
    best = min(trials, key=lambda t: t.validation_mse)
    return best, [t.to_json() for t in trials]
