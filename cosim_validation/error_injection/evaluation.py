"""How close the simulated robot comes to the physical one on held-out motion, without and with injection.

Seed 001 (IV-D, Table II) compares the real robot's actual tool pose with the simulated robot's on a held-out
trajectory: translation (eq. 5) and rotation (eq. 6) between them, mean / std / median / max. Here the real actual
pose is the tracked one (Y B X^-1); the simulated robot follows its commands exactly (MuJoCo tracks a setpoint to
about 0.02 mm, RQ3), so its actual tip is the nominal forward kinematics of what it is commanded: the setpoint
without injection, setpoint + a1 + a2 with it, the injector fed its own readings (setpoint + a1) as history, one
command after another, exactly as the ``errors`` filter runs; where the evaluated rows are not consecutive (a
split that holds out scattered rows) the injector starts afresh, as at a case's start. The error distributions of
both robots (setpoint -> measured per joint, and the tip's distance and rotation from the plan) are compared by the
two-sample Kolmogorov-Smirnov statistic and the Wasserstein distance.

Nothing here flatters: the summary gives both gaps without and with injection and their ratio with / without,
and names each gap that injection makes worse (:meth:`Evaluation.worse`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy.stats import ks_2samp, wasserstein_distance

from cosim_validation.error_injection.error_types import DatasetError
from cosim_validation.error_injection.injection import ErrorInjector
from cosim_validation.error_injection.learning import Labelled
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.error_injection.transforms import pose_gap
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.robot_backend import BackendSample


class Evaluation(NamedTuple):
    """Held-out rows of the physical robot and the simulated one without and with injection.

    Attributes:
        translation_m: {"without", "with"} -> (n,) gap between real and simulated actual tip position [m].
        rotation_rad: {"without", "with"} -> (n,) gap between their orientations [rad].
        controller_error: {"real", "with"} -> (n, J) measured - setpoint [rad, or m for a prismatic joint] (the
            simulator without injection: 0).
        tip_error_m: {"real", "without", "with"} -> (n,) distance of the actual tip from the plan's (FK of the
            setpoint) [m].
        tip_rotation_rad: {"real", "without", "with"} -> (n,) rotation of the actual tip from the plan's [rad].
        joint_units: (J,) ``rad`` or ``m`` per joint (controller errors are reported in mrad or mm).
        set_name: The rows evaluated (``test``: held out, ``train``: the training rows).
    """

    translation_m: dict[str, np.ndarray]
    rotation_rad: dict[str, np.ndarray]
    controller_error: dict[str, np.ndarray]
    tip_error_m: dict[str, np.ndarray]
    tip_rotation_rad: dict[str, np.ndarray]
    joint_units: tuple[str, ...]
    set_name: str = "test"

    def table(self) -> dict[str, dict[str, float]]:
        """Seed 001's Table II: translation [mm] and rotation [deg] statistics, without and with injection."""
        out = {}
        for case in ("without", "with"):
            for what, values in (
                ("translation_mm", 1e3 * self.translation_m[case]),
                ("rotation_deg", np.degrees(self.rotation_rad[case])),
            ):
                out[f"{what} {case}"] = {
                    "mean": float(values.mean()),
                    "std": float(values.std()),
                    "median": float(np.median(values)),
                    "max": float(values.max()),
                }
        return out

    def distances(self) -> dict[str, dict[str, Any]]:
        """KS statistic and Wasserstein distance (in ``unit``) between real and simulated error distributions."""
        out: dict[str, dict[str, Any]] = {}
        tips = (
            ("tip position error", self.tip_error_m, 1e3, "mm"),
            ("tip rotation error", self.tip_rotation_rad, float(np.degrees(1.0)), "deg"),
        )
        for what, values, scale, unit in tips:
            for case in ("without", "with"):
                out[f"{what} {case}"] = _scores(values["real"], values[case], scale, unit)
        real, sim = self.controller_error["real"], self.controller_error["with"]
        for j, unit in enumerate(self.joint_units):
            out[f"joint {j + 1} controller error with"] = _scores(real[:, j], sim[:, j], 1e3, f"m{unit}")
        return out

    def worse(self) -> list[str]:
        """``position`` and / or ``rotation``: the mean gaps that injection makes larger than without it."""
        pairs = (("position", self.translation_m), ("rotation", self.rotation_rad))
        return [name for name, gap in pairs if gap["with"].mean() > gap["without"].mean()]

    def summary(self) -> dict[str, Any]:
        """Everything as JSON, with the improvement ratios (mean without / mean with)."""
        table = self.table()
        ratio = {
            k: table[f"{k} without"]["mean"] / max(table[f"{k} with"]["mean"], 1e-15)
            for k in ("translation_mm", "rotation_deg")
        }
        with_over_without = {
            k: table[f"{k} with"]["mean"] / max(table[f"{k} without"]["mean"], 1e-15)
            for k in ("translation_mm", "rotation_deg")
        }
        return {
            "samples": int(self.translation_m["with"].size),
            "set": self.set_name,
            "table": table,
            "improvement": ratio,
            "with_over_without": with_over_without,
            "worse_with_injection": self.worse(),
            "distributions": self.distances(),
        }


