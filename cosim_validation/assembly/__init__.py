"""The one assembly of a case for every mode (campaign, session nodes, run-case, check, replay).

Public API::

    assembly = CaseAssembly(AssemblySpec("config/needle_insertion.yaml", engines=("mujoco", "emulated")))
    batch = assembly.run_batch(case)             # lockstep loop over in-process robots -> CaseRun + records
    reports = assembly.check(batch, case.target_m)   # properties, KPIs, machines on every record
    Lockstep(kinematics, ports, settings, validator)  # the loop itself (the controller node runs it over ROS)
    load_monitor_world(config, properties)       # what the monitor needs (monitor node, replay, check)
    case_seed(suite_seed, test_id)               # every random stream of a case starts from it
"""

from cosim_validation.assembly.assembly_spec import AssemblySpec, controller_name
from cosim_validation.assembly.case_assembly import BatchCase, CaseAssembly
from cosim_validation.assembly.case_seed import case_seed
from cosim_validation.assembly.lockstep import (
    CaseAbortedError,
    CaseEvent,
    CaseListener,
    CaseRun,
    Lockstep,
    LockstepSettings,
    SessionClock,
    StoppedBy,
)
from cosim_validation.assembly.monitor_world import MonitorWorld, load_monitor_world, monitor_world, monitor_world_of
from cosim_validation.assembly.record_check import RecordReport, case_target, check_records
from cosim_validation.assembly.robot_port import BackendPort, RobotLostError, RobotPort

__all__ = [
    "AssemblySpec",
    "BackendPort",
    "BatchCase",
    "CaseAbortedError",
    "CaseAssembly",
    "CaseEvent",
    "CaseListener",
    "CaseRun",
    "Lockstep",
    "LockstepSettings",
    "MonitorWorld",
    "RecordReport",
    "RobotLostError",
    "RobotPort",
    "SessionClock",
    "StoppedBy",
    "case_seed",
    "case_target",
    "check_records",
    "controller_name",
    "load_monitor_world",
    "monitor_world",
    "monitor_world_of",
]
