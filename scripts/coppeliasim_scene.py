"""Build the arm's CoppeliaSim scene from the project's URDF, through the ZeroMQ remote API (a running CoppeliaSim).

python scripts/coppeliasim_scene.py --config config/needle_insertion.yaml              # into the open scene
python scripts/coppeliasim_scene.py --config config/needle_insertion.yaml --save /path/on/that/machine/arm.ttt

Creates, in CoppeliaSim's current (empty) scene, the objects of
:func:`cosim_validation.robots.virtual.coppeliasim_scene_plan.scene_plan`: a static base, one position-controlled
dynamic joint per URDF joint (limits and effort from the URDF), one link shape per joint carrying the URDF mass and
inertia (not respondable: collisions are judged by the monitor), and the needle-tip dummy, with the aliases the
CoppeliaSim backend looks for. Host and port are ``backends.coppeliasim`` of the configuration. Written from the
CoppeliaSim manual (``en/sim-1/*.htm``, CoppeliaSim >= 4.6) and run only against what the stand-in serves; see
docs/COPPELIASIM.md for what to check in CoppeliaSim afterwards.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

#: Size of the drawn joint cylinders [m] (length, diameter) and of link and tip markers [m].
JOINT_SIZE_M = [0.04, 0.02]
LINK_MARKER_M = 0.03
TIP_DUMMY_M = 0.005


def _pose(T: np.ndarray) -> list[float]:
    """[x, y, z, qx, qy, qz, qw] of a (4, 4) transform (CoppeliaSim's pose order)."""
    from cosim_validation.robots.model.fk_kernels import matrix_to_quat_wxyz

    w, x, y, z = matrix_to_quat_wxyz(np.ascontiguousarray(T[:3, :3]))
    return [*(float(v) for v in T[:3, 3]), float(x), float(y), float(z), float(w)]


def _const(link: Any, *names: str) -> Any:
    """The first of ``names`` the server's ``sim`` module has (constants renamed across CoppeliaSim releases)."""
    from cosim_validation.robots.virtual.errors import BackendConnectionError

    for name in names[:-1]:
        try:
            return link.const(name)
        except BackendConnectionError:
            continue
    return link.const(names[-1])


def _create(link: Any, item: Any, effort: float) -> int:
    """Create one scene item; its handle."""
    if item.kind == "joint":
        kind = _const(link, "joint_prismatic_subtype", "joint_prismatic") if item.prismatic else None
        kind = kind if kind is not None else _const(link, "joint_revolute_subtype", "joint_revolute")
        handle = int(link.call("createJoint", kind, link.const("jointmode_dynamic"), 0, JOINT_SIZE_M))
        link.call(
            "setObjectInt32Param", handle, link.const("jointintparam_dynctrlmode"), link.const("jointdynctrl_position")
        )
        lower, upper = item.limits
        link.call("setJointInterval", handle, False, [lower, upper - lower])
        link.call("setJointTargetForce", handle, effort)
        return handle
    if item.kind == "tip":
        return int(link.call("createDummy", TIP_DUMMY_M))
    shape = link.const("primitiveshape_spheroid" if item.kind == "link" else "primitiveshape_cylinder")
    handle = int(link.call("createPrimitiveShape", shape, [LINK_MARKER_M] * 3, 0))
    link.call("setObjectInt32Param", handle, link.const("shapeintparam_static"), int(item.kind == "base"))
    link.call("setObjectInt32Param", handle, link.const("shapeintparam_respondable"), 0)
    if item.kind == "link":
        link.call("setShapeMass", handle, item.mass_kg)
        com = np.eye(4)[:3]
        com[:, 3] = item.com_m
        link.call("setShapeInertia", handle, item.inertia_kg_m2.ravel().tolist(), com.ravel().tolist())
    return handle


def build(link: Any, kinematics: Any, base_alias: str, tip_alias: str) -> int:
    """Create the arm in the open scene; the number of objects created.

    Raises:
        CosimError: The scene already holds an object with one of the aliases, or a call failed.
    """
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.robots.virtual.coppeliasim_scene_plan import scene_plan

    items = scene_plan(kinematics, base_alias, tip_alias)
    taken = [f"/{i.alias}" for i in items if int(link.call("getObject", f"/{i.alias}", {"noError": True})) >= 0]
    if taken:
        raise InputError(f"the scene at {link.endpoint} already holds {', '.join(taken)}; start from an empty scene")
    efforts = dict(zip(kinematics.joint_names, kinematics.chain.model.effortLimit, strict=True))
    handles: dict[str, int] = {"": link.const("handle_world")}
    for item in items:
        handle = _create(link, item, float(efforts.get(item.alias, 0.0)))
        link.call("setObjectAlias", handle, item.alias)
        if item.parent:
            link.call("setObjectParent", handle, handles[item.parent], False)
        link.call("setObjectPose", handle, _pose(item.T_parent_item), handles[item.parent])
        handles[item.alias] = handle
    return len(items)


def main(argv: list[str] | None = None) -> int:
    """Build the scene; 0 on success, 1 with one ``error:`` line otherwise."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--config", default="config/needle_insertion.yaml", help="case-study configuration (robot)")
    parser.add_argument("--save", default=None, help="save the scene to this .ttt path (on CoppeliaSim's machine)")
    args = parser.parse_args(argv)
    from cosim_validation.common.config import load_config
    from cosim_validation.common.exceptions import CosimError
    from cosim_validation.robots.model import RobotConfig
    from cosim_validation.robots.virtual.coppeliasim_config import CoppeliaSimConfig
    from cosim_validation.robots.virtual.coppeliasim_link import CoppeliaSimLink

    try:
        config = load_config(args.config)
        kinematics = RobotConfig.from_config(config["robot"]).kinematics
        scene = CoppeliaSimConfig.from_config(config["backends"].get("coppeliasim"))
        link = CoppeliaSimLink(scene)
        try:
            base_alias = scene.base_path.rstrip("/").rsplit("/", 1)[-1]
            count = build(link, kinematics, base_alias, scene.tip_path.rstrip("/").rsplit("/", 1)[-1])
            if args.save:
                link.call("saveScene", args.save)
        finally:
            link.close()
    except (CosimError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    saved = f"; saved to {args.save}" if args.save else " (not saved: use --save or CoppeliaSim's File menu)"
    print(f"created {count} objects of {kinematics.n_joints}-joint arm at {scene.endpoint}{saved}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
