"""Learned error injection on arms with a prismatic joint (the dVRK PSM and the Raven-II): units, actual joints, and
a short collection on the emulated PSM through calibration, learning and evaluation."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from cosim_validation.common.config import load_config, package_root
from cosim_validation.error_injection.actual_joints import actual_joints
from cosim_validation.error_injection.collection import CollectSettings, collect
from cosim_validation.error_injection.evaluation import evaluate
from cosim_validation.error_injection.learning import LearnSettings, label, learn
from cosim_validation.error_injection.robot_identity import joint_units
from cosim_validation.error_injection.training import TrainingSettings
from cosim_validation.robots.model import PRISMATIC, RobotConfig
from cosim_validation.robots.registry import make_backend

CONFIGS = {"psm": "dvrk_psm_insertion.yaml", "raven2": "raven2_insertion.yaml"}


def _robot(name: str) -> tuple[object, RobotConfig]:
    config = load_config(package_root() / "config" / CONFIGS[name])
    return config, RobotConfig.from_config(config["robot"])


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_actual_joints_recover_an_offset_of_every_joint_the_prismatic_one_included(name: str) -> None:
    _, robot = _robot(name)
    kin = robot.kinematics
    prismatic = kin.chain.joint_type == PRISMATIC
    assert prismatic.any()
    assert [u == "m" for u in joint_units(kin)] == list(prismatic)
    rng = np.random.default_rng(1)
    q = robot.home_q + rng.uniform(-0.05, 0.05, (50, kin.n_joints)) * (kin.q_upper - kin.q_lower)
    offset = np.where(prismatic, 1e-3, 2e-3) * rng.choice([-1.0, 1.0], (50, kin.n_joints))  # 1 mm, 2 mrad
    target = np.stack([kin.tip_transform(row) for row in q + offset])
    solved = actual_joints(kin, q, target)
    # the wrists are ill-conditioned (Jacobian condition numbers up to ~5000): the pose is reached all the same
    assert solved.position_residual_m.max() < 1e-9
    assert kin.n_joints == 6  # as many joints as the pose has freedoms: the offset itself comes back
    error = np.abs(solved.q - (q + offset))
    assert error[:, prismatic].max() < 1e-9  # the insertion: 1 mm found on every pose
    assert error.max() < 1e-7


def test_a_short_collection_on_the_emulated_psm_is_calibrated_learned_and_evaluated() -> None:
    config, robot = _robot("psm")
    kin = robot.kinematics
    backend = make_backend("emulated", config, kin, seed=0)
    settings = CollectSettings(goals=40, test_s=10.0, motion_s=25.0, seed=0)
    data = collect(backend, kin, robot.home_q, settings)
    backend.close()
    assert "m" in data.joint_units
    labelled = label(data, kin)
    usable = np.isfinite(labelled.q_actual).all(axis=1)
    assert usable.sum() > 200
    assert np.median(labelled.ik_residual_m[usable]) < 1e-7  # the actual joints reach the tracked pose
    training = TrainingSettings(max_epochs=60, patience=10, seed=0)
    model, report = learn(labelled, LearnSettings(training=training))
    assert report["nn1"]["rows_used"] == "NN1 (training rows in motion)"
    assert report["nn1"]["validation_mse"] < 0.2  # the PSM's controller error in motion is learned
    evaluation = evaluate(model, labelled, kin)
    summary = evaluation.summary()
    assert summary["samples"] > 50
    assert np.isfinite([row["mean"] for row in summary["table"].values()]).all()
    # the injector drives the insertion joint too (offsets in m; the networks without their guards); how well is
    # docs/ERRORS.md's "Other robots"; the guards leave the joints they mask alone
    unguarded = evaluate(replace(model, guards={}), labelled, kin)
    assert np.abs(unguarded.controller_error["with"][:, 2]).max() > 0.0
    masked = ~model.guards["nn1"].mask  # the reported controller error with injection is NN1's offset
    assert (np.abs(evaluation.controller_error["with"][:, masked]) < 1e-12).all()  # (q + a2) - a2: rounding
