"""The CoppeliaSim scene of an arm: its objects, composed as CoppeliaSim composes them, give the URDF's forward
kinematics; the builder refuses a scene that already holds the arm, with one error line."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import yaml

from cosim_validation.common.config import load_config, package_root
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.virtual.coppeliasim_scene_plan import scene_plan, tip_in_base, z_onto
from test.robots.virtual.coppeliasim_process import with_coppeliasim
from test.robots.virtual.plans import shipped_config_dict


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "coppeliasim_scene", package_root() / "scripts" / "coppeliasim_scene.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("config_name", ["needle_insertion", "dvrk_psm_insertion", "raven2_insertion"])
def test_scene_composes_to_the_urdf_kinematics(config_name: str) -> None:
    kinematics = RobotConfig.from_config(
        load_config(package_root() / "config" / f"{config_name}.yaml")["robot"]
    ).kinematics
    items = scene_plan(kinematics)
    assert [i.alias for i in items if i.kind == "joint"] == list(kinematics.joint_names)
    assert [i.kind for i in items][:: len(items) - 1] == ["base", "tip"]
    for q in np.random.default_rng(3).uniform(kinematics.q_lower, kinematics.q_upper, (25, kinematics.n_joints)):
        np.testing.assert_allclose(tip_in_base(items, q), kinematics.tip_transform(q), atol=1e-12)
    links = [i for i in items if i.kind == "link"]
    assert sum(i.mass_kg for i in links) > 0.0
    for link in links:  # inertias are symmetric and positive semi-definite
        np.testing.assert_allclose(link.inertia_kg_m2, link.inertia_kg_m2.T)
        assert np.linalg.eigvalsh(link.inertia_kg_m2).min() >= -1e-12


@pytest.mark.parametrize("axis", [[0, 0, 1], [0, 0, -1], [0, 1, 0], [1, 0, 0], [0.3, -0.4, 0.866]])
def test_z_onto_turns_z_onto_the_axis(axis: list[float]) -> None:
    unit = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    rotation = z_onto(unit)
    np.testing.assert_allclose(rotation @ [0.0, 0.0, 1.0], unit, atol=1e-12)
    np.testing.assert_allclose(rotation.T @ rotation, np.eye(3), atol=1e-12)
    assert np.linalg.det(rotation) == pytest.approx(1.0)


def test_builder_refuses_a_scene_holding_the_arm(
    coppeliasim_port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "case.yaml"
    config.write_text(yaml.safe_dump(with_coppeliasim(shipped_config_dict(), coppeliasim_port)))
    code = _script().main(["--config", str(config)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(err) == 1
    assert err[0].startswith(
        f"error: the scene at tcp://127.0.0.1:{coppeliasim_port} already holds /base_link, /joint1,"
    )
    assert err[0].endswith("/needle_tip; start from an empty scene")


def test_builder_without_coppeliasim_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from test.robots.virtual.test_coppeliasim_backend import free_port

    config = tmp_path / "case.yaml"
    data = with_coppeliasim(shipped_config_dict(), free_port(), connect_timeout_s=0.3)
    config.write_text(yaml.safe_dump(data))
    assert _script().main(["--config", str(config)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "no CoppeliaSim answered" in err[0]
