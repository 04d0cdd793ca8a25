"""Axial needle-insertion force from the needle's pose relative to the anatomy (Okamura et al. 2004 structure).

For a sample with the needle from the holder to the tip, :class:`TissueLayers` gives the length inside each
tissue, the tissue holding the tip and the tip's depth d in it. With the axial tip speed v (positive
inserting) and the tissue parameters of config/supervisor/needle_force.yaml:

- before the tip's tissue is punctured (d has not yet reached the puncture depth d_p, where
  k1 d_p + k2 d_p^2 = puncture force), the tip meets the stiffness force k1 d + k2 d^2, whatever v;
- after the puncture, the advancing tip (v > stick speed) cuts with the tissue's constant cutting force;
  a still or retracting tip cuts nothing;
- friction acts along the needle inside punctured tissue: sign(v) * sum(length_i * (c_i + b_i ``|v|``)),
  and vanishes in the static band ``|v|`` <= stick speed (the Karnopp band of Okamura et al.);
- the force at the tip is the stiffness or cutting force; the force at the holder, what a force sensor
  between holder and needle measures, adds the friction. Positive forces push the needle back out.

A tissue stays punctured once its puncture depth was reached (one insertion path per case). The model is
vectorised over samples; :class:`NeedleForceStream` runs it one sample at a time with the same results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosim_validation.common.exceptions import InputError
from cosim_validation.supervisor.tissue_layers import TissueLayers


@dataclass(frozen=True)
class TissueParameters:
    """Force parameters of one tissue layer (units in the names)."""

    model: str
    tissue: str
    stiffness_n_per_m: float
    stiffness_n_per_m2: float
    puncture_force_n: float
    cutting_force_n: float
    friction_n_per_m: float
    damping_n_s_per_m2: float

    @property
    def puncture_depth_m(self) -> float:
        """Indentation d_p at which the stiffness force reaches the puncture force [m]."""
        k1, k2, f = self.stiffness_n_per_m, self.stiffness_n_per_m2, self.puncture_force_n
        return f / k1 if k2 == 0.0 else float((-k1 + np.sqrt(k1 * k1 + 4.0 * k2 * f)) / (2.0 * k2))


class ForceState(NamedTuple):
    """What the model remembers between calls: punctured tissues and the last sample."""

    punctured: NDArray[np.bool_]
    t_s: float
    tip_m: NDArray[np.float64]


class NeedleForces(NamedTuple):
    """Forces of n samples (positive: pushing the needle back out).

    Attributes:
        tip_force_n: (n,) axial force on the tip: stiffness before a puncture, cutting after it [N].
        holder_force_n: (n,) axial force at the holder: tip force plus shaft friction [N].
        friction_n: (n,) shaft friction [N].
        speed_m_s: (n,) axial tip speed, positive inserting [m/s].
        tip_layer: (n,) index of the tip's tissue, -1 outside.
        tip_depth_m: (n,) depth of the tip in its tissue [m].
        punctured: (n, L) whether each tissue was punctured by that sample.
    """

    tip_force_n: NDArray[np.float64]
    holder_force_n: NDArray[np.float64]
    friction_n: NDArray[np.float64]
    speed_m_s: NDArray[np.float64]
    tip_layer: NDArray[np.int64]
    tip_depth_m: NDArray[np.float64]
    punctured: NDArray[np.bool_]


class NeedleForceModel:
    """The force model over a set of tissue layers.

    Args:
        layers: The tissues' meshes, in precedence order.
        parameters: One :class:`TissueParameters` per layer, same order.
        stick_speed_m_s: Half-width of the static band of axial speed [m/s].
    """

    def __init__(self, layers: TissueLayers, parameters: Sequence[TissueParameters], stick_speed_m_s: float) -> None:
        if len(parameters) != len(layers.names):
            raise InputError(f"{len(layers.names)} layers need as many parameter sets, got {len(parameters)}")
        self.layers = layers
        self.parameters = tuple(parameters)
        self.stick_speed_m_s = stick_speed_m_s
        self._k1 = np.array([p.stiffness_n_per_m for p in parameters])
        self._k2 = np.array([p.stiffness_n_per_m2 for p in parameters])
        self._dp = np.array([p.puncture_depth_m for p in parameters])
        self._cut = np.array([p.cutting_force_n for p in parameters])
        self._coulomb = np.array([p.friction_n_per_m for p in parameters])
        self._viscous = np.array([p.damping_n_s_per_m2 for p in parameters])

    def initial_state(self) -> ForceState:
        """Nothing punctured, no previous sample."""
        return ForceState(np.zeros(len(self.parameters), dtype=bool), np.nan, np.full(3, np.nan))

    def forces(
        self, t_s: ArrayLike, holder_m: ArrayLike, tip_m: ArrayLike, state: ForceState | None = None
    ) -> tuple[NeedleForces, ForceState]:
        """Forces of n samples in time order, continuing from ``state`` (None: a fresh insertion).

        Args:
            t_s: (n,) increasing sample times [s], after the time of ``state``.
            holder_m: (n, 3) needle holder (mount) points in base_link [m].
            tip_m: (n, 3) needle tip points in base_link [m].
            state: What the previous call returned.

        Returns:
            The forces and the state to pass to the next call.

        Raises:
            InputError: The times do not increase, continuing from ``state``'s, or the shapes differ.
        """
        t = np.atleast_1d(np.asarray(t_s, dtype=np.float64))
        a = np.asarray(holder_m, dtype=np.float64).reshape(-1, 3)
        b = np.asarray(tip_m, dtype=np.float64).reshape(-1, 3)
        if not (t.shape[0] == a.shape[0] == b.shape[0]) or np.any(np.diff(t) <= 0):
            raise InputError(f"t_s (n,) increasing, holder_m and tip_m (n, 3): got {t.shape}, {a.shape}, {b.shape}")
        state = self.initial_state() if state is None else state
        if t[0] <= state.t_s:  # a previous sample's time is NaN in a fresh state: no comparison holds
            raise InputError(f"t_s: the sample at {t[0]:g} s does not come after the previous one at {state.t_s:g} s")
        where = self.layers.along_needle(a, b)
        speed = self._speed(t, a, b, state)
        punctured = self._punctured(where.tip_layer, where.tip_depth_m, state.punctured)
        tip_force = self._tip_force(where.tip_layer, where.tip_depth_m, speed, punctured)
        friction = self._friction(where.length_m, speed, punctured)
        forces = NeedleForces(
            tip_force, tip_force + friction, friction, speed, where.tip_layer, where.tip_depth_m, punctured
        )
        return forces, ForceState(punctured[-1].copy(), float(t[-1]), b[-1].copy())

    def _speed(
        self, t: NDArray[np.float64], a: NDArray[np.float64], b: NDArray[np.float64], state: ForceState
    ) -> NDArray[np.float64]:
        """Axial tip speed: the tip's displacement since the previous sample along the needle, per second."""
        axis = (b - a) / np.linalg.norm(b - a, axis=1, keepdims=True)
        prev_tip = np.vstack([state.tip_m[None, :], b[:-1]])
        prev_t = np.r_[state.t_s, t[:-1]]
        speed = np.einsum("ij,ij->i", b - prev_tip, axis) / (t - prev_t)
        return np.where(np.isfinite(speed), speed, 0.0)

    def _punctured(
        self, tip_layer: NDArray[np.int64], depth: NDArray[np.float64], before: NDArray[np.bool_]
    ) -> NDArray[np.bool_]:
        """(n, L): tissue i punctured at sample k if it was before, or the tip reached its puncture depth."""
        n, n_layers = tip_layer.shape[0], len(self.parameters)
        reached = np.zeros((n, n_layers), dtype=bool)
        inside = tip_layer >= 0
        rows = np.flatnonzero(inside)
        reached[rows, tip_layer[rows]] = depth[rows] >= self._dp[tip_layer[rows]]
        return np.logical_or.accumulate(reached, axis=0) | before[None, :]

    def _tip_force(
        self,
        tip_layer: NDArray[np.int64],
        depth: NDArray[np.float64],
        speed: NDArray[np.float64],
        punctured: NDArray[np.bool_],
    ) -> NDArray[np.float64]:
        layer = np.maximum(tip_layer, 0)
        inside = tip_layer >= 0
        cut = punctured[np.arange(tip_layer.shape[0]), layer]
        stiffness = self._k1[layer] * depth + self._k2[layer] * depth * depth
        cutting = np.where(speed > self.stick_speed_m_s, self._cut[layer], 0.0)
        return np.where(inside, np.where(cut, cutting, stiffness), 0.0)

    def _friction(
        self, length_m: NDArray[np.float64], speed: NDArray[np.float64], punctured: NDArray[np.bool_]
    ) -> NDArray[np.float64]:
        per_length = self._coulomb[None, :] + self._viscous[None, :] * np.abs(speed)[:, None]
        magnitude = np.sum(np.where(punctured, length_m * per_length, 0.0), axis=1)
        moving = np.abs(speed) > self.stick_speed_m_s
        return np.where(moving, np.sign(speed) * magnitude, 0.0)


