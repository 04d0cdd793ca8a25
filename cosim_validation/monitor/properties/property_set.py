"""Named properties (and KPIs) from YAML or Python, parsed on load and compiled against a context.

File format (docs/PROPERTIES.md)::

    constants:            # optional: named numbers usable in expressions
      delta_m: 0.02
    properties:
      joints_clear_of_obstacles:
        expression: "forall j in joints, o in obstacles: always safedis(joint[j], o, delta_m)"
        description: every joint keeps delta from every obstacle   # optional
        robots: [virtual, physical]                                # optional, default: all
    kpis: ...             # see kpi.py
    machines: [stage_order]   # behaviour tests to run too: shipped names (config/behaviours/) or machine files
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cosim_validation.common.config import ConfigNode, load_config, parse_config
from cosim_validation.common.exceptions import ConfigError, CosimError
from cosim_validation.common.record import RobotRole
from cosim_validation.monitor.properties.context import MonitorContext
from cosim_validation.monitor.properties.errors import PropertyError
from cosim_validation.monitor.properties.kpis.specs import KpiSpec, parse_kpis
from cosim_validation.monitor.properties.language import syntax
from cosim_validation.monitor.properties.language.compiler import Compiled, compile_formula
from cosim_validation.monitor.properties.language.parser import parse_formula
from cosim_validation.monitor.properties.language.term_resolver import constant_name_problem
from cosim_validation.monitor.properties.machines.behaviours import behaviour_machine, checked_ref


@dataclass(frozen=True)
class PropertySpec:
    """One named property.

    Attributes:
        name: Identifier used in verdicts.
        expression: The formula text.
        description: Human description.
        robots: Robots it applies to (properties that read ``expected.*`` never apply to EXPECTED).
    """

    name: str
    expression: str
    description: str = ""
    robots: tuple[RobotRole, ...] = tuple(RobotRole)
    tree: syntax.Formula = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise PropertyError(self.name, "a property name must be an identifier (letters, digits, _)")
        object.__setattr__(self, "tree", parse_formula(self.expression, self.name))

    def compile(self, context: MonitorContext, kpi_units: Mapping[str, str] | None = None) -> CompiledProperty:
        """Resolve against ``context`` (joints, obstacles, constants) and the KPIs (name -> unit) of the set.

        Args:
            context: Joints, obstacles and constants the expression's names resolve against.
            kpi_units: Unit of every KPI of the set by name (the names ``kpi(name)`` may use); None: no KPIs.

        Raises:
            PropertyError: An unknown name, wrong argument kinds or mixed units (see :func:`compile_formula`).
        """
        return CompiledProperty(self, compile_formula(self.name, self.expression, self.tree, context, kpi_units))


@dataclass(frozen=True)
class CompiledProperty:
    """A property compiled against one context."""

    spec: PropertySpec
    compiled: Compiled

    @property
    def name(self) -> str:
        """The property name."""
        return self.spec.name

    def applies_to(self, robot: RobotRole) -> bool:
        """Whether the property is checked on ``robot``.

        Args:
            robot: The robot; a property that reads ``expected.*`` is never checked on EXPECTED.
        """
        if robot is RobotRole.EXPECTED and self.compiled.formula.uses_expected:
            return False
        return robot in self.spec.robots


@dataclass(frozen=True)
class PropertySet:
    """Properties, KPIs and constants of one file (or built in Python)."""

    properties: tuple[PropertySpec, ...]
    kpis: tuple[KpiSpec, ...] = ()
    constants: Mapping[str, float] = field(default_factory=dict)
    source: str = "<python>"
    machines: tuple[str, ...] = ()
    _compiled: dict[tuple[object, ...], tuple[CompiledProperty, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for spec in self.properties:
            if spec.name in seen:
                raise PropertyError(spec.name, f"defined twice in {self.source}")
            seen.add(spec.name)

    def with_context(self, context: MonitorContext) -> MonitorContext:
        """``context`` with this set's constants added (the context's own constants win).

        Args:
            context: The monitor context of the case.
        """
        return dataclasses.replace(context, constants={**self.constants, **context.constants})

    def compile(self, context: MonitorContext) -> list[CompiledProperty]:
        """Every property compiled against ``context`` plus this set's constants.

        Args:
            context: Joints, obstacles and constants of the case (its constants win over the set's).

        Raises:
            PropertyError: A property does not compile and the set has no file (``source`` starts with ``<``).
            ConfigError: A property of a set read from a file does not compile; the error names the file and the key.
        """
        merged = self.with_context(context)
        key = _compile_key(merged)
        known = self._compiled.get(key) if key is not None else None
        if known is not None:  # a campaign's cases differ in what is read at evaluation (target, records), not here
            return list(known)
        kpi_units = {k.name: k.unit for k in self.kpis}
        compiled = []
        for spec in self.properties:
            try:
                compiled.append(spec.compile(merged, kpi_units))
            except PropertyError as exc:  # name the file and the key, as errors found on load do
                if self.source.startswith("<"):  # built in code or parsed from a string: no file to name
                    raise
                raise ConfigError(self.source, f"properties.{spec.name}.expression", str(exc)) from None
        if key is not None:
            self._compiled[key] = tuple(compiled)
        return compiled

    @classmethod
    def load(cls, path: str | Path) -> PropertySet:
        """Read a properties YAML file.

        Args:
            path: The file; relative machine file paths in it are taken against its folder.
        """
        return cls.from_config(load_config(path))

    @classmethod
    def parse(cls, text: str, source: str = "<string>") -> PropertySet:
        """Parse properties YAML text.

        Args:
            text: The YAML document (``constants``, ``properties``, ``kpis``, ``machines``).
            source: Name used in error messages, normally a file path (relative machine file paths are taken
                against its folder); a name starting with ``<`` stands for no file.
        """
        return cls.from_config(parse_config(text, source))

    @classmethod
    def from_config(cls, root: ConfigNode) -> PropertySet:
        """Build from a parsed YAML tree; errors name the file and key.

        Args:
            root: The root mapping of a properties file; relative machine file paths are taken against the folder
                of ``root.source``.
        """
        # ``topics`` names the streams of a recording for ``cosim replay`` (read there, see ReplayTopics)
        root.reject_unknown(("constants", "properties", "kpis", "machines", "topics"))
        constants: dict[str, float] = {}
        node = root.get("constants")
        if node is not None:
            for key, value in node.items():
                problem = constant_name_problem(key)
                if problem is not None:  # 't: 100' was taken, and 'always t < 50' read the time
                    raise value.error(f"constant {key!r}: {problem}")
                constants[key] = value.to_float(minimum=-syntax.MAX_NUMBER, maximum=syntax.MAX_NUMBER)
        specs = [_spec(key, value) for key, value in root["properties"].items()]
        kpis = parse_kpis(root.get("kpis"))
        machines: list[str] = []
        if root.get("machines") is not None:
            base = Path(root.source).parent
            named: dict[str, int] = {}  # machine name -> its entry: each gives the verdict machine:<name>
            for i, item in enumerate(root["machines"].elements()):
                try:
                    machines.append(checked_ref(item.to_str(), base))
                except CosimError as exc:
                    raise item.error(str(exc)) from None
                name = behaviour_machine(machines[-1]).name
                if name in named:
                    raise item.error(
                        f"behaviour machine {name!r} again (machines[{named[name]}] is {name!r} too): each machine "
                        f"gives the verdict machine:{name}, so names must differ"
                    )
                named[name] = i
        if not specs and not machines:  # checked nothing, and said so with exit 0
            raise root["properties"].error("no property and no behaviour machine: nothing would be checked")
        return cls(tuple(specs), kpis, constants, root.source, tuple(machines))


def _spec(name: str, node: ConfigNode) -> PropertySpec:
    node.reject_unknown(("expression", "description", "robots"))
    robots = tuple(RobotRole)
    if node.get("robots") is not None:
        try:
            robots = tuple(RobotRole.parse(r.to_str()) for r in node["robots"].elements())
        except PropertyError:
            raise
        except Exception as exc:  # noqa: BLE001 - re-raised with the file and key
            raise node["robots"].error(str(exc)) from None
        if not robots:  # a property checked on no robot never gives a verdict
            raise node["robots"].error(
                "expected at least one robot (expected, virtual, physical); leave the key out for every robot"
            )
        if len(set(robots)) < len(robots):
            raise node["robots"].error(f"names a robot twice: {[r.label for r in robots]}")
    description = node["description"].to_str() if node.get("description") is not None else ""
    try:
        return PropertySpec(name, node["expression"].to_str(), description, robots)
    except PropertyError as exc:
        raise node["expression"].error(str(exc)) from None


def missing_requirement(
    prop: CompiledProperty, context: MonitorContext, has_expected: bool, has_actual: bool, has_stages: bool = True
) -> str:
    """Why ``prop`` cannot be decided with what is available, or "" if it can.

    ``has_stages`` false: the trace has no stages (a recorded run imported without its plan, Stage.NONE
    throughout), so a property naming a stage would hold vacuously; it is UNKNOWN instead.

    Args:
        prop: The compiled property.
        context: The monitor context (target, self-collision models, obstacles, joint limits).
        has_expected: Whether expected (planned) samples are available.
        has_actual: Whether the trace has actual (tracked or ground-truth) tip data.
        has_stages: Whether the trace has stages (see above).
    """
    needs = prop.compiled.requires
    if "stages" in needs and not has_stages:
        return "needs the case's stages (the trace has none: stage NONE throughout, no plan known)"
    if "expected" in needs and not has_expected:
        return "needs the expected trajectory (none given)"
    if "target" in needs and context.target_m is None:
        return "needs the case's target point (none in the context)"
    if "self_distance" in needs and context.self_distance is None:
        return "needs a self-collision distance model (none in the context)"
    if "self_collision" in needs and context.self_collision is None:
        return "needs a self-collision model (none in the context)"
    if "obstacles" in needs and not context.obstacles:
        return "needs obstacles (the context has none: no scene given)"
    if "joint_limits" in needs and not (context.q_lower and context.q_upper):
        return "needs the robot model's joint limits (none in the context)"
    if "actual_tip" in needs and not has_actual:
        return "needs the actual tip pose (the trace has none)"
    return ""


def _compile_key(context: MonitorContext) -> tuple[object, ...] | None:
    """What a compiled property depends on in ``context``: the joints, the obstacles' names and the constants' values.

    Everything else the context holds (the target, the obstacles' geometry, the self-distance model, the limits) is
    read when a property is evaluated. None when a constant is not a plain number (then nothing is reused).
    """
    constants = []
    for name, value in sorted(context.constants.items()):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1e308 < value < 1e308:
            return None  # (a huge integer has no float to key it by)
        constants.append((name, float(value)))
    return (context.joint_names, tuple(context.obstacles), tuple(constants))
