"""A digital-twin session as data: the node graph (config/digital_twin.yaml) and its processes.

ROS-free: it describes and starts processes; the nodes themselves live in ``cosim_validation.live.nodes``.
"""
