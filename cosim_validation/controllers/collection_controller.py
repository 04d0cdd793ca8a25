"""``error_collection``: [Barragan et al. 2024]'s data-collection motion as a case.

As a case, a session drives it through the drivers.

The plan is :func:`~cosim_validation.controllers.planning.collection_motion.collection_motion` of the configured
settings (``controllers.collection``) drawn from the case seed: settled steps towards random joint goals (a ramp, a
settle, repeated readings), a continuous training motion and a held-out continuous motion, back home between them. Its
samples are not at one period: each setpoint is stamped when the arm must reach it, as the lockstep loop streams any
plan. ``cosim errors collect --from-run`` keeps the read samples of such a case (the same rows as
``cosim errors collect --seed <case seed>`` in batch). The motion stays in a box around home (10 % of each joint's
range either side as shipped) and is not checked for collisions, as in batch (the collection drives the arm in free
space, away from the patient).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.record import Stage
from cosim_validation.controllers.planning.collection_motion import CollectSettings, collection_motion
from cosim_validation.controllers.planning.plan import InsertionLine, Plan
from cosim_validation.robots.model import RobotConfig

#: The controller's name (``--controller``, ``controllers.default``, the controller node's parameter).
COLLECTION_KIND = "error_collection"


class CollectionController:
    """Plans the collection of ``settings`` for ``robot`` (its kinematic limits and home pose)."""

    name = COLLECTION_KIND

    def __init__(self, robot: RobotConfig, settings: CollectSettings) -> None:
        self.robot = robot
        self.settings = settings

    def plan_case(self, source: ArrayLike, target: ArrayLike, seed: int = 0) -> Plan:
        """The collection drawn from the case seed ``seed`` (``source`` and ``target`` are not used).

        Args:
            source: The case's source point, shape (3,), in base_link, in [m] (not used).
            target: The case's target point, shape (3,), in base_link, in [m] (not used).
            seed: The case seed, from which the random joint goals and motions are drawn.
        """
        kinematics = self.robot.kinematics
        motion = collection_motion(self.robot.home_q, kinematics.q_lower, kinematics.q_upper, self.settings, seed)
        stage = np.full(len(motion.t_s), int(Stage.INITIALIZATION), dtype=np.uint8)
        stage[-1] = int(Stage.RESET)
        tip = kinematics.tip_pose(self.robot.home_q)
        line = InsertionLine(tip.pos_m, tip.R[:, 2], tip.pos_m)  # no insertion: the home tip, its axis
        meta = {"collection": True, "seed": int(seed), "readings": int(motion.reading.sum())}
        return Plan(motion.t_s, stage, motion.q, tip.pos_m, line, self.name, meta)
