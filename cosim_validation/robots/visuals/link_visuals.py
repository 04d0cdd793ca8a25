"""The robot's link visuals: the project's own simple shapes, made from the URDF's collision cylinders.

Each link with a collision cylinder gets, in its own frame, that cylinder (the arm's body) and, where a
revolute joint moves the link, a slightly wider drum around the joint axis at the link origin (the joint's
housing). The shapes are written as binary STL under ``meshes/robot/`` and named by the URDF visuals as
``package://cosim_validation/meshes/robot/<link>.stl``; ``scripts/make_meshes.py robot`` writes them and a
test checks that the shipped files are what this module makes from the shipped URDF. The collision geometry,
and so kinematics and collision checks, stay the URDF's cylinders.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

import numpy as np

from cosim_validation.anatomy.pose import pose_matrix
from cosim_validation.common.exceptions import InputError
from cosim_validation.robots.visuals.stl_binary import write_stl

ROBOT_MESH_FOLDER = "meshes/robot"
SEGMENTS = 32  # around a cylinder: 64 side and 60 cap triangles, 6 kB per cylinder
HOUSING_RADIUS_SCALE = 1.12  # the joint drum is this much wider than the link body
HOUSING_LENGTH_SCALE = 2.2  # and this many body radii long


class LinkVisual(NamedTuple):
    """One link's visual mesh.

    Attributes:
        link: URDF link name.
        triangles_m: (F, 3, 3) float64 corners [m] in the link frame, counter-clockwise from outside.
    """

    link: str
    triangles_m: np.ndarray


def visual_path(link: str) -> str:
    """The mesh file of ``link``, relative to the package root.

    Args:
        link: URDF link name.
    """
    return f"{ROBOT_MESH_FOLDER}/{link}.stl"


def cylinder_triangles(radius_m: float, length_m: float, segments: int = SEGMENTS) -> np.ndarray:
    """(F, 3, 3) closed cylinder along z, centred at the origin, outward counter-clockwise triangles.

    Args:
        radius_m: Cylinder radius, in [m].
        length_m: Cylinder length along z, in [m].
        segments: Number of sides around the axis.

    Returns:
        The triangles' vertices, shape (F, 3, 3), F = 4 * segments - 4, in [m].
    """
    angles = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    ring = np.stack([radius_m * np.cos(angles), radius_m * np.sin(angles), np.zeros(segments)], axis=1)
    half = np.array([0.0, 0.0, length_m / 2.0])
    bottom, top = ring - half, ring + half
    nxt = np.roll(np.arange(segments), -1)
    sides = np.concatenate([np.stack([bottom, bottom[nxt], top[nxt]], 1), np.stack([bottom, top[nxt], top], 1)])
    fan = np.arange(1, segments - 1)
    top_cap = np.stack([top[np.zeros_like(fan)], top[fan], top[fan + 1]], axis=1)
    bottom_cap = np.stack([bottom[np.zeros_like(fan)], bottom[fan + 1], bottom[fan]], axis=1)
    return np.concatenate([sides, top_cap, bottom_cap])


def _transform(T: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    return np.asarray(triangles @ T[:3, :3].T + T[:3, 3])


def _rotation_z_to(axis: np.ndarray) -> np.ndarray:
    """A rotation taking +z onto the unit vector ``axis``."""
    z = np.array([0.0, 0.0, 1.0])
    v, c = np.cross(z, axis), float(np.dot(z, axis))
    if np.linalg.norm(v) < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    K = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    return np.asarray(np.eye(3) + K + K @ K / (1.0 + c))


def _floats(element: ET.Element | None, attribute: str, default: str) -> np.ndarray:
    text = default if element is None else element.get(attribute, default)
    return np.array([float(v) for v in text.split()])


def _body(link: ET.Element) -> tuple[float, np.ndarray] | None:
    """(radius, link triangles) of the link's collision cylinder, or None if it has none."""
    cylinder = link.find("collision/geometry/cylinder")
    if cylinder is None:
        return None
    origin = link.find("collision/origin")
    T = pose_matrix(_floats(origin, "xyz", "0 0 0"), _floats(origin, "rpy", "0 0 0"))
    radius = float(cylinder.get("radius", "0"))
    return radius, _transform(T, cylinder_triangles(radius, float(cylinder.get("length", "0"))))


def link_visuals(urdf_path: str | Path) -> list[LinkVisual]:
    """The visual mesh of every link that has a collision cylinder, in URDF order.

    Args:
        urdf_path: The URDF file.
    """
    try:
        robot = ET.parse(urdf_path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise InputError(f"{urdf_path}: cannot read the URDF: {exc}") from None
    revolute_axes = {}  # child link -> joint axis in the child's frame (URDF default: x)
    for joint in robot.findall("joint"):
        child = joint.find("child")
        if joint.get("type") in ("revolute", "continuous") and child is not None:
            revolute_axes[str(child.get("link"))] = _floats(joint.find("axis"), "xyz", "1 0 0")
    visuals = []
    for link in robot.findall("link"):
        body = _body(link)
        if body is None:
            continue
        radius, triangles = body
        axis = revolute_axes.get(str(link.get("name")))
        if axis is not None:
            T = np.eye(4)
            T[:3, :3] = _rotation_z_to(axis / np.linalg.norm(axis))
            drum = cylinder_triangles(HOUSING_RADIUS_SCALE * radius, HOUSING_LENGTH_SCALE * radius)
            triangles = np.concatenate([triangles, _transform(T, drum)])
        visuals.append(LinkVisual(str(link.get("name")), triangles))
    return visuals


def write_link_visuals(urdf_path: str | Path, package_dir: str | Path) -> list[Path]:
    """Write every link's visual to ``package_dir/meshes/robot/<link>.stl``; return the files.

    Args:
        urdf_path: The URDF file.
        package_dir: The package root (its ``meshes/robot`` folder is made if missing).
    """
    folder = Path(package_dir) / ROBOT_MESH_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    return [
        write_stl(Path(package_dir) / visual_path(v.link), v.triangles_m, f"cosim_validation {v.link}")
        for v in link_visuals(urdf_path)
    ]
