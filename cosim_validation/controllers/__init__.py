"""Controllers under test (seed 000's flawed ``straight`` and the ``guarded`` one) and the configured setup."""

from cosim_validation.controllers.controller import Controller
from cosim_validation.controllers.controllers_config import CONTROLLER_NAMES, ControllersConfig, GuardedSettings
from cosim_validation.controllers.guarded_controller import GuardedController, fibonacci_directions
from cosim_validation.controllers.insertion_setup import InsertionSetup
from cosim_validation.controllers.straight_controller import StraightController

__all__ = [
    "CONTROLLER_NAMES",
    "Controller",
    "ControllersConfig",
    "GuardedController",
    "GuardedSettings",
    "InsertionSetup",
    "StraightController",
    "fibonacci_directions",
]
