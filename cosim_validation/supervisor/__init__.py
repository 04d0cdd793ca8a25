"""The task supervisor: one machine step per control period, from its exception events to its decisions.

Also its configuration and scenario, the needle force model over the tissue layers and the teleoperation
commands, scripted or live.
"""
