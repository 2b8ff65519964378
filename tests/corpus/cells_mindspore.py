"""Corpus cells (harness.py) from MindSpore's own code: its custom-bprop tests (tests/st,
tests/ut), ``mindspore.scipy``'s implicit-differentiation solvers, and the cells with a
``bprop`` inside the MindSpore package. Re-implemented here with the same math, signatures and
quirks; each ``source=`` names the repository (mindspore-ai/mindspore), the file and the class.
"""

from __future__ import annotations

from typing import Any

import mindspore as ms
import mindspore.numpy as mnp
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops.composite.multitype_ops.zeros_like_impl import zeros_like  # type: ignore[import-untyped]

from tests.corpus.harness import Arrays, Case

MS = "mindspore-ai/mindspore"


def _first_output(out: Any, s: Any) -> Any:
    """The head of a cell with a tuple output whose caller uses only the first entry."""
    return (out[0] * s[0]).sum()


# --------------------------------------------------------------------------------------------
# mindspore.scipy.sparse.linalg CGv2: conjugate gradients with a while loop in construct, and
# implicit differentiation in bprop by a second solve through self.construct; float/int/None
# inputs, MindSpore's multitype zeros_like on each of them, an (x, int info) tuple output.

A_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
B_RHS = np.array([1.0, -2.0, 0.5], np.float32)


def _matvec(a: Any, v: Any) -> Any:
    # scipy/utils.py _matvec: a Tensor multiplies, anything else is the operator (here None:
    # cg's default preconditioner, the identity)
    if a is None:
        return v
    return mnp.dot(a, v)


def _norm(v: Any) -> Any:
    return mnp.sqrt(mnp.sum(v**2))


def _cg(a: Any, b: Any, x0: Any, tol: Any, atol: Any, maxiter: Any, m: Any) -> Any:
    zero = Tensor(0, ms.int32)  # a constant Tensor: the while loop is not unrolled
    atol_ = ops.maximum(Tensor(atol, ms.float32), tol * _norm(b))
    r = b - _matvec(a, x0)
    z = p = _matvec(m, r)
    rho = mnp.dot(r, z)
    k = zero
    x = x0
    while k < maxiter and _norm(r) > atol_:
        q = _matvec(a, p)
        alpha = rho / mnp.dot(p, q)
        x = x + alpha * p
        r = r - alpha * q
        z = _matvec(m, r)
        rho_ = mnp.dot(r, z)
        beta = rho_ / rho
        p = z + beta * p
        rho = rho_
        k += 1
    return x, ops.select(_norm(r) > atol_, k, zero)


def _cg_body(base: type) -> type:
    class CGv2(base):  # type: ignore[misc]
        def construct(self, A: Any, b: Any, x0: Any, tol: Any, atol: Any, maxiter: Any, M: Any) -> Any:
            return _cg(A, b, x0, tol, atol, maxiter, M)

        def bprop(
            self, A: Any, b: Any, x0: Any, tol: Any, atol: Any, maxiter: Any, M: Any, out: Any, dout: Any
        ) -> Any:
            n = b.shape[0]
            if not isinstance(M, Tensor):
                M = ops.eye(n, n, b.dtype)
            grad_b, _ = self.construct(A, dout[0], x0, tol, atol, maxiter, M)
            grad_a = -1 * ops.reshape(grad_b, (n, 1)) * ops.reshape(out[0], (1, n))
            return (
                grad_a,
                grad_b,
                zeros_like(x0),
                zeros_like(tol),
                zeros_like(atol),
                zeros_like(maxiter),
                zeros_like(M),
            )

    return CGv2


def _cg_natural() -> type:
    from kwcell import KwCell

    class CGv2(KwCell):
        def construct(self, A: Any, b: Any, x0: Any, tol: Any, atol: Any, maxiter: Any, M: Any) -> Any:
            return _cg(A, b, x0, tol, atol, maxiter, M)

        def bprop(
            self, A: Any, b: Any, x0: Any, tol: Any, atol: Any, maxiter: Any, M: Any, *, out: Any, dout: Any
        ) -> Any:
            n = b.shape[0]
            pre = M if isinstance(M, Tensor) else ops.eye(n, n, b.dtype)
            grad_b, _ = self.construct(A, dout[0], x0, tol, atol, maxiter, pre)
            return {"A": -1 * ops.reshape(grad_b, (n, 1)) * ops.reshape(out[0], (1, n)), "b": grad_b}

    return CGv2


