"""Which robot a dataset or an error model belongs to: a hash of everything that shapes its kinematics.

A model learned on one arm must not drive another: the joint offsets it predicts are that arm's. The hash covers
the joint names, each joint's placement and axis, the limits and the tool (tip) frame, so a changed URDF, another
robot with the same joint count, or another needle gives another hash.
"""

from __future__ import annotations

import hashlib
import json
from typing import NamedTuple

import numpy as np

from cosim_validation.robots.model import PRISMATIC, Kinematics

# Placements are rounded to this before hashing, so the same URDF read twice hashes alike [m | rad].
_ROUND = 1e-12


class RobotIdentity(NamedTuple):
    """The robot a dataset or model was made for.

    Attributes:
        joint_names: Names of the J joints, base to tool.
        model_hash: SHA-256 (hex) of the kinematic model (:func:`robot_model_hash`).
    """

    joint_names: tuple[str, ...]
    model_hash: str

    @classmethod
    def of(cls, kinematics: Kinematics) -> RobotIdentity:
        """The identity of the arm and tool of ``kinematics``.

        Args:
            kinematics: The nominal arm and needle.
        """
        return cls(tuple(kinematics.joint_names), robot_model_hash(kinematics))

    @property
    def n_joints(self) -> int:
        """J."""
        return len(self.joint_names)

    def to_json(self) -> dict[str, object]:
        """As stored in model and dataset metadata."""
        return {"joint_names": list(self.joint_names), "model_hash": self.model_hash}


def joint_units(kinematics: Kinematics) -> tuple[str, ...]:
    """(J,) ``m`` for a prismatic joint, ``rad`` for a revolute one: the units of a dataset's joint columns.

    Args:
        kinematics: The nominal arm.
    """
    return tuple("m" if t == PRISMATIC else "rad" for t in kinematics.chain.joint_type)


def _rounded(values: np.ndarray) -> bytes:
    return np.round(np.asarray(values, dtype=np.float64) / _ROUND).astype(np.int64).tobytes()


def robot_model_hash(kinematics: Kinematics) -> str:
    """SHA-256 (hex) of the joint names, placements, axes, limits and tip frame of ``kinematics``.

    Args:
        kinematics: The nominal arm and needle.
    """
    chain = kinematics.chain
    digest = hashlib.sha256()
    digest.update(json.dumps(list(kinematics.joint_names)).encode())
    for array in (chain.T_parent_joint, chain.axis_in_joint, kinematics.T_last_tip, chain.q_lower, chain.q_upper):
        digest.update(_rounded(array))
    return digest.hexdigest()