def _scores(real: np.ndarray, simulated: np.ndarray, scale: float, unit: str) -> dict[str, Any]:
    """KS statistic and Wasserstein distance (times ``scale``, in ``unit``) of two samples."""
    return {
        "ks": float(ks_2samp(real, simulated).statistic),
        "wasserstein": scale * float(wasserstein_distance(real, simulated)),
        "unit": unit,
    }


def injected_commands(
    model: ErrorModel, kinematics: Kinematics, q_setpoint: np.ndarray, segment_start: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(n, J) commands and (n, J) reported measured joints of an ideal simulator under the injector.

    Args:
        model: The error model to inject.
        kinematics: The nominal arm (its joint limits bound the commands).
        q_setpoint: The setpoints, shape (n, J), in [rad] (or [m] for a prismatic joint), one command after another.
        segment_start: Rows where the injector starts afresh (reset at rest at that row's setpoint), shape (n,), bool.
    """
    injector = ErrorInjector(model, kinematics.q_lower, kinematics.q_upper, "evaluation")
    commands, measured = np.empty_like(q_setpoint), np.empty_like(q_setpoint)
    nan3, nan4 = np.full(3, np.nan), np.full(4, np.nan)
    for i, q_s in enumerate(q_setpoint):
        if segment_start[i]:
            injector.reset(q_s, 0)
        commands[i] = injector.command(0.0, q_s)
        measured[i] = injector.observe(BackendSample(0.0, q_s, commands[i], nan3, nan4)).q_measured
    return commands, measured


def evaluate(model: ErrorModel, labelled: Labelled, kinematics: Kinematics, set_name: str = "test") -> Evaluation:
    """Compare the physical robot's tracked rows of ``set_name`` with the simulated robot's.

    Args:
        model: The error model to inject.
        labelled: The cleaned, labelled dataset (tracked tip poses in base_link).
        kinematics: The nominal arm and needle of the robot.
        set_name: The rows to compare: ``test`` (held out) or ``train``.

    Raises:
        DatasetError: No tracked rows in the set.
    """
    data = labelled.data
    rows = data.set_name == set_name
    tracked = labelled.cleaned.tracked[rows]
    if not tracked.any():
        raise DatasetError(f"dataset: no tracked rows in the {set_name!r} set to evaluate on")
    index = np.flatnonzero(rows)
    starts = data.segment_starts()[rows]
    starts[0] = True
    starts[1:] |= np.diff(index) > 1  # rows not consecutive: the injector starts afresh
    commands, measured = injected_commands(model, kinematics, data.q_setpoint[rows], starts)
    real = labelled.actual_tip_poses()[rows][tracked]
    planned = _fk(kinematics, data.q_setpoint[rows][tracked])
    injected = _fk(kinematics, commands[tracked])
    t_without, r_without = pose_gap(real, planned)
    t_with, r_with = pose_gap(real, injected)
    t_sim, r_sim = pose_gap(injected, planned)
    q_s, q_m = data.q_setpoint[rows], data.q_measured[rows]
    return Evaluation(
        {"without": t_without, "with": t_with},
        {"without": r_without, "with": r_with},
        {"real": q_m - q_s, "with": measured - q_s},
        {"real": t_without, "without": np.zeros_like(t_without), "with": t_sim},
        {"real": r_without, "without": np.zeros_like(r_without), "with": r_sim},
        data.joint_units,
        set_name,
    )


def _fk(kinematics: Kinematics, q: np.ndarray) -> np.ndarray:
    pos, R = kinematics.tip_poses(q)
    T = np.tile(np.eye(4), (len(q), 1, 1))
    T[:, :3, :3], T[:, :3, 3] = R, pos
    return T
