"""Every robot a case can drive: the kinematic model, virtual engines, emulated physical arms, robot filters,
link visuals and the registry by name.
"""
