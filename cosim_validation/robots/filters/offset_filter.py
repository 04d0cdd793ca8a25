"""A fixed joint offset between what the controller commands and what the robot gets (a mastering error).

``offset:joint2=0.001,joint4=-0.002`` adds 1 mrad to every setpoint of ``joint2`` and -2 mrad to ``joint4``
(metres for a prismatic joint): the robot sits away from the plan by exactly that, and its encoders say so. It is
the smallest :class:`~cosim_validation.robots.filters.robot_filter.RobotFilter`, a known error to check that a filter
changes a robot the same way in a campaign and in a session, and a way to see what a mis-mastered joint does to
the needle.
"""

from __future__ import annotations

import math

import numpy as np

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import InputError
from cosim_validation.robots.filters.robot_filter import FilterEvent
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.robot_backend import BackendSample
from cosim_validation.robots.virtual.backends_config import BackendsConfig


class OffsetFilter:
    """Adds ``offset_rad`` ((J,) [rad | m]) to every setpoint; readings pass unchanged."""

    def __init__(self, offset_rad: np.ndarray, text: str) -> None:
        self.offset_rad = np.asarray(offset_rad, dtype=np.float64)
        self._name = f"offset:{text}"

    @property
    def name(self) -> str:
        """``offset:<options>``."""
        return self._name

    def reset(self, q0: np.ndarray, case_seed: int) -> None:
        """Nothing to restart.

        Args:
            q0: The case's start pose, shape (J,), in [rad], or [m] for a prismatic joint (unused).
            case_seed: The case's seed (unused: the filter draws nothing).
        """

    def command(self, t_s: float, q_setpoint: np.ndarray) -> np.ndarray:
        """The setpoint plus the offsets.

        Args:
            t_s: Case time the setpoint is due at, in [s] (unused).
            q_setpoint: The controller's setpoint, shape (J,), in [rad], or [m] for a prismatic joint.
        """
        return np.asarray(q_setpoint, dtype=np.float64) + self.offset_rad

    def observe(self, sample: BackendSample) -> BackendSample:
        """Unchanged: the encoders read where the robot really is.

        Args:
            sample: The robot's reading.
        """
        return sample

    def events(self) -> list[FilterEvent]:
        """None."""
        return []


#: The largest joint offset a filter takes [rad, or m]: half a turn
MAX_OFFSET = math.pi


def parse_offsets(options: str, joint_names: tuple[str, ...]) -> np.ndarray:
    """``name=value,...`` -> (J,) offsets [rad | m], 0 for joints not named.

    Args:
        options: The filter's options, ``JOINT=VALUE`` pairs separated by commas, values in [rad], or [m] for a
            prismatic joint.
        joint_names: Names of the J joints, base to tool (the order of the result).

    Raises:
        InputError: A malformed pair, an unknown joint (the message lists the joints), a value that is not a finite
            number or beyond +-MAX_OFFSET, or a joint named twice.
    """
    offsets = np.zeros(len(joint_names))
    seen: set[str] = set()
    for pair in filter(None, (p.strip() for p in options.split(","))):
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep:
            raise InputError(f"offset filter: expected JOINT=VALUE, got {pair!r}")
        if name not in joint_names:
            raise InputError(f"offset filter: unknown joint {name!r}; joints: {', '.join(joint_names)}")
        if name in seen:
            raise InputError(f"offset filter: joint {name!r} given twice")
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"offset filter: {name}: expected a number [rad or m], got {value!r}") from None
        if not math.isfinite(number):
            raise InputError(f"offset filter: {name}: expected a finite number, got {value!r}")
        if abs(number) > MAX_OFFSET:  # 1e300 was taken, and every case then failed on its joint limits
            raise InputError(
                f"offset filter: {name}: expected an offset within +-{MAX_OFFSET:.4g} [rad or m], got {value.strip()}"
            )
        offsets[joint_names.index(name)] = number
        seen.add(name)
    if not seen:
        raise InputError("offset filter: name at least one JOINT=VALUE")
    return offsets


def make_offset_filter(config: ConfigNode, options: str, kinematics: Kinematics) -> OffsetFilter:
    """The ``offset`` kind of :data:`cosim_validation.robots.filters.robot_filters.FILTER_KINDS`.

    Args:
        config: The case-study configuration (its ``backends`` section is validated for the robot the offsets apply
            to).
        options: The ``OPTIONS`` of ``offset:OPTIONS``, as :func:`parse_offsets` reads them.
        kinematics: The nominal arm (its joint names and number of joints).
    """
    BackendsConfig.from_config(config["backends"], kinematics.n_joints)  # the robot the offsets apply to is valid
    return OffsetFilter(parse_offsets(options, kinematics.joint_names), options)
