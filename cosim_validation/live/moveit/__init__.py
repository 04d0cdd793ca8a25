"""MoveIt 2's move_group as the planner under test.

The ``moveit`` controller's client and the emulated move_group (docs/MOVEIT.md).
"""
