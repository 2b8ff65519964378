"""Cells for tests/test_gradcheck.py: right and deliberately wrong custom bprops.

They live in a real source file because GRAPH_MODE parses cells from their source.
Every wrong bprop is wrong in exactly one named way, so that gradcheck must name that input.
"""

from __future__ import annotations

from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

from kwcell import KwCell, keyword_bprop


class Scaled(KwCell):
    """Right: d/dx = w cos x + y, d/dw = sin x, d/dy = x."""

    def construct(self, x: Any, w: Any = 1.0, y: Any = 1.0) -> Any:
        return w * ops.sin(x) + y * x

    def bprop(self, x: Any, w: Any, y: Any, *, out: Any, dout: Any) -> Any:
        return {"x": (w * ops.cos(x) + y) * dout, "w": ops.sin(x) * dout, "y": x * dout}


class WrongScale(KwCell):
    """Wrong: the gradient of ``w`` is twice what it should be; ``x`` and ``y`` are right."""

    def construct(self, x: Any, w: Any = 1.0, y: Any = 1.0) -> Any:
        return w * ops.sin(x) + y * x

    def bprop(self, x: Any, w: Any, y: Any, *, out: Any, dout: Any) -> Any:
        return {"x": (w * ops.cos(x) + y) * dout, "w": 2 * ops.sin(x) * dout, "y": x * dout}


class Swapped(KwCell):
    """Wrong: the gradients of ``x`` and ``y`` are returned in each other's place."""

    def construct(self, x: Any, y: Any) -> Any:
        return x * ops.exp(y)

    def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
        return x * ops.exp(y) * dout, ops.exp(y) * dout


class NoDout(KwCell):
    """Wrong: the gradient of ``x`` forgets the ``dout`` factor; ``y`` is right."""

    def construct(self, x: Any, y: Any) -> Any:
        return ops.sin(x) * y

    def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
        return ops.cos(x) * y, ops.sin(x) * dout


class WrongKeywordOnly(KwCell):
    """Wrong only for the keyword-only ``scale``, which the tests pass by keyword."""

    def construct(self, x: Any, *, scale: Any) -> Any:
        return scale * x * x

    def bprop(self, x: Any, *, scale: Any, out: Any, dout: Any) -> Any:
        return {"x": 2 * scale * x * dout, "scale": x * dout}


class TwoOutputs(KwCell):
    """Wrong: ignores the cotangent of the second output (``x + y``)."""

    def construct(self, x: Any, y: Any) -> Any:
        return x * y, x + y

    def bprop(self, x: Any, y: Any, *, out: Any, dout: Any) -> Any:
        return {"x": y * dout[0], "y": x * dout[0]}


class TwoOutputsRight(KwCell):
    """Right: both outputs' cotangents reach both inputs."""

    def construct(self, x: Any, y: Any) -> Any:
        return x * y, x + y

    def bprop(self, x: Any, y: Any, *, out: Any, dout: Any) -> Any:
        return {"x": y * dout[0] + dout[1], "y": x * dout[0] + dout[1]}


class Float32Only(KwCell):
    """construct refuses float64, so gradcheck falls back to float32; ``y``'s gradient is wrong."""

    def construct(self, x: Any, y: Any) -> Any:
        if x.dtype == ms.float64:
            raise TypeError("Float32Only takes float32 only")
        return x * y

    def bprop(self, x: Any, y: Any, *, out: Any, dout: Any) -> Any:
        return {"x": y * dout, "y": x * 3 * dout}


class PlainRight(nn.Cell):
    """A plain ``nn.Cell`` with a right classic bprop."""

    def construct(self, x: Any, y: Any) -> Any:
        return x * ops.sin(y)

    def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
        return ops.sin(y) * dout, x * ops.cos(y) * dout


class PlainSwapsKeywords(nn.Cell):
    """A plain ``nn.Cell`` whose classic bprop is right for positional calls only.

    Called ``net(y=b, x=a)``, MindSpore 2.10 hands bprop the inputs, and takes its gradients,
    in call order (measured in PYNATIVE and GRAPH_MODE), so ``x`` and ``y`` trade gradients.
    """

    def construct(self, x: Any, y: Any) -> Any:
        return 2 * x + 3 * y

    def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
        return 2 * dout, 3 * dout


SCALED = Scaled()
WRONG_SCALE = WrongScale()
SWAPPED = Swapped()
NO_DOUT = NoDout()
WRONG_KEYWORD_ONLY = WrongKeywordOnly()
TWO_OUTPUTS = TwoOutputs()
TWO_OUTPUTS_RIGHT = TwoOutputsRight()
FLOAT32_ONLY = Float32Only()
PLAIN_RIGHT = PlainRight()
PLAIN_SWAPS_KEYWORDS = PlainSwapsKeywords()


class PlainUnusedInput(nn.Cell):
    """Right: ``y`` is not used, and bprop says so with ``None`` (a compiled graph then gives
    no gradient for ``y`` at all; PYNATIVE gives zeros)."""

    def construct(self, x: Any, y: Any) -> Any:
        return x * 2.0

    def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
        return dout * 2.0, None


