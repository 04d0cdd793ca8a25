"""Every public function and method of the package that takes parameters documents them in an ``Args:`` section
(Google style, the project's convention: shape, frame and unit where arrays are passed). ruff's D417 checks that
a section names every parameter; this test checks that the section is there."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "cosim_validation"


def _undocumented(tree: ast.AST, path: Path, public: bool = True) -> list[str]:
    """``file:line name`` of each public function below ``tree`` with parameters and no ``Args:`` section."""
    found = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef):
            found += _undocumented(node, path, public and not node.name.startswith("_"))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and public and not node.name.startswith("_"):
            params = [a.arg for a in node.args.args + node.args.kwonlyargs if a.arg not in ("self", "cls")]
            prop = any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)
            if params and not prop and "Args:" not in (ast.get_docstring(node) or ""):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}")
    return found


def test_public_functions_document_their_arguments() -> None:
    missing = [
        entry
        for path in sorted(PACKAGE.rglob("*.py"))
        for entry in _undocumented(ast.parse(path.read_text(encoding="utf-8")), path)
    ]
    assert not missing, f"{len(missing)} public functions without an Args: section: {missing}"


def test_the_check_finds_a_function_without_args() -> None:
    source = 'def f(x):\n    """Do."""\n\n\ndef _g(x):\n    pass\n\n\nclass C:\n    def m(self, y):\n        pass\n'
    assert [e.split()[1] for e in _undocumented(ast.parse(source), PACKAGE / "x.py")] == ["f", "m"]
