"""Corpus cells (harness.py) whose bprop gives weight gradients (issue 26): every way real code
writes them, by signature (``bprop(self, *args)``, MindSpore's positional form, kwcell's by-name
form with ``**kwargs``) and by return (MindSpore's ``((input grads), {param: grad})``, a dict
held in a variable, a comprehension, a weight left out, a weight the cell does not hold, a
gradient of a broadcast shape).

Each cell is re-implemented from the named public class: the same math and signatures. Most of
the originals are written for a cluster, or take their weights as inputs; where the weights are
moved into ``internal_params`` (the form this corpus is about) or a bprop is written for a class
that leaves its gradient to autodiff, the comment says so. Every case trains the cell's own
weights too (``train_weights``: three ``TrainOneStepCell`` steps against numpy's), so each
``expected_weights`` reads the weights' current values from the cell where its gradient uses
them.

nn.Cell refuses any bprop that reads a Parameter in a graph, so its graph modes fail for all of
these (``nn_fails``); a KwCell fails only where MindSpore's own graph compiler does (a dict keyed
by Parameters it computes, ``kw_fails``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mindspore import Parameter, Tensor, ops
from mindspore.ops import operations as P

from tests.corpus.harness import Arrays, Case, pattern

MS = "mindspore-ai/mindspore"
SPEED = "Ascend/MindSpeed-Core-MS mindspeed_ms/core/tensor_parallel/"

_GRAPH_MODES = ("graph", "outer", "jit", "train", "twice")  # every mode that compiles the bprop
_PARAMETER_IN_BPROP = (
    "a bprop reading a Parameter does not compile: \"The user defined 'bprop' function in scope ... "
    'does not support using Parameter" (RuntimeError)'
)
_COMPUTED_KEYS = (
    "a dict keyed by Parameters it computes ({p: g for p, g in zip(self.internal_params, ...)}) "
    "cannot be built in a graph (MindSpore's dicts take constant keys): kwcell's RuntimeError "
    "names the class, the bprop line and the form to write ({self.w1: g1, ...}) before MindSpore's "
    "compiler; PYNATIVE is right"
)


def _kwcell() -> type:
    from kwcell import KwCell

    return KwCell


def _first_output(out: Any, s: Any) -> Any:
    """The head of a cell with a tuple output whose caller uses only the first entry."""
    return (out[0] * s[0]).sum()


def _pos1(c: Any, x: Any) -> Any:
    return c(x)


def _pos2(c: Any, x: Any, y: Any) -> Any:
    return c(x, y)


def _kw_x(c: Any, x: Any) -> Any:
    return c(x=x)


def _kw_input_(c: Any, x: Any) -> Any:
    return c(input_=x)


def _flat(a: Any) -> Any:
    """[..., n] viewed as [rows, n]."""
    return a.reshape(-1, a.shape[-1])


# ---------------------------------------------------------------------------------------------
# MindSpore tests/st/pynative/hook/test_hook_grad_with_torch.py: CustomNetWithParam
# (test_bprop_with_weight). bprop(self, *args) with one weight, as written: its weight has shape
# (1,), so for an input of any other shape its gradient args[0] * args[-1] has the input's shape,
# a broadcast weight gradient (MindSpore's test uses a (1,) input; here (3,)). PYNATIVE nn.Cell
# sums it, to shape () for the (1,) weight; a KwCell sums it to (1,) in every mode.
CN_W = np.array([2.0], np.float32)
CN_X = np.array([0.5, -1.5, 2.0], np.float32)


def _custom_net_with_param(base: type) -> type:
    class CustomNetWithParam(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.w = Parameter(Tensor(CN_W), name="weight")
            self.grad = ops.GradOperation(get_all=True, get_by_list=True, sens_param=True)
            self.internal_params = [self.w]

        def construct(self, x: Any) -> Any:
            output = self.w * x
            return output

        def bprop(self, *args: Any) -> Any:
            return (self.w * args[-1],), {self.w: args[0] * args[-1]}

    return CustomNetWithParam


def _custom_net_with_param_natural() -> type:
    class CustomNetWithParam(_custom_net_with_param(_kwcell())):  # type: ignore[misc]
        def bprop(self, x: Any, *, out: Any, dout: Any) -> Any:
            return {"x": self.w * dout, self.w: x * dout}

    return CustomNetWithParam


def _custom_net_expected(inputs: Arrays, dout: Any) -> Arrays:
    return (CN_W * dout,)


def _custom_net_weights(inputs: Arrays, dout: Any, cell: Any) -> dict[str, Any]:
    return {"weight": np.array([(inputs[0] * dout).sum()], np.float32)}


# ---------------------------------------------------------------------------------------------
# MindSpeed-Core-MS tensor_parallel/layers.py: LinearWithGradAccumulationAndAsyncCommunication
# (one rank, bias, no sequence parallel, no gradient-accumulation fusion, BSH layout,
# transpose_b). Its bprop(self, *args) computes grad_input, grad_weight (BatchMatMul of dout and
# x, summed over the batch) and grad_bias (dout summed twice) for weight and bias passed as
# inputs; here the cell holds them and lists them in internal_params, and bprop returns MindSpore's
# weight form ((grad_input,), {self.weight: ..., self.bias: ...}). x is read from args[0], as its
# recompute_comm branch does (the default branch pops it from a list construct appends to, which
# only PYNATIVE keeps). CPU's BatchMatMul does not broadcast a 2-D weight over a 3-D input: the
# products with the weight are ops.matmul (the weight transposed for transpose_b).
GA_W = pattern((4, 3), seed=41) - 1.0  # [out, in]: transpose_b
GA_B = pattern((4,), seed=42) - 1.0
GA_X = pattern((2, 3, 3), seed=43) - 1.0  # [b, s, in]


def _grad_accumulation_linear(base: type) -> type:
    class LinearWithGradAccumulationAndAsyncCommunication(base):  # type: ignore[misc]
        def __init__(self, bias: bool = True, transpose_b: bool = True, data_layout: str = "BSH") -> None:
            super().__init__()
            self.use_bias = bias
            self.transpose_b = transpose_b
            self.data_layout = data_layout
            self.matmul_g_w = P.BatchMatMul(transpose_a=True, transpose_b=False)  # type: ignore[attr-defined]
            self.weight = Parameter(Tensor(GA_W), name="weight")
            self.bias = Parameter(Tensor(GA_B), name="bias")
            self.internal_params = [self.weight, self.bias]

        def construct(self, input: Any) -> Any:
            output_parallel = ops.matmul(input, self.weight.T)
            if self.use_bias:
                output_parallel = ops.add(output_parallel, self.bias)
            return output_parallel

        def prepare_input_tensors_for_wgrad_compute(self, dout: Any, x: Any) -> Any:
            if self.data_layout == "SBH" and len(dout.shape) == 3:
                dout = dout.view(dout.shape[0] * dout.shape[1], dout.shape[2])
                x = x.view(x.shape[0] * x.shape[1], x.shape[2])
            return dout, x

        def bprop(self, *args: Any) -> Any:
            dout = args[-1]
            weight = self.weight
            x = args[0]
            grad_input = ops.matmul(dout, weight).reshape(x.shape)
            dout, x = self.prepare_input_tensors_for_wgrad_compute(dout, x)
            grad_weight = self.matmul_g_w(dout, x) if self.transpose_b else self.matmul_g_w(x, dout)
            if len(dout.shape) > 2:  # b,s,h / s,b,h
                grad_weight = ops.sum(grad_weight, 0)
                dout = dout.sum(axis=0)
            grad_weight = grad_weight.reshape(weight.shape)
            grad_bias = dout.sum(axis=0)
            return (grad_input,), {self.weight: grad_weight, self.bias: grad_bias}

    return LinearWithGradAccumulationAndAsyncCommunication


def _grad_accumulation_natural() -> type:
    # kwcell's by-name form, out and dout by keyword, the other inputs through **kwargs (none)
    class LinearWithGradAccumulationAndAsyncCommunication(_grad_accumulation_linear(_kwcell())):  # type: ignore[misc]
        def bprop(self, input: Any, *, out: Any, dout: Any, **rest: Any) -> Any:
            grad_input = ops.matmul(dout, self.weight)
            grad_weight = ops.sum(self.matmul_g_w(dout, input), 0)
            return {"input": grad_input, self.weight: grad_weight, self.bias: dout.sum(axis=0).sum(axis=0)}

    return LinearWithGradAccumulationAndAsyncCommunication


def _grad_accumulation_expected(inputs: Arrays, dout: Any) -> Arrays:
    return (dout @ GA_W,)


def _grad_accumulation_weights(inputs: Arrays, dout: Any, cell: Any) -> dict[str, Any]:
    x = inputs[0]
    return {"weight": np.einsum("bso,bsi->oi", dout, x), "bias": dout.sum((0, 1))}


def _grad_accumulation_kw(c: Any, x: Any) -> Any:
    return c(input=x)


# ---------------------------------------------------------------------------------------------
# MindSpeed-Core-MS tensor_parallel/lora_layers.py: ColumnParallelLoRA (one rank, bias, no
# dropout, transpose_b; lora_rank 2, lora_alpha 4, so scaling 2; ops.matmul for its BatchMatMuls,
# which CPU does not broadcast). The original leaves its
# gradient to autodiff; its analytic bprop is written here in MindSpore's positional form for
# LoRA fine-tuning: the base weight and bias are listed in internal_params but frozen, left out of
# the dict (their gradient is zeros), and only lora_a and lora_b get one. It returns the output
# only (the original's pair (output, output_bias) has None for output_bias without
# skip_bias_add).
LORA_IN, LORA_OUT, LORA_R = 3, 4, 2
LORA_W = pattern((LORA_OUT, LORA_IN), seed=51) - 1.0
LORA_B = pattern((LORA_OUT,), seed=52) - 1.0
LORA_A0 = pattern((LORA_R, LORA_IN), seed=53) - 1.0  # lora_a_shape (rank, in) for transpose_b
LORA_B0 = pattern((LORA_OUT, LORA_R), seed=54) - 1.0  # lora_b_shape (out, rank); nonzero here
LORA_X = pattern((2, 2, LORA_IN), seed=55) - 1.0
LORA_SCALING = 4 / LORA_R


def _column_parallel_lora(base: type) -> type:
    class ColumnParallelLoRA(base):  # type: ignore[misc]
        def __init__(self, lora_rank: int = LORA_R, lora_alpha: int = 4) -> None:
            super().__init__()
            self.has_bias = True
            self.skip_bias_add = False
            self.skip_weight_param_allocation = False
            self.lora_rank = lora_rank
            self.lora_alpha = lora_alpha
            self.scaling = self.lora_alpha / self.lora_rank
            self.weight = Parameter(Tensor(LORA_W), name="weight")
            self.bias = Parameter(Tensor(LORA_B), name="bias")
            self.lora_a = Parameter(Tensor(LORA_A0), name="lora_a")
            self.lora_b = Parameter(Tensor(LORA_B0), name="lora_b")
            self.internal_params = [self.weight, self.bias, self.lora_a, self.lora_b]

        def construct(self, input_: Any, weight: Any = None) -> Any:
            lora_parallel = ops.matmul(input_, self.lora_a.T)
            output_parallel = ops.matmul(input_, self.weight.T)
            output_parallel = ops.add(output_parallel, self.bias)
            lora_output = ops.matmul(lora_parallel, self.lora_b.T) * self.scaling
            return output_parallel + lora_output

        def bprop(self, input_: Any, weight: Any, out: Any, dout: Any) -> Any:
            grad = dout * self.scaling
            lora_parallel = ops.matmul(input_, self.lora_a.T)
            grad_lora_parallel = ops.matmul(grad, self.lora_b)
            grad_input = ops.matmul(dout, self.weight) + ops.matmul(grad_lora_parallel, self.lora_a)
            grad_lora_b = ops.matmul(_flat(grad).T, _flat(lora_parallel))
            grad_lora_a = ops.matmul(_flat(grad_lora_parallel).T, _flat(input_))
            return (grad_input, None), {self.lora_a: grad_lora_a, self.lora_b: grad_lora_b}

    return ColumnParallelLoRA


def _column_parallel_lora_natural() -> type:
    class ColumnParallelLoRA(_column_parallel_lora(_kwcell())):  # type: ignore[misc]
        def bprop(self, input_: Any, *, out: Any, dout: Any, **rest: Any) -> Any:
            grad = dout * self.scaling
            lora_parallel = ops.matmul(input_, self.lora_a.T)
            grad_lora_parallel = ops.matmul(grad, self.lora_b)
            return {
                "input_": ops.matmul(dout, self.weight) + ops.matmul(grad_lora_parallel, self.lora_a),
                self.lora_a: ops.matmul(_flat(grad_lora_parallel).T, _flat(input_)),
                self.lora_b: ops.matmul(_flat(grad).T, _flat(lora_parallel)),
            }

    return ColumnParallelLoRA


def _lora_expected(inputs: Arrays, dout: Any) -> Arrays:
    return (dout @ LORA_W + LORA_SCALING * (dout @ LORA_B0) @ LORA_A0,)


def _lora_weights(inputs: Arrays, dout: Any, cell: Any) -> dict[str, Any]:
    x, g = _flat(inputs[0]), _flat(dout) * LORA_SCALING
    a, b = cell.lora_a.asnumpy(), cell.lora_b.asnumpy()
    return {
        "weight": np.zeros_like(LORA_W),
        "bias": np.zeros_like(LORA_B),
        "lora_a": (g @ b).T @ x,
        "lora_b": g.T @ (x @ a.T),
    }


# ---------------------------------------------------------------------------------------------
# MindSpeed-Core-MS tensor_parallel/layers.py: ColumnParallelLinear with
# skip_weight_param_allocation=True, the output layer of a model that shares its word
# embeddings: its weight is the embedding table, which it does not own (the original takes it as
# a construct input). Here the shared table is listed in internal_params only (no attribute of
# the cell holds it), read as self.internal_params[0], and its gradient returned under that key
# in MindSpore's positional form (the natural version: [-1], by name, with **kwargs).
TIE_V, TIE_H = 5, 3
TIE_TABLE = pattern((TIE_V, TIE_H), seed=61) - 1.0
TIE_X = pattern((2, 2, TIE_H), seed=62) - 1.0


def _shared_table() -> dict[str, Any]:
    # the word embeddings' table, made by another cell in a real model
    return {"embedding_weight": Parameter(Tensor(TIE_TABLE), name="word_embeddings.weight")}


def _tied_output_layer(base: type) -> type:
    class ColumnParallelLinear(base):  # type: ignore[misc]
        def __init__(self, embedding_weight: Parameter) -> None:
            super().__init__()
            self.skip_weight_param_allocation = True
            self.internal_params = [embedding_weight]

        def construct(self, input_: Any) -> Any:
            return ops.matmul(input_, self.internal_params[0].T)

        def bprop(self, input_: Any, out: Any, dout: Any) -> Any:
            weight = self.internal_params[0]
            grad_input = ops.matmul(dout, weight)
            grad_weight = ops.matmul(_flat(dout).T, _flat(input_))
            return (grad_input,), {self.internal_params[0]: grad_weight}

    return ColumnParallelLinear


def _tied_output_layer_natural() -> type:
    class ColumnParallelLinear(_tied_output_layer(_kwcell())):  # type: ignore[misc]
        def bprop(self, input_: Any, *, out: Any, dout: Any, **rest: Any) -> Any:
            weight = self.internal_params[-1]
            return {
                "input_": ops.matmul(dout, weight),
                self.internal_params[-1]: ops.matmul(_flat(dout).T, _flat(input_)),
            }

    return ColumnParallelLinear


def _tied_expected(inputs: Arrays, dout: Any) -> Arrays:
    return (dout @ TIE_TABLE,)


def _tied_weights(inputs: Arrays, dout: Any, cell: Any) -> dict[str, Any]:
    return {cell.internal_params[0].name: _flat(dout).T @ _flat(inputs[0])}


# ---------------------------------------------------------------------------------------------
# mindnlp mindnlp/transformers/models/ibert/quant_modules.py: QuantLinear in quant_mode
# (per-tensor, 8-bit weight, 32-bit bias): a dense layer on the integer weight and bias, whose
# gradients the original gets through SymmetricQuantFunction's straight-through bprop. Here the
# layer's own bprop gives them (the straight-through gradients: weight and bias as if
# unquantized) in MindSpore's weight form, the dict built in a variable first; the input
# scaling factor gets zeros.
QL_W = pattern((4, 3), seed=71) - 1.0
QL_B = pattern((4,), seed=72) - 1.0
QL_X = pattern((5, 3), seed=73) - 1.0
QL_SCALE = np.array([0.05], np.float32)  # prev_act_scaling_factor: a per-tensor scale


def _symmetric_scale(w: Any, num_bits: int) -> Any:
    n = 2 ** (num_bits - 1) - 1
    w_min = w.min().broadcast_to((1,))
    w_max = w.max().broadcast_to((1,))
    scale = ops.maximum(w_min.abs(), w_max.abs())
    return ops.clamp(scale, min=1e-8) / n


def _quant_linear(base: type) -> type:
    class QuantLinear(base):  # type: ignore[misc]
        def __init__(self, weight_bit: int = 8, bias_bit: int = 32) -> None:
            super().__init__()
            self.weight = Parameter(Tensor(QL_W), name="weight")
            self.bias = Parameter(Tensor(QL_B), name="bias")
            self.weight_bit = weight_bit
            self.bias_bit = bias_bit
            self.internal_params = [self.weight, self.bias]

        def _integers(self, prev_act_scaling_factor: Any) -> Any:
            n = 2 ** (self.weight_bit - 1) - 1
            fc_scaling_factor = _symmetric_scale(ops.stop_gradient(self.weight), self.weight_bit)
            weight_integer = ops.clamp(ops.round(self.weight / fc_scaling_factor), -n - 1, n)
            bias_scaling_factor = fc_scaling_factor * prev_act_scaling_factor
            bias_integer = ops.round(self.bias / bias_scaling_factor)
            return weight_integer, bias_integer, fc_scaling_factor, bias_scaling_factor

        def construct(self, x: Any, prev_act_scaling_factor: Any) -> Any:
            weight_integer, bias_integer, _, bias_scaling_factor = self._integers(prev_act_scaling_factor)
            x_int = x / prev_act_scaling_factor.view(1, -1)
            return ops.dense(x_int, weight_integer, bias_integer) * bias_scaling_factor, bias_scaling_factor

        def bprop(self, x: Any, prev_act_scaling_factor: Any, out: Any, dout: Any) -> Any:
            weight_integer, _, fc_scaling_factor, _ = self._integers(prev_act_scaling_factor)
            grad_output = dout[0]
            grads = {self.weight: ops.matmul(grad_output.T, x), self.bias: grad_output.sum(0)}
            grad_x = ops.matmul(grad_output, weight_integer * fc_scaling_factor)
            return (grad_x, ops.zeros_like(prev_act_scaling_factor)), grads

    return QuantLinear


def _quant_linear_natural() -> type:
    class QuantLinear(_quant_linear(_kwcell())):  # type: ignore[misc]
        def bprop(self, x: Any, prev_act_scaling_factor: Any, *, out: Any, dout: Any) -> Any:
            weight_integer, _, fc_scaling_factor, _ = self._integers(prev_act_scaling_factor)
            grads = {
                "x": ops.matmul(dout[0], weight_integer * fc_scaling_factor),
                self.weight: ops.matmul(dout[0].T, x),
                self.bias: dout[0].sum(0),
            }
            return grads

    return QuantLinear


def _quant_linear_expected(inputs: Arrays, dout: Any) -> Arrays:
    n = 2**7 - 1
    scale = np.abs(QL_W).max() / n
    w_q = np.clip(np.round(QL_W / scale), -n - 1, n) * scale
    return (dout[0] @ w_q, np.zeros_like(QL_SCALE))


def _quant_linear_weights(inputs: Arrays, dout: Any, cell: Any) -> dict[str, Any]:
    return {"weight": dout[0].T @ inputs[0], "bias": dout[0].sum(0)}


def _quant_linear_kw(c: Any, x: Any, s: Any) -> Any:
    return c(prev_act_scaling_factor=s, x=x)


# ---------------------------------------------------------------------------------------------
# mindnlp mindnlp/peft/tuners/loha/layer.py: HadaWeight (copied there from LyCORIS), the
# Hadamard-product weight update of LoHa, ((w1a @ w1b) * (w2a @ w2b)) * scale, whose bprop gives
# the four factors' gradients. Here a LoHa linear layer holds the four factors (over a frozen base
# weight) and lists them in internal_params; its bprop is HadaWeight's, through the linear layer,
# and returns their gradients in a dict built by a comprehension over internal_params: right in
# PYNATIVE, MindSpore's own error in a graph (a dict's keys there are constants).
LOHA_IN, LOHA_OUT, LOHA_R = 3, 4, 2
LOHA_BASE = pattern((LOHA_OUT, LOHA_IN), seed=81) - 1.0
LOHA_W1A = pattern((LOHA_OUT, LOHA_R), seed=82) - 1.0
LOHA_W1B = pattern((LOHA_R, LOHA_IN), seed=83) - 1.0
LOHA_W2A = pattern((LOHA_OUT, LOHA_R), seed=84) - 1.0
LOHA_W2B = pattern((LOHA_R, LOHA_IN), seed=85) - 1.0
LOHA_X = pattern((5, LOHA_IN), seed=86) - 1.0
LOHA_SCALE = 0.5


def _loha_linear(base: type) -> type:
    class LoHaLinear(base):  # type: ignore[misc]
        def __init__(self, scale: float = LOHA_SCALE) -> None:
            super().__init__()
            self.base_weight = Parameter(Tensor(LOHA_BASE), name="base_weight", requires_grad=False)
            self.hada_w1_a = Parameter(Tensor(LOHA_W1A), name="hada_w1_a")
            self.hada_w1_b = Parameter(Tensor(LOHA_W1B), name="hada_w1_b")
            self.hada_w2_a = Parameter(Tensor(LOHA_W2A), name="hada_w2_a")
            self.hada_w2_b = Parameter(Tensor(LOHA_W2B), name="hada_w2_b")
            self.scale = scale
            self.internal_params = [self.hada_w1_a, self.hada_w1_b, self.hada_w2_a, self.hada_w2_b]

        def get_delta_weight(self) -> Any:
            w1a, w1b, w2a, w2b = self.hada_w1_a, self.hada_w1_b, self.hada_w2_a, self.hada_w2_b
            return ((w1a @ w1b) * (w2a @ w2b)) * self.scale

        def construct(self, x: Any) -> Any:
            return ops.matmul(x, (self.base_weight + self.get_delta_weight()).T)

        def bprop(self, x: Any, out: Any, dout: Any) -> Any:
            w1a, w1b, w2a, w2b = self.hada_w1_a, self.hada_w1_b, self.hada_w2_a, self.hada_w2_b
            grad_x = ops.matmul(dout, self.base_weight + self.get_delta_weight())
            # HadaWeight.bprop, for the gradient of the delta weight
            grad_delta = ops.matmul(dout.T, x) * self.scale
            temp = grad_delta * (w2a @ w2b)
            grad_w1a = temp @ w1b.T
            grad_w1b = w1a.T @ temp
            temp = grad_delta * (w1a @ w1b)
            grad_w2a = temp @ w2b.T
            grad_w2b = w2a.T @ temp
            grads = (grad_w1a, grad_w1b, grad_w2a, grad_w2b)
            return (grad_x,), {p: g for p, g in zip(self.internal_params, grads)}  # noqa: B905

    return LoHaLinear


def _loha_expected(inputs: Arrays, dout: Any) -> Arrays:
    delta = (LOHA_W1A @ LOHA_W1B) * (LOHA_W2A @ LOHA_W2B) * LOHA_SCALE
    return (dout @ (LOHA_BASE + delta),)


def _loha_weights(inputs: Arrays, dout: Any, cell: Any) -> dict[str, Any]:
    w1a, w1b = cell.hada_w1_a.asnumpy(), cell.hada_w1_b.asnumpy()
    w2a, w2b = cell.hada_w2_a.asnumpy(), cell.hada_w2_b.asnumpy()
    grad_delta = dout.T @ inputs[0] * LOHA_SCALE
    t1, t2 = grad_delta * (w2a @ w2b), grad_delta * (w1a @ w1b)
    return {
        "hada_w1_a": t1 @ w1b.T,
        "hada_w1_b": w1a.T @ t1,
        "hada_w2_a": t2 @ w2b.T,
        "hada_w2_b": w2a.T @ t2,
    }


# ---------------------------------------------------------------------------------------------
# MindSpeed-Core-MS tensor_parallel/parallel_linear_2d.py: ParallelLinear2D (one rank) with its
# bias gradient left as the output gradient, unreduced: (s, b, E) for an (E,) bias, the sum over
# (s, b) left to MindSpore, which does it in PYNATIVE (the original sums it itself:
# total_grad_output.sum(axis=0)). bprop(self, *args), two weights.
PB_W = pattern((4, 3), seed=91) - 1.0  # [E, h]
PB_B = pattern((4,), seed=92) - 1.0
PB_X = pattern((2, 2, 3), seed=93) - 1.0  # [s, b, h]


def _parallel_linear_unreduced_bias(base: type) -> type:
    class ParallelLinear2D(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.weight = Parameter(Tensor(PB_W), name="weight")
            self.bias = Parameter(Tensor(PB_B), name="bias")
            self.internal_params = [self.weight, self.bias]

        def construct(self, activation_input: Any) -> Any:
            return ops.matmul(activation_input, self.weight.t()) + self.bias

        def bprop(self, *args: Any) -> Any:
            total_grad_output = args[2]
            grad_input = ops.matmul(total_grad_output, self.weight)
            sb = total_grad_output.shape[0] * total_grad_output.shape[1]
            grad_weight = ops.matmul(
                total_grad_output.view(sb, total_grad_output.shape[2]).t(), args[0].view(sb, args[0].shape[2])
            )
            return (grad_input,), {self.weight: grad_weight, self.bias: total_grad_output}

    return ParallelLinear2D


def _parallel_linear_unreduced_weights(inputs: Arrays, dout: Any, cell: Any) -> dict[str, Any]:
    return {"weight": np.einsum("sbe,sbh->eh", dout, inputs[0]), "bias": dout.sum((0, 1))}


def _activation_kw(c: Any, x: Any) -> Any:
    return c(activation_input=x)


_NN_GRAPHS = dict.fromkeys(_GRAPH_MODES, _PARAMETER_IN_BPROP)
_WEIGHT_LEFT_OUT = (
    "MindSpore's weight form leaving out a weight internal_params lists: PYNATIVE refuses it "
    '("Grad size should lager than forward inputs, but got 4 vs 6", RuntimeError); a KwCell gives '
    "that weight zeros"
)

CASES = [
    Case(
        name="w_ms_custom_net_with_param",
        source=f"{MS} tests/st/pynative/hook/test_hook_grad_with_torch.py: CustomNetWithParam "
        "(test_bprop_with_weight; a (3,) input for its (1,) weight: a broadcast weight gradient)",
        body=_custom_net_with_param,
        natural=_custom_net_with_param_natural,
        inputs=lambda: (CN_X,),
        positional=_pos1,
        keyword=_kw_x,
        expected=_custom_net_expected,
        expected_weights=_custom_net_weights,
        train_weights=True,
        nn_fails=_NN_GRAPHS,
    ),
    Case(
        name="w_mindspeed_grad_accumulation_linear",
        source=SPEED + "layers.py: LinearWithGradAccumulationAndAsyncCommunication (weight and bias "
        "in internal_params instead of inputs)",
        body=_grad_accumulation_linear,
        natural=_grad_accumulation_natural,
        inputs=lambda: (GA_X,),
        positional=_pos1,
        keyword=_grad_accumulation_kw,
        expected=_grad_accumulation_expected,
        expected_weights=_grad_accumulation_weights,
        train_weights=True,
        nn_fails=_NN_GRAPHS,
    ),
    Case(
        name="w_mindspeed_lora_frozen_base",
        source=SPEED + "lora_layers.py: ColumnParallelLoRA (its analytic bprop; the frozen base "
        "weight and bias listed in internal_params, left out of the dict)",
        body=_column_parallel_lora,
        natural=_column_parallel_lora_natural,
        inputs=lambda: (LORA_X,),
        positional=_pos1,
        keyword=_kw_input_,
        expected=_lora_expected,
        expected_weights=_lora_weights,
        train_weights=True,
        nn_fails={**_NN_GRAPHS, "pynative": _WEIGHT_LEFT_OUT},
    ),
    Case(
        name="w_mindspeed_tied_output_layer",
        source=SPEED + "layers.py: ColumnParallelLinear (skip_weight_param_allocation: the output "
        "layer sharing the word embeddings' table, listed in internal_params only)",
        body=_tied_output_layer,
        natural=_tied_output_layer_natural,
        init=_shared_table,
        inputs=lambda: (TIE_X,),
        positional=_pos1,
        keyword=_kw_input_,
        expected=_tied_expected,
        expected_weights=_tied_weights,
        train_weights=True,
        nn_fails=_NN_GRAPHS,
    ),
    Case(
        name="w_ibert_quant_linear",
        source="mindspore-lab/mindnlp mindnlp/transformers/models/ibert/quant_modules.py: QuantLinear "
        "(quant_mode; its straight-through weight gradients as the layer's bprop, the dict in a variable)",
        body=_quant_linear,
        natural=_quant_linear_natural,
        inputs=lambda: (QL_X, QL_SCALE),
        positional=_pos2,
        keyword=_quant_linear_kw,
        head=_first_output,
        expected=_quant_linear_expected,
        expected_weights=_quant_linear_weights,
        train_weights=True,
        nn_fails=_NN_GRAPHS,
    ),
    Case(
        name="w_mindnlp_loha_comprehension",
        source="mindspore-lab/mindnlp mindnlp/peft/tuners/loha/layer.py: HadaWeight (its bprop in a "
        "LoHa linear layer holding the four factors; their gradients in a comprehension)",
        body=_loha_linear,
        inputs=lambda: (LOHA_X,),
        positional=_pos1,
        keyword=_kw_x,
        expected=_loha_expected,
        expected_weights=_loha_weights,
        train_weights=True,
        nn_fails=_NN_GRAPHS,
        kw_fails=dict.fromkeys(_GRAPH_MODES, _COMPUTED_KEYS),
    ),
    Case(
        name="w_mindspeed_unreduced_bias",
        source=SPEED + "parallel_linear_2d.py: ParallelLinear2D (its bias gradient left unreduced, "
        "(s, b, E) for an (E,) bias)",
        body=_parallel_linear_unreduced_bias,
        inputs=lambda: (PB_X,),
        positional=_pos1,
        keyword=_activation_kw,
        expected=lambda inputs, dout: (dout @ PB_W,),
        expected_weights=_parallel_linear_unreduced_weights,
        train_weights=True,
        nn_fails=_NN_GRAPHS,
    ),
]
