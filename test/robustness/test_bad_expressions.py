"""Expressions too deep or too big: guards and actions of a machine (``cosim supervisor show``), LTL goals
(``cosim supervisor check``, which reads them before it runs SPIN) and property expressions (``cosim run-case``,
which loads the property set before it runs). Each was a ``RecursionError`` traceback or never returned; each
must be one ``error:`` line naming the file and the key, within its time limit. None needs the shared workspace."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from cosim_validation.cli.main import main
from cosim_validation.common.config import package_root
from test.robustness.harness import Case, run_fast_case

SHIPPED = package_root() / "config"
MACHINE = SHIPPED / "supervisor" / "needle_insertion.yaml"
GOALS = SHIPPED / "supervisor" / "needle_insertion.goals.yaml"
N = 3000  # far past any bound, far below a size that takes time to write


def _chain(word: str, operand: str, n: int = N) -> str:
    return f" {word} ".join([operand] * n)


#: Guard expressions of a machine (a named guard ``probe``, used by a transition).
GUARDS: dict[str, str] = {
    "parentheses": "(" * N + "true" + ")" * N,
    "not_chain": "not " * N + "true",
    "bang_chain": "!" * N + "true",
    "minus_chain": "-" * N + "1 > 0",
    "or_chain": _chain("or", "true"),
    "and_chain": _chain("&&", "true"),
    "sum_chain": _chain("+", "1") + " > 0",
    "product_chain": _chain("*", "1") + " > 0",
    "list_nesting": "[" * N + "]" * N + " == []",
    "call_nesting": "abs(" * N + "1" + ")" * N + " > 0",
    "attribute_chain": "x" + ".x" * N + " > 0",
}

#: LTL goals (``goals.<name>.ltl`` of the goals file).
GOALS_LTL: dict[str, str] = {
    "parentheses": "(" * N + "fired" + ")" * N,
    "always_chain": "G " * N + "fired",
    "next_chain": "X " * N + "fired",
    "until_chain": _chain("U", "fired"),
    "implies_chain": _chain("->", "fired"),
    "and_chain": _chain("and", "fired"),
    "or_chain": _chain("||", "fired"),
}

#: Property expressions (``properties.<first>.expression`` of the property file).
PROPERTIES: dict[str, str] = {
    "parentheses": "(" * N + "q[0] < 1" + ")" * N,
    "term_parentheses": "(" * N + "q[0]" + ")" * N + " < 1",
    "not_chain": "not " * N + "q[0] < 1",
    "always_chain": "always " * N + "q[0] < 1",
    "next_chain": "next " * N + "q[0] < 1",
    "minus_chain": "-" * N + "q[0] < 1",
    "sum_chain": _chain("+", "q[0]") + " < 1",
    "index_nesting": "q[" * N + "0" + "]" * N + " < 1",
    "implies_chain": _chain("->", "q[0] < 1"),
    "and_chain": _chain("and", "q[0] < 1"),  # 5 nodes each: past the 10 000-node bound
}


def _guard_bomb(levels: int = 40) -> dict[str, Any]:
    """Named guards each using the previous one twice: 2**levels nodes once inlined."""
    guards: dict[str, Any] = {"g0": {"expr": "true"}}
    guards |= {f"g{k}": {"expr": f"g{k - 1} and g{k - 1}"} for k in range(1, levels + 1)}
    return guards


def _definition_bomb(levels: int = 40) -> dict[str, str]:
    """LTL definitions each using the previous one twice."""
    return {"d0": "fired"} | {f"d{k}": f"d{k - 1} and d{k - 1}" for k in range(1, levels + 1)}


def _machine_case(folder: Path, edit: Callable[[dict[str, Any]], str]) -> Case:
    machine = yaml.safe_load(MACHINE.read_text())
    key = edit(machine)
    path = folder / "machine.yaml"
    shutil.copyfile(GOALS, folder / GOALS.name)
    path.write_text(yaml.safe_dump(machine, sort_keys=False))
    return Case(["supervisor", "show", str(path)], ("machine.yaml", key))


def _with_guard(expression: str) -> Callable[[dict[str, Any]], str]:
    def edit(machine: dict[str, Any]) -> str:
        machine["guards"]["probe"] = {"expr": expression}
        return "guards.probe.expr"

    return edit


def _with_bomb(machine: dict[str, Any]) -> str:
    machine["guards"] |= _guard_bomb()
    machine["transitions"].append({"source": "Configure", "target": "MoveToSource", "guard": "g40"})
    return "guards.g13.expr"  # the first past the bound: 2**14 - 1 nodes


def _goals_case(folder: Path, edit: Callable[[dict[str, Any]], str]) -> Case:
    goals = yaml.safe_load(GOALS.read_text())
    key = edit(goals)
    shutil.copyfile(MACHINE, folder / MACHINE.name)
    (folder / GOALS.name).write_text(yaml.safe_dump(goals, sort_keys=False))
    out = folder / "checked"
    return Case(["supervisor", "check", str(folder / MACHINE.name), "--out", str(out)], (GOALS.name, key), (out,))


def _with_goal(ltl: str) -> Callable[[dict[str, Any]], str]:
    def edit(goals: dict[str, Any]) -> str:
        goals["goals"]["probe"] = {"description": "a hostile goal", "ltl": ltl}
        return "goals.probe.ltl"

    return edit


def _with_definition_bomb(goals: dict[str, Any]) -> str:
    goals["definitions"] |= _definition_bomb()
    goals["goals"]["probe"] = {"description": "a hostile goal", "ltl": "G d40"}
    return "definitions.d13"  # the first past the bound: 2**14 - 1 nodes


def _property_case(folder: Path, expression: str) -> Case:
    properties = yaml.safe_load((SHIPPED / "properties.yaml").read_text())
    name = next(iter(properties["properties"]))
    properties["properties"][name]["expression"] = expression
    (folder / "properties.yaml").write_text(yaml.safe_dump(properties, sort_keys=False))
    config = folder / "case.yaml"
    shutil.copyfile(SHIPPED / "needle_insertion.yaml", config)
    argv = ["run-case", "--config", str(config), "--target", "0.45", "0.0", "0.05"]
    return Case(argv, ("properties.yaml", f"properties.{name}.expression"))


def _corpus() -> dict[str, Callable[[Path], Case]]:
    cases: dict[str, Callable[[Path], Case]] = {}
    for name, text in GUARDS.items():
        cases[f"guard:{name}"] = lambda f, t=text: _machine_case(f, _with_guard(t))
    cases["guard:inlined_bomb"] = lambda f: _machine_case(f, _with_bomb)
    for name, text in GOALS_LTL.items():
        cases[f"ltl:{name}"] = lambda f, t=text: _goals_case(f, _with_goal(t))
    cases["ltl:definition_bomb"] = lambda f: _goals_case(f, _with_definition_bomb)
    for name, text in PROPERTIES.items():
        cases[f"property:{name}"] = lambda f, t=text: _property_case(f, t)
    return cases


CORPUS = _corpus()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_bounded_expression(name: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    run_fast_case(CORPUS[name](tmp_path), sorted(CORPUS).index(name) % 2 == 1, capfd)


def test_a_syntax_error_is_one_line_that_names_its_column(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The parser's message is two lines (the expression, a caret under the column); folded into one ``error:``
    line the caret would point at nothing, so it is left out and the column named."""
    case = _property_case(tmp_path, "always (q[0] < < 1)")
    capfd.readouterr()
    assert main(case.argv) == 1
    err = capfd.readouterr().err
    assert err.count("\n") == 1
    assert "expected a signal, number or function, found '<' at column 16: always (q[0] < < 1)" in err
    assert "^" not in err