def _np_cg(a: Any, b: Any, x0: Any, tol: float, atol: float, maxiter: int) -> Any:
    """The same iteration in numpy (float64): CG assumes a symmetric A, and bprop solves with
    A, not A.T, so after a training step makes A unsymmetric only the iteration itself agrees."""
    a, b, x = a.astype(np.float64), b.astype(np.float64), x0.astype(np.float64)
    bound = max(atol, tol * np.linalg.norm(b))
    r = b - a @ x
    p = r.copy()
    rho = r @ r
    for _ in range(maxiter):
        if np.linalg.norm(r) <= bound:
            break
        q = a @ p
        alpha = rho / (p @ q)
        x = x + alpha * p
        r = r - alpha * q
        rho_new = r @ r
        p = r + (rho_new / rho) * p
        rho = rho_new
    return x


def _cg_expected(inputs: Arrays, dout: Any) -> Arrays:
    a, b, x0, tol, atol, maxiter, _ = inputs
    x = _np_cg(a, b, x0, tol, atol, maxiter)
    grad_b = _np_cg(a, dout[0], x0, tol, atol, maxiter)
    return (-np.outer(grad_b, x), grad_b, np.zeros_like(x0), None, None, None, None)


def _cg_pos(c: Any, a: Any, b: Any, x0: Any, tol: Any, atol: Any, maxiter: Any, m: Any) -> Any:
    return c(a, b, x0, tol, atol, maxiter, m)


def _cg_kw(c: Any, a: Any, b: Any, x0: Any, tol: Any, atol: Any, maxiter: Any, m: Any) -> Any:
    return c(b=b, A=a, x0=x0, M=m, maxiter=maxiter, tol=tol, atol=atol)


# --------------------------------------------------------------------------------------------
# mindspore/ops/function/math_func.py _NanMeanWithBprop: nanmean's backward, a Python for loop
# over the reduced axes in bprop, ops.isnan in construct and bprop, four __init__ arguments.

X_NAN = np.array([[0.5, np.nan, -1.5, 2.0], [1.0, 0.25, np.nan, np.nan]], np.float32)


def _nanmean_body(base: type) -> type:
    class _NanMeanWithBprop(base):  # type: ignore[misc]
        def __init__(self, axis: Any, keepdims: Any, dtype: Any, reduce_axes: Any) -> None:
            super().__init__()
            self.axis = axis
            self.keepdims = keepdims
            self.dtype = dtype
            self.reduce_axes = reduce_axes

        def construct(self, x: Any) -> Any:
            nan_sum = ops.nansum(x, self.axis, self.keepdims)
            is_num = ops.isnan(x).logical_not().sum(axis=self.axis, keepdims=self.keepdims)
            out = nan_sum / is_num
            if self.dtype is not None:
                out = out.astype(self.dtype)
            return out

        def bprop(self, x: Any, out: Any, dout: Any) -> Any:
            is_num_float = ops.cast(ops.isnan(x).logical_not(), dout.dtype)
            count = is_num_float.sum(axis=self.axis, keepdims=self.keepdims)
            if not self.keepdims and self.reduce_axes:
                for i in self.reduce_axes:
                    dout = ops.expand_dims(dout, i)
                    count = ops.expand_dims(count, i)
            dx = (dout / count) * is_num_float
            return (ops.cast(dx, x.dtype),)

    return _NanMeanWithBprop


