"""Loading the ``anatomy:`` section of a configuration into an :class:`AnatomyScene`.

.. code-block:: yaml

    anatomy:
      patient_pose: {xyz_m: [0.54, 0.50, 0.07], rpy_rad: [0.0, 0.0, 3.14159]}  # patient frame in base_link
      repair: false                       # true: repair what trimesh/manifold3d can, and report it
      repair_max_loss: 0.05               # a repair may remove at most this share of a model's volume
      models:
        - {name: left_lung, role: target, builtin: left_lung}
        - {name: heart, role: obstacle, file: meshes/heart.stl, unit: m,
           pose: {xyz_m: [0, 0, 0], rpy_rad: [0, 0, 0]}}  # optional: the file's frame in the patient frame
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from cosim_validation.anatomy.anatomy_model import ROLES, UNITS, AnatomyModel
from cosim_validation.anatomy.anatomy_scene import AnatomyScene
from cosim_validation.anatomy.builtin_models import BUILTIN_NAMES, BuiltinMesh, builtin_mesh
from cosim_validation.anatomy.errors import MeshDefectError
from cosim_validation.anatomy.mesh_check import mesh_defects
from cosim_validation.anatomy.mesh_file import read_mesh_file
from cosim_validation.anatomy.mesh_repair import repair_mesh
from cosim_validation.anatomy.pose import pose_from_config, transform_points
from cosim_validation.anatomy.repair_report import RepairReport
from cosim_validation.common.config import ConfigNode, load_case_config, resolve_resource

_MODEL_KEYS = ("name", "role", "builtin", "file", "unit", "pose", "repair", "repair_max_loss")
#: Share of a model's volume a repair may remove unless ``repair_max_loss`` allows more.
DEFAULT_REPAIR_MAX_LOSS = 0.05


def builtin_sha256(name: str) -> str:
    """SHA-256 (hex) of a built-in model's content: its patient-frame vertices and faces.

    Args:
        name: One of ``BUILTIN_NAMES`` (``left_lung``, ``right_lung``, ``heart``, ``torso``).
    """
    mesh = builtin_mesh(name)
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(mesh.vertices_m, dtype="<f8").tobytes())
    digest.update(np.ascontiguousarray(mesh.faces, dtype="<i8").tobytes())
    return digest.hexdigest()


def _source_mesh(node: ConfigNode) -> tuple[Any, str, str, str]:
    """The model's mesh in metres in its own frame, its source, content hash and unit.

    A built-in model comes as its arrays (``vertices_m``, ``faces``), free of defects by construction (a test
    checks each one), so that a process that loads only built-in anatomy never imports trimesh (about a second);
    a file as a ``trimesh.Trimesh``, to be checked.
    """
    has_builtin, has_file = node.has("builtin"), node.has("file")
    if has_builtin == has_file:
        raise node.error("expected exactly one of 'builtin' or 'file'")
    if has_builtin:
        if node.has("unit"):
            raise node["unit"].error("a built-in model is in metres; remove 'unit'")
        name = node["builtin"].to_str(choices=BUILTIN_NAMES)
        return builtin_mesh(name), f"builtin:{name}", builtin_sha256(name), "m"
    unit = node["unit"].to_str(choices=tuple(UNITS))
    path = node["file"].to_file("mesh file")
    loaded, sha256 = read_mesh_file(path, unit)
    return loaded, str(path), sha256, unit


def _max_loss(node: ConfigNode, default: float) -> float:
    return node["repair_max_loss"].to_float(minimum=0.0, maximum=1.0) if node.has("repair_max_loss") else default


def load_model(
    node: ConfigNode,
    T_base_patient: np.ndarray,
    repair_default: bool,
    max_loss_default: float = DEFAULT_REPAIR_MAX_LOSS,
) -> AnatomyModel:
    """One entry of ``anatomy.models``, validated (and repaired if asked), placed in ``base_link``.

    Args:
        node: The entry.
        T_base_patient: The patient frame in ``base_link`` (the section's ``patient_pose``), shape (4, 4),
            translation in [m]; the entry's own ``pose`` is relative to it.
        repair_default: Whether to repair a defective mesh when the entry does not say (``repair``).
        max_loss_default: The largest share of the volume a repair may remove when the entry does not say
            (``repair_max_loss``), in [0, 1].

    Raises:
        ConfigError: A key is missing, unknown or malformed.
        MeshDefectError: The mesh is not a usable solid (names the source and every defect), or its repair
            would remove more than ``repair_max_loss`` of its volume.
    """
    node.reject_unknown(_MODEL_KEYS)
    name = node["name"].to_str()
    if not name:
        raise node["name"].error("expected a non-empty name")
    role = node["role"].to_str(choices=ROLES)
    repair = node["repair"].to_bool() if node.has("repair") else repair_default
    max_loss = _max_loss(node, max_loss_default)
    T_patient_model = pose_from_config(node["pose"]) if node.has("pose") else np.eye(4)
    report: RepairReport | None = None
    # a broken mesh makes trimesh divide by zero (flat bodies) and cast NaN (bad vertices): numpy's warnings
    # would be printed before the error that names the defect
    with np.errstate(all="ignore"):
        mesh, source, sha256, unit = _source_mesh(node)
        if isinstance(mesh, BuiltinMesh):
            vertices = transform_points(T_base_patient @ T_patient_model, np.asarray(mesh.vertices_m))
            return AnatomyModel(name, role, vertices, np.asarray(mesh.faces), source, sha256, unit, None)
        defects = mesh_defects(mesh, unit)
        if defects and repair:
            mesh, report = repair_mesh(mesh)
            defects = mesh_defects(mesh, unit)
            if defects:
                done = "; ".join(report.lines()) or "nothing could be repaired"
                raise MeshDefectError(source, defects, f"repair was tried ({done}) and did not fix it")
            _check_loss(node, source, report, max_loss)
    if defects:
        raise MeshDefectError(source, defects, f"set repair: true under {node.key} to try repairing it")
    vertices = transform_points(T_base_patient @ T_patient_model, np.asarray(mesh.vertices))
    return AnatomyModel(name, role, vertices, np.asarray(mesh.faces), source, sha256, unit, report)


def _check_loss(node: ConfigNode, source: str, report: RepairReport, max_loss: float) -> None:
    """Refuse a repair that removed more than ``max_loss`` of the volume (it would remove anatomy silently)."""
    if report.removed_share <= max_loss:
        return
    needed = min(1.0, np.ceil(report.removed_share * 100.0) / 100.0)
    raise MeshDefectError(
        source,
        [f"repair would remove {100.0 * report.removed_share:.1f} % of the volume: {report.summary()}"],
        f"{'; '.join(s.line() for s in report.steps if s.removed_m3 > 0)}. At most {100.0 * max_loss:g} % may "
        f"be removed (repair_max_loss); fix the mesh, or allow it with repair_max_loss: {needed:g} under {node.key}",
    )


def load_anatomy(section: ConfigNode) -> AnatomyScene:
    """Build the scene from the ``anatomy:`` section of a configuration.

    Args:
        section: The ``anatomy`` mapping (``config["anatomy"]``).

    Raises:
        ConfigError: Missing, unknown or malformed keys, duplicate names, no target model.
        MeshDefectError: A model's mesh is not a usable solid.
    """
    section.reject_unknown(("patient_pose", "repair", "repair_max_loss", "models"))
    T_base_patient = pose_from_config(section["patient_pose"])
    repair = section["repair"].to_bool() if section.has("repair") else False
    max_loss = _max_loss(section, DEFAULT_REPAIR_MAX_LOSS)
    entries = section["models"].elements()
    if not entries:
        raise section["models"].error("expected at least one model")
    models, seen = [], set()
    for entry in entries:
        model = load_model(entry, T_base_patient, repair, max_loss)
        if model.name in seen:
            raise entry["name"].error(f"model name {model.name!r} is used twice")
        seen.add(model.name)
        models.append(model)
    if not any(m.role == "target" for m in models):
        raise section["models"].error(f"expected at least one model with role 'target'; roles: {ROLES!r}")
    return AnatomyScene(tuple(models), T_base_patient, section.source)


def load_anatomy_file(path: str = "config/needle_insertion.yaml") -> AnatomyScene:
    """The scene of a configuration file (default: the shipped case study).

    Args:
        path: The configuration file, relative to the current directory or to the package root (as ``resolve_resource``
            finds it); its ``anatomy`` section is read.
    """
    return load_anatomy(load_case_config(resolve_resource(path))["anatomy"])
