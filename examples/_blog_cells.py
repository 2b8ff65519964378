"""The cells of the motivating article, written twice: plain ``nn.Cell`` and ``KwCell``.

f(x, w) = w * sin(x) and f(x, w, y) = w * sin(x) + y, so df/dx = w * cos(x) for both.
"""

from __future__ import annotations

from typing import Any

from mindspore import Tensor, nn, ops

from kwcell import KwCell


def _zero(v: Any) -> Any:
    return ops.zeros_like(v) if isinstance(v, Tensor) else 0


class PlainProduct(nn.Cell):
    """The article's first cell, f = w * sin(x): MindSpore hands bprop the *call* order."""

    def construct(self, x: Tensor, w: Tensor) -> Tensor:
        return w * ops.sin(x)

    def bprop(self, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * dout, ops.sin(x) * dout


class KwProduct(KwCell):
    """The same cell with kwcell."""

    def construct(self, x: Tensor, w: Tensor) -> Tensor:
        return w * ops.sin(x)

    def bprop(self, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * dout, ops.sin(x) * dout


class PlainScaled(nn.Cell):
    """The article's second cell, with defaults, written the classic positional way."""

    def construct(self, x: Tensor, w: Any = 1.0, y: Any = 1.0) -> Any:
        return w * ops.sin(x) + y

    def bprop(self, x: Tensor, w: Any, y: Any, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * dout, _zero(w), _zero(y)


class KwScaled(KwCell):
    """The same cell with kwcell: bprop parameters are matched by name."""

    def construct(self, x: Tensor, w: Any = 1.0, y: Any = 1.0) -> Any:
        return w * ops.sin(x) + y

    def bprop(self, x: Tensor, w: Any = 1.0, y: Any = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": w * ops.cos(x) * dout}


class Outer(nn.Cell):
    """An outer cell that calls the inner one with a keyword (y left to its default)."""

    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, x: Tensor, w: Tensor) -> Any:
        return self.inner(x, w=w)


class SwappedOuter(nn.Cell):
    """An outer cell that calls the inner one with keywords in another order than construct's."""

    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, x: Tensor, w: Tensor) -> Any:
        return self.inner(w=w, x=x)