def _nanmean_natural() -> type:
    from kwcell import KwCell

    class _NanMeanWithBprop(KwCell):
        def __init__(self, axis: Any, keepdims: Any, dtype: Any, reduce_axes: Any) -> None:
            super().__init__()
            self.axis = axis
            self.keepdims = keepdims
            self.dtype = dtype
            self.reduce_axes = reduce_axes

        def construct(self, x: Any) -> Any:
            nan_sum = ops.nansum(x, self.axis, self.keepdims)
            is_num = ops.isnan(x).logical_not().sum(axis=self.axis, keepdims=self.keepdims)
            out = nan_sum / is_num
            if self.dtype is not None:
                out = out.astype(self.dtype)
            return out

        def bprop(self, x: Any, *, out: Any, dout: Any) -> Any:
            is_num_float = ops.cast(ops.isnan(x).logical_not(), dout.dtype)
            count = is_num_float.sum(axis=self.axis, keepdims=self.keepdims)
            g = dout
            if not self.keepdims and self.reduce_axes:
                for i in self.reduce_axes:
                    g = ops.expand_dims(g, i)
                    count = ops.expand_dims(count, i)
            return {"x": ops.cast((g / count) * is_num_float, x.dtype)}

    return _NanMeanWithBprop


def _nanmean_expected(inputs: Arrays, dout: Any) -> Arrays:
    num = (~np.isnan(inputs[0])).astype(np.float32)
    count = num.sum(axis=1, keepdims=True)
    return ((dout[:, None] / count) * num,)


# --------------------------------------------------------------------------------------------
# tests/st/gradient/test_custom_cell_bprop.py MulAdd: a bprop deliberately unlike autodiff's
# (2 * dout, 2 * y), to tell the custom bprop from MindSpore's own differentiation.

X23 = np.array([[0.5, -1.5, 0.25], [-0.75, 0.1, 2.0]], np.float32)
Y23 = np.array([[1.5, 0.5, -2.0], [0.3, -0.6, 1.2]], np.float32)


def _mul_add_body(base: type) -> type:
    class MulAdd(base):  # type: ignore[misc]
        def construct(self, x: Any, y: Any) -> Any:
            return 2 * x + y

        def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
            return 2 * dout, 2 * y

    return MulAdd


def _mul_add_natural() -> type:
    from kwcell import KwCell

    class MulAdd(KwCell):
        def construct(self, x: Any, y: Any) -> Any:
            return 2 * x + y

        def bprop(self, x: Any, y: Any, *, out: Any, dout: Any) -> Any:
            return {"x": 2 * dout, "y": 2 * y}

    return MulAdd


def _pos2(c: Any, x: Any, y: Any) -> Any:
    return c(x, y)


def _kw2(c: Any, x: Any, y: Any) -> Any:
    return c(y=y, x=x)


# --------------------------------------------------------------------------------------------
# tests/st/gradient/test_custom_cell_bprop.py test_dde_self_define_cell_output_not_use
# (SelfDefineCell): a tuple output whose second entry only bprop uses (the caller drops it; dead
# data elimination must keep it).


def _dde_body(base: type) -> type:
    class SelfDefineCell(base):  # type: ignore[misc]
        def construct(self, x: Any) -> Any:
            return x + 1, x + 2

        def bprop(self, x: Any, out: Any, dout: Any) -> Any:
            return (out[1],)

    return SelfDefineCell


def _dde_natural() -> type:
    from kwcell import KwCell

    class SelfDefineCell(KwCell):
        def construct(self, x: Any) -> Any:
            return x + 1, x + 2

        def bprop(self, x: Any, *, out: Any, dout: Any) -> Any:
            return {"x": out[1]}

    return SelfDefineCell


def _pos1(c: Any, x: Any) -> Any:
    return c(x)


def _kw1(c: Any, x: Any) -> Any:
    return c(x=x)


# --------------------------------------------------------------------------------------------
# tests/st/pynative test_bprop.py (test_custom_bprop_with_default_args) DefaultArgNet: a None
# default the same branch reads in construct and bprop; MindSpore's test calls net(x), omitting it.


def _default_arg_body(base: type) -> type:
    class DefaultArgNet(base):  # type: ignore[misc]
        def construct(self, x: Any, weight: Any = None) -> Any:
            y = x * x
            if weight is not None:
                return y + weight
            return y * y

        def bprop(self, x: Any, weight: Any, out: Any, dout: Any) -> Any:
            if weight is not None:
                return dout * (out + weight), dout * (out + x)
            return dout * out * x, None

    return DefaultArgNet


def _default_arg_natural() -> type:
    from kwcell import KwCell

    class DefaultArgNet(KwCell):
        def construct(self, x: Any, weight: Any = None) -> Any:
            y = x * x
            if weight is not None:
                return y + weight
            return y * y

        def bprop(self, x: Any, weight: Any = None, *, out: Any, dout: Any) -> Any:
            if weight is not None:
                return {"x": dout * (out + weight), "weight": dout * (out + x)}
            return {"x": dout * out * x}

    return DefaultArgNet


