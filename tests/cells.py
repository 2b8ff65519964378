"""Cells shared by the test matrix (a real module: GRAPH_MODE parses source files).

Three argument kinds, each with a KwCell, the same KwCell with ``@ms.jit`` on construct,
and outer cells that call it with keywords from their own construct.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mindspore as ms
from mindspore import Tensor, nn, ops

from kwcell import KwCell

# --- Tensor inputs: f = w * sin(x) + y --------------------------------------------------


class Affine(KwCell):
    def construct(self, x: Tensor, w: Any = 2.0, y: Any = 0.5) -> Any:
        return w * ops.sin(x) + y

    def bprop(self, x: Tensor, w: Any = 2.0, y: Any = 0.5, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": w * ops.cos(x) * dout, "w": (ops.sin(x) * dout).sum(), "y": dout.sum()}


class AffineJit(KwCell):
    @ms.jit
    def construct(self, x: Tensor, w: Any = 2.0, y: Any = 0.5) -> Any:
        return w * ops.sin(x) + y

    def bprop(self, x: Tensor, w: Any = 2.0, y: Any = 0.5, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": w * ops.cos(x) * dout, "w": (ops.sin(x) * dout).sum(), "y": dout.sum()}


class AffineOuter(nn.Cell):
    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, x: Tensor, w: Tensor, y: Tensor) -> Any:
        return self.inner(x, y=y, w=w)


# --- Python scalars: f = (-1 if flip else 1) * scale * x ** power ------------------------


class Power(KwCell):
    def construct(self, x: Tensor, scale: float = 2.0, power: int = 2, flip: bool = False) -> Any:
        y = scale * ops.pow(x, power)
        if flip:
            return -y
        return y

    def bprop(self, out: Tensor, x: Tensor, dout: Tensor, **kwargs: Any) -> Any:
        sign = -1.0 if kwargs["flip"] else 1.0
        return {"x": sign * kwargs["scale"] * kwargs["power"] * ops.pow(x, kwargs["power"] - 1) * dout}


class PowerJit(KwCell):
    @ms.jit
    def construct(self, x: Tensor, scale: float = 2.0, power: int = 2, flip: bool = False) -> Any:
        y = scale * ops.pow(x, power)
        if flip:
            return -y
        return y

    def bprop(self, x: Tensor, scale: float, power: int, flip: bool, out: Tensor, dout: Tensor) -> Any:
        sign = -1.0 if flip else 1.0
        return (sign * scale * power * ops.pow(x, power - 1) * dout, None, None, None)


class PowerOuter(nn.Cell):
    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, x: Tensor) -> Any:
        return self.inner(x, flip=True, power=3, scale=0.5)


# --- None default: f = sin(x) (+ bias) ---------------------------------------------------


class Biased(KwCell):
    def construct(self, x: Tensor, bias: Tensor | None = None) -> Any:
        if bias is None:
            return ops.sin(x)
        return ops.sin(x) + bias

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor, bias: Tensor | None = None) -> Any:
        if bias is None:
            return {"x": ops.cos(x) * dout}
        return {"x": ops.cos(x) * dout, "bias": dout}


class BiasedJit(KwCell):
    @ms.jit
    def construct(self, x: Tensor, bias: Tensor | None = None) -> Any:
        if bias is None:
            return ops.sin(x)
        return ops.sin(x) + bias

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor, bias: Tensor | None = None) -> Any:
        if bias is None:
            return ops.cos(x) * dout
        return ops.cos(x) * dout, dout


class BiasedOuter(nn.Cell):
    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, x: Tensor, bias: Tensor) -> Any:
        return self.inner(bias=bias, x=x)


# --- @ms.jit train steps that call the cells with keywords -------------------------------


def affine_steps(net: nn.Cell, outer: nn.Cell) -> dict[str, Callable[..., Any]]:
    @ms.jit
    def positional(x: Tensor, w: Tensor, y: Tensor) -> Any:
        return net(x, w, y)

    @ms.jit
    def keywords(x: Tensor, w: Tensor, y: Tensor) -> Any:
        return net(x, y=y, w=w)

    @ms.jit
    def defaults(x: Tensor) -> Any:
        return net(x)

    @ms.jit
    def outer_call(x: Tensor, w: Tensor, y: Tensor) -> Any:
        return outer(x, w, y)

    return {"positional": positional, "keywords": keywords, "defaults": defaults, "outer": outer_call}


def power_steps(net: nn.Cell, outer: nn.Cell) -> dict[str, Callable[..., Any]]:
    @ms.jit
    def positional(x: Tensor) -> Any:
        return net(x, 0.5, 3, True)

    @ms.jit
    def keywords(x: Tensor) -> Any:
        return net(x, flip=True, power=3, scale=0.5)

    @ms.jit
    def defaults(x: Tensor) -> Any:
        return net(x)

    @ms.jit
    def outer_call(x: Tensor) -> Any:
        return outer(x)

    return {"positional": positional, "keywords": keywords, "defaults": defaults, "outer": outer_call}


def biased_steps(net: nn.Cell, outer: nn.Cell) -> dict[str, Callable[..., Any]]:
    @ms.jit
    def positional(x: Tensor, bias: Tensor) -> Any:
        return net(x, bias)

    @ms.jit
    def keywords(x: Tensor, bias: Tensor) -> Any:
        return net(bias=bias, x=x)

    @ms.jit
    def defaults(x: Tensor) -> Any:
        return net(x)

    @ms.jit
    def outer_call(x: Tensor, bias: Tensor) -> Any:
        return outer(x, bias)

    return {"positional": positional, "keywords": keywords, "defaults": defaults, "outer": outer_call}
