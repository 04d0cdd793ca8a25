"""A check of the robot against its own commands, for what the tip detector cannot see ([Li et al. 2016]).

Commands applied out of order (every other one after its successor) make the arm stutter: it stands still for a
cycle, then makes two steps in one. Its tip never leaves the model's by more than a step, so the tip and joint
thresholds (set above the fault-free tracking error) miss most of it. What changes is how far the arm moved
along each commanded step: the **progress** of sample k,

    rho_k = (dq_measured_k . dq_setpoint_k) / ``|dq_setpoint_k|^2``,   dq_k = q_k - q_(k-1),

is about 1 when the arm follows (it reaches each setpoint within the period), about 0 when a command was not
applied and about 2 when two were applied at once. It is judged only where the commanded step is at least
``MIN_STEP`` (a still or creeping command says nothing). ``q_setpoint`` is the clean setpoint the controller sent
(what the records carry), ``q_measured`` what the robot reported. Vectorised over a record (campaigns,
replay); :func:`step_progress` judges one step with the same operations, for the detector in the loop
(:class:`~cosim_validation.hazards.online_detector.OnlineDetector`), so both flag the same samples.
"""

from __future__ import annotations

import numpy as np

#: Commanded steps smaller than this are not judged [rad, or m for a prismatic joint] (norm over the joints).
#: Chosen by measurement (docs/HAZARDS.md): on 100 fault-free cases of the emulated arm its own lag at the onset
#: of motion gives ``|rho - 1|`` up to 1.67 on steps of 1-3 mrad, 0.66 from 5 mrad on.
MIN_STEP = 5e-3


def command_progress(q_setpoint: np.ndarray, q_measured: np.ndarray) -> np.ndarray:
    """(n,) ``|rho_k - 1|`` of each sample (NaN at the first sample and where the commanded step is < MIN_STEP).

    Args:
        q_setpoint: (n, J) the commands sent (rad, or m for a prismatic joint).
        q_measured: (n, J) the joints the robot reported.
    """
    setpoint = np.asarray(q_setpoint, dtype=np.float64)
    measured = np.asarray(q_measured, dtype=np.float64)
    out = np.full(len(setpoint), np.nan)
    if len(setpoint) < 2:
        return out
    step, moved = np.diff(setpoint, axis=0), np.diff(measured, axis=0)
    norm2 = np.sum(step * step, axis=1)
    judged = norm2 >= MIN_STEP * MIN_STEP
    rho = np.sum(moved * step, axis=1)[judged] / norm2[judged]
    out[1:][judged] = np.abs(rho - 1.0)
    return out


def step_progress(
    previous_setpoint: np.ndarray, setpoint: np.ndarray, previous_measured: np.ndarray, measured: np.ndarray
) -> float:
    """``|rho - 1|`` of one sample from its and the previous sample's setpoints and measured joints.

    :func:`command_progress` one sample at a time, the same operations.

    Args:
        previous_setpoint: The previous sample's command, shape (J,), in [rad] (or [m] for a prismatic joint).
        setpoint: This sample's command, shape (J,), in [rad] (or [m] for a prismatic joint).
        previous_measured: The joints the robot reported at the previous sample, shape (J,), same units.
        measured: The joints the robot reported at this sample, shape (J,), same units.

    Returns:
        ``|rho - 1|`` [1]; NaN where the commanded step is < MIN_STEP.
    """
    step = (np.asarray(setpoint, dtype=np.float64) - np.asarray(previous_setpoint, dtype=np.float64))[None, :]
    moved = (np.asarray(measured, dtype=np.float64) - np.asarray(previous_measured, dtype=np.float64))[None, :]
    norm2 = np.sum(step * step, axis=1)
    if not norm2[0] >= MIN_STEP * MIN_STEP:
        return float("nan")
    rho = np.sum(moved * step, axis=1) / norm2
    return float(np.abs(rho - 1.0)[0])
