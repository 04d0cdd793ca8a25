"""The layers a robot can be seen through (injected errors, hazards, a fixed offset), by name, for every mode.

A filter is named on the command line and in a graph as ``KIND:OPTIONS`` (``offset:joint2=0.001``,
``errors:model=models/er3pro.npz``, ``hazards:sudden_jump``); :func:`make_filter` builds it for a case study. The same
filter objects wrap the batch robots (:func:`~cosim_validation.assembly.robots.build_robot` returns a
:class:`~cosim_validation.robots.filters.robot_filter.FilteredBackend`) and run in the live proxy node between the
controller
and a driver (``nodes/robot_proxy.py``), so a filtered robot behaves the same in a campaign and in a session.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import CosimError, InputError
from cosim_validation.common.optional import imported
from cosim_validation.common.record import RobotRole
from cosim_validation.robots.filters.robot_filter import RobotFilter
from cosim_validation.robots.model import Kinematics

FilterFactory = Callable[[ConfigNode, str, Kinematics], RobotFilter]
"""``(case-study configuration, OPTIONS, nominal kinematics) -> filter``; raises ``InputError`` for bad options."""

#: Filter kinds: name -> ``module:function`` of its factory (imported when used).
FILTER_KINDS: dict[str, str] = {
    "offset": "cosim_validation.robots.filters.offset_filter:make_offset_filter",
    "hazards": "cosim_validation.hazards.hazard_filter:make_hazard_filter",
    "errors": "cosim_validation.error_injection.injection:make_errors_filter",
}


class FilterSpec(NamedTuple):
    """A filter on one robot: ``ROBOT=KIND:OPTIONS`` on the command line.

    Attributes:
        robot: The robot it wraps (VIRTUAL or PHYSICAL).
        kind: A key of :data:`FILTER_KINDS`.
        options: What the kind is told (its own syntax).
    """

    robot: RobotRole
    kind: str
    options: str

    @property
    def text(self) -> str:
        """``KIND:OPTIONS`` (as a graph's proxy node is given it)."""
        return f"{self.kind}:{self.options}"

    @classmethod
    def parse(cls, text: str) -> FilterSpec:
        """``ROBOT=KIND:OPTIONS``.

        Args:
            text: ``ROBOT=KIND:OPTIONS``, ROBOT ``virtual`` or ``physical`` (case-insensitive), KIND a key of
                :data:`FILTER_KINDS`.

        Raises:
            InputError: Another form, an unknown robot or kind.
        """
        robot, sep, rest = text.partition("=")
        if not sep or ":" in robot:
            raise InputError(f"filter {text!r}: expected ROBOT=KIND:OPTIONS, e.g. virtual=offset:joint2=0.001")
        kind, options = split_filter(rest)
        role = RobotRole.parse(robot.strip())
        if role is RobotRole.EXPECTED:
            raise InputError(f"filter {text!r}: the expected trajectory is not a robot; name virtual or physical")
        return cls(role, kind, options)


def split_filter(text: str) -> tuple[str, str]:
    """``KIND:OPTIONS`` -> (kind, options).

    Args:
        text: ``KIND:OPTIONS``, KIND a key of :data:`FILTER_KINDS`; everything after the first colon is OPTIONS.

    Raises:
        InputError: No colon, or an unknown kind (the message lists the kinds).
    """
    kind, sep, options = text.partition(":")
    kind = kind.strip()
    if not sep:
        raise InputError(f"filter {text!r}: expected KIND:OPTIONS with KIND one of: {', '.join(FILTER_KINDS)}")
    if kind not in FILTER_KINDS:
        raise InputError(f"filter {text!r}: unknown kind {kind!r}; expected one of: {', '.join(FILTER_KINDS)}")
    return kind, options


def make_filter(config: ConfigNode, text: str, kinematics: Kinematics) -> RobotFilter:
    """The filter ``KIND:OPTIONS`` for the case study ``config``.

    Args:
        config: The case-study configuration.
        text: ``KIND:OPTIONS``, KIND a key of :data:`FILTER_KINDS`.
        kinematics: The nominal arm and needle of the robot the filter wraps.

    Raises:
        InputError, ConfigError: Bad kind or options (naming what is wrong).
    """
    kind, options = split_filter(text)
    factory: FilterFactory = imported(FILTER_KINDS[kind])
    return factory(config, options, kinematics)


def make_filters(config: ConfigNode, texts: Sequence[str], kinematics: Kinematics) -> list[RobotFilter]:
    """:func:`make_filter` of each ``KIND:OPTIONS``, innermost first.

    Args:
        config: The case-study configuration.
        texts: The filters, each ``KIND:OPTIONS``, innermost first.
        kinematics: The nominal arm and needle of the robot the filters wrap.
    """
    return [make_filter(config, text, kinematics) for text in texts]


def check_filters(
    config: ConfigNode, filters: Sequence[tuple[str, str]], roles: Sequence[RobotRole], kinematics: Kinematics
) -> None:
    """Build every ``(robot, KIND:OPTIONS)`` filter once, and check that a robot of ``roles`` is there to wrap.

    Args:
        config: The case-study configuration.
        filters: ``(robot, KIND:OPTIONS)`` pairs, robot a :class:`~cosim_validation.common.record.RobotRole` name
            (``virtual`` or ``physical``, case-insensitive).
        roles: The robots that are run.
        kinematics: The nominal arm and needle.

    Raises:
        InputError, ConfigError: A filter for a robot that is not run, or bad options.
    """
    seen: set[tuple[RobotRole, str]] = set()
    for robot, text in filters:
        if (RobotRole.parse(robot), text) in seen:  # the same learned error applied twice was taken without a word
            raise InputError(f"filter {robot}={text} is given twice; give each filter once")
        seen.add((RobotRole.parse(robot), text))
        if RobotRole.parse(robot) not in roles:
            run = ", ".join(r.label for r in roles) or "none"
            raise InputError(f"filter {robot}={text}: the {robot} robot is not run here (robots: {run})")
        try:
            make_filter(config, text, kinematics)
        except CosimError as exc:  # "offset filter: joint2: ..." did not say which option it came from
            raise InputError(f"--filter {robot}={text}: {exc}") from None
