"""The package layers of docs/ARCHITECTURE.md hold in the code: imports only go down, and no module circles.

Every import counts, also one inside a function (a lazy import still ties the two modules together). The layer
table is read from docs/ARCHITECTURE.md, so the documentation and this test cannot drift apart.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "cosim_validation"
ROW = re.compile(r"^\|\s*(\d+)\s*\|([^|]*)\|")


def layer_table() -> dict[str, int]:
    """Package -> layer, from the table under '## Layers' in docs/ARCHITECTURE.md."""
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text()
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    layers: dict[str, int] = {}
    for line in section.splitlines():
        match = ROW.match(line)
        if match:
            for name in re.findall(r"`([a-z_]+)`", match.group(2)):
                layers[name] = int(match.group(1))
    return layers


def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def imports(known: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in its body)."""

    def resolve(dotted: str) -> str | None:
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in known:
                return ".".join(parts[:i])
        return None

    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            for target in targets:
                if target.startswith("cosim_validation.") and (found := resolve(target)) and found != name:
                    edges[name].add(found)
    return edges


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return imports(modules())


def test_every_package_has_a_layer() -> None:
    layers = layer_table()
    packages = {package_of(m) for m in modules()} - {""}
    assert packages - set(layers) == set(), "add the new packages to the layer table of docs/ARCHITECTURE.md"
    assert set(layers) - packages == set(), "the layer table names packages that do not exist"


def upward(graph: dict[str, set[str]], layers: dict[str, int]) -> list[str]:
    """The imports of ``graph`` that go to another package of the same or a higher layer."""
    return sorted(
        f"{source} (layer {layers[package_of(source)]}) imports {target} (layer {layers[package_of(target)]})"
        for source, targets in graph.items()
        for target in targets
        if package_of(source) and package_of(target) and package_of(source) != package_of(target)
        if layers[package_of(target)] >= layers[package_of(source)]
    )


def test_imports_only_go_down(graph: dict[str, set[str]]) -> None:
    assert upward(graph, layer_table()) == []


def test_no_module_circles(graph: dict[str, set[str]]) -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = [stack.pop()]
            while component[-1] != v:
                component.append(stack.pop())
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(modules()):
        if module not in index:
            visit(module)
    assert circles == []


def test_a_layer_violation_is_caught() -> None:
    """The check itself: a core module importing the CLI, or a package of its own layer, is reported."""
    fake = {
        "cosim_validation.monitor.metrics.point_distance": {
            "cosim_validation.cli.main",
            "cosim_validation.monitor.metrics.arrays",
        },
        "cosim_validation.hazards.fault_models": {"cosim_validation.error_injection.injection"},
        "cosim_validation.error_injection.injection": {"cosim_validation.robots.virtual.mujoco_arm"},
    }
    found = upward(fake, layer_table())
    assert len(found) == 2
    assert found[0].startswith(
        "cosim_validation.hazards.fault_models (layer 5) imports cosim_validation.error_injection"
    )
    assert found[1].startswith(
        "cosim_validation.monitor.metrics.point_distance (layer 2) imports cosim_validation.cli.main"
    )


def test_every_package_has_a_line_in_the_tree() -> None:
    """The tree under '## Tree' names every package, at its depth below its parent (two spaces a level)."""
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text()
    tree = text.split("## Tree", 1)[1].split("```", 2)[1]
    shown = {(len(line) - len(line.lstrip()), line.split()[0]) for line in tree.splitlines() if line.strip()}
    packages = sorted(p.parent.relative_to(PACKAGE) for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE)
    missing = [str(p) for p in packages if (2 * len(p.parts), f"{p.name}/") not in shown]
    assert missing == [], "add these packages to the tree of docs/ARCHITECTURE.md"
