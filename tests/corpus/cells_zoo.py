"""Corpus cells (harness.py) from the MindSpore model zoo (mindspore-ai/models, mindspore-lab/models),
mindcv and golden-stick, re-implemented in this project's own code: the same math, signatures
and quirks as the public cell each ``source`` names.

Where a public cell calls a kernel that cannot run here (a GPU AOT kernel, a collective on one
device), the cell computes the same math with ``ops`` and says so in its comment.
"""

from __future__ import annotations

import importlib
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import functional

from tests.corpus.harness import MODES, Arrays, Case

# Primitives and functions as the projects reach them (``from mindspore.ops import operations as
# P``, ``functional as F``, ``mint``); kwcell's partial MindSpore stubs do not declare them all.
P: Any = ops
F: Any = functional
mint: Any = importlib.import_module("mindspore.mint")

# GRAPH_MODE runs x.asnumpy() in construct through its JIT fallback: the forward is a constant of
# the graph and the bprop is never called (the gradient is silently zero), nn.Cell and KwCell alike
_ASNUMPY = (
    "GRAPH_MODE evaluates construct's x.asnumpy() through the JIT fallback: the output is a graph "
    "constant, bprop is never called and the gradient is zero (MindSpore 2.10)"
)
_GRAPH_MODES = ("graph", "outer", "jit", "twice", "train")
# MindSpore calls bprop with the inputs, out and dout; a bprop without `out` is a TypeError
_SWISH = "bprop(self, x, dout) has no `out`: MindSpore calls it with 3 arguments and raises TypeError"

X = np.array([[0.5, -1.5, 0.25], [-0.75, 0.1, 2.0]], np.float32)


def _sigmoid(v: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-v))


def _one(c: Any, x: Any) -> Any:
    return c(x)


def _kw_inp(c: Any, x: Any) -> Any:
    return c(inp=x)


def _kw_x(c: Any, x: Any) -> Any:
    return c(x=x)


def _tsigmoid_pos(c: Any, x: Any, t: Any) -> Any:
    return c(x, t)


def _tsigmoid_kw(c: Any, x: Any, t: Any) -> Any:
    return c(inp=x, T=t)


# --- BiMLP (mindspore-ai/models research/cv/BiMLP/src/quan_conv.py) ---------------------------


