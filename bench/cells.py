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


class Kw(KwCell):
    """The same math and bprop, with defaults and a bprop matched by name."""

    def construct(self, x, w=1.0, y=0.0):  # type: ignore[no-untyped-def]
        return w * ops.sin(x) + y

    def bprop(self, x, w, y, *, out, dout):  # type: ignore[no-untyped-def]
        return {"x": w * ops.cos(x) * dout, "w": ops.sin(x) * dout, "y": dout}