def _default_none_pos(c: Any, x: Any, w: Any) -> Any:
    return c(x)  # as MindSpore's test calls it: the default left out


def _default_none_kw(c: Any, x: Any, w: Any) -> Any:
    return c(x=x, weight=w)


def _default_weight_pos(c: Any, x: Any, w: Any) -> Any:
    return c(x, w)


def _default_weight_kw(c: Any, x: Any, w: Any) -> Any:
    return c(weight=w, x=x)


# MindSpore 2.10, measured: compiling the call net(x) raises "TypeError: Function ...construct...,
# The number of parameter of this primal function is 1, but the number of parameters of bprop is
# 2" (graph compilation of a cell whose bprop names a default the call leaves out)
_OMITTED_DEFAULT = "a compiled call that omits weight=None: 'primal function is 1, ... bprop is 2' TypeError"


def _default_none_expected(inputs: Arrays, dout: Any) -> Arrays:
    x = inputs[0]
    return (dout * x**4 * x, None)


def _default_weight_expected(inputs: Arrays, dout: Any) -> Arrays:
    x, w = inputs
    out = x * x + w
    return (dout * (out + w), dout * (out + x))


CASES = [
    Case(
        name="ms_cg_implicit",
        source=f"{MS} mindspore/python/mindspore/scipy/sparse/linalg.py: CGv2 (and _cg)",
        body=_cg_body,
        natural=_cg_natural,
        inputs=lambda: (A_SPD, B_RHS, np.zeros(3, np.float32), 1e-5, 0.0, 10, None),
        positional=_cg_pos,
        keyword=_cg_kw,
        expected=_cg_expected,
        head=_first_output,
        rtol=1e-3,
        atol=1e-4,
    ),
    Case(
        name="ms_nanmean",
        source=f"{MS} mindspore/python/mindspore/ops/function/math_func.py: _NanMeanWithBprop",
        body=_nanmean_body,
        natural=_nanmean_natural,
        init=lambda: {"axis": 1, "keepdims": False, "dtype": None, "reduce_axes": (1,)},
        inputs=lambda: (X_NAN,),
        positional=_pos1,
        keyword=_kw1,
        expected=_nanmean_expected,
    ),
    Case(
        name="ms_mul_add",
        source=f"{MS} tests/st/gradient/test_custom_cell_bprop.py: MulAdd",
        body=_mul_add_body,
        natural=_mul_add_natural,
        inputs=lambda: (X23, Y23),
        positional=_pos2,
        keyword=_kw2,
        expected=lambda inputs, dout: (2 * dout, 2 * inputs[1]),
    ),
    Case(
        name="ms_dde_output_not_used",
        source=(
            f"{MS} tests/st/gradient/test_custom_cell_bprop.py: SelfDefineCell "
            "(test_dde_self_define_cell_output_not_use)"
        ),
        body=_dde_body,
        natural=_dde_natural,
        inputs=lambda: (X23,),
        positional=_pos1,
        keyword=_kw1,
        expected=lambda inputs, dout: (inputs[0] + 2,),
        head=_first_output,
    ),
    Case(
        name="ms_default_arg_none",
        source=f"{MS} tests/st/pynative test_bprop.py: DefaultArgNet (test_custom_bprop_with_default_args)",
        body=_default_arg_body,
        natural=_default_arg_natural,
        inputs=lambda: (X23, None),
        positional=_default_none_pos,
        keyword=_default_none_kw,
        expected=_default_none_expected,
        nn_fails={mode: _OMITTED_DEFAULT for mode in ("graph", "outer", "jit", "train", "twice")},
    ),
    Case(
        name="ms_default_arg_weight",
        source=f"{MS} tests/st/pynative test_bprop.py: DefaultArgNet (test_custom_bprop_with_default_args)",
        body=_default_arg_body,
        natural=_default_arg_natural,
        inputs=lambda: (X23, Y23),
        positional=_default_weight_pos,
        keyword=_default_weight_kw,
        expected=_default_weight_expected,
    ),
]
