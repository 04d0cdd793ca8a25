"""Injecting learned errors into a simulated robot ([Barragan et al. 2024], III-F): the ``errors`` robot filter.

For every setpoint q_s of the controller the injector sends the simulated robot

    q = q_s + a1 + a2,   a1 = NN1(q_s, history),   a2 = m(q_s + a1, d) - (q_s + a1) + NN2(q_s + a1, history)

(NN1: the physical robot's controller error, so q_s + a1 is where its encoders would read; NN2: its kinematic
and non-kinematic error, so q_s + a1 + a2 is where its links really are). A simulator follows its setpoints
almost exactly, so its actual tip lands where the physical robot's would. m is the model's kinematic
calibration (:mod:`~.joint_map`; the identity for a model without one; d each joint's last move, from the
measured joints as in training): the calibrated joints carry the arm's joint offsets, ratios, lost motion and
couplings everywhere, also where NN2's guard has faded its offsets to zero. What the controller and the monitor
see of the simulated robot is what they would see of the physical one: the measured joints are the simulated
joints minus a2 (the encoders of an arm whose links sit a2 away from them), the actual tip is the simulator's.

The history the networks see is the filtered robot's own: the measured joints it reported for the previous
sample (not the physical robot's), and the direction state of each network (:mod:`~.features`). The same
object runs in a campaign (:class:`~cosim_validation.robots.filters.robot_filter.FilteredBackend`) and in a session's
``error_injector`` node, fed the same calls in the same order, so both give the same samples.

A model with guards (:mod:`~.support`) shrinks each offset smoothly to zero as its input leaves the network's
training data, and injects no offset on the joints where it did not lower the validation error.

The reset pose is not filtered (a filter does not move the robot's reset), so the first sample of a case, the
arm at rest, shows no injected error; every later sample does. Commands are kept inside the joint limits.

With ``sample=SEED`` (``errors:model=M,sample=SEED``) each network's offset gets a draw of its residual spread
(:class:`~.support.Spread`, stored by ``cosim errors train``): an AR(1) process per joint, zero at a case's start,
its normal numbers from (SEED, the case's seed, the command's index), so a case's draw is the same in a campaign,
a session and a replay, and another SEED is another plausible twin.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import InputError
from cosim_validation.error_injection.error_types import ModelFileError
from cosim_validation.error_injection.features import DEFAULT_DEADBAND, DirectionState, step_directions
from cosim_validation.error_injection.model_file import NETWORKS, ErrorModel
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.error_injection.support import Spread
from cosim_validation.robots.filters.robot_filter import FilterEvent
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.robot_backend import BackendSample


class ErrorInjector:
    """The ``errors`` :class:`~cosim_validation.robots.filters.robot_filter.RobotFilter`.

    Args:
        model: The two networks, checked against the robot by the caller.
        q_lower, q_upper: (J,) joint limits the commands are kept within [rad | m].
        label: Its name after ``errors:`` (the model file's stem).
        sample: Seed of the draws of the networks' residual spread; None: the networks' offsets alone.

    Raises:
        ModelFileError: ``sample`` given for a model that stores no spread.
    """

    def __init__(
        self, model: ErrorModel, q_lower: np.ndarray, q_upper: np.ndarray, label: str, sample: int | None = None
    ) -> None:
        self.model = model
        self._spreads: dict[str, Spread] = {}
        if sample is not None:
            spreads = {key: model.spread(key) for key in NETWORKS}
            missing = [key for key, spread in spreads.items() if spread is None]
            if missing:
                raise ModelFileError(
                    f"sample={sample}: the model stores no residual spread of {' and '.join(missing)} (a model "
                    "without guards, or made before spreads were stored): make it again with cosim errors train "
                    "(without --plain)"
                )
            self._spreads = {key: spread for key, spread in spreads.items() if spread is not None}
        self._sample = sample
        self._case_seed = 0
        self._cycle = 0
        self._residuals = {key: np.zeros(model.robot.n_joints) for key in self._spreads}
        self._lower = np.asarray(q_lower, dtype=np.float64)
        self._upper = np.asarray(q_upper, dtype=np.float64)
        self._name = f"errors:{label}"
        self._nn1 = DirectionState(model.nn1.features)
        self._nn2 = DirectionState(model.nn2.features)
        self._moves = np.zeros(model.robot.n_joints)  # each joint's last move, for the kinematic lost motion
        n = model.robot.n_joints
        self._previous = np.zeros(n)  # the measured joints last reported
        self._previous_setpoint = np.zeros(n)  # the setpoint of the command before
        self._a2 = np.zeros(n)  # the kinematic offset of the command the robot is tracking
        self.last_offsets = (np.zeros(n), np.zeros(n))
        self._warm_up()

    def _warm_up(self) -> None:
        """Run the networks once, then forget it, so their compiled kernels load now.

        Loading takes about 0.3 s on a quiet machine, seconds on a loaded one; now, not in the first sample of a
        case, where a live session's robot has a few seconds to answer.
        """
        q = 0.5 * (self._lower + self._upper)
        self.reset(q, 0)
        self.offsets(q)
        self.reset(np.zeros_like(q), 0)

    def _joint_vector(self, q: ArrayLike, name: str, finite: bool = True) -> np.ndarray:
        """``q`` as a (J,) float64 vector (a list or tuple too), finite if ``finite``, else an InputError.

        A setpoint is not checked for finiteness here: a NaN goes on to the robot, whose command checks refuse it
        with the robot's name (as without the injector).
        """
        vector = np.array(q, dtype=np.float64)
        if vector.shape != self._previous_setpoint.shape or (finite and not np.isfinite(vector).all()):
            raise InputError(
                f"{self._name}: {name} must be {self._previous_setpoint.shape[0]} {'finite ' if finite else ''}joint "
                f"values, got {q!r}"
            )
        return vector

    @property
    def name(self) -> str:
        """``errors:<model>``."""
        return self._name

    def reset(self, q0: np.ndarray, case_seed: int) -> None:
        """A new case at rest at ``q0``: no history, no offset (the networks are deterministic).

        Args:
            q0: The joints at rest, shape (J,), in [rad] (or [m] for a prismatic joint).
            case_seed: The case's seed: the draws of the residual spread start from it (unused without ``sample``).
        """
        q0 = self._joint_vector(q0, "q0")
        self._case_seed, self._cycle = int(case_seed), 0
        self._residuals = {key: np.zeros_like(q0) for key in self._spreads}
        self._nn1.reset()
        self._nn2.reset()
        self._moves = np.zeros_like(self._moves)
        self._previous = q0.copy()
        self._previous_setpoint = self._previous.copy()
        self._a2 = np.zeros_like(self._previous)

    def offsets(self, q_setpoint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The offsets (a1, a2) for the setpoint after the current history; advances the history.

        Args:
            q_setpoint: The controller's setpoint, shape (J,), in [rad] (or [m] for a prismatic joint).

        Returns:
            a1 (the controller error) and a2 (the kinematic and non-kinematic error), each of shape (J,), in the
            units of the joints.
        """
        q_setpoint = self._joint_vector(q_setpoint, "q_setpoint", finite=False)
        step = q_setpoint - self._previous_setpoint
        self._previous_setpoint = q_setpoint.copy()
        r1, r2 = self._draw()
        a1 = self.model.offsets("nn1", self._nn1.features(q_setpoint, self._previous, step), r1)
        measured = q_setpoint + a1
        a2 = self.model.offsets("nn2", self._nn2.features(measured, self._previous, step), r2)
        self._moves = step_directions(self._moves, measured - self._previous, DEFAULT_DEADBAND)
        return a1, self.model.kinematic_offsets(measured, self._moves) + a2

    def _draw(self) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The next residual of each network (None without ``sample``); advances the command index."""
        if self._sample is None:
            return None, None
        for k, key in enumerate(NETWORKS):
            rng = np.random.default_rng([self._sample, self._case_seed, self._cycle, k])
            self._residuals[key] = self._spreads[key].step(self._residuals[key], rng.standard_normal(len(self._lower)))
        self._cycle += 1
        return self._residuals["nn1"], self._residuals["nn2"]

    def command(self, t_s: float, q_setpoint: np.ndarray) -> np.ndarray:
        """q_s + a1 + a2, within the joint limits.

        Args:
            t_s: Case time at which the setpoint is due, in [s]; not used by the injector.
            q_setpoint: The controller's setpoint q_s, shape (J,), in [rad] (or [m] for a prismatic joint).

        Returns:
            The joint vector the simulated robot gets, shape (J,), in the units of the joints.
        """
        q_s = self._joint_vector(q_setpoint, "q_setpoint", finite=False)
        a1, a2 = self.offsets(q_s)
        self.last_offsets = (a1, a2)
        self._a2 = a2
        return np.clip(q_s + a1 + a2, self._lower, self._upper)  # type: ignore[no-any-return]

    def observe(self, sample: BackendSample) -> BackendSample:
        """The simulated joints minus a2 as the measured joints (the history of the next command).

        Args:
            sample: The simulated robot's sample after the last :meth:`command`; its measured joints, shape (J,),
                in [rad] (or [m] for a prismatic joint), are the simulator's.
        """
        measured = np.asarray(sample.q_measured, dtype=np.float64) - self._a2
        self._previous = measured
        return sample._replace(q_measured=measured)

    def events(self) -> list[FilterEvent]:
        """None: the injection is continuous."""
        return []


#: Largest seed of ``sample=`` (numpy takes any non-negative integer; this keeps it a plain 64-bit one).
MAX_SAMPLE_SEED = 2**63 - 1


def parse_errors_options(options: str) -> tuple[Path, int | None]:
    """``model=PATH[,sample=SEED]`` -> (PATH, SEED or None).

    Args:
        options: The filter's OPTIONS: the model file, and the seed of the draws of its residual spread.

    Raises:
        InputError: Another key, a key twice, no model named, or a seed that is not an integer in 0..2^63 - 1.
    """
    given: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in options.split(","))):
        key, sep, value = (part.strip() for part in pair.partition("="))
        if not sep or key not in ("model", "sample") or not value:
            raise InputError(f"errors filter: expected model=PATH[,sample=SEED], got {pair!r}")
        if key in given:
            raise InputError(f"errors filter: {key} given twice")
        given[key] = value
    if "model" not in given:
        raise InputError("errors filter: name the model file: errors:model=PATH (made by cosim errors train)")
    sample = given.get("sample")
    if sample is not None and not (sample.isdigit() and int(sample) <= MAX_SAMPLE_SEED):
        raise InputError(f"errors filter: sample: expected an integer seed in 0..{MAX_SAMPLE_SEED}, got {sample!r}")
    return Path(given["model"]), None if sample is None else int(sample)


def load_injector(path: Path, kinematics: Kinematics, sample: int | None = None) -> ErrorInjector:
    """The injector of the model file ``path`` for the arm of ``kinematics``.

    Args:
        path: The model file (its stem names the filter).
        kinematics: The nominal arm and needle of the simulated robot (identity and joint limits).
        sample: Seed of the draws of the model's residual spread; None: its offsets alone.

    Raises:
        ModelFileError: Unreadable, truncated, made for another robot, or ``sample`` for a model without a spread.
    """
    model = ErrorModel.load(path)
    model.check_robot(RobotIdentity.of(kinematics), str(path))
    try:
        return ErrorInjector(model, kinematics.q_lower, kinematics.q_upper, path.stem, sample)
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None


def make_errors_filter(config: ConfigNode, options: str, kinematics: Kinematics) -> ErrorInjector:
    """The ``errors`` kind of :data:`cosim_validation.robots.filters.robot_filters.FILTER_KINDS`.

    Args:
        config: The case-study configuration (not used by this kind).
        options: ``model=PATH[,sample=SEED]``: the model file, and the seed of the draws of its residual spread.
        kinematics: The nominal arm and needle of the robot the filter wraps (identity and joint limits).
    """
    path, sample = parse_errors_options(options)
    try:
        return load_injector(path, kinematics, sample)
    except ModelFileError as exc:
        raise ModelFileError(f"errors filter: {exc}") from None
