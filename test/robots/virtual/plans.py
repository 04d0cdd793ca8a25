"""Test inputs shared by the sim and hardware tests: configurations and a five-stage joint plan.

The plan is joint-space quintic moves through five stages (initialization, approach, injection,
extraction, reset) sampled at 10 Hz, with joint speeds like those of a needle-insertion case (peak
~0.3 rad/s). It exercises the backends without depending on the planner's internals.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import yaml

from cosim_validation.common.config import ConfigNode, package_root, parse_config
from cosim_validation.common.record import Stage

CONFIG_PATH = package_root() / "config" / "needle_insertion.yaml"

# joint offsets [rad] of the stage end poses from the home pose (arm above a patient in front of it)
_SOURCE_OFFSET = np.array([0.45, 0.25, 0.10, -0.35, 0.20, 0.30, 0.10])
_ENTRY_STEP = np.array([0.01, 0.05, 0.00, -0.07, 0.00, 0.02, 0.00])
_TARGET_STEP = np.array([0.01, 0.06, 0.00, -0.08, 0.00, 0.03, 0.00])


def shipped_config_dict() -> dict[str, Any]:
    """The shipped configuration as plain data (a fresh copy)."""
    return copy.deepcopy(yaml.safe_load(CONFIG_PATH.read_text()))


def config_node(data: dict[str, Any]) -> ConfigNode:
    """A configuration tree from plain data, as if read from ``config/test-config.yaml`` (relative paths work)."""
    return parse_config(yaml.safe_dump(data), CONFIG_PATH.parent / "test-config.yaml")


def quiet_emulated(data: dict[str, Any]) -> dict[str, Any]:
    """Switch every error source of the emulated arm off (rigid gears: stiffness 1e12 N m/rad)."""
    emulated = data["backends"]["emulated"]
    emulated["command_latency_s"] = 0.0
    for key in emulated["kinematics"]:
        emulated["kinematics"][key] = 0.0
    dynamics = emulated["dynamics"]
    dynamics["link_mass_error_rel_std"] = 0.0
    dynamics["coulomb_friction_nm"] = [0.0] * 7
    dynamics["lost_motion_rad"] = [0.0] * 7
    dynamics["joint_stiffness_nm_per_rad"] = [1e12] * 7
    emulated["encoder"] = {"noise_std_rad": 0.0, "resolution_rad": 0.0}
    emulated["tracker"] = {"position_noise_std_m": 0.0, "orientation_noise_std_rad": 0.0}
    return data


def _quintic(q_from: np.ndarray, q_to: np.ndarray, duration_s: float, rate_hz: float) -> np.ndarray:
    """Samples after q_from (excluded) up to q_to (included) of a rest-to-rest quintic move."""
    n = max(1, round(duration_s * rate_hz))
    s = np.arange(1, n + 1) / n
    h = 10 * s**3 - 15 * s**4 + 6 * s**5
    return q_from + h[:, None] * (q_to - q_from)


def _inward(home_q: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """``offset``, flipped on joints it would take above 1.9 rad (near the 2.09 rad limits of joints 2, 4, 6)."""
    return np.where(home_q + offset > 1.9, -offset, offset)


def five_stage_plan(home_q: np.ndarray, rate_hz: float = 10.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n,) times [s], (n,) stages, (n, 7) joint setpoints [rad] of a 21 s five-stage case from ``home_q``."""
    source = home_q + _inward(home_q, _SOURCE_OFFSET)
    entry = source + _inward(home_q, _ENTRY_STEP)
    target = entry + _inward(home_q, _TARGET_STEP)
    legs = [
        (Stage.INITIALIZATION, home_q, source, 6.0),
        (Stage.APPROACH, source, entry, 3.0),
        (Stage.INJECTION, entry, target, 3.0),
        (Stage.EXTRACTION, target, entry, 3.0),
        (Stage.RESET, entry, home_q, 6.0),
    ]
    q = [home_q[None, :]]
    stage = [int(Stage.INITIALIZATION)]
    for st, a, b, duration in legs:
        samples = _quintic(a, b, duration, rate_hz)
        q.append(samples)
        stage += [int(st)] * len(samples)
    q_all = np.vstack(q)
    return np.arange(len(q_all)) / rate_hz, np.array(stage, dtype=np.uint8), q_all