class NeedleForceStream:
    """The force model one sample at a time (a control loop's view); same results as one batch call."""

    def __init__(self, model: NeedleForceModel) -> None:
        self.model = model
        self.state = model.initial_state()

    def update(self, t_s: float, holder_m: ArrayLike, tip_m: ArrayLike) -> tuple[float, float]:
        """(tip force, holder force) [N] of the sample at ``t_s`` [s].

        Args:
            t_s: The sample's time in [s], after the previous sample's.
            holder_m: The needle holder (mount) point in base_link, shape (3,), in [m].
            tip_m: The needle tip point in base_link, shape (3,), in [m].

        Returns:
            The axial tip force and holder force in [N], positive pushing the needle back out.
        """
        forces, self.state = self.model.forces([t_s], holder_m, tip_m, self.state)
        return float(forces.tip_force_n[0]), float(forces.holder_force_n[0])


def axial_force_vectors(holder_force_n: ArrayLike, holder_m: ArrayLike, tip_m: ArrayLike) -> NDArray[np.float64]:
    """(n, 3) force of the tissue on the needle at the holder, in base_link [N] (for a WrenchStamped).

    A positive axial force pushes the needle back out, against the holder-to-tip direction.

    Args:
        holder_force_n: The axial force at the holder of each sample, shape (n,), in [N].
        holder_m: The needle holder (mount) points in base_link, shape (n, 3), in [m].
        tip_m: The needle tip points in base_link, shape (n, 3), in [m].

    Returns:
        The force vectors in base_link, shape (n, 3), float64, in [N].
    """
    a = np.asarray(holder_m, dtype=np.float64).reshape(-1, 3)
    axis = np.asarray(tip_m, dtype=np.float64).reshape(-1, 3) - a
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    out: NDArray[np.float64] = -np.asarray(holder_force_n, dtype=np.float64).reshape(-1, 1) * axis
    return out
