"""Every robot a case can drive.

The kinematic model, virtual engines, emulated physical arms, robot filters, link visuals and the registry by name.
"""
