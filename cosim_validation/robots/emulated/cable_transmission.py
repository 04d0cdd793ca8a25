"""The cable transmission of a cable-driven arm (dVRK PSM, Raven-II).

It is what lies between motor and joint besides play and stretch.

The motors turn capstans whose cables drive the joints; the software converts motor to joint values with nominal
ratios. A real arm's ratios differ (capstan and pulley radii, cable wrap), so each joint moves ``1 + s_j`` times
what the encoder-side value says, about the joint's zero; and the wrist cables run over the pulleys of the joints
before them, so moving one wrist joint turns the next by a small coupling factor the nominal coupling matrix does
not know. Both are drawn once per arm (its seed) and are invisible to the encoders: link = C diag(1 + s) q.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim_validation.common.config import ConfigNode


@dataclass(frozen=True)
class CableTransmissionConfig:
    """``backends.emulated.transmission`` (optional; absent: an ideal transmission).

    Attributes:
        scale_error_std: Relative standard deviation of each joint's motor-to-joint ratio.
        coupling_std: Standard deviation of the unknown coupling of each coupled pair [joint per joint].
        coupled: (driving, driven) 0-based joint pairs whose cables are coupled (e.g. the wrist's).
    """

    scale_error_std: float
    coupling_std: float
    coupled: tuple[tuple[int, int], ...]

    @classmethod
    def from_config(cls, node: ConfigNode, n_joints: int) -> CableTransmissionConfig:
        """Read and validate the section (joint indices within ``n_joints``).

        Args:
            node: The ``backends.emulated.transmission`` section.
            n_joints: Number of joints J; each ``coupled`` index must lie in 0..J-1.
        """
        node.reject_unknown(["scale_error_std", "coupling_std", "coupled"])
        pairs = []
        for item in node["coupled"].elements():
            pair = item.to_vector(2)
            if not all(float(v).is_integer() and 0 <= v < n_joints for v in pair) or pair[0] == pair[1]:
                raise item.error(f"expected two different joint indices in 0..{n_joints - 1}, got {item.value!r}")
            pairs.append((int(pair[0]), int(pair[1])))
        return cls(
            scale_error_std=node["scale_error_std"].to_float(minimum=0.0, maximum=0.2),
            coupling_std=node["coupling_std"].to_float(minimum=0.0, maximum=0.5),
            coupled=tuple(pairs),
        )


class CableTransmission:
    """The drawn transmission of one arm: ``link = matrix @ q`` (q: joint values the encoders imply).

    Args:
        matrix: (J, J) C diag(1 + s).
    """

    def __init__(self, matrix: np.ndarray) -> None:
        self.matrix = np.asarray(matrix, dtype=np.float64)

    @classmethod
    def draw(cls, config: CableTransmissionConfig | None, n_joints: int, rng: np.random.Generator) -> CableTransmission:
        """This arm's transmission (the identity without a configuration).

        Args:
            config: Standard deviations of the ratio and coupling errors and the coupled pairs; None for an ideal
                transmission.
            n_joints: Number of joints J.
            rng: Random generator of the draws (the arm's transmission stream).
        """
        if config is None:
            return cls(np.eye(n_joints))
        scale = 1.0 + config.scale_error_std * rng.standard_normal(n_joints)
        coupling = np.eye(n_joints)
        for driving, driven in config.coupled:
            coupling[driven, driving] = config.coupling_std * rng.standard_normal()
        return cls(coupling @ np.diag(scale))

    def link(self, q: np.ndarray) -> np.ndarray:
        """(J,) the joint values the links really take for the transmission-side values ``q`` (J,).

        Args:
            q: Transmission-side joint values, shape (J,), in [rad], or [m] for a prismatic joint.

        Returns:
            The link-side joint values, shape (J,), in the same units.
        """
        out: np.ndarray = self.matrix @ q
        return out
