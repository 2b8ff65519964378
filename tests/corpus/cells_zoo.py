"""Corpus cells (harness.py) from the MindSpore model zoo (mindspore-ai/models, mindspore-lab/models),
mindcv and golden-stick, re-implemented in this project's own code: the same math, signatures
and quirks as the public cell each ``source`` names.

Where a public cell calls a kernel that cannot run here (a GPU AOT kernel, a collective on one
device), the cell computes the same math with ``ops`` and says so in its comment.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore.ops import functional

from tests.corpus.harness import MODES, Arrays, Case

# Primitives and functions as the projects reach them (``from mindspore.ops import operations as
# P``, ``functional as F``, ``mint``); kwcell's partial MindSpore stubs do not declare them all.
P: Any = ops
F: Any = functional
mint: Any = importlib.import_module("mindspore.mint")
_pynative_executor: Any = importlib.import_module("mindspore.common.api")._pynative_executor

# GRAPH_MODE runs x.asnumpy() in construct through its JIT fallback: the forward is a constant of
# the graph and the bprop is never called (the gradient is silently zero), nn.Cell and KwCell alike
_ASNUMPY = (
    "GRAPH_MODE evaluates construct's x.asnumpy() through the JIT fallback: the output is a graph "
    "constant, bprop is never called and the gradient is zero (MindSpore 2.10)"
)
_GRAPH_MODES = ("graph", "outer", "jit", "twice", "train")
# An nn.Cell with a single Tensor input that calls ops.clip_by_value in construct and in bprop
# does not compile in GRAPH_MODE (MindSpore 2.10; with an extra non-Tensor input, as
# cells_example's birealnet_sign, it does)
_CLIP_EMPTY = (
    "ops.clip_by_value in construct and in bprop: GRAPH_MODE raises RuntimeError 'The func graph "
    "is empty, func graph: ...clip_by_value' (MindSpore 2.10)"
)
# kwcell bug: called by keyword, the nn.Cell body compiles in every graph mode (twice included, both
# calls by keyword) and gives the bprop's gradient; the KwCell body raises _CLIP_EMPTY in every call
# form, so a cell that works by keyword on nn.Cell stops working on KwCell
# GRAPH_MODE gives None, not zeros, for a Tensor input whose bprop entry is None
_NONE_GRAD = "GRAPH_MODE returns None, not zeros, as the gradient of a Tensor input bprop answers with None"
# GRAPH_MODE refuses bprop(self, *args)
_STAR_ARGS = (
    "GRAPH_MODE refuses bprop(self, *args): RuntimeError 'The function 'bprop' of Primitive or Cell "
    "requires at least 2 params 'out' and 'dout', but got only 1'"
)
# nn.Cell's GRAPH_MODE refuses a bprop that reads a Parameter (and so gives weight gradients)
_PARAMETER_IN_BPROP = (
    "GRAPH_MODE refuses a bprop that uses a Parameter: RuntimeError 'The user defined 'bprop' "
    "function in scope Default does not support using Parameter'"
)
# A plain cell that does `v -= spike` (an in-place augmented assignment in construct), called twice
# in one graph: the second call's gradient is wrong (probe: with `v = v - spike` it is right)
_AUGASSIGN_TWICE = (
    "GRAPH_MODE, one IFNode called twice in one graph: with construct's `v -= spike` the gradient of "
    "the spiking element is wrong (3.028 for 3.430; `v = v - spike` gives 3.430), nn.Cell and KwCell alike"
)
# A PYNATIVE-only cell (mindformers' parallel_core/pynative): GRAPH_MODE cannot parse construct's
# _pynative_executor.grad_flag(); the parser's AttributeError is no exception nn_fails can record
_GRAD_FLAG = (
    "PYNATIVE-only cell: the graph parser raises AttributeError ''builtin_function_or_method' object has "
    "no attribute '__code__'' on construct's _pynative_executor.grad_flag(), nn.Cell and KwCell alike "
    "(run: every variant), which test_corpus's nn_fails cannot catch"
)
_NO_ONES_LIKE = (
    "mint.ones_like has no CPU kernel in PYNATIVE: RuntimeError 'The kernel OnesLikeExt unregistered'"
)
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


# IFNode (same file): a plain nn.Cell whose default argument is one relusigmoid instance, shared by
# every IFNode built with the default; a tuple output (spike, v); `v -= spike`
def _snn_ifnode_on(surrogate: type) -> type:
    class IFNode(nn.Cell):
        def __init__(
            self,
            v_threshold: float = 1.0,
            fire: bool = True,
            surrogate_function: Any = surrogate(),  # noqa: B008 (the project's shared default)
        ) -> None:
            super().__init__()
            self.v_threshold = v_threshold
            self.fire = fire
            self.surrogate_function = surrogate_function

        def construct(self, x: Tensor, v: Tensor) -> Any:
            v = v + x
            if self.fire:
                spike = self.surrogate_function(v - self.v_threshold) * self.v_threshold
                v -= spike
                return spike, v
            return v, v

    return IFNode


def _snn_ifnode(base: type) -> type:
    return _snn_ifnode_on(_snn_relusigmoid(base))


def _snn_ifnode_natural() -> type:
    return _snn_ifnode_on(_snn_relusigmoid_natural())


IF_V = np.array([[0.75, 0.5, 0.9], [1.5, 0.6, -0.25]], np.float32)


def _snn_ifnode_expected(inputs: Arrays, dout: Any) -> Arrays:
    x, v = inputs
    th = 1.25
    s = _sigmoid((v + x - th) * 5.0)
    dspike_du = (1 - s) * s * 5.0 * th
    du = dout[0] * dspike_du + dout[1] * (1 - dspike_du)
    return (du, du)


def _ifnode_kw(c: Any, x: Any, v: Any) -> Any:
    return c(x=x, v=v)


# --- FlowNet2 (mindspore-ai/models research/cv/flownet2/src/submodels/custom_ops/custom_ops.py) -


# Correlation: construct and bprop both call the sub-cell self.transpose_pad (NCHW -> padded NHWC)
# and then an AOT GPU kernel (correlation.cu: correlation / correlationGrad), written here with ops
# for the kernel's kernel_size=1, stride1=1 and pad_size == max_displacement. The kernels' gradient
# is the exact one, so here the bprop's gradient is autodiff's.
class TransposeAndPad(nn.Cell):
    def __init__(self, pad_size: int) -> None:
        super().__init__()
        self.tanspose = P.Transpose()
        self.pad = P.Pad(((0, 0), (pad_size, pad_size), (pad_size, pad_size), (0, 0)))

    def construct(self, x: Tensor) -> Any:
        x_tanspose = self.tanspose(x, (0, 2, 3, 1))
        x_tanspose_pad = self.pad(x_tanspose)
        return x_tanspose_pad


def _correlation_forward(
    pad_x1: Any, pad_x2: Any, out_shape: Any, max_displacement: int, stride2: int
) -> Any:
    """correlation.cu's correlation_forward: the channel mean of x1 * (x2 displaced)."""
    out_h, out_w = out_shape[2], out_shape[3]
    radius = max_displacement // stride2
    channels = pad_x1.shape[3]
    center = pad_x1[
        :, max_displacement : max_displacement + out_h, max_displacement : max_displacement + out_w, :
    ]
    planes = []
    for t_j in range(-radius, radius + 1):
        for t_i in range(-radius, radius + 1):
            oy = max_displacement + t_j * stride2
            ox = max_displacement + t_i * stride2
            planes.append((center * pad_x2[:, oy : oy + out_h, ox : ox + out_w, :]).sum(axis=3) / channels)
    return ops.stack(planes, axis=1)


