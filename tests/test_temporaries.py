"""A cell created and called inside the differentiated function (``Ste()(x)``, as mindone's
I-BERT calls ``floor_ste()(x)``) lives as long as MindSpore's tape needs it, and no longer.

MindSpore's PyNative executor keeps the ``bprop`` it read when it recorded the call until the
backward has run; the core's ``bprop`` read holds the owner (``_core.PinningBprop``).
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import mindspore as ms
import numpy as np
import psutil
import pytest
from mindspore import Tensor, nn, ops

import kwcell
from kwcell import KwCell

X = np.array([0.4, -1.3, 2.7], np.float32)


class Ste(KwCell):
    """A straight-through floor whose bprop scales the gradient (so it is seen to run)."""

    def construct(self, x: Tensor, scale: float = 3.0) -> Any:
        return ops.floor(x)

    def bprop(self, x: Tensor, scale: float = 3.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": dout * scale}


@kwcell.keyword_bprop
class DecoratedSte(nn.Cell):
    def construct(self, x: Tensor, scale: float = 3.0) -> Any:
        return ops.floor(x)

    def bprop(self, x: Tensor, scale: float = 3.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": dout * scale}


class PlainSte(nn.Cell):
    def construct(self, x: Tensor, scale: float) -> Any:
        return ops.floor(x)

    def bprop(self, x: Tensor, scale: float, out: Tensor, dout: Tensor) -> Any:
        return dout * scale, 0.0


class Quantised(nn.Cell):
    """A layer whose construct calls a temporary (the I-BERT shape)."""

    def __init__(self, make: Callable[[], nn.Cell]) -> None:
        super().__init__()
        self.make = make

    def construct(self, x: Tensor) -> Any:
        return (self.make()(x * 2.0, 3.0) * x).sum()


@pytest.mark.parametrize("make", [Ste, DecoratedSte, PlainSte], ids=["KwCell", "keyword_bprop", "nn.Cell"])
def test_a_temporary_in_a_function_given_to_grad(make: Callable[[], nn.Cell]) -> None:
    got = ms.grad(lambda x: make()(x, 3.0).sum())(Tensor(X)).asnumpy()
    np.testing.assert_allclose(got, np.full_like(X, 3.0))
    value, grad = ms.value_and_grad(lambda x: make()(x, 3.0).sum())(Tensor(X))
    np.testing.assert_allclose(value.asnumpy(), np.floor(X).sum())
    np.testing.assert_allclose(grad.asnumpy(), np.full_like(X, 3.0))


@pytest.mark.parametrize("make", [Ste, DecoratedSte], ids=["KwCell", "keyword_bprop"])
def test_a_temporary_called_by_keyword(make: Callable[[], nn.Cell]) -> None:
    got = ms.grad(lambda x: make()(x=x, scale=5.0).sum())(Tensor(X)).asnumpy()
    np.testing.assert_allclose(got, np.full_like(X, 5.0))


@pytest.mark.parametrize("run", ["pynative", "graph", "jit"])
@pytest.mark.parametrize("make", [Ste, PlainSte], ids=["KwCell", "nn.Cell"])
def test_a_temporary_inside_a_layers_construct(run: str, make: Callable[[], nn.Cell]) -> None:
    ms.set_context(mode=ms.GRAPH_MODE if run == "graph" else ms.PYNATIVE_MODE)
    g: Callable[..., Any] = ms.grad(Quantised(make))
    if run == "jit":

        @ms.jit
        def step(a: Tensor) -> Any:
            return g(a)

        got = step(Tensor(X)).asnumpy()
    else:
        got = g(Tensor(X)).asnumpy()
    # d/dx floor(2x) * x with floor's gradient replaced by 3: 3 * 2 * x + floor(2x)
    np.testing.assert_allclose(got, 6.0 * X + np.floor(2 * X), rtol=1e-6)


def test_temporaries_are_freed_after_their_backward() -> None:
    refs: list[weakref.ref[Any]] = []

    def f(x: Tensor) -> Any:
        cell = Ste()
        refs.append(weakref.ref(cell))
        return cell(x).sum()

    g = ms.grad(f)
    for _ in range(300):
        np.testing.assert_allclose(g(Tensor(X)).asnumpy(), np.full_like(X, 3.0))
    gc.collect()
    alive = sum(r() is not None for r in refs)
    assert alive <= 1, f"{alive} of {len(refs)} temporaries still alive after their backward"


def test_many_temporaries_keep_memory_bounded() -> None:
    g = ms.grad(lambda x: Ste()(x).sum())
    for _ in range(200):  # warm up MindSpore's own caches
        g(Tensor(X))
    gc.collect()
    before = psutil.Process().memory_info().rss
    for _ in range(2000):
        g(Tensor(X))
    gc.collect()
    grown = psutil.Process().memory_info().rss - before
    assert grown < 40 * 2**20, f"RSS grew {grown / 2**20:.1f} MiB over 2000 temporaries"
