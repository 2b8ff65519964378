"""Networks for bench/scaling.py: a Dense layer followed by N custom-bprop cells.

``HandStack`` is the classic MindSpore way (positional calls of a positional ``nn.Cell`` with
a bprop); ``KwStack`` is the same network with ``KwCell``s called by keyword, as kwcell users
write it, and ``KwOnceStack`` the same with a ``compile_once=True`` class. The other stacks
price the layers of a graph (see BENCHMARKS.md, "Where the compile time goes"): they are
hand-written ``nn.Cell``s with the shape of kwcell's generated path, so that what MindSpore
charges per parsed function can be measured without kwcell.
"""

from __future__ import annotations

from typing import Any

from mindspore import nn, ops

from bench.cells import HandAct, KwAct, KwActOnce
from kwcell._runtime import graph_zero


class HandStack(nn.Cell):
    """Dense -> N hand-written positional bprop cells, called positionally."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.dense = nn.Dense(16, 16)
        self.acts = nn.CellList([HandAct() for _ in range(n)])

    def construct(self, x):  # type: ignore[no-untyped-def]
        x = self.dense(x)
        for act in self.acts:
            x = act(x, 2.0)
        return x


class KwStack(nn.Cell):
    """Dense -> N KwCells, called with a keyword (what kwcell is for)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.dense = nn.Dense(16, 16)
        self.acts = nn.CellList([KwAct() for _ in range(n)])

    def construct(self, x):  # type: ignore[no-untyped-def]
        x = self.dense(x)
        for act in self.acts:
            x = act(x, alpha=2.0)
        return x


class KwOnceStack(nn.Cell):
    """Dense -> N KwCells of a ``compile_once=True`` class, called with a keyword."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.dense = nn.Dense(16, 16)
        self.acts = nn.CellList([KwActOnce() for _ in range(n)])

    def construct(self, x):  # type: ignore[no-untyped-def]
        x = self.dense(x)
        for act in self.acts:
            x = act(x, alpha=2.0)
        return x


class KwStackPositional(KwStack):
    """The same KwCells called positionally: isolates MindSpore's cost of a keyword call."""

    def construct(self, x):  # type: ignore[no-untyped-def]
        x = self.dense(x)
        for act in self.acts:
            x = act(x, 2.0)
        return x


class HandDispatch(nn.Cell):
    """By hand, the least any keyword-capable design needs: a cell whose construct has the
    user's signature (MindSpore binds keywords and defaults there) and calls a positional
    bprop cell, which MindSpore requires to be called with every argument, positionally."""

    core: nn.Cell

    def __init__(self) -> None:
        super().__init__()
        object.__setattr__(self, "core", HandAct())  # not a child, as kwcell's core

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return self.core(x, alpha)


class HandDispatchOnce(HandDispatch):
    """``HandDispatch`` with one graph for all instances, by the MindSpore cell reuse that
    ``compile_once`` uses (a ``lazy_inline_`` key, inlined afterwards), keyed by a constant:
    the least a compile-once network costs MindSpore, without kwcell."""

    no_inline = False

    @property
    def cell_init_args(self) -> str:
        return "lazy_inline_bench_hand_dispatch_once"


class _LayeredCore(nn.Cell):
    owner: Any

    def construct(self, x, alpha):  # type: ignore[no-untyped-def]
        return self.owner.user_construct(x, alpha)

    def bprop(self, x, alpha, out, dout):  # type: ignore[no-untyped-def]
        return self.owner.user_bprop(x, alpha, out, dout)


class HandLayered(nn.Cell):
    """By hand, kwcell 0.1's generated path: dispatcher -> core.construct -> the user's
    construct, and core.bprop -> the user's bprop (five parsed functions per cell)."""

    core: nn.Cell

    def __init__(self) -> None:
        super().__init__()
        core = _LayeredCore()
        object.__setattr__(core, "owner", self)
        object.__setattr__(self, "core", core)

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return self.core(x, alpha)

    def user_construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return ops.tanh(alpha * x)

    def user_bprop(self, x, alpha, out, dout):  # type: ignore[no-untyped-def]
        return dout * alpha / (1.0 + alpha * alpha * x * x), 0


class HandLayeredZero(HandLayered):
    """The same, with the gradient placeholder kwcell writes for an input a dict return leaves
    out (``graph_zero(alpha)``: ``zeros_like`` for a Tensor, ``0`` otherwise, dispatched on the
    input's type by MindSpore) instead of a literal 0."""

    def user_bprop(self, x, alpha, out, dout):  # type: ignore[no-untyped-def]
        return dout * alpha / (1.0 + alpha * alpha * x * x), graph_zero(alpha)


class _Stack(nn.Cell):
    def __init__(self, cls: type[nn.Cell], n: int) -> None:
        super().__init__()
        self.dense = nn.Dense(16, 16)
        self.acts = nn.CellList([cls() for _ in range(n)])


class HandDispatchStack(_Stack):
    """Dense -> N ``HandDispatch`` cells, called with a keyword (the floor for keyword calls)."""

    def __init__(self, n: int) -> None:
        super().__init__(HandDispatch, n)

    def construct(self, x):  # type: ignore[no-untyped-def]
        x = self.dense(x)
        for act in self.acts:
            x = act(x, alpha=2.0)
        return x


class HandDispatchStackPositional(HandDispatchStack):
    def construct(self, x):  # type: ignore[no-untyped-def]
        x = self.dense(x)
        for act in self.acts:
            x = act(x, 2.0)
        return x


class HandLayeredStack(_Stack):
    """Dense -> N ``HandLayered`` cells, called with a keyword."""

    def __init__(self, n: int) -> None:
        super().__init__(HandLayered, n)

    def construct(self, x):  # type: ignore[no-untyped-def]
        x = self.dense(x)
        for act in self.acts:
            x = act(x, alpha=2.0)
        return x


class HandLayeredZeroStack(_Stack):
    """Dense -> N ``HandLayeredZero`` cells, called with a keyword."""

    def __init__(self, n: int) -> None:
        super().__init__(HandLayeredZero, n)

    def construct(self, x):  # type: ignore[no-untyped-def]
        x = self.dense(x)
        for act in self.acts:
            x = act(x, alpha=2.0)
        return x


class HandDispatchOnceStack(_Stack):
    """Dense -> N ``HandDispatchOnce`` cells (one shared graph), called with a keyword."""

    def __init__(self, n: int) -> None:
        super().__init__(HandDispatchOnce, n)

    def construct(self, x):  # type: ignore[no-untyped-def]
        x = self.dense(x)
        for act in self.acts:
            x = act(x, alpha=2.0)
        return x


class HandDispatchOnceStackPositional(HandDispatchOnceStack):
    """The same, called positionally: what MindSpore charges for the keyword calls."""

    def construct(self, x):  # type: ignore[no-untyped-def]
        x = self.dense(x)
        for act in self.acts:
            x = act(x, 2.0)
        return x