def _correlation_backward(pad_x1: Any, pad_x2: Any, dout: Any, max_displacement: int, stride2: int) -> Any:
    """correlation.cu's correlation_backward_input1 / input2, for NCHW gradients."""
    md = max_displacement
    radius = md // stride2
    out_h, out_w = dout.shape[2], dout.shape[3]
    channels = pad_x1.shape[3]
    center = pad_x1[:, md : md + out_h, md : md + out_w, :]
    g = dout.expand_dims(4) / channels  # (N, displacements, H, W, 1)
    # x2's gradient: each displacement's g * x1, moved by the displacement (one pad, then slices)
    moved = ops.pad(g * center.expand_dims(1), (0, 0, md, md, md, md))
    shifted2 = []
    moved1 = []
    k = 0
    for t_j in range(-radius, radius + 1):
        for t_i in range(-radius, radius + 1):
            oy = md + t_j * stride2
            ox = md + t_i * stride2
            shifted2.append(pad_x2[:, oy : oy + out_h, ox : ox + out_w, :])
            moved1.append(
                moved[:, k, 2 * md - oy : 2 * md - oy + out_h, 2 * md - ox : 2 * md - ox + out_w, :]
            )
            k += 1
    grad1 = (g * ops.stack(shifted2, axis=1)).sum(axis=1)
    grad2 = ops.stack(moved1, axis=1).sum(axis=1)
    return ops.transpose(grad1, (0, 3, 1, 2)), ops.transpose(grad2, (0, 3, 1, 2))


def _flownet2_correlation(base: type) -> type:
    class Correlation(base):  # type: ignore[misc]
        def __init__(
            self,
            pad_size: int = 0,
            kernel_size: int = 0,
            max_displacement: int = 0,
            stride1: int = 1,
            stride2: int = 2,
        ) -> None:
            super().__init__()
            self.pad_size = pad_size
            self.max_displacement = max_displacement
            self.kernel_size = kernel_size
            self.stride1 = stride1
            self.stride2 = stride2
            self.transpose_pad = TransposeAndPad(pad_size)

        def construct(self, x1: Tensor, x2: Tensor) -> Any:
            pad_x1 = self.transpose_pad(x1)
            pad_x2 = self.transpose_pad(x2)
            n_output_channels = (int(self.max_displacement / self.stride2) * 2 + 1) * (
                int(self.max_displacement / self.stride2) * 2 + 1
            )
            x1_shape = x1.shape
            kernel_radius = (self.kernel_size - 1) / 2
            border_radius = kernel_radius + self.max_displacement
            padded_height = x1_shape[2] + 2 * self.pad_size
            padded_width = x1_shape[3] + 2 * self.pad_size
            output_height = int(math.ceil((padded_height - 2 * border_radius) / self.stride1))  # noqa: RUF046
            output_width = int(math.ceil((padded_width - 2 * border_radius) / self.stride1))  # noqa: RUF046
            out_shape = (x1_shape[0], n_output_channels, output_height, output_width)
            output = _correlation_forward(pad_x1, pad_x2, out_shape, self.max_displacement, self.stride2)
            return output

        def bprop(self, x1: Tensor, x2: Tensor, out: Any, dout: Any) -> Any:
            pad_x1 = self.transpose_pad(x1)
            pad_x2 = self.transpose_pad(x2)
            dx1, dx2 = _correlation_backward(pad_x1, pad_x2, dout, self.max_displacement, self.stride2)
            return dx1, dx2

    return Correlation


def _flownet2_correlation_natural() -> type:
    from kwcell import KwCell

    base = _flownet2_correlation(KwCell)

    class Correlation(base):  # type: ignore[misc,valid-type]
        def bprop(self, x1: Tensor, x2: Tensor, *, out: Any, dout: Any) -> Any:
            dx1, dx2 = _correlation_backward(
                self.transpose_pad(x1), self.transpose_pad(x2), dout, self.max_displacement, self.stride2
            )
            return {"x1": dx1, "x2": dx2}

    return Correlation


_CORR_RNG = np.random.default_rng(11)
CORR_X1 = _CORR_RNG.uniform(-1.0, 1.0, (1, 2, 4, 4)).astype(np.float32)
CORR_X2 = _CORR_RNG.uniform(-1.0, 1.0, (1, 2, 4, 4)).astype(np.float32)


def _correlation_expected(inputs: Arrays, dout: Any) -> Arrays:
    x1, x2 = inputs
    md, stride2 = 2, 2
    radius = md // stride2
    _, channels, height, width = x1.shape
    p2 = np.pad(x2, ((0, 0), (0, 0), (md, md), (md, md)))
    dx1 = np.zeros_like(x1)
    dp2 = np.zeros_like(p2)
    k = 0
    for t_j in range(-radius, radius + 1):
        for t_i in range(-radius, radius + 1):
            for y in range(height):
                for x in range(width):
                    yy, xx = y + md + t_j * stride2, x + md + t_i * stride2
                    g = dout[:, k, y, x][:, None] / channels
                    dx1[:, :, y, x] += g * p2[:, :, yy, xx]
                    dp2[:, :, yy, xx] += g * x1[:, :, y, x]
            k += 1
    return (dx1, dp2[:, :, md : md + height, md : md + width])


def _correlation_kw(c: Any, x1: Any, x2: Any) -> Any:
    return c(x1=x1, x2=x2)


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


# --- mindformers in the model zoo (mindspore-lab/models research/NEU/RRHF-V/mindformers) -------
RRHF = "mindspore-lab/models research/NEU/RRHF-V/mindformers/mindformers/"

LOGITS = np.array([[1.0, -0.5, 2.0, 0.3], [0.2, 0.4, -1.0, 1.5], [-0.7, 0.9, 0.1, 0.0]], np.float32)
LABEL = np.array([2, 3, 1], np.int32)


