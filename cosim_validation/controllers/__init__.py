"""Controllers under test and the configured setup.

The controllers: [Actuators 2025]'s flawed ``straight`` and the ``guarded`` one, and users' plugins.
"""

from cosim_validation.controllers.controller import Controller
from cosim_validation.controllers.controllers_config import CONTROLLER_NAMES, ControllersConfig, GuardedSettings
from cosim_validation.controllers.guarded_controller import GuardedController, fibonacci_directions
from cosim_validation.controllers.insertion_setup import InsertionSetup
from cosim_validation.controllers.plugin_api import (
    CaseStart,
    Command,
    CommandKind,
    ControllerContext,
    Observation,
    RunLogs,
)
from cosim_validation.controllers.plugin_controllers import ClosedLoopPlugin, ControllerFaultError, PlanningPlugin
from cosim_validation.controllers.plugin_loader import ENTRY_POINT_GROUP, PluginSpec, entry_points
from cosim_validation.controllers.straight_controller import StraightController

__all__ = [
    "CONTROLLER_NAMES",
    "ENTRY_POINT_GROUP",
    "CaseStart",
    "ClosedLoopPlugin",
    "Command",
    "CommandKind",
    "Controller",
    "ControllerContext",
    "ControllerFaultError",
    "ControllersConfig",
    "GuardedController",
    "GuardedSettings",
    "InsertionSetup",
    "Observation",
    "PlanningPlugin",
    "PluginSpec",
    "RunLogs",
    "StraightController",
    "entry_points",
    "fibonacci_directions",
]
