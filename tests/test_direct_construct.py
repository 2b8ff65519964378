"""``cell.construct(...)`` called directly is the user's forward, with autodiff and no bprop, in
every mode, as on nn.Cell: from an outer cell's construct, from a function given to ``ms.grad``,
through ``super().construct`` in a subclass. (The graph parser resolves ``self.inner.construct``
through its namespace of the cell's members; that read is the user's, not MindSpore's.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

from kwcell import KwCell

X = np.array([0.5, 1.0, -0.25], np.float32)


def _inner(base: type) -> Any:
    class Inner(base):  # type: ignore[misc]
        def construct(self, x: Tensor, w: float = 1.0) -> Any:
            return w * ops.sin(x)

        def bprop(self, x: Tensor, w: float, out: Any, dout: Any) -> Any:
            return (3 * w * ops.cos(x) * dout, 0.0)

    return Inner()


class Direct(nn.Cell):
    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, x: Tensor) -> Any:
        return self.inner.construct(x, 2.0).sum() + self.inner(x, 1.0).sum()


def _grad(run: str, fn: Callable[..., Any], x: Tensor) -> Any:
    g: Callable[..., Any] = ms.grad(fn)
    if run == "jit":
        g = ms.jit(g)
    return g(x).asnumpy()


@pytest.mark.parametrize("base", [nn.Cell, KwCell], ids=["nn.Cell", "KwCell"])
def test_direct_construct_from_an_outer_cell_is_autodiff(run: str, base: type) -> None:
    # construct called directly: autodiff 2*cos(x); called as a cell: its bprop, 3*cos(x)
    got = _grad(run, Direct(_inner(base)), Tensor(X))
    np.testing.assert_allclose(got, 2 * np.cos(X) + 3 * np.cos(X), rtol=1e-5)


def test_direct_construct_in_a_function_is_autodiff(run: str) -> None:
    inner = _inner(KwCell)

    def f(x: Tensor) -> Any:
        return inner.construct(x, w=2.0).sum()

    np.testing.assert_allclose(_grad(run, f, Tensor(X)), 2 * np.cos(X), rtol=1e-5)


def _sub(base: type) -> Any:
    class Sub(type(_inner(base))):  # type: ignore[misc]
        def construct(self, x: Tensor, w: float = 1.0) -> Any:
            return super().construct(x, w) + x

        def bprop(self, x: Tensor, w: float, out: Any, dout: Any) -> Any:
            return (5 * w * ops.cos(x) * dout, 0.0)

    return Sub()


class Calls(nn.Cell):
    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, x: Tensor) -> Any:
        return self.inner(x, w=2.0).sum()


def test_super_construct_inside_a_bprop_cell_runs_the_parent_forward(run: str) -> None:
    # a keyword call (kwcell's point) of a subclass whose construct calls super().construct
    net = Calls(_sub(KwCell))
    assert float(net(Tensor(X)).asnumpy()) == pytest.approx(float((2 * np.sin(X) + X).sum()), rel=1e-5)
    np.testing.assert_allclose(_grad(run, net, Tensor(X)), 10 * np.cos(X), rtol=1e-5)
