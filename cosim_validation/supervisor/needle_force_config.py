"""Reading config/supervisor/needle_force.yaml into a :class:`NeedleForceModel` over a placed anatomy."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.supervisor.needle_force import NeedleForceModel, TissueParameters
from cosim_validation.supervisor.tissue_layers import MAX_LAYERS, TissueLayers

if TYPE_CHECKING:
    from cosim_validation.anatomy import AnatomyScene

_LAYER_KEYS = (
    "model",
    "tissue",
    "stiffness_n_per_m",
    "stiffness_n_per_m2",
    "puncture_force_n",
    "cutting_force_n",
    "friction_n_per_m",
    "damping_n_s_per_m2",
)


def tissue_parameters(node: ConfigNode) -> TissueParameters:
    """One entry of ``needle_force.layers``.

    Args:
        node: The layer's mapping: ``model`` and ``tissue`` names, and the force parameters ``stiffness_n_per_m``,
            ``stiffness_n_per_m2``, ``puncture_force_n``, ``cutting_force_n``, ``friction_n_per_m`` and
            ``damping_n_s_per_m2`` (units in the names, each >= 0, the two stiffnesses not both 0, the puncture
            force > 0).
    """
    node.reject_unknown(_LAYER_KEYS)
    values = {key: node[key].to_float(minimum=0.0) for key in _LAYER_KEYS[2:]}
    if node["stiffness_n_per_m"].to_float() == 0.0 and node["stiffness_n_per_m2"].to_float() == 0.0:
        raise node.error("stiffness_n_per_m and stiffness_n_per_m2 cannot both be 0 (the puncture needs a depth)")
    node["puncture_force_n"].to_float(exclusive_minimum=0.0)
    return TissueParameters(node["model"].to_str(), node["tissue"].to_str(), **values)


def load_needle_force(path: str | Path, scene: AnatomyScene) -> NeedleForceModel:
    """The force model of ``path`` (its ``needle_force`` section) on the models of ``scene``.

    Args:
        path: A YAML file with a ``needle_force`` section (e.g. config/supervisor/needle_force.yaml).
        scene: The anatomy placed in base_link; each layer's ``model`` names one of its models, whose mesh the layer
            uses.

    Raises:
        ConfigError: Malformed parameters, or a layer naming a model the scene does not have.
    """
    section = load_config(path)["needle_force"]
    section.reject_unknown(("stick_speed_m_s", "layers"))
    nodes = section["layers"].elements()
    if not 1 <= len(nodes) <= MAX_LAYERS:
        raise section["layers"].error(f"expected 1..{MAX_LAYERS} layers, got {len(nodes)}")
    parameters = [tissue_parameters(node) for node in nodes]
    meshes = []
    for node, p in zip(nodes, parameters, strict=True):
        if p.model not in scene.names:
            raise node["model"].error(f"the anatomy has no model {p.model!r}; models: {', '.join(scene.names)}")
        model = scene.model(p.model)
        meshes.append((model.vertices_m, model.faces))
    layers = TissueLayers([p.model for p in parameters], meshes)
    return NeedleForceModel(layers, parameters, section["stick_speed_m_s"].to_float(minimum=0.0))
