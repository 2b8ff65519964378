"""A correct kwcell user module: ``mypy --strict`` with the kwcell plugin reports nothing."""

from __future__ import annotations

from typing import Final

import mindspore as ms
import numpy as np
from mindspore import ops

from kwcell import KwCell

SCALE: Final = 2.0


class Scaled(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0, y: float = 1.0) -> ms.Tensor:
        return w * ops.sin(x) + y

    def bprop(
        self, x: ms.Tensor, w: float = 1.0, y: float = 1.0, *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return w * ops.cos(x) * dout


class Classic(KwCell):
    def construct(self, x: ms.Tensor, y: ms.Tensor) -> ms.Tensor:
        return x * y

    def bprop(
        self, x: ms.Tensor, y: ms.Tensor, out: ms.Tensor, dout: ms.Tensor
    ) -> tuple[ms.Tensor, ms.Tensor]:
        return y * dout, x * dout


class ByNameAnyOrder(KwCell):
    def construct(self, x: ms.Tensor, *, scale: float = SCALE, shift: float = 0.0) -> ms.Tensor:
        return x * scale + shift

    def bprop(
        self, dout: ms.Tensor, x: ms.Tensor, out: ms.Tensor, scale: float = 2.0, **rest: object
    ) -> dict[str, ms.Tensor]:
        return {"x": dout * scale}


class StarArgs(KwCell):
    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return ops.sin(x)

    def bprop(self, *args: ms.Tensor) -> ms.Tensor:
        return ops.cos(args[0]) * args[2]


class NoBprop(KwCell):
    def construct(self, x: ms.Tensor, n: int = 2) -> ms.Tensor:
        return x * n


class Child(Scaled):
    # kwcell removes bprop from the class at runtime, so a narrower override is fine;
    # mypy's own override check does not know that.
    def bprop(  # type: ignore[override]  # pyright: ignore[reportIncompatibleMethodOverride]
        self, x: ms.Tensor, *, out: ms.Tensor, dout: ms.Tensor, **kwargs: object
    ) -> ms.Tensor:
        return ops.cos(x) * dout


x = ms.Tensor(np.ones((3,), np.float32))
a: ms.Tensor = Scaled()(x)
b: ms.Tensor = Scaled()(x, 2.0, 0.0)
c: ms.Tensor = Scaled()(x, y=0.0, w=2.0)
d: ms.Tensor = Scaled()(x=x, w=3)
e: ms.Tensor = Classic()(x, y=x)
f: ms.Tensor = ByNameAnyOrder()(x, shift=1.0)
g: ms.Tensor = NoBprop()(x, n=3)
h: ms.Tensor = Child()(x, w=0.5)
i: ms.Tensor = StarArgs()(x)
