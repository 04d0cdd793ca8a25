"""The needle force model: exact tissue lengths on known geometry, the force law phase by phase, streaming
equals batch, and the real case study: a needle aimed through the heart crosses the force limit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from cosim_validation.common.exceptions import ConfigError, InputError
from cosim_validation.common.record import Stage
from cosim_validation.controllers import InsertionSetup
from cosim_validation.supervisor.needle_force import (
    NeedleForceModel,
    NeedleForceStream,
    TissueParameters,
    axial_force_vectors,
)
from cosim_validation.supervisor.needle_force_config import load_needle_force
from cosim_validation.supervisor.supervisor import Supervisor
from cosim_validation.supervisor.supervisor_config import SupervisorConfig
from cosim_validation.supervisor.tissue_layers import TissueLayers

NEEDLE_M = 0.3


@pytest.fixture(scope="module")
def layers() -> TissueLayers:
    """heart (sphere r 0.1 at z -0.1) > lung (sphere r 0.3 at 0) > torso (cube of edge 1 at 0)."""
    heart = trimesh.creation.icosphere(subdivisions=4, radius=0.1)
    heart.apply_translation([0.0, 0.0, -0.1])
    lung = trimesh.creation.icosphere(subdivisions=4, radius=0.3)
    torso = trimesh.creation.box(extents=[1.0, 1.0, 1.0])
    meshes = [(m.vertices, m.faces) for m in (heart, lung, torso)]
    return TissueLayers(["heart", "lung", "torso"], meshes)


def interval(lo: np.ndarray, hi: np.ndarray, a: float, b: float) -> np.ndarray:
    """Length of [lo, hi] ∩ [a, b] per row."""
    return np.clip(np.minimum(hi, b) - np.maximum(lo, a), 0.0, None)


def vertical(z_tip: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    tip = np.stack([np.zeros_like(z_tip), np.zeros_like(z_tip), z_tip], axis=1)
    return tip + np.array([0.0, 0.0, NEEDLE_M]), tip


def test_lengths_along_the_needle_are_exact_and_exclusive(layers: TissueLayers) -> None:
    """A vertical needle through the poles of the spheres: the analytic lengths, by precedence."""
    z = np.linspace(0.9, -0.7, 321)
    holder, tip = vertical(z)
    got = layers.along_needle(holder, tip)
    lo, hi = z, z + NEEDLE_M
    heart = interval(lo, hi, -0.2, 0.0)
    lung = interval(lo, hi, -0.3, 0.3) - heart
    torso = interval(lo, hi, -0.5, 0.5) - heart - lung
    np.testing.assert_allclose(got.length_m, np.stack([heart, lung, torso], axis=1), atol=2e-6)
    np.testing.assert_allclose(got.needle_length_m, NEEDLE_M)
    expected_layer = np.select([(z < 0) & (z > -0.2), (z < 0.3) & (z > -0.3), (z < 0.5) & (z > -0.5)], [0, 1, 2], -1)
    off_boundary = np.min(np.abs(z[:, None] - [0.5, 0.3, 0.0, -0.2, -0.3, -0.5]), axis=1) > 1e-6
    np.testing.assert_array_equal(got.tip_layer[off_boundary], expected_layer[off_boundary])
    depth = np.select(
        [expected_layer == 0, (expected_layer == 1) & (z > 0), expected_layer == 1, (expected_layer == 2) & (z > 0)],
        [-z, 0.3 - z, -0.2 - z, 0.5 - z],
        -0.3 - z,
    )
    depth = np.where(expected_layer >= 0, np.minimum(depth, NEEDLE_M), 0.0)
    np.testing.assert_allclose(got.tip_depth_m[off_boundary], depth[off_boundary], atol=2e-6)


def params(name: str, k1: float, k2: float, fp: float, cut: float, c: float, b: float) -> TissueParameters:
    return TissueParameters(name, name, k1, k2, fp, cut, c, b)


@pytest.fixture(scope="module")
def model(layers: TissueLayers) -> NeedleForceModel:
    return NeedleForceModel(
        layers,
        [
            params("heart", 100.0, 1e4, 4.0, 1.5, 40.0, 100.0),
            params("lung", 40.0, 4e3, 0.5, 0.2, 5.0, 20.0),
            params("torso", 200.0, 2e4, 2.5, 0.8, 20.0, 50.0),
        ],
        stick_speed_m_s=2e-4,
    )


def test_the_force_law_phase_by_phase(model: NeedleForceModel) -> None:
    """Insert at 10 mm/s from 2 cm above the skin to 27 cm deep (into the lung), hold 2 s, extract at 10 mm/s."""
    v, dt = 0.01, 0.1
    z_in = 0.52 - v * dt * np.arange(0, 271)
    z_hold = np.full(20, z_in[-1])
    z_out = z_in[-1] + v * dt * np.arange(1, 30)
    z = np.concatenate([z_in, z_hold, z_out])
    t = dt * np.arange(z.size)
    holder, tip = vertical(z)
    f, state = model.forces(t, holder, tip)
    torso = model.parameters[2]
    depth = 0.5 - z
    inserting = np.arange(z.size) < z_in.size
    before = inserting & (depth > 0) & (depth < torso.puncture_depth_m)
    np.testing.assert_allclose(f.tip_force_n[before], 200.0 * depth[before] + 2e4 * depth[before] ** 2, atol=1e-4)
    assert np.all(f.friction_n[before] == 0.0)  # nothing cut yet
    after = inserting & (depth > torso.puncture_depth_m + 1e-4) & (z > 0.3)
    assert after.sum() > 100
    assert np.all(f.tip_force_n[after] == 0.8)
    np.testing.assert_allclose(f.friction_n[after], depth[after] * (20.0 + 50.0 * v), rtol=1e-4)
    assert f.punctured[-1].tolist() == [False, True, True]  # 27 cm deep: through the torso into the lung
    held = slice(z_in.size + 1, z_in.size + z_hold.size)
    assert np.all(f.holder_force_n[held] == 0.0)  # still in punctured tissue: no cutting, no friction
    out = slice(z_in.size + z_hold.size, None)
    assert np.all(f.tip_force_n[out] == 0.0)
    assert np.all(f.friction_n[out] < 0.0)
    np.testing.assert_allclose(f.speed_m_s[out], -v, rtol=1e-6)
    assert state.punctured.tolist() == [False, True, True]
    vectors = axial_force_vectors(f.holder_force_n, holder, tip)
    np.testing.assert_allclose(vectors[:, 2], f.holder_force_n)  # pushing back = +z for a needle pointing down


def test_streaming_equals_one_batch(model: NeedleForceModel) -> None:
    z = 0.6 - 0.002 * np.arange(120)
    t = 0.1 * np.arange(z.size)
    holder, tip = vertical(z)
    batch, _ = model.forces(t, holder, tip)
    stream = NeedleForceStream(model)
    pairs = np.array([stream.update(t[k], holder[k], tip[k]) for k in range(z.size)])
    np.testing.assert_array_equal(pairs[:, 0], batch.tip_force_n)
    np.testing.assert_array_equal(pairs[:, 1], batch.holder_force_n)
    # a sample not after the last one (time going back, or the same time again) is bad input, not a reversed speed
    for t_s in (t[-1], t[-1] - 0.05):
        with pytest.raises(InputError, match=r"t_s: the sample at .* does not come after the previous one"):
            stream.update(t_s, holder[-1], tip[-1])


def test_bad_parameters(tmp_path: Path, insertion_setup: InsertionSetup) -> None:
    good = Path("config/supervisor/needle_force.yaml").read_text()
    cases = {
        good.replace("model: heart", "model: liver"): r"layers\[0\]\.model: the anatomy has no model 'liver'; models",
        good.replace(
            "puncture_force_n: 4.0", "puncture_force_n: 0.0"
        ): r"layers\[0\]\.puncture_force_n: expected a number > 0",
        good.replace(
            "cutting_force_n: 1.5", "cutting_force_n: -1"
        ): r"layers\[0\]\.cutting_force_n: expected a number >= 0",
        good.replace("stick_speed_m_s", "stick_speed"): r"needle_force\.stick_speed: unknown key",
    }
    for text, message in cases.items():
        path = tmp_path / "force.yaml"
        path.write_text(text)
        with pytest.raises(ConfigError, match=message):
            load_needle_force(path, insertion_setup.scene)


@pytest.fixture(scope="module")
def shipped_model(insertion_setup: InsertionSetup) -> NeedleForceModel:
    return load_needle_force("config/supervisor/needle_force.yaml", insertion_setup.scene)


def plan_forces(setup: InsertionSetup, model: NeedleForceModel, target: np.ndarray):  # type: ignore[no-untyped-def]
    plan = setup.controller("straight").plan_case(setup.planning.default_source_m, target)
    holder, tip = setup.robot.kinematics.needle_segments(plan.q)
    forces, _ = model.forces(plan.t_s, holder, tip)
    return plan, forces


def test_a_needle_aimed_through_the_heart_crosses_the_force_limit(
    insertion_setup: InsertionSetup, shipped_model: NeedleForceModel, behind_heart: np.ndarray
) -> None:
    """The straight controller pushes the needle into the heart: wherever the tip goes deeper into the heart than
    its puncture depth, the limit is crossed, while the tip indents the heart, before the puncture; a lung target
    off the heart's path stays below the limit. (A path that only grazes the heart, with a chord shorter than
    the puncture depth, is indentation without puncture in this rigid-geometry model.)"""
    limit = SupervisorConfig.load("config/supervisor/supervisor.yaml").sources.force_limit_n
    heart = shipped_model.layers.names.index("heart")
    puncture_depth_m = shipped_model.parameters[heart].puncture_depth_m
    crossed = 0
    for target in behind_heart[:8]:
        plan, f = plan_forces(insertion_setup, shipped_model, target)
        over = np.abs(f.holder_force_n) > limit
        deep = np.any((f.tip_layer == heart) & (f.tip_depth_m >= puncture_depth_m))
        assert over.any() or not deep
        if over.any():
            first = int(np.argmax(over))
            assert plan.stage[first] == Stage.INJECTION
            assert f.tip_layer[first] == heart
            assert not f.punctured[first, heart]
            crossed += 1
    assert crossed >= 4
    plan, f = plan_forces(insertion_setup, shipped_model, np.array([0.45, -0.05, 0.05]))
    assert f.punctured[-1, shipped_model.layers.names.index("left_lung")]  # the target is in the lung
    assert np.max(np.abs(f.holder_force_n)) < limit


def test_the_supervisor_stops_the_injection_at_the_force_limit(
    insertion_setup: InsertionSetup, shipped_model: NeedleForceModel, behind_heart: np.ndarray
) -> None:
    plan, f = plan_forces(insertion_setup, shipped_model, behind_heart[2])
    sup = Supervisor.from_file("config/supervisor/supervisor.yaml")
    status = sup.start(0.0)
    sup.task_configured()
    sent = []
    for k in range(plan.n_samples):
        sup.observe_force(float(f.holder_force_n[k]))
        if k > 0 and plan.stage[k] != plan.stage[k - 1]:
            sup.stage_finished(Stage(plan.stage[k - 1]))
        status = sup.step(float(plan.t_s[k]) + 0.05)
        if not status.motion_allowed:
            if status.state.endswith("TaskStopped"):
                break
            continue
        sent.append(k)
    assert status.state.endswith("TaskStopped")
    assert status.events == ("e_ForceLimit",)
    assert plan.stage[sent[-1]] == Stage.INJECTION
    assert abs(f.holder_force_n[k]) > 3.5 >= np.max(np.abs(f.holder_force_n[:k]))  # stopped at the first crossing
