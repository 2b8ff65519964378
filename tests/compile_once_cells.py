"""Cells for tests/test_compile_once.py (GRAPH_MODE needs them in a real source file).

Each compile-once class has a twin with ``compile_once=False`` (the same code, compiled per
instance): the oracle the tests compare with.
"""

from __future__ import annotations

import functools
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
    """construct reads its attribute through a method and a property (and a frozen Parameter:
    instances without one never share a graph)."""

    def __init__(self, s: float = 1.0) -> None:
        super().__init__()
        self.s = s
        self.offset = 0.5
        self.bias = Parameter(_const(0.0, (WIDTH,)), requires_grad=False)

    @property
    def scale(self) -> Any:
        return self.s * 2.0

    def shift(self, x: Any) -> Any:
        return x + self.offset

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return self.shift(ops.sin(alpha * self.scale * x)) + self.bias

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
        self.bias = Parameter(_const(0.0, (WIDTH,)), requires_grad=False)

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return ops.tanh(alpha * getattr(self, "s") * x) + self.bias  # noqa: B009 - on purpose

    def bprop(self, x, alpha=1.0, *, out, dout):  # type: ignore[no-untyped-def]
        t = ops.tanh(alpha * self.s * x)
        return {"x": dout * alpha * self.s * (1 - t * t)}


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
        self.bias = Parameter(_const(0.0, (WIDTH,)), requires_grad=False)

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return ops.tanh(alpha * x) * self.config.factor + self.bias

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
        self.alpha = _const(0.75, (WIDTH,))

    def construct(self, x):  # type: ignore[no-untyped-def]
        x = self.dense(x)
        for i, cell in enumerate(self.layers):
            how = self.calls[i]
            if how == "keyword":
                x = cell(x, alpha=0.75)
            elif how == "positional":
                x = cell(x, 0.75)
            elif how == "tensor":  # every input a Tensor: the calls a shared graph serves
                x = cell(x, alpha=self.alpha)
            elif how == "tensor_positional":
                x = cell(x, self.alpha)
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


class TwoValues(nn.Cell):
    """Two cells called with other values for alpha, by position and by keyword."""

    def __init__(self, cells: Sequence[nn.Cell]) -> None:
        super().__init__()
        self.layers = nn.CellList(cells)

    def construct(self, x):  # type: ignore[no-untyped-def]
        y = self.layers[0](x, 0.5)
        z = self.layers[1](y, alpha=0.25)
        return (z * z).sum()


class TwoSites(nn.Cell):
    """One cell called at two call sites with other Python values (and one omitting it)."""

    def __init__(self, cell: nn.Cell) -> None:
        super().__init__()
        self.act = cell

    def construct(self, x):  # type: ignore[no-untyped-def]
        y = self.act(x, 0.5)
        z = self.act(y, alpha=0.25)
        return (self.act(z) * z).sum()


class TwoTensors(nn.Cell):
    """Two cells called with other Tensor values for alpha (a shared graph's inputs)."""

    def __init__(self, cells: Sequence[nn.Cell]) -> None:
        super().__init__()
        self.layers = nn.CellList(cells)
        self.half = _const(0.5, (WIDTH,))
        self.quarter = _const(0.25, (WIDTH,))

    def construct(self, x):  # type: ignore[no-untyped-def]
        y = self.layers[0](x, self.half)
        z = self.layers[1](y, alpha=self.quarter)
        return (z * z).sum()


class Mixed(nn.Cell):
    """Cells called with a Tensor alpha at one site and a Python alpha at another."""

    def __init__(self, cells: Sequence[nn.Cell]) -> None:
        super().__init__()
        self.layers = nn.CellList(cells)
        self.half = _const(0.5, (WIDTH,))

    def construct(self, x):  # type: ignore[no-untyped-def]
        y = self.layers[0](x, alpha=self.half)
        z = self.layers[1](y, alpha=0.25)
        w = self.layers[0](z, 2.0)
        return (w * z).sum()


class _Doubled:
    """A user's descriptor: the value is computed when it is read."""

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self if obj is None else obj.s * 2.0


class Computed(KwCell, compile_once=True):
    """Reads its scale through a functools.cached_property."""

    def __init__(self, s: float = 1.0) -> None:
        super().__init__()
        self.s = s
        self.bias = Parameter(_const(0.0, (WIDTH,)), requires_grad=False)

    @functools.cached_property
    def scale(self) -> float:
        return self.s * 2.0

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return self.scale * ops.sin(alpha * x) + self.bias

    def bprop(self, x, alpha=1.0, *, out, dout):  # type: ignore[no-untyped-def]
        return {"x": dout * self.scale * alpha * ops.cos(alpha * x)}


class ComputedOff(Computed, compile_once=False):
    pass


class Described(Computed):
    """The same scale through a descriptor of the user's."""

    scale = _Doubled()


class DescribedOff(Described, compile_once=False):
    pass


class Forwarded(Computed):
    """The same scale through __getattr__."""

    scale = None  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Any:
        if name == "factor":
            return self.__dict__["s"] * 2.0
        return super().__getattr__(name)  # type: ignore[misc]

    def construct(self, x, alpha=1.0):  # type: ignore[no-untyped-def]
        return self.factor * ops.sin(alpha * x) + self.bias

    def bprop(self, x, alpha=1.0, *, out, dout):  # type: ignore[no-untyped-def]
        return {"x": dout * self.factor * alpha * ops.cos(alpha * x)}


class ForwardedOff(Forwarded, compile_once=False):
    pass


class Holder(KwCell, compile_once=True):
    """A sub-cell whose scale is computed (a cached_property of its class)."""

    def __init__(self, s: float = 1.0) -> None:
        super().__init__()
        self.inner = ComputedOff(s)

    def construct(self, x):  # type: ignore[no-untyped-def]
        return self.inner(x)


class HolderOff(Holder, compile_once=False):
    pass


OFF.update({Computed: ComputedOff, Described: DescribedOff, Forwarded: ForwardedOff, Holder: HolderOff})
