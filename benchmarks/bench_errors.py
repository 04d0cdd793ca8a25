"""Cost of injecting learned errors per command: the numba network vs scikit-learn's ``predict``.

Both error networks of seed 001's size (two ReLU hidden layers of 16 and 32, CPE features) are fitted with
scikit-learn on random data for the shipped arm's joint count (the weights do not change the cost). Measured:

- the injector's whole ``command`` + ``observe`` of one setpoint (two networks, the CPE direction state, the
  joint limits) with the numba network of :mod:`cosim_validation.error_injection.mlp`;
- the named alternative: the same two networks through ``MLPRegressor.predict`` of one row each;
- a batch of 10 000 rows through both (offline evaluation of a dataset; ours: numpy matrix products).

The two must agree to rounding (checked). The best of 5 repeats counts. Run: ``python benchmarks/bench_errors.py``
(``nice -n 10`` on a shared machine).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable

import numpy as np
from sklearn.neural_network import MLPRegressor  # type: ignore[import-untyped]

from cosim_validation.common.config import load_config, package_root
from cosim_validation.error_injection.features import FeatureSpec
from cosim_validation.error_injection.injection import ErrorInjector
from cosim_validation.error_injection.mlp import Network
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.robot_backend import BackendSample

REPEATS = 5
COMMANDS = 2000
BATCH = 10_000


def fitted(spec: FeatureSpec, seed: int) -> tuple[MLPRegressor, Network]:
    """A 16-32 network on random data, as scikit-learn and as the numba network."""
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=(600, spec.n_features)), rng.normal(size=(600, spec.n_joints))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = MLPRegressor(hidden_layer_sizes=(16, 32), max_iter=20, random_state=seed).fit(x, y)
    f, j = spec.n_features, spec.n_joints
    return mlp, Network(
        spec, tuple(mlp.coefs_), tuple(mlp.intercepts_), np.zeros(f), np.ones(f), np.zeros(j), np.ones(j)
    )


def best_s(run: Callable[[], object]) -> float:
    """Best wall time of :data:`REPEATS` calls [s]."""
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    """Print the per-command and batch costs and their ratios."""
    config = load_config(package_root() / "config" / "needle_insertion.yaml")
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    spec = FeatureSpec("CPE", kinematics.n_joints)
    (mlp1, net1), (mlp2, net2) = fitted(spec, 1), fitted(spec, 2)
    model = ErrorModel(RobotIdentity.of(kinematics), net1, net2, "0" * 64)
    injector = ErrorInjector(model, kinematics.q_lower, kinematics.q_upper, "bench")
    rng = np.random.default_rng(0)
    path = 0.5 * (kinematics.q_lower + kinematics.q_upper) + np.cumsum(
        rng.normal(0, 1e-3, (COMMANDS, spec.n_joints)), 0
    )
    nan3, nan4 = np.full(3, np.nan), np.full(4, np.nan)

    def numba_commands() -> None:
        injector.reset(path[0], 0)
        for q in path:
            out = injector.command(0.0, q)
            injector.observe(BackendSample(0.0, q, out, nan3, nan4))

    def sklearn_commands() -> None:
        direction, previous = np.zeros(spec.n_joints), path[0]
        for q in path:
            direction = np.where(np.abs(q - previous) > spec.deadband, np.sign(q - previous), direction)
            a1 = mlp1.predict(np.concatenate((q, direction))[None, :])[0]
            a2 = mlp2.predict(np.concatenate((q + a1, direction))[None, :])[0]
            previous = np.clip(q + a1 + a2, kinematics.q_lower, kinematics.q_upper) - a2

    numba_commands()  # compile
    per_numba_us = 1e6 * best_s(numba_commands) / COMMANDS
    per_sklearn_us = 1e6 * best_s(sklearn_commands) / COMMANDS
    x = rng.normal(size=(BATCH, spec.n_features))
    np.testing.assert_allclose(net1.predict(x), mlp1.predict(x), rtol=1e-9, atol=1e-12)
    batch_numba_s, batch_sklearn_s = best_s(lambda: net1.predict(x)), best_s(lambda: mlp1.predict(x))
    print(f"arm: {kinematics.n_joints} joints; networks 16-32 ReLU, CPE features ({spec.n_features} inputs)")
    print(f"per command (NN1 + NN2 + history), numba injector: {per_numba_us:8.2f} us")
    print(f"per command, scikit-learn predict (alternative):   {per_sklearn_us:8.2f} us")
    print(f"ratio sklearn / numba per command: {per_sklearn_us / per_numba_us:.1f}x")
    print(
        f"batch of {BATCH} rows, one network: ours {1e3 * batch_numba_s:.2f} ms, sklearn {1e3 * batch_sklearn_s:.2f} ms"
    )
    print(f"ratio sklearn / ours per batch: {batch_sklearn_s / batch_numba_s:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
