"""Contexts from the anatomy scene and the records: obstacles, target, joints and needle."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cosim_validation.anatomy import load_anatomy
from cosim_validation.common.config import load_config, resolve_resource
from cosim_validation.common.exceptions import InputError
from cosim_validation.monitor.properties.obstacles import MeshObstacle
from cosim_validation.monitor.properties.scene_context import record_context, record_target, scene_obstacles
from test.monitor.properties.traces import TARGET, insertion_case


def test_scene_obstacles_are_the_forbidden_regions() -> None:
    scene = load_anatomy(load_config(resolve_resource("config/needle_insertion.yaml"))["anatomy"])
    obstacles = scene_obstacles(scene)
    assert set(obstacles) == {m.name for m in scene.obstacles} == {"heart"}
    heart = obstacles["heart"]
    assert isinstance(heart, MeshObstacle)
    model = scene.model("heart")
    inside = model.vertices_m.mean(axis=0)
    assert heart.point_distance_m(inside[None])[0] < 0  # the centroid of the heart lies inside it
    far = inside + np.array([0.0, 0.0, 1.0])
    assert heart.point_distance_m(far[None])[0] > 0.5


def test_record_context_and_target() -> None:
    record, _ = insertion_case()
    assert record_target(record) is None
    with_target = dataclasses.replace(record, meta={"target_m": TARGET.tolist()})
    context = record_context(with_target)
    assert context.joint_names == record.joint_names
    assert context.needle_length_m == record.needle_length_m
    assert np.array_equal(context.target_m, TARGET)  # type: ignore[arg-type]
    given = record_context(with_target, target_m=np.zeros(3))
    assert np.array_equal(given.target_m, np.zeros(3))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="meta 'target_m' is not 3 numbers"):
        record_target(dataclasses.replace(record, meta={"target_m": [1.0, "x"]}))