# _LogSoftmax (core/loss/loss.py): a tuple output (log-softmax, one-hot label) from a float and
# an int input; bprop(self, logits, label, _, dout) passes dout[0] through and answers the int
# label with F.zeros_like
def _rrhfv_log_softmax(base: type) -> type:
    class _LogSoftmax(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.on_value = Tensor(1.0, ms.float32)
            self.off_value = Tensor(0.0, ms.float32)
            self.sum = P.ReduceSum(keep_dims=True)
            self.max = P.ReduceMax(keep_dims=True)
            self.sub = P.Sub()
            self.exp = P.Exp()
            self.log = P.Log()
            self.onehot = P.OneHot()

        def construct(self, logits: Tensor, label: Tensor) -> Any:
            logits = F.cast(logits, ms.float32)
            logit_max = self.max(logits, 1)
            logit_sub = self.sub(logits, logit_max)
            logit_exp = self.exp(logit_sub)
            exp_sum = self.sum(logit_exp, -1)
            log_exp_sum = self.log(exp_sum)
            log_softmax_result = self.sub(logit_sub, log_exp_sum)
            one_hot_label = self.onehot(label, F.shape(logits)[-1], self.on_value, self.off_value)
            return log_softmax_result, one_hot_label

        def bprop(self, logits: Tensor, label: Tensor, _: Any, dout: Any) -> Any:
            d_logits = F.cast(dout[0], F.dtype(logits))
            return d_logits, F.zeros_like(label)

    return _LogSoftmax


def _rrhfv_log_softmax_natural() -> type:
    from kwcell import KwCell

    base = _rrhfv_log_softmax(KwCell)

    class _LogSoftmax(base):  # type: ignore[misc,valid-type]
        def bprop(self, logits: Tensor, label: Tensor, *, out: Any, dout: Any) -> Any:
            return {"logits": F.cast(dout[0], F.dtype(logits))}

    return _LogSoftmax


def _pair_head(out: Any, s: Any) -> Any:
    return (out[0] * s[0]).sum() + (out[1] * s[1]).sum()


def _two(c: Any, a: Any, b: Any) -> Any:
    return c(a, b)


def _log_softmax_kw(c: Any, logits: Any, label: Any) -> Any:
    return c(logits=logits, label=label)


# _NLLLoss (core/loss/loss.py): bprop(self, log_softmax_result, one_hot_label, _, dout) builds
# softmax - one_hot from primitives created inline (P.Exp(), P.ExpandDims()) and answers the
# float one-hot input with F.zeros_like
def _rrhfv_nll_loss(base: type) -> type:
    class _NLLLoss(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.repeat_loss = 1
            self.sum = P.ReduceSum()
            self.mul = P.Mul()
            self.neg = P.Neg()

        def construct(self, log_softmax_result: Tensor, one_hot_label: Tensor) -> Any:
            loss = self.mul(log_softmax_result, one_hot_label)
            loss_unsum = self.neg(loss)
            loss_reduce = self.sum(loss_unsum, -1)
            return loss_reduce

        def bprop(self, log_softmax_result: Tensor, one_hot_label: Tensor, _: Any, dout: Any) -> Any:
            softmax_result = P.Exp()(log_softmax_result)
            logits = softmax_result - one_hot_label
            logits = logits * P.ExpandDims()(dout, -1) * self.repeat_loss
            return logits, F.zeros_like(one_hot_label)

    return _NLLLoss


def _rrhfv_nll_loss_natural() -> type:
    from kwcell import KwCell

    base = _rrhfv_nll_loss(KwCell)

    class _NLLLoss(base):  # type: ignore[misc,valid-type]
        def bprop(self, log_softmax_result: Tensor, one_hot_label: Tensor, *, out: Any, dout: Any) -> Any:
            softmax_result = P.Exp()(log_softmax_result)
            grad = (softmax_result - one_hot_label) * P.ExpandDims()(dout, -1) * self.repeat_loss
            return {"log_softmax_result": grad}

    return _NLLLoss


def _nll_inputs() -> Arrays:
    shifted = LOGITS - LOGITS.max(axis=1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return (log_softmax.astype(np.float32), np.eye(4, dtype=np.float32)[LABEL])


def _nll_expected(inputs: Arrays, dout: Any) -> Arrays:
    lsr, one_hot = inputs
    return ((np.exp(lsr) - one_hot) * dout[:, None], np.zeros_like(one_hot))


def _nll_kw(c: Any, lsr: Any, one_hot: Any) -> Any:
    return c(log_softmax_result=lsr, one_hot_label=one_hot)


# MoEAuxLossAutoScaler (experimental/parallel_core/pynative/transformer/moe/utils.py): identity
# on `output`; bprop gives aux_loss ones scaled by a class attribute Tensor read through the class
def _rrhfv_moe_aux_loss_scaler(base: type) -> type:
    class MoEAuxLossAutoScaler(base):  # type: ignore[misc]
        main_loss_backward_scale = ms.Tensor(1.0)

        def construct(self, output: Tensor, aux_loss: Tensor) -> Any:
            return output

        def bprop(self, output: Tensor, aux_loss: Tensor, out: Any, dout: Any) -> Any:
            scale_aux_loss_grad = mint.ones_like(aux_loss) * MoEAuxLossAutoScaler.main_loss_backward_scale
            return dout, scale_aux_loss_grad

        @staticmethod
        def set_loss_scale(scale: Tensor) -> None:
            MoEAuxLossAutoScaler.main_loss_backward_scale = scale

    return MoEAuxLossAutoScaler


def _rrhfv_moe_aux_loss_scaler_natural() -> type:
    from kwcell import KwCell

    class MoEAuxLossAutoScaler(KwCell):
        main_loss_backward_scale = ms.Tensor(1.0)

        def construct(self, output: Tensor, aux_loss: Tensor) -> Any:
            return output

        def bprop(self, output: Tensor, aux_loss: Tensor, *, out: Any, dout: Any) -> Any:
            scale = mint.ones_like(aux_loss) * MoEAuxLossAutoScaler.main_loss_backward_scale
            return {"output": dout, "aux_loss": scale}

    return MoEAuxLossAutoScaler


def _moe_kw(c: Any, output: Any, aux_loss: Any) -> Any:
    return c(output=output, aux_loss=aux_loss)


# SelfDefinedGather (experimental/parallel_core/pynative/transformer/moe/utils.py): ops.gather by
# a permutation held on self in construct, and ops.gather of dout by its argsort in bprop (the
# gradient of a permutation: here the bprop's gradient is autodiff's); `input_, output, dout`;
# both check the indices with a Tensor condition that raises
def _rrhfv_self_defined_gather(base: type) -> type:
    class SelfDefinedGather(base):  # type: ignore[misc]
        def __init__(self, indices: Tensor) -> None:
            super().__init__()
            self.indices = indices

        def construct(self, input_: Tensor) -> Any:
            indices = self.indices
            if indices.max() >= input_.shape[0]:
                raise ValueError(
                    f"expect indices.max() < input_.shape[0], but got {indices} and {input_.shape}"
                )
            output = ops.gather(input_, self.indices, 0)
            return output

        def bprop(self, input_: Tensor, output: Any, dout: Any) -> Any:
            indices = self.indices
            if indices.max() >= dout.shape[0]:
                raise ValueError(f"expect indices.max() < dout.shape[0], but got {indices} and {dout.shape}")
            dout = ops.gather(dout, ops.argsort(indices), 0)
            return (dout,)

    return SelfDefinedGather


def _rrhfv_self_defined_gather_natural() -> type:
    from kwcell import KwCell

    base = _rrhfv_self_defined_gather(KwCell)

    class SelfDefinedGather(base):  # type: ignore[misc,valid-type]
        def bprop(self, input_: Tensor, *, out: Any, dout: Any) -> Any:
            return {"input_": ops.gather(dout, ops.argsort(self.indices), 0)}

    return SelfDefinedGather


PERM = np.array([2, 0, 3, 1], np.int32)
GATHER_X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [3.0, -2.0, 0.75], [-1.25, 1.0, 0.1]], np.float32)


def _gather_expected(inputs: Arrays, dout: Any) -> Arrays:
    return (dout[np.argsort(PERM)],)


def _kw_input_(c: Any, x: Any) -> Any:
    return c(input_=x)


# LinearWithFrozenWeight (experimental/parallel_core/pynative/tensor_parallel/layers.py):
# bprop(self, x, weight, bias, out, dout) names construct's `input_` `x`; the frozen weight gets
# None, the bias zeros (F.full) when self.bias, else None (bias=None input); BatchMatMul
# primitives from __init__. (2-D inputs: CPU BatchMatMul does not broadcast a 2-D weight.)
def _rrhfv_linear_frozen(base: type) -> type:
    class LinearWithFrozenWeight(base):  # type: ignore[misc]
        def __init__(self, bias: bool, allreduce_dgrad: Any = None, transpose_b: bool = True) -> None:
            super().__init__()
            self.bias = bias
            self.allreduce_dgrad = allreduce_dgrad
            self.transpose_b = transpose_b
            self.matmul = P.BatchMatMul(transpose_b=self.transpose_b)
            self.matmul_g_in = P.BatchMatMul(transpose_a=False, transpose_b=not self.transpose_b)

        def construct(self, input_: Tensor, weight: Tensor, bias: Any) -> Any:
            output = self.matmul(input_, weight)
            if self.bias and bias is not None:
                output = mint.add(output, bias)
            return output

        def bprop(self, x: Tensor, weight: Tensor, bias: Any, out: Any, dout: Any) -> Any:
            grad_input = self.matmul_g_in(dout, weight).reshape(x.shape)
            grad_bias = F.full(bias.shape, 0, dtype=bias.dtype) if self.bias else None
            return grad_input, None, grad_bias

    return LinearWithFrozenWeight


def _rrhfv_linear_frozen_natural() -> type:
    from kwcell import KwCell

    base = _rrhfv_linear_frozen(KwCell)

    class LinearWithFrozenWeight(base):  # type: ignore[misc,valid-type]
        def bprop(self, input_: Tensor, weight: Tensor, bias: Any, *, out: Any, dout: Any) -> Any:
            return {"input_": self.matmul_g_in(dout, weight).reshape(input_.shape)}

    return LinearWithFrozenWeight


LIN_X = np.array([[0.5, -1.0, 2.0, 0.25], [1.5, 0.75, -0.5, 1.0], [-2.0, 0.3, 1.2, -0.6]], np.float32)
LIN_W = np.array(
    [
        [0.2, -0.4, 0.6, 1.0],
        [1.1, 0.5, -0.3, 0.2],
        [-0.7, 0.8, 0.4, -1.2],
        [0.3, 0.9, -1.5, 0.6],
        [1.4, -0.2, 0.1, 0.5],
    ],
    np.float32,
)
LIN_B = np.array([0.1, -0.2, 0.3, 0.05, -0.4], np.float32)


def _linear_expected(inputs: Arrays, dout: Any) -> Arrays:
    _, w, b = inputs
    return (dout @ w, np.zeros_like(w), None if b is None else np.zeros_like(b))


def _three(c: Any, a: Any, b: Any, d: Any) -> Any:
    return c(a, b, d)


def _linear_kw(c: Any, x: Any, w: Any, b: Any) -> Any:
    return c(input_=x, weight=w, bias=b)


# PreBackwardCell (experimental/parallel_core/pynative/optimizer/zero/adamw_zero.py, ZeRO-3): two
# stop_gradient outputs; bprop(self, *args) runs the pre-backward hook and returns args[-1], the
# tuple dout itself, as the inputs' gradients; used_bprop_inputs = []. (The hook all-gathers the
# owner's Parameters, a no-op on one device: here a function that does nothing.)
def _pre_backward_hook(cell: Any) -> None:
    return None


def _rrhfv_pre_backward(base: type) -> type:
    class PreBackwardCell(base):  # type: ignore[misc]
        def __init__(self, func: Any) -> None:
            super().__init__()
            self._auto_prefix = False
            self.pre_backward_function = func
            self.used_bprop_inputs: list[int] = []

        def construct(self, input: Tensor, input_bias: Tensor) -> Any:
            return ops.stop_gradient(input), ops.stop_gradient(input_bias)

        def bprop(self, *args: Any) -> Any:
            self.pre_backward_function(self)
            return args[-1]

    return PreBackwardCell


def _rrhfv_pre_backward_natural() -> type:
    from kwcell import KwCell

    base = _rrhfv_pre_backward(KwCell)

    class PreBackwardCell(base):  # type: ignore[misc,valid-type]
        def bprop(self, input: Tensor, input_bias: Tensor, *, out: Any, dout: Any) -> Any:
            self.pre_backward_function(self)
            return {"input": dout[0], "input_bias": dout[1]}

    return PreBackwardCell


def _pre_backward_kw(c: Any, a: Any, b: Any) -> Any:
    return c(input=a, input_bias=b)


# ReduceScatterToSequenceParallelRegion (experimental/parallel_core/pynative/tensor_parallel/
# mappings.py), on one device (world_size == 1): stop_gradient forward; used_bprop_inputs = [2] (only
# dout is kept); bprop(self, *args) returns dout bare, not in a tuple
def _rrhfv_reduce_scatter_to_sp(base: type) -> type:
    class ReduceScatterToSequenceParallelRegion(base):  # type: ignore[misc]
        def __init__(self, need_to_swapaxes: bool) -> None:
            super().__init__()
            self.world_size = 1
            self.need_to_swapaxes = need_to_swapaxes
            self.used_bprop_inputs = [2]

        def construct(self, input_: Tensor) -> Any:
            if self.world_size == 1:
                return ops.stop_gradient(input_)
            if self.need_to_swapaxes:
                input_ = input_.swapaxes(0, 1)
            return input_

        def bprop(self, *args: Any) -> Any:
            dout = args[-1]
            if self.world_size == 1:
                return dout
            if self.need_to_swapaxes:
                dout = dout.swapaxes(0, 1)
            return (dout,)

    return ReduceScatterToSequenceParallelRegion


# AllGatherFromTensorParallelRegion (same file), on one device: stop_gradient forward; bprop moves
# dout's last axis first and back (permutations built with tuple(range(ndim - 1))), contiguous()
def _rrhfv_all_gather_from_tp(base: type) -> type:
    class AllGatherFromTensorParallelRegion(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.world_size = 1

        def construct(self, input_: Tensor) -> Any:
            if self.world_size == 1:
                return ops.stop_gradient(input_)
            return input_

        def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
            num_dims = dout.ndim
            permute_order = (num_dims - 1, *tuple(range(num_dims - 1)))
            dout = ops.transpose(dout, permute_order).contiguous()
            output = dout
            permute_order = (*tuple(range(1, num_dims)), 0)
            output = ops.transpose(output, permute_order).contiguous()
            return (output,)

    return AllGatherFromTensorParallelRegion


def _rrhfv_all_gather_from_tp_natural() -> type:
    from kwcell import KwCell

    base = _rrhfv_all_gather_from_tp(KwCell)

    class AllGatherFromTensorParallelRegion(base):  # type: ignore[misc,valid-type]
        def bprop(self, input_: Tensor, *, out: Any, dout: Any) -> Any:
            num_dims = dout.ndim
            moved = ops.transpose(dout, (num_dims - 1, *tuple(range(num_dims - 1))))
            return {"input_": ops.transpose(moved, (*tuple(range(1, num_dims)), 0))}

    return AllGatherFromTensorParallelRegion


SP_X = np.array(
    [[[0.5, -1.0], [2.0, 0.25]], [[1.5, -0.5], [0.75, 3.0]], [[-2.0, 0.1], [1.25, -0.75]]], np.float32
)


# VocabParallelCrossEntropy (experimental/parallel_core/pynative/tensor_parallel/cross_entropy.py),
# on one device: construct keeps softmax, mask and target on self.saved_tensors when PYNATIVE's
# grad flag is set, bprop(self, *args) pops them and resets the lists; helper methods on both
# sides; label_smoothing (a Python float, read back through self) gets None; target is an int
# Tensor. (mint.arange has no CPU kernel: ops.arange, the same values.)
def _rrhfv_vocab_parallel_ce(base: type) -> type:
    class VocabParallelCrossEntropy(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.label_smoothing: Any = None
            self.vocab_size: Any = None
            self.saved_tensors: list[list[Any]] = [[], [], []]
            self.tp_world_size = 1

        def _calculate_logits_max(self, vocab_parallel_logits: Tensor) -> Any:
            logits_max = mint.max(vocab_parallel_logits, dim=-1)[0]
            return vocab_parallel_logits, logits_max

        def _get_vocab_range(self, partition_vocab_size: int, rank: int) -> Any:
            vocab_start_index = rank * partition_vocab_size
            vocab_end_index = vocab_start_index + partition_vocab_size
            return vocab_start_index, vocab_end_index

        def _calculate_predicted_logits(
            self,
            vocab_parallel_logits: Any,
            target: Any,
            logits_max: Any,
            vocab_start_index: int,
            vocab_end_index: int,
            partition_vocab_size: int,
        ) -> Any:
            vocab_parallel_logits = vocab_parallel_logits - logits_max.unsqueeze(dim=-1)
            left = target < vocab_start_index
            right = target >= vocab_end_index
            target_mask = left.astype(ms.int32) | right.astype(ms.int32)
            target_mask = target_mask.astype(ms.bool_)
            masked_target = target - vocab_start_index
            masked_target = ops.masked_fill(masked_target, target_mask, ms.Tensor(0, masked_target.dtype))
            logits_2d = vocab_parallel_logits.view(-1, partition_vocab_size)
            masked_target_1d = masked_target.view(-1)
            arange_1d = ops.arange(start=0, end=logits_2d.shape[0], step=1)
            predicted_logits_1d = logits_2d[arange_1d, masked_target_1d]
            predicted_logits_1d = predicted_logits_1d.contiguous()
            predicted_logits = predicted_logits_1d.view_as(target)
            predicted_logits = ops.masked_fill(
                predicted_logits, target_mask, ms.Tensor(0.0, predicted_logits.dtype)
            )
            exp_logits = mint.exp(vocab_parallel_logits)
            sum_exp_logits = exp_logits.sum(axis=-1)
            return target_mask, masked_target_1d, predicted_logits, sum_exp_logits, exp_logits

        def _calculate_cross_entropy_loss(
            self, exp_logits: Any, predicted_logits: Any, sum_exp_logits: Any
        ) -> Any:
            loss = mint.log(sum_exp_logits) - predicted_logits
            exp_logits = exp_logits.div(sum_exp_logits.unsqueeze(dim=-1))
            return exp_logits, loss

        def _prepare_gradient_calculation_operands(self, softmax: Any, target_mask: Any) -> Any:
            grad_input = softmax
            partition_vocab_size = softmax.shape[-1]
            grad_2d = grad_input.view(-1, partition_vocab_size)
            arange_1d = ops.arange(start=0, end=grad_2d.shape[0], step=1)
            target_mask = target_mask.astype(ms.float32)
            softmax_update = 1.0 - target_mask.view(-1)
            return grad_2d, arange_1d, softmax_update, grad_input

        def _calculate_gradients(
            self,
            grad_2d: Any,
            arange_1d: Any,
            masked_target_1d: Any,
            softmax_update: Any,
            grad_input: Any,
            grad_output: Any,
            softmax: Any,
        ) -> Any:
            grad_2d[arange_1d, masked_target_1d] -= softmax_update
            grad_2d = grad_2d.reshape(softmax.shape)
            grad_input = grad_2d.mul(grad_output.unsqueeze(dim=-1))
            return grad_input

        def construct(
            self, vocab_parallel_logits: Tensor, target: Tensor, label_smoothing: float = 0.0
        ) -> Any:
            vocab_parallel_logits, logits_max = self._calculate_logits_max(vocab_parallel_logits)
            partition_vocab_size = vocab_parallel_logits.shape[-1]
            vocab_start_index, vocab_end_index = self._get_vocab_range(partition_vocab_size, 0)
            (target_mask, masked_target_1d, predicted_logits, sum_exp_logits, exp_logits) = (
                self._calculate_predicted_logits(
                    vocab_parallel_logits,
                    target,
                    logits_max,
                    vocab_start_index,
                    vocab_end_index,
                    partition_vocab_size,
                )
            )
            exp_logits, loss = self._calculate_cross_entropy_loss(
                exp_logits, predicted_logits, sum_exp_logits
            )
            vocab_size = exp_logits.shape[-1]
            if label_smoothing > 0.0:
                if label_smoothing <= 0.0 or label_smoothing >= 1.0:
                    raise ValueError("label_smoothing must be greater than 0.0 and less than 1.0.")
                smoothing = label_smoothing * vocab_size / (vocab_size - 1)
                log_probs = mint.log(exp_logits)
                mean_log_probs = log_probs.mean(axis=-1)
                loss = (1.0 - smoothing) * loss - smoothing * mean_log_probs
            self.label_smoothing = label_smoothing
            self.vocab_size = vocab_size
            if _pynative_executor.grad_flag():
                self.saved_tensors[0].append(exp_logits)
                self.saved_tensors[1].append(target_mask)
                self.saved_tensors[2].append(masked_target_1d)
            return loss

        def bprop(self, *args: Any) -> Any:
            grad_output = args[-1]
            softmax, target_mask, masked_target_1d = (
                self.saved_tensors[0].pop(0),
                self.saved_tensors[1].pop(0),
                self.saved_tensors[2].pop(0),
            )
            (grad_2d, arange_1d, softmax_update, grad_input) = self._prepare_gradient_calculation_operands(
                softmax, target_mask
            )
            if self.label_smoothing > 0.0:
                smoothing = self.label_smoothing * self.vocab_size / (self.vocab_size - 1)
                grad_2d[arange_1d, masked_target_1d] -= (1.0 - smoothing) * softmax_update
                average_grad = 1 / self.vocab_size
                grad_2d[arange_1d, :] -= smoothing * average_grad
                grad_2d = grad_2d.reshape(softmax.shape)
                grad_input = grad_2d.mul(grad_output.unsqueeze(dim=-1))
            else:
                grad_input = self._calculate_gradients(
                    grad_2d, arange_1d, masked_target_1d, softmax_update, grad_input, grad_output, softmax
                )
            self.saved_tensors = [[], [], []]
            return grad_input, None, None

    return VocabParallelCrossEntropy


CE_TARGET = np.array([2, 3, 0], np.int32)


def _vocab_ce_expected(inputs: Arrays, dout: Any) -> Arrays:
    logits, target, label_smoothing = inputs
    vocab = logits.shape[-1]
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    grad = e / e.sum(axis=-1, keepdims=True)
    smoothing = label_smoothing * vocab / (vocab - 1)
    grad[np.arange(len(target)), target] -= 1.0 - smoothing
    grad -= smoothing / vocab
    return (grad * dout[:, None], None, None)


def _three_kw_ce(c: Any, logits: Any, target: Any, label_smoothing: Any) -> Any:
    return c(vocab_parallel_logits=logits, target=target, label_smoothing=label_smoothing)


# --- golden-stick (mindspore-ai/golden-stick) ---------------------------------------------------
GS = "mindspore-ai/golden-stick mindspore_gs/quantization/"


# SlbQuantizer (slb/slb_fake_quantizer.py, 2022-06): floor quantisation with a (1, 1, 1, 1) scale
# computed eagerly in __init__, straight-through backward; bprop(self, input_, out, dout)
def _gs_slb_quantizer(base: type) -> type:
    class SlbQuantizer(base):  # type: ignore[misc]
        def __init__(self, num_bits: int = 8) -> None:
            super().__init__()
            self.base = Tensor(2, ms.float32)
            self.pow = P.Pow()
            self.reshape = P.Reshape()
            self.round = P.Floor()
            self._num_bits = num_bits
            scale = self.pow(self.base, self._num_bits) - 1
            self.scale = self.reshape(scale, (1, 1, 1, 1))

        def construct(self, input_: Tensor) -> Any:
            return self.round(input_ * self.scale) / self.scale

        def bprop(self, input_: Tensor, out: Any, dout: Any) -> Any:
            return (dout,)

    return SlbQuantizer


def _gs_slb_quantizer_natural() -> type:
    from kwcell import KwCell

    base = _gs_slb_quantizer(KwCell)

    class SlbQuantizer(base):  # type: ignore[misc,valid-type]
        def bprop(self, input_: Tensor, *, out: Any, dout: Any) -> Any:
            return {"input_": dout}

    return SlbQuantizer


# QBNNACTQuantizer (same file): a plain cell (golden-stick's FakeQuantizer) around SlbQuantizer:
# clips from above by a trainable Parameter, normalises, C.clip_by_value with Tensor bounds, then
# the quantiser's straight-through bprop; autodiff everywhere else
def _gs_qbnn_act_on(quantizer: type) -> type:
    class QBNNACTQuantizer(nn.Cell):
        def __init__(self, num_bits: int = 8) -> None:
            super().__init__()
            self._num_bits = num_bits
            self.min_val = Tensor(0, ms.float32)
            self.max_val = Tensor(1000, ms.float32)
            self.max_val2 = Tensor(1.49999, ms.float32)
            self.relu_upper_bound = Parameter(
                Tensor([1], ms.float32), name="relu_upper_bound", requires_grad=True
            )
            self.quantize = quantizer(num_bits)

        def construct(self, x: Tensor) -> Any:
            x = x - (x >= self.relu_upper_bound).astype(ms.float32) * (x - self.relu_upper_bound)
            x = x / self.relu_upper_bound
            x = ops.clip_by_value(x, self.min_val, self.max_val)
            x = self.quantize(x)
            x = x * self.relu_upper_bound
            return x

    return QBNNACTQuantizer


def _gs_qbnn_act(base: type) -> type:
    return _gs_qbnn_act_on(_gs_slb_quantizer(base))


def _gs_qbnn_act_natural() -> type:
    return _gs_qbnn_act_on(_gs_slb_quantizer_natural())


QBNN_X = np.array([[[[-0.3, 0.25, 0.6], [1.4, 0.05, 0.9]]]], np.float32)


def _qbnn_act_expected(inputs: Arrays, dout: Any) -> Arrays:
    x = inputs[0]
    return (dout * ((x < 1.0) & (x >= 0.0)),)


SLB_X = np.array(
    [[[[0.05, 0.31, 0.77], [0.5, 0.93, 0.12]], [[0.66, 0.2, 0.41], [0.88, 0.03, 0.59]]]], np.float32
)


# FakeQuantPerLayer (ops/operations/fake_quant_perlayer.py): a GSCustom op whose bprop is
# bprop(x, x_min, x_max, _, dout) -> (FakeQuantPerLayerGrad(dout, x, x_min, x_max),
# zeros_like(x_min), zeros_like(x_max)); its GPU kernels (kernel/gpu/fake_quant_*.cu) are written
# here with ops in a cell: the forward and the gradient kernel both compute the nudged range
# (NudgeMinMaxPerLayer), here the helper method _nudge that construct and bprop both call
# (asymmetric, no narrow range)
def _gs_fake_quant(base: type) -> type:
    class FakeQuantPerLayer(base):  # type: ignore[misc]
        def __init__(self, num_bits: int = 8) -> None:
            super().__init__()
            self.quant_min = 0.0
            self.quant_max = float(2**num_bits - 1)

        def _nudge(self, x_min: Tensor, x_max: Tensor) -> Any:
            scale = (x_max - x_min) / (self.quant_max - self.quant_min)
            zp_from_min = self.quant_min - x_min / scale
            nudge_zp = ops.round(ops.clip_by_value(zp_from_min, self.quant_min, self.quant_max))
            nudge_min = (self.quant_min - nudge_zp) * scale
            nudge_max = (self.quant_max - nudge_zp) * scale
            return nudge_min, nudge_max, scale

        def construct(self, x: Tensor, x_min: Tensor, x_max: Tensor) -> Any:
            nudge_min, nudge_max, scale = self._nudge(x_min, x_max)
            clamped = ops.clip_by_value(x, nudge_min, nudge_max)
            return ops.round((clamped - nudge_min) / scale) * scale + nudge_min

        def bprop(self, x: Tensor, x_min: Tensor, x_max: Tensor, _: Any, dout: Any) -> Any:
            nudge_min, nudge_max, _scale = self._nudge(x_min, x_max)
            inside = ops.logical_and(x >= nudge_min, x <= nudge_max)
            dx = dout * F.cast(inside, F.dtype(dout))
            return dx, F.zeros_like(x_min), F.zeros_like(x_max)

    return FakeQuantPerLayer


def _gs_fake_quant_natural() -> type:
    from kwcell import KwCell

    base = _gs_fake_quant(KwCell)

    class FakeQuantPerLayer(base):  # type: ignore[misc,valid-type]
        def bprop(self, x: Tensor, x_min: Tensor, x_max: Tensor, *, out: Any, dout: Any) -> Any:
            nudge_min, nudge_max, _scale = self._nudge(x_min, x_max)
            inside = ops.logical_and(x >= nudge_min, x <= nudge_max)
            return {"x": dout * F.cast(inside, F.dtype(dout))}

    return FakeQuantPerLayer


FQ_X = np.array([[-1.3, -0.2, 0.45], [0.9, 2.7, -2.5]], np.float32)
FQ_MIN = np.array([-1.0], np.float32)
FQ_MAX = np.array([1.5], np.float32)


def _fake_quant_expected(inputs: Arrays, dout: Any) -> Arrays:
    x, x_min, x_max = inputs
    qmin, qmax = 0.0, 15.0
    scale = (x_max - x_min) / (qmax - qmin)
    zp = np.round(np.clip(qmin - x_min / scale, qmin, qmax))
    nudge_min, nudge_max = (qmin - zp) * scale, (qmax - zp) * scale
    inside = (x >= nudge_min) & (x <= nudge_max)
    return (dout * inside, np.zeros_like(x_min), np.zeros_like(x_max))


def _fake_quant_kw(c: Any, x: Any, x_min: Any, x_max: Any) -> Any:
    return c(x=x, x_min=x_min, x_max=x_max)


# MinMaxUpdatePerLayer (ops/operations/min_max_update_perlayer.py): a tuple output (min, max)
# from the EMA kernel (kernel/gpu/min_max_update_per_layer_impl.cu, here with ops); bprop(x,
# x_min, x_max, out, dout) gives zeros_like to all three inputs (autodiff would not)
def _gs_min_max_update(base: type) -> type:
    class MinMaxUpdatePerLayer(base):  # type: ignore[misc]
        def __init__(self, ema: bool = False, ema_decay: float = 0.999) -> None:
            super().__init__()
            self.ema = ema
            self.ema_decay = ema_decay

        def construct(self, x: Tensor, x_min: Tensor, x_max: Tensor) -> Any:
            minel = x.min()
            maxel = x.max()
            if self.ema:
                min_out = self.ema_decay * minel + (1 - self.ema_decay) * x_min
                max_out = self.ema_decay * maxel + (1 - self.ema_decay) * x_max
            else:
                min_out = minel * ops.ones_like(x_min)
                max_out = maxel * ops.ones_like(x_max)
            return ops.minimum(min_out, 0.0), ops.maximum(max_out, 0.0)

        def bprop(self, x: Tensor, x_min: Tensor, x_max: Tensor, out: Any, dout: Any) -> Any:
            return F.zeros_like(x), F.zeros_like(x_min), F.zeros_like(x_max)

    return MinMaxUpdatePerLayer


def _gs_min_max_update_natural() -> type:
    from kwcell import KwCell

    base = _gs_min_max_update(KwCell)

    class MinMaxUpdatePerLayer(base):  # type: ignore[misc,valid-type]
        def bprop(self, x: Tensor, x_min: Tensor, x_max: Tensor, *, out: Any, dout: Any) -> Any:
            return {}

    return MinMaxUpdatePerLayer


def _zeros_expected(inputs: Arrays, dout: Any) -> Arrays:
    return tuple(np.zeros_like(v) for v in inputs)


# LearnedStepSizeFakeQuantizerPerLayer (learned_step_size_quantization/
# learned_step_size_fake_quantizers.py): LSQ with the learnable step Parameter _float_max (alpha).
# golden-stick takes its gradient from MindSpore's FakeLearnedScaleQuantPerLayer op (GPU kernel
# fake_learned_scale_quant_perlayer_impl.cu: dx = dout inside [-alpha, alpha], dalpha = sum of
# dout * (+1 above, -1 below, quant - x/alpha inside)); here that gradient is the cell's bprop,
# which gives the step Parameter its gradient through internal_params, and the LSQNudgePerLayer
# both kernels share (max, min, floor(. + 0.5)) is the helper method _lsq_nudge. quant_max and
# _float_min get zero gradients from the op, so they are not trainable here.
def _gs_lsq(base: type) -> type:
    class LearnedStepSizeFakeQuantizerPerLayer(base):  # type: ignore[misc]
        def __init__(self, num_bits: int = 8, min_init: float = -6.0, max_init: float = 6.0) -> None:
            super().__init__()
            self._quant_max = (1 << (num_bits - 1)) - 1
            self.quant_max = Parameter(
                Tensor(np.array([self._quant_max]).astype(np.float32)), name="quant_max", requires_grad=False
            )
            self._float_min = Parameter(Tensor([min_init], ms.float32), name="float_min", requires_grad=False)
            self._float_max = Parameter(Tensor([max_init], ms.float32), name="float_max")
            self.internal_params = [self._float_max]

        def _lsq_nudge(self, x: Tensor) -> Any:
            input_div_alpha = x / self._float_max
            clamped = ops.minimum(ops.maximum(input_div_alpha, -1.0), 1.0)
            input_quant = ops.floor(clamped * self.quant_max + 0.5) / self.quant_max
            return input_div_alpha, input_quant

        def construct(self, x: Tensor) -> Any:
            _, input_quant = self._lsq_nudge(x)
            return input_quant * self._float_max

        def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
            input_div_alpha, input_quant = self._lsq_nudge(x)
            above = F.cast(input_div_alpha > 1.0, ms.float32)
            below = F.cast(input_div_alpha < -1.0, ms.float32)
            inside = 1.0 - above - below
            grad_input = dout * inside
            grad_alpha = (dout * (above - below + inside * (input_quant - input_div_alpha))).sum()
            return (grad_input,), {self._float_max: grad_alpha.reshape((1,))}

    return LearnedStepSizeFakeQuantizerPerLayer


def _gs_lsq_natural() -> type:
    from kwcell import KwCell

    base = _gs_lsq(KwCell)

    class LearnedStepSizeFakeQuantizerPerLayer(base):  # type: ignore[misc,valid-type]
        def bprop(self, x: Tensor, *, out: Any, dout: Any) -> Any:
            input_div_alpha, input_quant = self._lsq_nudge(x)
            above = F.cast(input_div_alpha > 1.0, ms.float32)
            below = F.cast(input_div_alpha < -1.0, ms.float32)
            inside = 1.0 - above - below
            grad_alpha = (dout * (above - below + inside * (input_quant - input_div_alpha))).sum()
            return {"x": dout * inside, self._float_max: grad_alpha.reshape((1,))}

    return LearnedStepSizeFakeQuantizerPerLayer


LSQ_ALPHA = 1.0
LSQ_QMAX = 7.0  # num_bits=4


def _lsq_parts(x: Any, alpha: Any = LSQ_ALPHA) -> tuple[Any, Any, Any, Any]:
    r = x / alpha
    quant = np.floor(np.clip(r, -1.0, 1.0) * LSQ_QMAX + 0.5) / LSQ_QMAX
    above, below = (r > 1.0).astype(np.float32), (r < -1.0).astype(np.float32)
    return r, quant, above, below


def _lsq_expected(inputs: Arrays, dout: Any) -> Arrays:
    _, _, above, below = _lsq_parts(inputs[0])
    return (dout * (1.0 - above - below),)


def _lsq_expected_weights(inputs: Arrays, dout: Any, cell: Any) -> dict[str, Any]:
    # alpha as the cell holds it now (train_weights moves it)
    r, quant, above, below = _lsq_parts(inputs[0], cell._float_max.asnumpy()[0])
    inside = 1.0 - above - below
    g = (dout * (above - below + inside * (quant - r))).sum()
    return {cell._float_max.name: np.array([g], np.float32)}


LSQ_X = np.array([[0.33, -1.4, 0.71], [1.8, -0.45, 0.06]], np.float32)

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
    Case(
        name="zoo_rrhfv_log_softmax",
        source=RRHF + "core/loss/loss.py: _LogSoftmax",
        body=_rrhfv_log_softmax,
        natural=_rrhfv_log_softmax_natural,
        inputs=lambda: (LOGITS, LABEL),
        positional=_two,
        keyword=_log_softmax_kw,
        head=_pair_head,
        expected=lambda inputs, dout: (dout[0], None),
    ),
    Case(
        name="zoo_rrhfv_nll_loss",
        source=RRHF + "core/loss/loss.py: _NLLLoss",
        body=_rrhfv_nll_loss,
        natural=_rrhfv_nll_loss_natural,
        inputs=_nll_inputs,
        positional=_two,
        keyword=_nll_kw,
        expected=_nll_expected,
    ),
    Case(
        name="zoo_rrhfv_moe_aux_loss_scaler",
        source=RRHF + "experimental/parallel_core/pynative/transformer/moe/utils.py: MoEAuxLossAutoScaler",
        body=_rrhfv_moe_aux_loss_scaler,
        natural=_rrhfv_moe_aux_loss_scaler_natural,
        inputs=lambda: (X, np.array(0.37, np.float32)),
        positional=_two,
        keyword=_moe_kw,
        expected=lambda inputs, dout: (dout, np.ones_like(inputs[1])),
        nn_fails=dict.fromkeys(("pynative", "train"), _NO_ONES_LIKE),
        kw_fails=dict.fromkeys(("pynative", "train"), _NO_ONES_LIKE),
        skip={
            "twice": "the harness expects 3 * bprop(dout) from the two calls; this bprop's aux_loss "
            "gradient ignores dout (the calls give 2 * ones)"
        },
    ),
    Case(
        name="zoo_rrhfv_self_defined_gather",
        source=RRHF + "experimental/parallel_core/pynative/transformer/moe/utils.py: SelfDefinedGather",
        body=_rrhfv_self_defined_gather,
        natural=_rrhfv_self_defined_gather_natural,
        init=lambda: {"indices": Tensor(PERM)},
        inputs=lambda: (GATHER_X,),
        positional=_one,
        keyword=_kw_input_,
        expected=_gather_expected,
    ),
    Case(
        name="zoo_rrhfv_linear_frozen_weight",
        source=RRHF + "experimental/parallel_core/pynative/tensor_parallel/layers.py: LinearWithFrozenWeight",
        body=_rrhfv_linear_frozen,
        natural=_rrhfv_linear_frozen_natural,
        init=lambda: {"bias": True},
        inputs=lambda: (LIN_X, LIN_W, LIN_B),
        positional=_three,
        keyword=_linear_kw,
        expected=_linear_expected,
        nn_fails=dict.fromkeys(("graph", "outer", "jit", "twice"), _NONE_GRAD),
    ),
    Case(
        name="zoo_rrhfv_linear_frozen_weight_no_bias",
        source=RRHF + "experimental/parallel_core/pynative/tensor_parallel/layers.py: LinearWithFrozenWeight",
        body=_rrhfv_linear_frozen,
        natural=_rrhfv_linear_frozen_natural,
        init=lambda: {"bias": False},
        inputs=lambda: (LIN_X, LIN_W, None),
        positional=_three,
        keyword=_linear_kw,
        expected=_linear_expected,
        nn_fails=dict.fromkeys(("graph", "outer", "jit", "twice"), _NONE_GRAD),
    ),
    Case(
        name="zoo_rrhfv_pre_backward_cell",
        source=RRHF + "experimental/parallel_core/pynative/optimizer/zero/adamw_zero.py: PreBackwardCell",
        body=_rrhfv_pre_backward,
        natural=_rrhfv_pre_backward_natural,
        init=lambda: {"func": _pre_backward_hook},
        inputs=lambda: (X, LIN_B[:3].copy()),
        positional=_two,
        keyword=_pre_backward_kw,
        head=_pair_head,
        expected=lambda inputs, dout: (dout[0], dout[1]),
        nn_fails=dict.fromkeys(_GRAPH_MODES, _STAR_ARGS),
    ),
    Case(
        name="zoo_gs_slb_quantizer",
        source=GS + "slb/slb_fake_quantizer.py (e1cb515, 2022-06): SlbQuantizer",
        body=_gs_slb_quantizer,
        natural=_gs_slb_quantizer_natural,
        init=lambda: {"num_bits": 4},
        inputs=lambda: (SLB_X,),
        positional=_one,
        keyword=_kw_input_,
        expected=_identity_expected,
    ),
    Case(
        name="zoo_gs_fake_quant_perlayer",
        source=GS
        + "ops/operations/fake_quant_perlayer.py: FakeQuantPerLayer (bprop and GPU kernels as a cell)",
        body=_gs_fake_quant,
        natural=_gs_fake_quant_natural,
        init=lambda: {"num_bits": 4},
        inputs=lambda: (FQ_X, FQ_MIN, FQ_MAX),
        positional=_three,
        keyword=_fake_quant_kw,
        expected=_fake_quant_expected,
        nn_fails=dict.fromkeys(_GRAPH_MODES, _CLIP_EMPTY),
    ),
    Case(
        name="zoo_gs_min_max_update_perlayer",
        source=GS
        + "ops/operations/min_max_update_perlayer.py: MinMaxUpdatePerLayer (bprop and kernel as a cell)",
        body=_gs_min_max_update,
        natural=_gs_min_max_update_natural,
        init=lambda: {"ema": True, "ema_decay": 0.9},
        inputs=lambda: (FQ_X, FQ_MIN, FQ_MAX),
        positional=_three,
        keyword=_fake_quant_kw,
        head=_pair_head,
        expected=_zeros_expected,
    ),
    Case(
        name="zoo_gs_lsq_perlayer",
        source=GS
        + "learned_step_size_quantization/learned_step_size_fake_quantizers.py: "
        + "LearnedStepSizeFakeQuantizerPerLayer (its op's LSQ gradient as the cell's bprop)",
        body=_gs_lsq,
        natural=_gs_lsq_natural,
        init=lambda: {"num_bits": 4, "max_init": LSQ_ALPHA},
        inputs=lambda: (LSQ_X,),
        positional=_one,
        keyword=_kw_x,
        expected=_lsq_expected,
        expected_weights=_lsq_expected_weights,
        train_weights=True,
        nn_fails=dict.fromkeys(_GRAPH_MODES, _PARAMETER_IN_BPROP),
    ),
    Case(
        name="zoo_snn_ifnode",
        source="mindspore-ai/models community/cv/snn/src/ifnode.py: IFNode (with its default relusigmoid)",
        body=_snn_ifnode,
        natural=_snn_ifnode_natural,
        init=lambda: {"v_threshold": 1.25},
        inputs=lambda: (X, IF_V),
        positional=_two,
        keyword=_ifnode_kw,
        head=_pair_head,
        expected=_snn_ifnode_expected,
        nn_fails={"twice": _AUGASSIGN_TWICE},
        kw_fails={"twice": _AUGASSIGN_TWICE},
    ),
    Case(
        name="zoo_gs_qbnn_act_quantizer",
        source=GS + "slb/slb_fake_quantizer.py (e1cb515, 2022-06): QBNNACTQuantizer (with its SlbQuantizer)",
        body=_gs_qbnn_act,
        natural=_gs_qbnn_act_natural,
        init=lambda: {"num_bits": 4},
        inputs=lambda: (QBNN_X,),
        positional=_one,
        keyword=_kw_x,
        expected=_qbnn_act_expected,
    ),
    Case(
        name="zoo_flownet2_correlation",
        source="mindspore-ai/models research/cv/flownet2/src/submodels/custom_ops/custom_ops.py: "
        + "Correlation (its AOT kernels as ops)",
        body=_flownet2_correlation,
        natural=_flownet2_correlation_natural,
        init=lambda: {"pad_size": 2, "kernel_size": 1, "max_displacement": 2, "stride1": 1, "stride2": 2},
        inputs=lambda: (CORR_X1, CORR_X2),
        positional=_two,
        keyword=_correlation_kw,
        expected=_correlation_expected,
    ),
    Case(
        name="zoo_rrhfv_reduce_scatter_to_sp_region",
        source=RRHF
        + "experimental/parallel_core/pynative/tensor_parallel/mappings.py: "
        + "ReduceScatterToSequenceParallelRegion (world_size 1)",
        body=_rrhfv_reduce_scatter_to_sp,
        init=lambda: {"need_to_swapaxes": True},
        inputs=lambda: (SP_X,),
        positional=_one,
        keyword=_kw_input_,
        expected=_identity_expected,
        nn_fails=dict.fromkeys(_GRAPH_MODES, _STAR_ARGS),
    ),
    Case(
        name="zoo_rrhfv_all_gather_from_tp_region",
        source=RRHF
        + "experimental/parallel_core/pynative/tensor_parallel/mappings.py: "
        + "AllGatherFromTensorParallelRegion (world_size 1)",
        body=_rrhfv_all_gather_from_tp,
        natural=_rrhfv_all_gather_from_tp_natural,
        inputs=lambda: (SP_X,),
        positional=_one,
        keyword=_kw_input_,
        expected=_identity_expected,
    ),
    Case(
        name="zoo_rrhfv_vocab_parallel_cross_entropy",
        source=RRHF
        + "experimental/parallel_core/pynative/tensor_parallel/cross_entropy.py: "
        + "VocabParallelCrossEntropy (one device)",
        body=_rrhfv_vocab_parallel_ce,
        inputs=lambda: (LOGITS, CE_TARGET, 0.0),
        positional=_three,
        keyword=_three_kw_ce,
        expected=_vocab_ce_expected,
        skip=dict.fromkeys(_GRAPH_MODES, _GRAD_FLAG),
    ),
    Case(
        name="zoo_rrhfv_vocab_parallel_cross_entropy_smoothed",
        source=RRHF
        + "experimental/parallel_core/pynative/tensor_parallel/cross_entropy.py: "
        + "VocabParallelCrossEntropy (one device, label_smoothing)",
        body=_rrhfv_vocab_parallel_ce,
        inputs=lambda: (LOGITS, CE_TARGET, 0.1),
        positional=_three,
        keyword=_three_kw_ce,
        expected=_vocab_ce_expected,
        skip=dict.fromkeys(_GRAPH_MODES, _GRAD_FLAG),
    ),
]
