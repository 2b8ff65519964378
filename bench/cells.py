"""Cells the benchmarks compare: a hand-written positional nn.Cell and the same math as a KwCell."""

from __future__ import annotations

from mindspore import nn, ops

from kwcell import KwCell


class Hand(nn.Cell):
    """The classic MindSpore way: positional construct and bprop."""

    def construct(self, x, w, y):  # type: ignore[no-untyped-def]
        return w * ops.sin(x) + y

    def bprop(self, x, w, y, out, dout):  # type: ignore[no-untyped-def]
        return w * ops.cos(x) * dout, ops.sin(x) * dout, dout


class HandFloor(nn.Cell):
    """The hand-written keyword floor for ``Kw``: a cell with Kw's signature (MindSpore binds
    keywords and fills defaults there) calling the positional bprop cell ``Hand``, which
    MindSpore requires to be called with every argument, positionally. The least any design
    needs that lets a bprop cell take keywords, written without kwcell."""

    core: nn.Cell

    def __init__(self) -> None:
        super().__init__()
        object.__setattr__(self, "core", Hand())  # not a child, as kwcell's core

    def construct(self, x, w=1.0, y=0.0):  # type: ignore[no-untyped-def]
        return self.core(x, w, y)


class Kw(KwCell):
    """The same math and bprop, with defaults and a bprop matched by name."""

    def construct(self, x, w=1.0, y=0.0):  # type: ignore[no-untyped-def]
        return w * ops.sin(x) + y

    def bprop(self, x, w, y, *, out, dout):  # type: ignore[no-untyped-def]
        return {"x": w * ops.cos(x) * dout, "w": ops.sin(x) * dout, "y": dout}


class HandAct(nn.Cell):
    """A surrogate-gradient activation, hand-written positional."""

    def construct(self, x, alpha):  # type: ignore[no-untyped-def]
        return ops.tanh(alpha * x)

    def bprop(self, x, alpha, out, dout):  # type: ignore[no-untyped-def]
        return dout * alpha / (1.0 + alpha * alpha * x * x), 0


class KwAct(KwCell):
    """The same activation as a KwCell, called with a keyword."""

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return ops.tanh(alpha * x)

    def bprop(self, x, alpha=1.0, *, out, dout):  # type: ignore[no-untyped-def]
        return {"x": dout * alpha / (1.0 + alpha * alpha * x * x)}


class KwActOnce(KwAct, compile_once=True):
    """The same KwCell, compiled once per class (one graph for all its instances)."""


class HandMLP(nn.Cell):
    """A small network around the activation: what a custom bprop usually sits in."""

    def __init__(self) -> None:
        super().__init__()
        self.dense1, self.act, self.dense2 = nn.Dense(16, 32), HandAct(), nn.Dense(32, 1)

    def construct(self, x):  # type: ignore[no-untyped-def]
        return self.dense2(self.act(self.dense1(x), 2.0))


class KwMLP(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.dense1, self.act, self.dense2 = nn.Dense(16, 32), KwAct(), nn.Dense(32, 1)

    def construct(self, x):  # type: ignore[no-untyped-def]
        return self.dense2(self.act(self.dense1(x), alpha=2.0))
