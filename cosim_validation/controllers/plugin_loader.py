"""Finding a user's controller: by import path ``module:attribute`` or by entry point name.

``controllers.default`` names the controller under test: a built-in name, an entry point of the group
``cosim_validation.controllers`` (a user's installed package), an import path, or a mapping::

    default:
      plugin: my_controllers.servo:make_controller   # or  entry_point: servo
      options: {gain: 0.5}                           # handed to the factory as a dict
      step_budget_s: 0.05                            # a closed-loop step may take this long (default 0.1 s)
      time_limit_s: 60                               # a closed-loop case must be done by then (default 120 s)
      call_limit_s: 30                               # start/reference/finish/plan_case may take this long (60 s)
      needle_force: supervisor/needle_force.yaml     # a closed-loop controller senses the modelled needle force

or, for a controller that is a ROS 2 node of its own, ``external: {command: ..., ...}`` in place of ``plugin``
(:mod:`~.external_spec`).

Everything that can be checked without the case study is checked here (importable, attribute found, callable);
:func:`~.plugin_controllers.build_plugin` calls the factory and checks what it returns.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.config.config_node import MAX_CASE_TIME_S
from cosim_validation.common.exceptions import ConfigError, CosimError, InputError
from cosim_validation.controllers.external_spec import (
    ADAPTER_STEP_BUDGET_S,
    ADAPTER_TARGET,
    GOAL_ATTEMPTS,
    external_spec,
)

#: The entry point group a user's package registers its controller factories in.
ENTRY_POINT_GROUP = "cosim_validation.controllers"
_MAPPING_KEYS = (
    "plugin",
    "entry_point",
    "external",
    "options",
    "step_budget_s",
    "time_limit_s",
    "call_limit_s",
    "needle_force",
)


#: Longest a plugin's ``start``, ``reference``, ``finish``, ``close`` or ``plan_case`` may run by default [s]
CALL_LIMIT_S = 60.0


@dataclass(frozen=True)
class PluginSpec:
    """A controller plugin as named by the user.

    Attributes:
        name: The controller's name (the entry point name, or the import path).
        target: ``module:attribute`` of the factory.
        options: Handed to the factory (plain YAML values).
        step_budget_s: Longest a closed-loop ``step`` may take [s].
        time_limit_s: Longest a closed-loop case may run before it is aborted [s] (case time).
        call_limit_s: Longest a ``start``, ``reference``, ``finish``, ``close`` or ``plan_case`` may run before its
            case ends as hung [s] (wall time).
        needle_force: The needle force model (a file with a ``needle_force`` section) whose force at the needle
            holder a closed-loop controller observes, or None (its observation's force is NaN).
        source: The file (or command-line option) that named it, for errors.
        key: The key that named it, for errors ("" for a command-line option).
        given: The keys the user wrote (a closed-loop setting on a planning controller is refused).
    """

    name: str
    target: str
    options: Mapping[str, Any] = field(default_factory=dict)
    step_budget_s: float = 0.1
    time_limit_s: float = 120.0
    call_limit_s: float = CALL_LIMIT_S
    needle_force: Path | None = None
    source: str = "--controller"
    key: str = ""
    given: frozenset[str] = frozenset()

    def error(self, message: str) -> CosimError:
        """An error naming where the plugin was named.

        Args:
            message: What is wrong.
        """
        if self.key:
            return ConfigError(self.source, self.key, message)
        return InputError(f"{self.source} {self.name!r}: {message}")


def entry_points() -> dict[str, str]:
    """The controllers installed packages register: entry point name -> ``module:attribute``."""
    return {ep.name: ep.value for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def plugin_of_name(name: str, source: str = "--controller", key: str = "") -> PluginSpec | None:
    """The plugin a controller name means (an import path, or an entry point), or None (not a plugin name).

    Args:
        name: The controller's name: an import path ``module:attribute`` or an entry point name.
        source: The file or command-line option that named it, for errors.
        key: The key that named it, for errors ("" for a command-line option).
    """
    if ":" in name:
        return PluginSpec(name, name, source=source, key=key)
    installed = entry_points()
    if name in installed:
        spec = PluginSpec(name, installed[name], source=source, key=key)
        others = registrations(name)
        if len({value for _, value in others}) > 1:  # one of them was taken without a word
            listed = "; ".join(f"{value} ({owner or 'unknown package'})" for owner, value in others)
            raise spec.error(
                f"entry point {name!r} is registered more than once: {listed}; name one by its import path"
            )
        return spec
    return None


def registrations(name: str) -> list[tuple[str, str]]:
    """Every registration of the entry point ``name`` in the group: (distribution, ``module:attribute``).

    Args:
        name: An entry point name.
    """
    found = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    return [(ep.dist.name if ep.dist is not None else "", ep.value) for ep in found]


def plugin_of_node(node: ConfigNode) -> PluginSpec:
    """The plugin of a ``controllers.default`` mapping (see the module docstring).

    Args:
        node: The ``controllers.default`` mapping.

    Raises:
        ConfigError: Unknown keys, not exactly one of ``plugin``, ``entry_point`` and ``external``, an entry point
            not installed, bad options or limits, or a bad ``external`` mapping.
    """
    node.reject_unknown(_MAPPING_KEYS)
    named = [k for k in ("plugin", "entry_point", "external") if node.has(k)]
    if len(named) != 1:
        raise node.error(
            "expected exactly one of 'plugin' (module:attribute), 'entry_point' (a name) and 'external' (a ROS 2 "
            "node under test)"
        )
    if named[0] == "external":
        return _external_plugin(node)
    where = node[named[0]]
    text = where.to_str()
    if named[0] == "plugin":
        if text.count(":") != 1 or not all(text.split(":")):
            raise where.error(f"expected an import path 'package.module:attribute', got {text!r}")
        target = text
    else:
        installed = entry_points()
        if text not in installed:
            found = ", ".join(sorted(installed)) or "none installed"
            raise where.error(f"no entry point {text!r} in group {ENTRY_POINT_GROUP} (found: {found})")
        target = installed[text]
    options = node.get("options")
    if options is not None and not isinstance(options.value, dict):
        raise options.error(f"expected a mapping of options, got {type(options.value).__name__}")
    return PluginSpec(
        name=text,
        target=target,
        options=copy.deepcopy(options.value) if options is not None else {},
        step_budget_s=_limit(node, "step_budget_s") if node.has("step_budget_s") else 0.1,
        time_limit_s=_limit(node, "time_limit_s") if node.has("time_limit_s") else 120.0,
        call_limit_s=_limit(node, "call_limit_s") if node.has("call_limit_s") else CALL_LIMIT_S,
        needle_force=node["needle_force"].to_file("needle force model") if node.has("needle_force") else None,
        source=node.source,
        key=where.key,
        given=frozenset(k for k in _MAPPING_KEYS if node.has(k)),
    )


def _limit(node: ConfigNode, key: str) -> float:
    """A plugin's time limit ``key`` [s]: > 0 and at most an hour.

    1e300 s ran a case without end, and past the platform's time_t Python's waits fail with an OverflowError that
    blamed the controller.
    """
    return node[key].to_float(exclusive_minimum=0.0, maximum=MAX_CASE_TIME_S)


def _external_plugin(node: ConfigNode) -> PluginSpec:
    """The adapter of an external node under test (``external`` of a ``controllers.default`` mapping)."""
    if node.has("options"):
        raise node["options"].error("an external node takes its settings in 'external', not 'options'")
    spec = external_spec(node["external"])
    return PluginSpec(
        name=f"external-{Path(spec.command[0]).name}",
        target=ADAPTER_TARGET,
        options=spec.options(),
        step_budget_s=_limit(node, "step_budget_s") if node.has("step_budget_s") else ADAPTER_STEP_BUDGET_S,
        time_limit_s=_limit(node, "time_limit_s") if node.has("time_limit_s") else 120.0,
        # the adapter's start may (re)start the node and wait for its action and for the case to be accepted (the
        # goal sent up to GOAL_ATTEMPTS times)
        call_limit_s=_limit(node, "call_limit_s")
        if node.has("call_limit_s")
        else spec.startup_timeout_s + GOAL_ATTEMPTS * spec.accept_timeout_s + CALL_LIMIT_S,
        needle_force=node["needle_force"].to_file("needle force model") if node.has("needle_force") else None,
        source=node.source,
        key=node["external"].key,
    )


def load_factory(spec: PluginSpec) -> Callable[..., Any]:
    """Import the factory of ``spec``.

    Args:
        spec: The plugin; its ``target`` is ``module:attribute`` (the attribute may be dotted).

    Raises:
        ConfigError, InputError: The module does not import, the attribute is missing or not callable.
    """
    module_name, _, attribute = spec.target.partition(":")
    interrupted = False
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any failure of the user's module is a configuration error
        raise spec.error(
            f"cannot import module {module_name!r}: {type(exc).__name__}: {exc} (is its package installed, or its "
            "folder on PYTHONPATH?)"
        ) from None
    except SystemExit as exc:  # sys.exit(0) at import ended the command with exit 0 and no word
        called = f"sys.exit({exc.code!r})"
        raise spec.error(
            f"importing module {module_name!r} called {called} (a controller's module may not end the process)"
        ) from None
    except KeyboardInterrupt:  # raised by the module itself (it is imported on a thread, where no signal arrives)
        interrupted = True
    if interrupted:  # raised outside the handler: an error whose context is an interrupt is taken for Ctrl-C
        raise spec.error(
            f"importing module {module_name!r} raised KeyboardInterrupt (a controller's module may not interrupt the "
            "process)"
        )
    factory: Any = module
    for part in attribute.split("."):
        if not hasattr(factory, part):
            raise spec.error(f"module {module_name!r} has no attribute {attribute!r}")
        factory = getattr(factory, part)
    if not callable(factory):
        kind = type(factory).__name__
        raise spec.error(f"{spec.target} is a {kind}, not a callable make_controller(options, context)")
    found: Callable[..., Any] = factory
    return found


@dataclass(frozen=True)
class ControllerEntry:
    """A controller ``cosim doctor`` found.

    Attributes:
        name: What ``controllers.default`` or ``--controller`` names it by.
        kind: ``built-in`` or ``entry point``.
        target: ``module:attribute`` of an entry point's factory ("" for a built-in).
        loadable: Whether the factory imports and is callable (built-ins are).
        detail: Why it is not loadable, or the distribution that registers it.
    """

    name: str
    kind: str
    target: str
    loadable: bool
    detail: str


def catalogue(builtin: tuple[str, ...], check: Callable[[PluginSpec], Any]) -> list[ControllerEntry]:
    """The ``builtin`` names, then every entry point of the group, each checked (imported, callable).

    Args:
        builtin: Names of the built-in controllers.
        check: Imports a plugin's factory or raises a CosimError (``cosim doctor`` passes ``import_factory``, bounded
            by the plugin's ``call_limit_s``: an entry point whose module waits at import would block it for good).
    """
    found = [ControllerEntry(name, "built-in", "", True, "cosim_validation") for name in builtin]
    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        owner = ep.dist.name if ep.dist is not None else ""
        others = {value for _, value in registrations(ep.name)} - {ep.value}
        if ep.name in builtin or others:  # the name does not reach it: doctor listed it "ok"
            why = "the built-in controller of that name" if ep.name in builtin else f"also {', '.join(sorted(others))}"
            detail = f"not reachable by its name ({why}); name it by its import path {ep.value}"
            found.append(ControllerEntry(ep.name, "entry point", ep.value, False, detail))
            continue
        try:
            check(PluginSpec(ep.name, ep.value, source="entry point"))
        except CosimError as exc:
            found.append(ControllerEntry(ep.name, "entry point", ep.value, False, str(exc)))
            continue
        found.append(ControllerEntry(ep.name, "entry point", ep.value, True, owner))
    return found