# Signer: sign forward through a primitive built in __init__, identity (straight-through) backward
def _bimlp_signer(base: type) -> type:
    class Signer(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.sign = P.Sign()

        def construct(self, inp: Tensor) -> Any:
            return self.sign(inp)

        def bprop(self, inp: Tensor, out: Any, dout: Any) -> Any:
            return (dout,)

    return Signer


def _bimlp_signer_natural() -> type:
    from kwcell import KwCell

    class Signer(KwCell):
        def __init__(self) -> None:
            super().__init__()
            self.sign = P.Sign()

        def construct(self, inp: Tensor) -> Any:
            return self.sign(inp)

        def bprop(self, inp: Tensor, *, out: Any, dout: Any) -> Any:
            return {"inp": dout}

    return Signer


# XnorM: primitives created inline in construct (no __init__), identity backward
def _bimlp_xnor(base: type) -> type:
    class XnorM(base):  # type: ignore[misc]
        def construct(self, inp: Tensor) -> Any:
            return P.Sign()(inp) * P.ReduceMean(keep_dims=True)(P.Abs()(inp), 1)

        def bprop(self, inp: Tensor, out: Any, dout: Any) -> Any:
            return (dout,)

    return XnorM


def _bimlp_xnor_natural() -> type:
    from kwcell import KwCell

    class XnorM(KwCell):
        def construct(self, inp: Tensor) -> Any:
            return P.Sign()(inp) * P.ReduceMean(keep_dims=True)(P.Abs()(inp), 1)

        def bprop(self, inp: Tensor, *, out: Any, dout: Any) -> Any:
            return {"inp": dout}

    return XnorM


# TSigmoid: sigmoid(T * x) forward, the T = 1 sigmoid derivative backward; the Python float T
# gets None. self.sigmoid (a primitive from __init__) runs in construct and in bprop.
def _bimlp_tsigmoid(base: type) -> type:
    class TSigmoid(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.sigmoid = P.Sigmoid()

        def construct(self, inp: Tensor, T: float) -> Any:
            return self.sigmoid(T * inp)

        def bprop(self, inp: Tensor, T: float, out: Any, dout: Any) -> Any:
            x = self.sigmoid(inp)
            grad_inp = x * (1 - x)
            grad_inp *= dout
            return (grad_inp, None)

    return TSigmoid


def _bimlp_tsigmoid_natural() -> type:
    from kwcell import KwCell

    class TSigmoid(KwCell):
        def __init__(self) -> None:
            super().__init__()
            self.sigmoid = P.Sigmoid()

        def construct(self, inp: Tensor, T: float) -> Any:
            return self.sigmoid(T * inp)

        def bprop(self, inp: Tensor, T: float, *, out: Any, dout: Any) -> Any:
            x = self.sigmoid(inp)
            return {"inp": x * (1 - x) * dout}

    return TSigmoid


def _tsigmoid_expected(inputs: Arrays, dout: Any) -> Arrays:
    s = _sigmoid(inputs[0])
    return (s * (1 - s) * dout, None)


# --- FDA-BNN (mindspore-ai/models research/cv/FDA-BNN/src/quan.py) -----------------------------


# ScaleSigner: sign(x) * mean(|x|); the bprop rebinds its own inputs, `out` included
def _fdabnn_scale_signer(base: type) -> type:
    class ScaleSigner(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.sign = P.Sign()
            self.mean = P.ReduceMean()
            self.abs = P.Abs()

        def construct(self, inp: Tensor) -> Any:
            return self.sign(inp) * self.mean(self.abs(inp))

        def bprop(self, inp: Tensor, out: Any, dout: Any) -> Any:
            inp = inp * 1
            out = out * 1
            return (dout,)

    return ScaleSigner


def _fdabnn_scale_signer_natural() -> type:
    from kwcell import KwCell

    class ScaleSigner(KwCell):
        def __init__(self) -> None:
            super().__init__()
            self.sign = P.Sign()
            self.mean = P.ReduceMean()
            self.abs = P.Abs()

        def construct(self, inp: Tensor) -> Any:
            return self.sign(inp) * self.mean(self.abs(inp))

        def bprop(self, inp: Tensor, *, out: Any, dout: Any) -> Any:
            out = out * 1
            return {"inp": dout}

    return ScaleSigner


# --- DynamicQuant (mindspore-ai/models research/cv/DynamicQuant/src/quant.py) ------------------


# Signer: construct rebinds its input before the sign; bprop rebinds inp and out
def _dynamicquant_signer(base: type) -> type:
    class Signer(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.sign = P.Sign()

        def construct(self, inp: Tensor) -> Any:
            inp = inp * 1
            return self.sign(inp)

        def bprop(self, inp: Tensor, out: Any, dout: Any) -> Any:
            inp = inp * 1
            out = out * 1
            return (dout,)

    return Signer


def _identity_expected(inputs: Arrays, dout: Any) -> Arrays:
    return (dout,)


# --- SNN (mindspore-ai/models community/cv/snn/src/ifnode.py) ----------------------------------


# relusigmoid: a Heaviside spike forward (Greater, cast), a sigmoid surrogate backward
def _snn_relusigmoid(base: type) -> type:
    class relusigmoid(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.sigmoid = P.Sigmoid()
            self.greater = P.Greater()

        def construct(self, x: Tensor) -> Any:
            spike = self.greater(x, 0)
            return spike.astype(ms.float32)

        def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
            sgax = self.sigmoid(x * 5.0)
            grad_x = dout * (1 - sgax) * sgax * 5.0
            return (grad_x,)

    return relusigmoid


def _snn_relusigmoid_natural() -> type:
    from kwcell import KwCell

    class relusigmoid(KwCell):
        def __init__(self) -> None:
            super().__init__()
            self.sigmoid = P.Sigmoid()
            self.greater = P.Greater()

        def construct(self, x: Tensor) -> Any:
            spike = self.greater(x, 0)
            return spike.astype(ms.float32)

        def bprop(self, x: Tensor, *, out: Any, dout: Any) -> Any:
            sgax = self.sigmoid(x * 5.0)
            return {"x": dout * (1 - sgax) * sgax * 5.0}

    return relusigmoid


def _snn_relusigmoid_expected(inputs: Arrays, dout: Any) -> Arrays:
    s = _sigmoid(inputs[0] * 5.0)
    return (dout * (1 - s) * s * 5.0,)


# --- SSDA-MME (mindspore-lab/models research/xidian/SSDA-MME/base/base_net.py) ----------------


# GradReverse: an identity forward through numpy (asnumpy), a reversed, scaled gradient; the
# bprop calls dout `grad_output` and returns a bare Tensor
def _ssdamme_grad_reverse(base: type) -> type:
    class GradReverse(base):  # type: ignore[misc]
        def __init__(self, coeff: float) -> None:
            super().__init__()
            self.coeff = coeff

        def construct(self, x: Any) -> Any:
            x = x.asnumpy()
            return ms.Tensor(x)

        def bprop(self, x: Tensor, out: Any, grad_output: Any) -> Any:
            din = -self.coeff * grad_output
            return din

    return GradReverse


def _ssdamme_grad_reverse_natural() -> type:
    from kwcell import KwCell

    class GradReverse(KwCell):
        def __init__(self, coeff: float) -> None:
            super().__init__()
            self.coeff = coeff

        def construct(self, x: Any) -> Any:
            x = x.asnumpy()
            return ms.Tensor(x)

        def bprop(self, x: Tensor, *, out: Any, dout: Any) -> Any:
            return {"x": -self.coeff * dout}

    return GradReverse


# --- mindcv (mindspore-lab/mindcv mindcv/models/layers/activation.py, 2022-09) -----------------


# Swish with hand-written bprop(self, x, dout): no `out` parameter, which MindSpore passes
def _mindcv_swish(base: type) -> type:
    class Swish(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.result = None
            self.sigmoid = P.Sigmoid()

        def construct(self, x: Tensor) -> Any:
            result = x * self.sigmoid(x)
            return result

        def bprop(self, x: Tensor, dout: Any) -> Any:
            sigmoid_x = self.sigmoid(x)
            result = dout * (sigmoid_x * (1 + x * (1 - sigmoid_x)))
            return result

    return Swish


def _mindcv_swish_expected(inputs: Arrays, dout: Any) -> Arrays:
    s = _sigmoid(inputs[0])
    return (dout * s * (1 + inputs[0] * (1 - s)),)


CASES = [
    Case(
        name="zoo_bimlp_signer",
        source="mindspore-ai/models research/cv/BiMLP/src/quan_conv.py: Signer",
        body=_bimlp_signer,
        natural=_bimlp_signer_natural,
        inputs=lambda: (X,),
        positional=_one,
        keyword=_kw_inp,
        expected=_identity_expected,
    ),
    Case(
        name="zoo_bimlp_xnor",
        source="mindspore-ai/models research/cv/BiMLP/src/quan_conv.py: XnorM",
        body=_bimlp_xnor,
        natural=_bimlp_xnor_natural,
        inputs=lambda: (X,),
        positional=_one,
        keyword=_kw_inp,
        expected=_identity_expected,
    ),
    Case(
        name="zoo_bimlp_tsigmoid",
        source="mindspore-ai/models research/cv/BiMLP/src/quan_conv.py: TSigmoid",
        body=_bimlp_tsigmoid,
        natural=_bimlp_tsigmoid_natural,
        inputs=lambda: (X, 4.0),
        positional=_tsigmoid_pos,
        keyword=_tsigmoid_kw,
        expected=_tsigmoid_expected,
    ),
    Case(
        name="zoo_fdabnn_scale_signer",
        source="mindspore-ai/models research/cv/FDA-BNN/src/quan.py: ScaleSigner",
        body=_fdabnn_scale_signer,
        natural=_fdabnn_scale_signer_natural,
        inputs=lambda: (X,),
        positional=_one,
        keyword=_kw_inp,
        expected=_identity_expected,
    ),
    Case(
        name="zoo_dynamicquant_signer",
        source="mindspore-ai/models research/cv/DynamicQuant/src/quant.py: Signer",
        body=_dynamicquant_signer,
        inputs=lambda: (X,),
        positional=_one,
        keyword=_kw_inp,
        expected=_identity_expected,
    ),
    Case(
        name="zoo_snn_relusigmoid",
        source="mindspore-ai/models community/cv/snn/src/ifnode.py: relusigmoid",
        body=_snn_relusigmoid,
        natural=_snn_relusigmoid_natural,
        inputs=lambda: (X,),
        positional=_one,
        keyword=_kw_x,
        expected=_snn_relusigmoid_expected,
    ),
    Case(
        name="zoo_ssdamme_grad_reverse",
        source="mindspore-lab/models research/xidian/SSDA-MME/base/base_net.py: GradReverse",
        body=_ssdamme_grad_reverse,
        natural=_ssdamme_grad_reverse_natural,
        init=lambda: {"coeff": 0.5},
        inputs=lambda: (X,),
        positional=_one,
        keyword=_kw_x,
        expected=lambda inputs, dout: (-0.5 * dout,),
        nn_fails=dict.fromkeys(_GRAPH_MODES, _ASNUMPY),
        kw_fails=dict.fromkeys(_GRAPH_MODES, _ASNUMPY),
    ),
    Case(
        name="zoo_mindcv_swish",
        source="mindspore-lab/mindcv mindcv/models/layers/activation.py (7d512f0, 2022-09): Swish",
        body=_mindcv_swish,
        inputs=lambda: (X,),
        positional=_one,
        keyword=_kw_x,
        expected=_mindcv_swish_expected,
        nn_fails=dict.fromkeys(MODES, _SWISH),
        kw_fails=dict.fromkeys(MODES, _SWISH),
    ),
]