class PlainForgottenInput(nn.Cell):
    """Wrong: ``y`` is used (d/dy = 3), but bprop gives ``None`` for it."""

    def construct(self, x: Any, y: Any) -> Any:
        return x * 2.0 + y * 3.0

    def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
        return dout * 2.0, None


class PlainOnlyInputNone(nn.Cell):
    """Wrong: the only input's gradient is ``None`` (d/dx = 2)."""

    def construct(self, x: Any) -> Any:
        return x * 2.0

    def bprop(self, x: Any, out: Any, dout: Any) -> Any:
        return (None,)


# -- layers with weights: the shapes of public custom-bprop layers ------------------------------
#
# Each holds float32 Parameters (gradcheck casts them to float64 with its inputs) and lists
# the weights its bprop gives gradients to in ``internal_params``. Each ``wrong=True`` variant
# gets exactly one weight's gradient wrong, in a way such layers get it wrong.

_RNG = np.random.default_rng(7)


def _f32(*shape: int) -> Tensor:
    return Tensor(_RNG.standard_normal(shape).astype(np.float32))


class QuantLinear(KwCell):
    """I-BERT's ``QuantLinear`` in quant mode: integer weights with a per-channel scaling
    factor, called with the input's scaling factor ``forward(x, prev_act_scaling_factor=None)``
    and returning ``(output, bias_scaling_factor)``. Here the weights are already integers
    (an int8 Parameter, not trained) and the per-channel scale ``fc_scaling_factor`` and the
    bias are the trained weights.

    ``out = (x / s_a) @ W_int.T * (s_w * s_a) + bias`` and ``bias_scaling_factor = s_w * s_a``.
    Wrong: the gradient of ``fc_scaling_factor`` forgets the second output's cotangent.
    """

    def __init__(self, wrong: bool = False) -> None:
        super().__init__()
        self.wrong = wrong
        w_int = np.array([[3, -7, 2], [-1, 4, 5]], np.int8)
        self.weight_integer = Parameter(Tensor(w_int), name="weight_integer", requires_grad=False)
        self.fc_scaling_factor = Parameter(
            Tensor(np.array([0.05, 0.02], np.float32)), name="fc_scaling_factor"
        )
        self.bias = Parameter(Tensor(np.array([0.1, -0.2], np.float32)), name="bias")
        self.internal_params = [self.fc_scaling_factor, self.bias]

    def construct(self, x: Any, prev_act_scaling_factor: Any = None) -> Any:
        s_a = 1.0 if prev_act_scaling_factor is None else prev_act_scaling_factor
        x_int = x / s_a
        bias_scaling_factor = self.fc_scaling_factor * s_a
        w = self.weight_integer.astype(x.dtype)
        return ops.matmul(x_int, w.T) * bias_scaling_factor + self.bias, bias_scaling_factor

    def bprop(self, x: Any, prev_act_scaling_factor: Any = None, *, out: Any, dout: Any) -> Any:
        g_out, g_scale = dout
        s_a = 1.0 if prev_act_scaling_factor is None else prev_act_scaling_factor
        w = self.weight_integer.astype(x.dtype)
        s_w = self.fc_scaling_factor
        g_s_w = (g_out * ops.matmul(x, w.T)).sum(0)  # out[:, j] = (x @ W_int.T)[:, j] * s_w[j]
        if not self.wrong:
            g_s_w = g_s_w + g_scale * s_a
        return {
            "x": ops.matmul(g_out * s_w, w),
            "prev_act_scaling_factor": (g_scale * s_w).sum().reshape((1,)),  # s_a cancels in out
            self.fc_scaling_factor: g_s_w,
            self.bias: g_out.sum(0),
        }


class LoRALinear(KwCell):
    """A LoRA adapter with a fused backward: a frozen ``nn.Dense`` base and trained low-rank
    ``lora_a`` (r x in), ``lora_b`` (out x r), ``base(x) + scaling * scale * x A^T B^T``,
    ``scale`` a call-time keyword (an adapter's weight when several are mixed).

    ``train_base=True`` leaves the base weights trainable while bprop gives them no gradient
    (the mistake ``trainable_params=True`` is for). Wrong: ``lora_b``'s gradient forgets the
    scaling.
    """

    def __init__(self, wrong: bool = False, train_base: bool = False) -> None:
        super().__init__()
        self.wrong = wrong
        self.base = nn.Dense(3, 2, weight_init=_f32(2, 3), bias_init=_f32(2))
        for p in self.base.get_parameters():
            p.requires_grad = train_base
        self.lora_a = Parameter(_f32(2, 3), name="lora_a")
        self.lora_b = Parameter(_f32(2, 2), name="lora_b")
        self.scaling = 0.5
        self.internal_params = [self.lora_a, self.lora_b]

    def construct(self, x: Any, *, scale: float = 1.0) -> Any:
        s = self.scaling * scale
        return self.base(x) + s * ops.matmul(ops.matmul(x, self.lora_a.T), self.lora_b.T)

    def bprop(self, x: Any, *, scale: float = 1.0, out: Any, dout: Any) -> Any:
        s = self.scaling * scale
        xa = ops.matmul(x, self.lora_a.T)
        g_xa = s * ops.matmul(dout, self.lora_b)
        g_b = ops.matmul(dout.T, xa)
        if not self.wrong:
            g_b = s * g_b
        gx = ops.matmul(dout, self.base.weight) + ops.matmul(g_xa, self.lora_a)
        return {"x": gx, self.lora_a: ops.matmul(g_xa.T, x), self.lora_b: g_b}


