"""The session monitor equals one offline evaluation per robot, whatever the interleaving of the streams."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cosim_validation.common.record import RobotRole
from cosim_validation.monitor.properties import MonitorContext, PropertySet, TraceError, record_samples
from cosim_validation.monitor.properties.offline.evaluation import evaluate_run
from cosim_validation.monitor.properties.online.session_monitor import SessionMonitor
from test.monitor.properties.traces import TARGET, heart_mesh_obstacle, insertion_case, machine_verdicts


def test_session_equals_offline_per_robot() -> None:
    props = PropertySet.load("config/properties.yaml")
    virtual, expected = insertion_case(seed=1)
    physical, _ = insertion_case(RobotRole.PHYSICAL, seed=2, noise_m=2e-3)  # sloppier: violates deviations
    context = MonitorContext(virtual.joint_names, 0.1, {"heart": heart_mesh_obstacle()}, target_m=TARGET)  # type: ignore[dict-item]
    session = SessionMonitor(props, context)
    streams = [record_samples(expected), record_samples(virtual), record_samples(physical)]
    rng = np.random.default_rng(0)
    changes = []
    while any(streams):
        stream = streams[int(rng.choice([i for i, s in enumerate(streams) if s]))]
        changes += session.push(stream.pop(0))
    finals, kpis = session.finish(), session.kpis()
    for record in (expected, virtual, physical):
        offline = evaluate_run(props, record, context, None if record is expected else expected)
        online = finals[record.robot]
        machines = machine_verdicts(props.machines, record, TARGET)
        assert offline.verdicts[-len(machines) :] == tuple(machines)  # offline runs the machines too, last
        assert all(a.same_outcome(b) for a, b in zip(offline.verdicts, online, strict=True))
        assert [k.to_dict() for k in offline.kpis] == [k.to_dict() for k in kpis[record.robot]]
    assert any(v.robot is RobotRole.PHYSICAL and v.property == "tip_follows_plan" for v in changes)
    assert not any(v.robot is RobotRole.VIRTUAL for v in changes)


def test_session_refuses_robots_it_does_not_check() -> None:
    virtual, expected = insertion_case()
    context = MonitorContext(virtual.joint_names, 0.1)
    session = SessionMonitor(PropertySet.load("config/properties.yaml"), context, robots=(RobotRole.VIRTUAL,))
    session.push(record_samples(expected)[0])
    with pytest.raises(TraceError, match="got a physical sample; it checks: virtual"):
        session.push(dataclasses.replace(record_samples(virtual)[0], robot=RobotRole.PHYSICAL))
