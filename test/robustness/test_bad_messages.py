"""Errors that did not say where: a ``testgen.target`` naming an obstacle answered ``region: ...`` without the
file or the key, a bad URDF printed two lines of the C++ parser above the ``error:`` line, and a URDF whose
collision mesh is missing or no mesh ended in a traceback from pinocchio's mesh loader. Each case must be
one ``error:`` line (nothing else on stderr, the file descriptor included) naming the file and the key."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cosim_validation.common.config import package_root
from test.robustness.harness import Case, run_fast_case

SHIPPED = package_root() / "config"


def _config(folder: Path, old: str, new: str) -> Path:
    text = (SHIPPED / "needle_insertion.yaml").read_text()
    assert old in text, old
    path = folder / "case.yaml"
    path.write_text(text.replace(old, new, 1))
    shutil.copyfile(SHIPPED / "properties.yaml", folder / "properties.yaml")
    return path


def _testgen(old: str, new: str, *names: str, region: str = "") -> Callable[[Path], Case]:
    def build(folder: Path) -> Case:
        out = folder / "s.parquet"
        argv = ["testgen", "--config", str(_config(folder, old, new)), "--granularity-mm", "60", "-o", str(out)]
        return Case([*argv, *(["--region", region] if region else [])], ("case.yaml", *names), (out,))

    return build


_REGION = "near_heart: {model: left_lung, near: heart, within_m: 0.03}"

#: URDF files pinocchio's parser (urdfdom) refuses, printing on file descriptor 2 first.
URDFS = {
    "revolute_without_limits": '<robot name="x"><link name="a"/><link name="b"/>'
    '<joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint></robot>',
    "joint_to_missing_link": '<robot name="x"><link name="a"/>'
    '<joint name="j" type="fixed"><parent link="a"/><child link="nope"/></joint></robot>',
    "no_robot_element": '<?xml version="1.0"?><notarobot/>',
    "not_xml": "this is not XML",
    "empty": "",
}


_CYLINDER = '<geometry><cylinder radius="0.09" length="0.06"/></geometry>'  # the base link's collision shape
#: URDFs whose collision geometry pinocchio's mesh loader (coal, assimp) refuses: ``{folder}`` is the case's folder.
COLLISION_MESHES = {
    "collision_mesh_missing": "missing.stl",
    "collision_mesh_not_a_mesh": "{folder}/garbage.stl",
}


def _collision(name: str) -> Callable[[Path], Case]:
    def build(folder: Path) -> Case:
        (folder / "garbage.stl").write_text("this is no mesh at all\n")
        shipped = (package_root() / "urdf" / "xmate_er3_pro.urdf").read_text()
        assert _CYLINDER in shipped
        mesh = COLLISION_MESHES[name].format(folder=folder)
        (folder / "bad.urdf").write_text(
            shipped.replace(_CYLINDER, f'<geometry><mesh filename="{mesh}"/></geometry>', 1)
        )
        config = _config(folder, "urdf: ../urdf/xmate_er3_pro.urdf", "urdf: bad.urdf")
        argv = ["run-case", "--config", str(config), "--target", "0.45", "0.0", "0.05"]
        return Case(argv, ("bad.urdf", "collision geometry", Path(mesh).name))

    return build


def _urdf(name: str) -> Callable[[Path], Case]:
    def build(folder: Path) -> Case:
        (folder / "bad.urdf").write_text(URDFS[name])
        config = _config(folder, "urdf: ../urdf/xmate_er3_pro.urdf", "urdf: bad.urdf")
        return Case(["run-case", "--config", str(config), "--target", "0.45", "0.0", "0.05"], ("bad.urdf",))

    return build


#: Physical nonsense in the shipped URDF, which pinocchio reads: (text, replacement, what the error names).
#: A zero link mass ended in MuJoCo's traceback; a negative one, a zero effort ran; swapped limits were blamed on
#: the home pose; an origin 1e300 m away printed numpy's overflow warnings.
NONSENSE = {
    "mass_zero": ('<mass value="3.12198"/>', '<mass value="0"/>', "robot.urdf", "joint 'joint1'", "mass 0 kg"),
    "base_mass_negative": ('<mass value="5.48267"/>', '<mass value="-5"/>', "robot.urdf", "first joint have mass -5"),
    "limits_swapped": (
        'lower="-2.9671" upper="2.9671"',
        'lower="2.9671" upper="-2.9671"',
        "robot.urdf",
        "joint 'joint1'",
        "lower",
    ),
    "effort_zero": (
        'velocity="3.141592653589793" effort="102"',
        'velocity="3.141592653589793" effort="0"',
        "robot.urdf",
        "effort",
    ),
    "origin_far_away": (
        '<origin xyz="0 0 0.0" rpy="0 0 0"/>',
        '<origin xyz="1e300 0 0.0" rpy="0 0 0"/>',
        "robot.urdf",
        "1e+300 m",
    ),
    # above 0 but below MuJoCo's smallest mass: its ValueError was a traceback from the monitor's collision model
    "mass_1e-30": ('<mass value="3.12198"/>', '<mass value="1e-30"/>', "MuJoCo cannot build the model", "mjMINVAL"),
}


def _nonsense(name: str) -> Callable[[Path], Case]:
    def build(folder: Path) -> Case:
        shipped = (package_root() / "urdf" / "xmate_er3_pro.urdf").read_text()
        text, replacement, *says = NONSENSE[name]
        assert text in shipped, name
        (folder / "bad.urdf").write_text(shipped.replace(text, replacement, 1))
        config = _config(folder, "urdf: ../urdf/xmate_er3_pro.urdf", "urdf: bad.urdf")
        argv = ["run-case", "--config", str(config), "--target", "0.45", "0.0", "0.05"]
        return Case(argv, ("bad.urdf", *says))

    return build


CASES: dict[str, Callable[[Path], Case]] = (
    {
        "target_is_an_obstacle": _testgen("target: left_lung ", "target: heart ", "testgen.target", "role 'obstacle'"),
        "target_is_the_skin": _testgen("target: left_lung ", "target: torso ", "testgen.target", "not 'target'"),
        "target_unknown": _testgen("target: left_lung ", "target: liver ", "testgen.target", "unknown region 'liver'"),
        "region_model_is_an_obstacle": _testgen(
            _REGION,
            _REGION.replace("model: left_lung", "model: heart"),
            "testgen.regions.near_heart.model",
            region="near_heart",
        ),
        "region_near_unknown": _testgen(
            _REGION,
            _REGION.replace("near: heart", "near: liver"),
            "testgen.regions.near_heart.near",
            "'liver'",
            region="near_heart",
        ),
    }
    | {f"urdf:{name}": _urdf(name) for name in URDFS}
    | {f"urdf:{name}": _collision(name) for name in COLLISION_MESHES}
    | {f"urdf:{name}": _nonsense(name) for name in NONSENSE}
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_error_says_where(name: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    run_fast_case(CASES[name](tmp_path), sorted(CASES).index(name) % 2 == 1, capfd, seconds=60.0)