class RMSNorm(KwCell):
    """RMSNorm with a weight, ``x * rsqrt(mean(x^2) + eps) * weight``, in MindSpore's own
    bprop form: ``((input grads), {parameter: grad})``.

    Wrong: the weight's gradient uses ``x`` where it needs the normalised ``x``.
    """

    def __init__(self, wrong: bool = False) -> None:
        super().__init__()
        self.wrong = wrong
        self.eps = 1e-6
        self.weight = Parameter(Tensor(np.array([1.0, 0.5, -2.0], np.float32)), name="weight")
        self.internal_params = [self.weight]

    def construct(self, x: Any) -> Any:
        return x * ops.rsqrt((x * x).mean(-1, keep_dims=True) + self.eps) * self.weight

    def bprop(self, x: Any, out: Any, dout: Any) -> Any:
        rstd = ops.rsqrt((x * x).mean(-1, keep_dims=True) + self.eps)
        x_hat = x * rstd
        g = dout * self.weight
        gx = rstd * (g - x_hat * (g * x_hat).mean(-1, keep_dims=True))
        gw = (dout * (x if self.wrong else x_hat)).reshape((-1, 3)).sum(0)
        return (gx,), {self.weight: gw}


class Linear(KwCell):
    """A linear layer with bias, ``x @ weight.T + bias``, its bprop matched by name.

    Wrong: the bias gradient is the batch mean of ``dout`` where it is the sum.
    """

    def __init__(self, wrong: bool = False) -> None:
        super().__init__()
        self.wrong = wrong
        self.weight = Parameter(_f32(2, 3), name="weight")
        self.bias = Parameter(_f32(2), name="bias")
        self.internal_params = [self.weight, self.bias]

    def construct(self, x: Any) -> Any:
        return ops.matmul(x, self.weight.T) + self.bias

    def bprop(self, x: Any, *, out: Any, dout: Any) -> Any:
        gb = dout.mean(0) if self.wrong else dout.sum(0)
        return {"x": ops.matmul(dout, self.weight), self.weight: ops.matmul(dout.T, x), self.bias: gb}


@keyword_bprop
class DecoratedLinear(nn.Cell):
    """The same linear layer on a plain ``nn.Cell``, given kwcell's behaviour by the decorator."""

    def __init__(self, wrong: bool = False) -> None:
        super().__init__()
        self.wrong = wrong
        self.weight = Parameter(_f32(2, 3), name="weight")
        self.bias = Parameter(_f32(2), name="bias")
        self.internal_params = [self.weight, self.bias]

    def construct(self, x: Any) -> Any:
        return ops.matmul(x, self.weight.T) + self.bias

    def bprop(self, x: Any, *, out: Any, dout: Any) -> Any:
        gb = dout.mean(0) if self.wrong else dout.sum(0)
        return {"x": ops.matmul(dout, self.weight), self.weight: ops.matmul(dout.T, x), self.bias: gb}


class PlainLinear(nn.Cell):
    """The same linear layer as MindSpore itself takes it (PYNATIVE: MindSpore's graphs
    refuse Parameters in a bprop): positional bprop, ``((gx,), {param: grad})``."""

    def __init__(self, wrong: bool = False) -> None:
        super().__init__()
        self.wrong = wrong
        self.weight = Parameter(_f32(2, 3), name="weight")
        self.bias = Parameter(_f32(2), name="bias")
        self.internal_params = [self.weight, self.bias]

    def construct(self, x: Any) -> Any:
        return ops.matmul(x, self.weight.T) + self.bias

    def bprop(self, x: Any, out: Any, dout: Any) -> Any:
        gb = dout.mean(0) if self.wrong else dout.sum(0)
        return (ops.matmul(dout, self.weight),), {self.weight: ops.matmul(dout.T, x), self.bias: gb}


class Embedding(KwCell):
    """An embedding lookup: integer ids only, so the weight is all there is to check."""

    def __init__(self, wrong: bool = False) -> None:
        super().__init__()
        self.wrong = wrong
        self.weight = Parameter(_f32(4, 2), name="weight")
        self.internal_params = [self.weight]

    def construct(self, ids: Any) -> Any:
        return ops.gather(self.weight, ids, 0)

    def bprop(self, ids: Any, out: Any, dout: Any) -> Any:
        gw = ops.unsorted_segment_sum(dout, ids, 4)
        return (None,), {self.weight: gw * 2 if self.wrong else gw}
