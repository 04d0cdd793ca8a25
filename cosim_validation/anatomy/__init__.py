"""Anatomical models: target, obstacle and skin meshes placed in the robot base frame.

``load_anatomy(config["anatomy"])`` builds an :class:`AnatomyScene` from configuration: built-in
procedural models (left/right lung, heart, torso) or mesh files with a unit and a pose, each validated
as a closed, consistently wound solid of plausible size (or repaired on request).
"""

from cosim_validation.anatomy.anatomy_model import ROLES, UNITS, AnatomyModel
from cosim_validation.anatomy.anatomy_scene import AnatomyScene
from cosim_validation.anatomy.builtin_models import BUILTIN_NAMES, HEART_BOUNDS_M, BuiltinMesh, builtin_mesh
from cosim_validation.anatomy.errors import MeshDefectError
from cosim_validation.anatomy.loader import builtin_sha256, load_anatomy, load_anatomy_file, load_model
from cosim_validation.anatomy.mesh_check import mesh_defects
from cosim_validation.anatomy.mesh_repair import repair_mesh
from cosim_validation.anatomy.pose import pose_from_config, pose_matrix, rotation_rpy, transform_points

__all__ = [
    "BUILTIN_NAMES",
    "HEART_BOUNDS_M",
    "ROLES",
    "UNITS",
    "AnatomyModel",
    "AnatomyScene",
    "BuiltinMesh",
    "MeshDefectError",
    "builtin_mesh",
    "builtin_sha256",
    "load_anatomy",
    "load_anatomy_file",
    "load_model",
    "mesh_defects",
    "pose_from_config",
    "pose_matrix",
    "repair_mesh",
    "rotation_rpy",
    "transform_points",
]
