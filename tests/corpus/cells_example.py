"""Corpus cells (harness.py): the first three, the shapes issue reports named."""

from __future__ import annotations

from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

from tests.corpus.harness import Arrays, Case

X = np.array([[0.5, -1.5, 0.25], [-0.75, 0.1, 2.0]], np.float32)


# mindspore-lab/models research/cv/birealnet (BinaryActivation): sign forward, a piecewise
# polynomial straight-through backward; construct and bprop both call ops.clip_by_value
def _birealnet_sign(base: type) -> type:
    class BinaryActivation(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.sgn = ops.Sign()

        def construct(self, inp: Tensor, nbit_a: int = 1) -> Any:
            return self.sgn(ops.clip_by_value(inp, -1.0, 1.0))

        def bprop(self, inp: Tensor, nbit_a: int, out: Any, dout: Any) -> Any:
            neg = ops.cast(inp < 0, ms.float32)
            g = ops.clip_by_value((2 + 2 * inp) * neg + (2 - 2 * inp) * (1 - neg), 0.0, 1e26)
            g *= dout
            return (g, None)

    return BinaryActivation


def _birealnet_natural() -> type:
    from kwcell import KwCell

    class BinaryActivation(KwCell):
        def __init__(self) -> None:
            super().__init__()
            self.sgn = ops.Sign()

        def construct(self, inp: Tensor, nbit_a: int = 1) -> Any:
            return self.sgn(ops.clip_by_value(inp, -1.0, 1.0))

        def bprop(self, inp: Tensor, nbit_a: int, *, out: Any, dout: Any) -> Any:
            neg = ops.cast(inp < 0, ms.float32)
            g = ops.clip_by_value((2 + 2 * inp) * neg + (2 - 2 * inp) * (1 - neg), 0.0, 1e26)
            return {"inp": g * dout}

    return BinaryActivation


def _birealnet_expected(inputs: Arrays, dout: Any) -> Arrays:
    x = inputs[0]
    g = np.where(x < 0, 2 + 2 * x, 2 - 2 * x).clip(0.0, 1e26)
    return (g * dout, None)


def _birealnet_pos(c: Any, x: Any, n: Any) -> Any:
    return c(x, n)


def _birealnet_kw(c: Any, x: Any, n: Any) -> Any:
    return c(inp=x, nbit_a=n)


CASES = [
    Case(
        name="birealnet_sign",
        source="mindspore-lab/models research/cv/birealnet/src/birealnet.py: BinaryActivation",
        body=_birealnet_sign,
        natural=_birealnet_natural,
        inputs=lambda: (X, 1),
        positional=_birealnet_pos,
        keyword=_birealnet_kw,
        expected=_birealnet_expected,
    ),
]
