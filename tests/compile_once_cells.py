"""Cells for tests/test_compile_once.py (GRAPH_MODE needs them in a real source file).

Each compile-once class has a twin with ``compile_once=False`` (the same code, compiled per
instance): the oracle the tests compare with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mindspore import Parameter, Tensor, nn, ops

from kwcell import KwCell

WIDTH = 4


def _const(value: float, shape: tuple[int, ...]) -> Tensor:
    return Tensor(np.full(shape, value, np.float32))


def _dense(seed: int) -> nn.Dense:
    dense: Any = nn.Dense(WIDTH, WIDTH)
    rng = np.random.default_rng(seed)
    dense.weight.set_data(Tensor(rng.uniform(-1, 1, (WIDTH, WIDTH)).astype(np.float32)))
    dense.bias.set_data(Tensor(rng.uniform(-0.5, 0.5, (WIDTH,)).astype(np.float32)))
    return dense  # type: ignore[no-any-return]


class Act(KwCell, compile_once=True):
    """A surrogate activation: the forward reads an attribute and a frozen Parameter, the
    (straight-through) bprop reads only the attribute."""

    def __init__(self, s: float = 1.0, gain: float = 1.0) -> None:
        super().__init__()
        self.s = s
        self.gain = Parameter(_const(gain, (WIDTH,)), requires_grad=False)

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return ops.tanh(alpha * self.s * x) * self.gain

    def bprop(self, x, alpha=1.0, *, out, dout):  # type: ignore[no-untyped-def]
        t = ops.tanh(alpha * self.s * x)
        return {"x": dout * alpha * self.s * (1 - t * t)}


class ActOff(Act, compile_once=False):
    """Act compiled per instance."""


class GainAct(KwCell, compile_once=True):
    """Its bprop reads a Parameter: MindSpore would give every instance the first one's."""

    def __init__(self, s: float = 1.0, gain: float = 1.0) -> None:
        super().__init__()
        self.s = s
        self.gain = Parameter(_const(gain, (WIDTH,)), requires_grad=False)

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return ops.tanh(alpha * self.s * x) * self.gain

    def bprop(self, x, alpha=1.0, *, out, dout):  # type: ignore[no-untyped-def]
        t = ops.tanh(alpha * self.s * x)
        return {"x": dout * self.gain * alpha * self.s * (1 - t * t)}


class GainActOff(GainAct, compile_once=False):
    pass


class Helped(KwCell, compile_once=True):
    """construct reads its attribute through a method and a property."""

    def __init__(self, s: float = 1.0) -> None:
        super().__init__()
        self.s = s
        self.offset = 0.5

    @property
    def scale(self) -> Any:
        return self.s * 2.0

    def shift(self, x: Any) -> Any:
        return x + self.offset

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return self.shift(ops.sin(alpha * self.scale * x))

    def bprop(self, x, alpha=1.0, *, out, dout):  # type: ignore[no-untyped-def]
        return {"x": dout * alpha * self.scale * ops.cos(alpha * self.scale * x)}


class HelpedOff(Helped, compile_once=False):
    pass


class Block(KwCell, compile_once=True):
    """A layer without a bprop of its own around a KwCell that has one (decoder-layer shape):
    its Dense weights train."""

    def __init__(self, s: float = 1.0, gain: float = 1.0, act: Any = Act, seed: int = 0) -> None:
        super().__init__()
        self.dense = _dense(seed)
        self.act = act(s, gain)
        self.alpha = 0.5

    def construct(self, x):  # type: ignore[no-untyped-def]
        return self.act(self.dense(x), alpha=self.alpha)


class BlockOff(Block, compile_once=False):
    pass


class Dynamic(KwCell, compile_once=True):
    """Reads an attribute by a name computed at run time: keyed on the whole instance."""

    def __init__(self, s: float = 1.0) -> None:
        super().__init__()
        self.s = s
        self.name = "s"

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return ops.tanh(alpha * getattr(self, "s") * x)  # noqa: B009 - on purpose

    def bprop(self, x, alpha=1.0, *, out, dout):  # type: ignore[no-untyped-def]
        return {"x": dout * alpha * self.s * (1 - out * out)}


class DynamicOff(Dynamic, compile_once=False):
    pass


class Opaque:
    """A value kwcell cannot key on."""

    factor = 3.0


class Unkeyable(KwCell, compile_once=True):
    """Reads an attribute whose value kwcell cannot fingerprint: compiled per instance."""

    def __init__(self) -> None:
        super().__init__()
        self.config = Opaque()

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return ops.tanh(alpha * x) * self.config.factor

    def bprop(self, x, alpha=1.0, *, out, dout):  # type: ignore[no-untyped-def]
        return {"x": dout * alpha * self.config.factor * (1 - ops.tanh(alpha * x) ** 2)}


OFF: dict[type[nn.Cell], type[nn.Cell]] = {
    Act: ActOff,
    GainAct: GainActOff,
    Helped: HelpedOff,
    Block: BlockOff,
    Dynamic: DynamicOff,
}


class Stack(nn.Cell):
    """A Dense layer, then the given cells, each called as ``calls`` says."""

    def __init__(self, cells: Sequence[nn.Cell], calls: list[str], seed: int = 1) -> None:
        super().__init__()
        self.dense = _dense(seed)
        self.layers = nn.CellList(cells)
        self.calls = tuple(calls)

    def construct(self, x):  # type: ignore[no-untyped-def]
        x = self.dense(x)
        for i, cell in enumerate(self.layers):
            how = self.calls[i]
            if how == "keyword":
                x = cell(x, alpha=0.75)
            elif how == "positional":
                x = cell(x, 0.75)
            else:  # "plain": no alpha (the cell has none, or its default)
                x = cell(x)
        return (x * x).sum()


class Plain(KwCell, compile_once=True):
    """No Parameter anywhere (an activation, as in bench/scaling.py)."""

    def __init__(self, s: float = 1.0) -> None:
        super().__init__()
        self.s = s

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return ops.tanh(alpha * self.s * x)

    def bprop(self, x, alpha=1.0, *, out, dout):  # type: ignore[no-untyped-def]
        return {"x": dout * alpha * self.s * (1 - out * out)}


class PlainOff(Plain, compile_once=False):
    pass


OFF[Plain] = PlainOff
