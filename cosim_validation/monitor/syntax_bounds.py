"""Bounds on the syntax trees of guards, LTL goals and property expressions.

The three expression languages are parsed by recursive descent and evaluated by recursive walks. An expression
nested thousands of levels deep (``((((...``, ``not not not ...``, ``a + a + ... + a``) would end in a
``RecursionError``, and named guards or definitions that each use the previous one twice would expand to
2**n nodes: a parser counts its nesting with :class:`Nesting`, and :func:`check_tree` bounds the parsed tree.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import NamedTuple

#: Deepest nesting of an expression: parentheses, prefix operators and operands of a chain each count one.
MAX_EXPRESSION_DEPTH = 50
#: Most nodes an expression may hold once its named guards or definitions are expanded.
MAX_EXPRESSION_NODES = 10_000


class TreeSize(NamedTuple):
    """How big a syntax tree is once shared subtrees are expanded."""

    nodes: int
    depth: int


def _children(node: object) -> list[object]:
    out: list[object] = []
    for f in fields(node):  # type: ignore[arg-type]
        value = getattr(node, f.name)
        items = value if isinstance(value, tuple) else (value,)
        out += [item for item in items if is_dataclass(item) and not isinstance(item, type)]
    return out


def tree_size(tree: object) -> TreeSize:
    """Nodes and depth of a tree of frozen dataclasses (children in fields or tuples of fields).

    Walked without recursion, each shared subtree measured once.

    Args:
        tree: The root.
    """
    sizes: dict[int, TreeSize] = {}
    stack: list[tuple[object, bool]] = [(tree, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if children_done:
            measured = [sizes[id(child)] for child in children]
            nodes = 1 + sum(m.nodes for m in measured)
            sizes[id(node)] = TreeSize(nodes, 1 + max((m.depth for m in measured), default=0))
            continue
        stack.append((node, True))
        stack += [(child, False) for child in children if id(child) not in sizes]
    return sizes[id(tree)]


def tree_problem(tree: object) -> str | None:
    """What makes ``tree`` too big to evaluate (nested too deep, too many nodes), or None.

    Args:
        tree: Root of a parsed expression, a tree of frozen dataclasses (see :func:`tree_size`).

    Returns:
        The problem as a message fragment (e.g. ``nested deeper than 50 levels (61); ...``), or None if it fits
        :data:`MAX_EXPRESSION_DEPTH` and :data:`MAX_EXPRESSION_NODES`.
    """
    size = tree_size(tree)
    if size.depth > MAX_EXPRESSION_DEPTH:
        return f"nested deeper than {MAX_EXPRESSION_DEPTH} levels ({size.depth}); split it into named parts"
    if size.nodes > MAX_EXPRESSION_NODES:
        return f"has more than {MAX_EXPRESSION_NODES} terms ({size.nodes}, named parts expanded)"
    return None


class Nesting:
    """A recursive-descent parser's nesting depth, to stop before Python's recursion limit does."""

    def __init__(self) -> None:
        self.depth = 0

    def enter(self) -> bool:
        """One level deeper; False once past :data:`MAX_EXPRESSION_DEPTH` (the parser raises its own error)."""
        self.depth += 1
        return self.depth <= MAX_EXPRESSION_DEPTH

    def leave(self) -> None:
        """One level back."""
        self.depth -= 1

    @staticmethod
    def message() -> str:
        """The parser's error message when :meth:`enter` said False."""
        return f"nested deeper than {MAX_EXPRESSION_DEPTH} levels"
