"""Shapes of public cells that broke when kwcell gave the graph compiler copies of the user's
functions (a construct and bprop calling the same MindSpore composite; a bprop that calls
``self.construct``). Each is compared with the same class body on ``nn.Cell`` and with an
analytic value, in PYNATIVE, GRAPH_MODE (an outer cell's graph) and a PyNative ``@ms.jit``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops
from mindspore.ops.composite.multitype_ops.zeros_like_impl import (  # type: ignore[import-untyped]
    zeros_like,
)

from kwcell import KwCell


def _grad(run: str, net: nn.Cell, *args: Tensor, positions: Any = 0) -> Any:
    g: Callable[..., Any] = ms.grad(net, grad_position=positions)
    if run == "jit":

        @ms.jit
        def step(*a: Tensor) -> Any:
            return g(*a)

        return step(*args)
    return g(*args)


def _numpy(value: Any) -> Any:
    if isinstance(value, tuple):
        return [v.asnumpy() for v in value]
    return value.asnumpy()


# --- the same ops composite in construct and bprop (a Bi-Real sign activation) ---------------


def _sign_act(base: type) -> nn.Cell:
    class Act(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.sgn = ops.Sign()

        def construct(self, inp: Tensor, nbit_a: int = 1) -> Any:
            return self.sgn(ops.clip_by_value(inp, -1.0, 1.0))

        def bprop(self, inp: Tensor, nbit_a: int, out: Tensor, dout: Tensor) -> Any:
            neg = ops.cast(inp < 0, ms.float32)
            g = ops.clip_by_value((2 + 2 * inp) * neg + (2 - 2 * inp) * (1 - neg), 0.0, 1e26)
            g *= dout
            return (g, None)

    cell: nn.Cell = Act()
    return cell


class ActOuter(nn.Cell):
    def __init__(self, act: nn.Cell) -> None:
        super().__init__()
        self.act = act

    def construct(self, x: Tensor) -> Any:
        return (self.act(x, 1) * 1.0).sum()


X = np.array([-0.5, 0.3, 0.8, -1.5], np.float32)


def test_the_same_clip_by_value_in_construct_and_bprop(run: str) -> None:
    neg = (X < 0).astype(np.float32)
    expected = np.clip((2 + 2 * X) * neg + (2 - 2 * X) * (1 - neg), 0.0, 1e26)
    for base in (nn.Cell, KwCell):
        got = _numpy(_grad(run, ActOuter(_sign_act(base)), Tensor(X)))
        np.testing.assert_allclose(got, expected, rtol=1e-6, err_msg=base.__name__)


# --- ops.softmax in both (a single-device attention, mindformers' ring attention shape) -------


def _attention(base: type) -> nn.Cell:
    class Attention(base):  # type: ignore[misc]
        def __init__(self, scale: float) -> None:
            super().__init__()
            self.scale = scale

        def construct(self, q: Tensor, k: Tensor, v: Tensor, mask: Any = None) -> Any:
            p = ops.softmax(ops.matmul(q, k.T) * self.scale, axis=-1)
            return ops.matmul(p, v)

        def bprop(self, q: Tensor, k: Tensor, v: Tensor, mask: Any, out: Tensor, dout: Tensor) -> Any:
            p = ops.softmax(ops.matmul(q, k.T) * self.scale, axis=-1)
            dv = ops.matmul(p.T, dout)
            dp = ops.matmul(dout, v.T)
            ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) * self.scale
            return ops.matmul(ds, k), ops.matmul(ds.T, q), dv, zeros_like(mask)

    cell: nn.Cell = Attention(0.5)
    return cell


class AttnOuter(nn.Cell):
    def __init__(self, attn: nn.Cell) -> None:
        super().__init__()
        self.attn = attn

    def construct(self, q: Tensor, k: Tensor, v: Tensor) -> Any:
        return (self.attn(q, k, v, None) ** 2).sum()


def test_the_same_softmax_in_construct_and_bprop(run: str) -> None:
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(3))

    # the bprop is the exact gradient: autodiff of the same forward is the reference
    class Plain(nn.Cell):
        def construct(self, q: Tensor, k: Tensor, v: Tensor) -> Any:
            p = ops.softmax(ops.matmul(q, k.T) * 0.5, axis=-1)
            return (ops.matmul(p, v) ** 2).sum()

    ms.set_context(mode=ms.PYNATIVE_MODE)
    expected = _numpy(ms.grad(Plain(), grad_position=(0, 1, 2))(Tensor(q), Tensor(k), Tensor(v)))
    ms.set_context(mode=ms.GRAPH_MODE if run == "graph" else ms.PYNATIVE_MODE)
    for base in (nn.Cell, KwCell):
        got = _numpy(
            _grad(run, AttnOuter(_attention(base)), Tensor(q), Tensor(k), Tensor(v), positions=(0, 1, 2))
        )
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-6, err_msg=base.__name__)


# --- a bprop that calls self.construct (an implicit-differentiation conjugate gradient) ------


def _cg(base: type) -> nn.Cell:
    class CG(base):  # type: ignore[misc]
        """Solves A x = b; bprop solves A^T g = dout with the same solver, ``self.construct``."""

        def construct(
            self, A: Tensor, b: Tensor, x0: Any = None, tol: float = 1e-5, maxiter: Any = None
        ) -> Any:
            x = ops.zeros_like(b) if x0 is None else x0
            r = b - ops.matmul(A, x)
            p = r
            rs = ops.reduce_sum(r * r)
            k = 0
            n = 50 if maxiter is None else maxiter
            while k < n:
                ap = ops.matmul(A, p)
                alpha = rs / ops.reduce_sum(p * ap)
                x = x + alpha * p
                r = r - alpha * ap
                rs_new = ops.reduce_sum(r * r)
                p = r + (rs_new / rs) * p
                rs = rs_new
                k += 1
            return x

        def bprop(
            self, A: Tensor, b: Tensor, x0: Any, tol: float, maxiter: Any, out: Tensor, dout: Tensor
        ) -> Any:
            gb = self.construct(A.T, dout, x0, tol, maxiter)
            ga = -ops.matmul(gb.reshape(-1, 1), out.reshape(1, -1))
            return ga, gb, zeros_like(x0), zeros_like(tol), zeros_like(maxiter)

    cell: nn.Cell = CG()
    return cell


class CGOuter(nn.Cell):
    def __init__(self, cg: nn.Cell) -> None:
        super().__init__()
        self.cg = cg

    def construct(self, a: Tensor, b: Tensor) -> Any:
        return (self.cg(a, b, None, 1e-5, 2) * Tensor(np.array([1.0, -2.0], np.float32))).sum()


def test_a_bprop_calling_self_construct_with_a_while_loop(run: str) -> None:
    a = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)
    b = np.array([1.0, 2.0], np.float32)
    x = np.linalg.solve(a, b)
    gb = np.linalg.solve(a.T, np.array([1.0, -2.0]))  # implicit differentiation
    expected = [-np.outer(gb, x), gb]
    for base in (nn.Cell, KwCell):
        got = _numpy(_grad(run, CGOuter(_cg(base)), Tensor(a), Tensor(b), positions=(0, 1)))
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5, err_msg=base.__name__)


# ---------------------------------------------------------------- called from a function


def _fake_quant(base: type) -> type:
    """golden-stick's FakeQuantPerLayer shape: clip_by_value in construct and in bprop, with
    Tensor bounds, called positionally from the differentiated function (not an outer cell)."""

    class FakeQuant(base):  # type: ignore[misc]
        def construct(self, x: Tensor, lo: Tensor, hi: Tensor) -> Any:
            return ops.clip_by_value(x, lo, hi) * 2.0

        def bprop(self, x: Tensor, lo: Tensor, hi: Tensor, out: Any, dout: Any) -> Any:
            inside = ops.logical_and(x >= lo, x <= hi).astype(ms.float32)
            return ops.clip_by_value(x, lo, hi) * 0.0 + inside * dout, ops.zeros_like(lo), ops.zeros_like(hi)

    return FakeQuant


_Q = np.array([-1.3, -0.2, 0.45, 2.7], np.float32)
_LO, _HI = np.array([-1.0], np.float32), np.array([1.5], np.float32)


@pytest.mark.parametrize("call", ["positional", "keyword"])
def test_the_same_composite_called_from_a_function(run: str, call: str) -> None:
    """nn.Cell fails positionally in graphs ('The func graph is empty': MindSpore uses the
    construct graph as parsed and empties the shared composite) and is right called by
    keyword; KwCell is right both ways in every mode (its core's construct graph is generated
    per call, as a keyword call makes nn.Cell's)."""
    cell = _fake_quant(KwCell)()

    def f(a: Tensor, b: Tensor, c: Tensor) -> Any:
        return (cell(a, b, c) if call == "positional" else cell(x=a, lo=b, hi=c)).sum()

    got = _grad(run, f, Tensor(_Q), Tensor(_LO), Tensor(_HI))  # type: ignore[arg-type]
    np.testing.assert_array_equal(got.asnumpy(), ((_Q >= _LO) & (_Q <= _HI)).astype(np.float32))


def test_nn_cell_fails_on_the_same_composite_called_positionally() -> None:
    """MindSpore's own limit, which KwCell does not have (the test above)."""
    ms.set_context(mode=ms.GRAPH_MODE)
    cell = _fake_quant(nn.Cell)()

    def f(a: Tensor, b: Tensor, c: Tensor) -> Any:
        return cell(a, b, c).sum()

    with pytest.raises(RuntimeError, match="The func graph is empty"):
        _grad("graph", f, Tensor(_Q), Tensor(_LO), Tensor(_HI))  # type: ignore[arg-type]


def test_only_cells_sharing_a_composite_get_a_generated_core_graph() -> None:
    """The core's construct takes ``*_kwcell_unused`` (so that MindSpore generates its graph
    per call) only where construct and bprop reach the same MindSpore composite, directly or
    through the user's helpers: a generated graph breaks PIJit's autodiff elsewhere."""
    import kwcell

    assert "*_kwcell_unused" in kwcell.explain(_fake_quant(KwCell))

    class Helped(KwCell):
        def probabilities(self, x: Tensor) -> Any:
            return ops.softmax(x, -1)

        def construct(self, x: Tensor) -> Any:
            return self.probabilities(x) * 2.0

        def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
            return (ops.softmax(x, -1) * dout,)

    class Apart(KwCell):
        def construct(self, x: Tensor) -> Any:
            return ops.clip_by_value(x, -1.0, 1.0)

        def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
            return (ops.softmax(x, -1) * dout,)

    assert "*_kwcell_unused" in kwcell.explain(Helped)
    assert "*_kwcell_unused" not in kwcell.explain(Apart)
