"""Streaming versions of the temporal operators (online monitor).

A node turns the stream of its operands' values into its own stream, one element per sample, in
sample order: ``(t_s, stage, lo, hi)``. ``pull(final)`` returns the elements that became known since
the last call; ``final`` says the trace has ended (windows are then truncated, as offline).
Bounded operators keep only their time window; unbounded ones nested below another operator
buffer the trace (documented: no shipped property needs it). The comparisons and the numba kernels
are those of the offline evaluation, so both give identical values.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from cosim_validation.monitor.properties.language import formula as f
from cosim_validation.monitor.properties.offline import kernels as k

El = tuple[float, int, float, float]  # (t_s, stage, lo, hi)
INF = math.inf


class Node:
    """A stream of robustness bounds."""

    def pull(self, final: bool) -> list[El]:
        """Elements that became known since the last call.

        Args:
            final: Whether the trace has ended (nothing more will come; windows are then truncated).
        """
        raise NotImplementedError


class Leaf(Node):
    """Values of an atom, fed by the monitor sample by sample."""

    def __init__(self) -> None:
        self.buf: list[El] = []

    def pull(self, final: bool) -> list[El]:
        """The values fed since the last call.

        Args:
            final: Whether the trace has ended (not used: a leaf gives what it was fed).
        """
        out, self.buf = self.buf, []
        return out


class NotNode(Node):
    """Negation: [lo, hi] -> [-hi, -lo]."""

    def __init__(self, child: Node) -> None:
        self.child = child

    def pull(self, final: bool) -> list[El]:
        """The operand's new elements, negated.

        Args:
            final: Whether the trace has ended (passed on to the operand).
        """
        return [(t, s, -hi, -lo) for t, s, lo, hi in self.child.pull(final)]


class NaryNode(Node):
    """And (min) / Or (max) of operands that may become known at different times."""

    def __init__(self, children: list[Node], is_min: bool) -> None:
        self.children = children
        self.queues: list[deque[El]] = [deque() for _ in children]
        self.pick = min if is_min else max

    def pull(self, final: bool) -> list[El]:
        """The min (or max) of the operands at every sample all of them have reached.

        Args:
            final: Whether the trace has ended (passed on to the operands).
        """
        for queue, child in zip(self.queues, self.children, strict=True):
            queue.extend(child.pull(final))
        out: list[El] = []
        while all(self.queues):
            heads = [q.popleft() for q in self.queues]
            lo, hi = heads[0][2], heads[0][3]
            for head in heads[1:]:
                lo, hi = self.pick(lo, head[2]), self.pick(hi, head[3])
            out.append((heads[0][0], heads[0][1], lo, hi))
        return out


class NextNode(Node):
    """Value at the next sample; -inf at the last one."""

    def __init__(self, child: Node) -> None:
        self.child = child
        self.prev: El | None = None

    def pull(self, final: bool) -> list[El]:
        """Each sample with the next sample's value, once that is known; -inf at the last one when ``final``.

        Args:
            final: Whether the trace has ended.
        """
        out: list[El] = []
        for el in self.child.pull(final):
            if self.prev is not None:
                out.append((self.prev[0], self.prev[1], el[2], el[3]))
            self.prev = el
        if final and self.prev is not None:
            out.append((self.prev[0], self.prev[1], -INF, -INF))
            self.prev = None
        return out


class WindowNode(Node):
    """always[a, b] (min) / eventually[a, b] (max) with monotone deques: O(1) amortized per sample."""

    def __init__(self, child: Node, window: tuple[float, float], is_min: bool) -> None:
        self.child = child
        self.a, self.b = window
        self.is_min = is_min
        self.buf: deque[El] = deque()  # elements from index `base` on
        self.base = 0  # absolute index of buf[0] (= the next output)
        self.right = 0  # next absolute index to enter the deques
        self.left = 0  # absolute index of the current window start
        self.dq: tuple[deque[tuple[int, float]], deque[tuple[int, float]]] = (deque(), deque())

    def _push(self, dq: deque[tuple[int, float]], index: int, value: float) -> None:
        if self.is_min:
            while dq and dq[-1][1] >= value:
                dq.pop()
        else:
            while dq and dq[-1][1] <= value:
                dq.pop()
        dq.append((index, value))

    def pull(self, final: bool) -> list[El]:
        """The samples whose window's end is known (every sample when ``final``, windows truncated).

        Args:
            final: Whether the trace has ended.
        """
        self.buf.extend(self.child.pull(final))
        out: list[El] = []
        empty = INF if self.is_min else -INF
        while self.buf:
            t_p, stage_p = self.buf[0][0], self.buf[0][1]
            count = self.base + len(self.buf)
            while self.right < count and self.buf[self.right - self.base][0] <= t_p + self.b:
                el = self.buf[self.right - self.base]
                self._push(self.dq[0], self.right, el[2])
                self._push(self.dq[1], self.right, el[3])
                self.right += 1
            if self.right == count and not final:
                break  # the window's end is not known yet
            self.left = max(self.left, self.base)
            while self.left < self.right and self.buf[self.left - self.base][0] < t_p + self.a:
                self.left += 1
            for dq in self.dq:
                while dq and dq[0][0] < self.left:
                    dq.popleft()
            lo = self.dq[0][0][1] if self.dq[0] else empty
            hi = self.dq[1][0][1] if self.dq[1] else empty
            out.append((t_p, stage_p, lo, hi))
            self.buf.popleft()
            self.base += 1
        return out


class UnboundedNode(Node):
    """always / eventually / until without a window, nested below another operator: buffers the trace."""

    def __init__(self, node: f.Formula, children: list[Node]) -> None:
        self.node = node
        self.children = children
        self.bufs: list[list[El]] = [[] for _ in children]

    def pull(self, final: bool) -> list[El]:
        """Nothing until ``final``; then every buffered sample, over the whole trace.

        Args:
            final: Whether the trace has ended.
        """
        for buf, child in zip(self.bufs, self.children, strict=True):
            buf.extend(child.pull(final))
        if not final or not self.bufs[0]:
            return []
        arrays = [np.array(buf, dtype=np.float64).reshape(-1, 4) for buf in self.bufs]
        t_s, stage = arrays[0][:, 0], arrays[0][:, 1]
        bounds = []
        for col in (2, 3):
            if isinstance(self.node, f.Until):
                bounds.append(k.until_unbounded(arrays[0][:, col], arrays[1][:, col]))
            else:
                bounds.append(k.suffix_extreme(arrays[0][:, col], isinstance(self.node, f.Always)))
        self.bufs = [[] for _ in self.children]
        return [(float(t_s[i]), int(stage[i]), float(bounds[0][i]), float(bounds[1][i])) for i in range(t_s.size)]


class UntilWindowNode(Node):
    """left until[a, b] right: buffers the window, O(window) per sample with the offline kernel."""

    def __init__(self, left: Node, right: Node, window: tuple[float, float]) -> None:
        self.children = (left, right)
        self.a, self.b = window
        self.bufs: tuple[deque[El], deque[El]] = (deque(), deque())

    def pull(self, final: bool) -> list[El]:
        """The samples whose window's end is known (every sample when ``final``, windows truncated).

        Args:
            final: Whether the trace has ended.
        """
        for buf, child in zip(self.bufs, self.children, strict=True):
            buf.extend(child.pull(final))
        out: list[El] = []
        while self.bufs[0] and self.bufs[1]:
            n = min(len(self.bufs[0]), len(self.bufs[1]))
            t_p = self.bufs[0][0][0]
            if not final and self.bufs[0][n - 1][0] <= t_p + self.b:
                break  # the window's end is not known yet
            left = np.array([self.bufs[0][i] for i in range(n)], dtype=np.float64)
            right = np.array([self.bufs[1][i] for i in range(n)], dtype=np.float64)
            t_s = np.ascontiguousarray(left[:, 0])
            lo, hi = (k.until_at(left[:, c].copy(), right[:, c].copy(), t_s, 0, n, self.a, self.b) for c in (2, 3))
            out.append((t_p, self.bufs[0][0][1], float(lo), float(hi)))
            self.bufs[0].popleft()
            self.bufs[1].popleft()
        return out


def build(node: f.Formula, leaves: list[Leaf]) -> Node:
    """The stream of ``node``; its atoms' leaves are appended to ``leaves`` in depth-first order.

    Args:
        node: A compiled formula.
        leaves: The list the new leaves are appended to (the order of :func:`formula.atoms`), for the monitor
            to feed the atoms' values into.
    """
    if not node.children():
        leaf = Leaf()
        leaves.append(leaf)
        return leaf
    kids = [build(c, leaves) for c in node.children()]
    if isinstance(node, f.Not):
        return NotNode(kids[0])
    if isinstance(node, (f.And, f.Or)):
        return NaryNode(kids, isinstance(node, f.And))
    if isinstance(node, f.Next):
        return NextNode(kids[0])
    if isinstance(node, f.Until):
        return UnboundedNode(node, kids) if node.window is None else UntilWindowNode(kids[0], kids[1], node.window)
    assert isinstance(node, (f.Always, f.Eventually))
    if node.window is None:
        return UnboundedNode(node, kids)
    return WindowNode(kids[0], node.window, isinstance(node, f.Always))
