"""The allowed collision matrix as the emulated move_group keeps it, and the robot pairs its SRDF would allow.

:class:`CollisionMatrix` behaves as MoveIt's ``collision_detection::AllowedCollisionMatrix``
(moveit_core/collision_detection/src/collision_matrix.cpp): entries of name pairs and default entries of single
names. A pair without an entry takes the names' default entries: one name's if one has one, allowed only when
both allow if both have one, else not allowed. It is read from a message as that class's constructor reads one
(the upper triangle; an entry equal to the pair's default is not kept) and written as its ``getMessage`` writes
one (every name, sorted, every pair, symmetric). Nothing of MoveIt's code is copied.

:func:`robot_matrix` is the stand-in's starting matrix: the pairs of adjacent links allowed, as the MoveIt Setup
Assistant writes them into a robot's SRDF (``Adjacent``: links joined by a joint, links without collision
geometry bridged).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from moveit_msgs.msg import AllowedCollisionEntry, AllowedCollisionMatrix

from cosim_validation.robots.model.kinematic_chain import KinematicChain


@dataclass
class CollisionMatrix:
    """Allowed contacts between named links and objects.

    Attributes:
        entries: Whether the contact of a pair of names is allowed, for the pairs with an entry.
        defaults: The default entry of a name: whether its contacts without an entry are allowed.
    """

    entries: dict[frozenset[str], bool] = field(default_factory=dict)
    defaults: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def from_msg(cls, msg: Any) -> CollisionMatrix:
        """The matrix of a moveit_msgs/AllowedCollisionMatrix (read as MoveIt reads one).

        Args:
            msg: The message; ``entry_values[i].enabled[j]`` with ``i < j`` decides the pair of names ``i`` and ``j``.

        Raises:
            ValueError: Not one row per name, a row not one value per name, or not one value per default name
                (MoveIt logs an error and keeps what it read so far; the stand-in refuses the scene).
        """
        names = list(msg.entry_names)
        if len(msg.entry_values) != len(names) or len(msg.default_entry_names) != len(msg.default_entry_values):
            raise ValueError(
                f"allowed collision matrix: {len(msg.entry_values)} rows for {len(names)} names, "
                f"{len(msg.default_entry_values)} default values for {len(msg.default_entry_names)} default names"
            )
        matrix = cls(
            defaults={str(n): bool(v) for n, v in zip(msg.default_entry_names, msg.default_entry_values, strict=True)}
        )
        for i, name in enumerate(names):
            row = list(msg.entry_values[i].enabled)
            if len(row) != len(names):
                raise ValueError(
                    f"allowed collision matrix: the row of {name!r} has {len(row)} values for {len(names)} names"
                )
            for j in range(i + 1, len(names)):
                if bool(row[j]) != matrix.default(name, names[j]):
                    matrix.entries[frozenset((name, names[j]))] = bool(row[j])
        return matrix

    def default(self, a: str, b: str) -> bool:
        """Whether the default entries allow the contact of ``a`` and ``b`` (False when neither has one).

        Args:
            a: A link or object name.
            b: Another one.
        """
        if a in self.defaults and b in self.defaults:
            return self.defaults[a] and self.defaults[b]
        return self.defaults.get(a, self.defaults.get(b, False))

    def allowed(self, a: str, b: str) -> bool:
        """Whether the contact of ``a`` and ``b`` is allowed: the pair's entry, else the default entries.

        Args:
            a: A link or object name.
            b: Another one.
        """
        return self.entries.get(frozenset((a, b)), self.default(a, b))

    def names(self) -> list[str]:
        """Every name with an entry or a default entry, sorted."""
        return sorted({n for pair in self.entries for n in pair} | set(self.defaults))

    def to_msg(self) -> Any:
        """The moveit_msgs/AllowedCollisionMatrix of every name and pair (symmetric rows), and the default entries."""
        names = self.names()
        rows = [[self.allowed(a, b) for b in names] for a in names]
        default_names = [n for n in names if n in self.defaults]
        return AllowedCollisionMatrix(
            entry_names=names,
            entry_values=[AllowedCollisionEntry(enabled=row) for row in rows],
            default_entry_names=default_names,
            default_entry_values=[self.defaults[n] for n in default_names],
        )


def adjacent_pairs(links: dict[str, bool], joints: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs of links with collision geometry that are joined by a joint or by links without geometry.

    Args:
        links: Every link's name and whether it has collision geometry.
        joints: (parent, child) link names of every joint.

    Returns:
        The pairs, each sorted, the list sorted.
    """
    graph: dict[str, set[str]] = {name: set() for name in links}
    for parent, child in joints:
        graph.setdefault(parent, set()).add(child)
        graph.setdefault(child, set()).add(parent)
    changed = True
    while changed:  # the neighbours of a link without geometry become neighbours of each other
        changed = False
        for name, neighbours in graph.items():
            if links.get(name, False):
                continue
            for a in neighbours:
                added = neighbours - {a} - graph[a]
                if added:
                    graph[a] |= added
                    changed = True
    pairs = {
        tuple(sorted((a, b)))
        for a, neighbours in graph.items()
        for b in neighbours
        if a != b and links.get(a, False) and links.get(b, False)
    }
    return sorted((a, b) for a, b in pairs)


def robot_matrix(chain: KinematicChain, needle_link: str) -> CollisionMatrix:
    """The stand-in's starting matrix: the robot's adjacent link pairs allowed, the needle link's among them.

    The needle link (not in the URDF) is a link with geometry on the mount frame's link, as in a MoveIt
    configuration of the arm with the needle.

    Args:
        chain: The arm's chain (its URDF and its pinocchio model, whose frame at the needle mount names the link
            the needle is fixed to).
        needle_link: The needle link's name.
    """
    root = ET.parse(chain.urdf_path).getroot()
    links = {str(link.get("name")): link.find("collision") is not None for link in root.findall("link")}
    joints = [
        (str(parent.get("link")), str(child.get("link")))
        for joint in root.findall("joint")
        if (parent := joint.find("parent")) is not None and (child := joint.find("child")) is not None
    ]
    model = chain.model
    mounts = {
        str(frame.name)
        for frame in model.frames
        if frame.parentJoint == chain.n_joints and np.allclose(frame.placement.homogeneous, chain.T_last_mount)
    } & set(links)
    links[needle_link] = True
    joints += [(mount, needle_link) for mount in sorted(mounts)]
    return CollisionMatrix(entries={frozenset(pair): True for pair in adjacent_pairs(links, joints)})
