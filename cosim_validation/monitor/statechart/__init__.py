"""Hierarchical state machines as data: the engine of behaviour tests and of the supervisor.

Expressions, LTL, model checking (SPIN, NuSMV export).
"""
