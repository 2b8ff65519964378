"""Custom-bprop cells in the shapes public MindSpore projects write them, on KwCell and nn.Cell.

Each cell below re-implements, in this project's own words, a shape found in public MindSpore
code (model zoo, golden-stick quantisation, mindformers tensor/sequence parallel layers,
spiking-network surrogates, domain-adaptation gradient reversal, MindSpore's own test suite):
positional names that differ from construct's (``input_``, ``_``, ``output``), ``*args``
bprops, bprops that read ``self`` attributes, call primitives, sub-cells or a nested
``GradOperation``, tuple outputs, bare-Tensor and over-long returns, ``None`` placeholders for
non-Tensor inputs, construct defaults, tuple inputs, ``@ms.jit`` construct, bases that carry
the bprop, ``bprop_debug`` and ``used_bprop_inputs``.

Every cell has an ``nn.Cell`` twin with the same body. The gradient is taken with
``ops.GradOperation(get_all=True, sens_param=True)`` and a non-uniform ``dout``, in PYNATIVE,
GRAPH_MODE and PYNATIVE inside an ``@ms.jit`` step, and compared with the twin's gradient and
with the gradient the bprop defines (numpy). Where the twin itself fails in a mode, KwCell
must not be worse: it gives the right gradient or fails too.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn, ops

from kwcell import KwCell, KwCellWarning

Arrays = tuple[Any, ...]

# Primitives and functions as projects reach them (``from mindspore.ops import operations as P``);
# kwcell's partial MindSpore stubs do not declare these, hence ``Any``.
P: Any = ops

X = np.array([[0.5, -1.0, 2.5], [4.5, 0.25, -0.75]], np.float32)
Y = np.array([[1.5, 0.5, -3.0], [2.0, -0.5, 1.25]], np.float32)
S = np.array([[0.3, -1.2, 2.0], [0.7, 1.1, -0.4]], np.float32)  # dout: not all ones


def _swap(t: Tensor, a: int, b: int) -> Tensor:
    """Stand-in for an all-to-all exchange of a 2-D tensor: moves axis ``a`` to ``b``.

    (``ops.swapaxes`` cannot be used: MindSpore 2.10 fails to compile it inside any graph-mode
    bprop, ``nn.Cell`` included: "The func graph is empty".)
    """
    perm = (1, 0) if a != b else (0, 1)
    return ops.transpose(t, perm)


# --- 1. quantiser with a base class without bprop; bprop names its input `input_` ----------
# (golden-stick SLB/LSQ quantisers: FakeQuantizer base, subclass adds construct + STE bprop)


class KwFakeQuantizer(KwCell):
    def __init__(self, num_bits: int = 4) -> None:
        super().__init__()
        self.levels = Tensor(float(2**num_bits - 1), ms.float32)


class KwRoundQuantizer(KwFakeQuantizer):
    def construct(self, input_: Tensor) -> Any:
        return ops.floor(input_ * self.levels) / self.levels

    def bprop(self, input_: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout,)


class PlainFakeQuantizer(nn.Cell):
    def __init__(self, num_bits: int = 4) -> None:
        super().__init__()
        self.levels = Tensor(float(2**num_bits - 1), ms.float32)


class PlainRoundQuantizer(PlainFakeQuantizer):
    def construct(self, input_: Tensor) -> Any:
        return ops.floor(input_ * self.levels) / self.levels

    def bprop(self, input_: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout,)


# --- 2. clipped straight-through estimator with primitives built in __init__ ---------------
# (spiking-network quantised LIF nodes: clip + round forward, masked identity backward)


class KwClipRoundSTE(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.rint = P.Rint()
        self.lo, self.hi = 0.0, 4.0

    def construct(self, x: Tensor) -> Any:
        return self.rint(P.clip_by_value(x, self.lo, self.hi))

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        g = ops.where(x < self.lo, ops.zeros_like(dout), dout)
        g = ops.where(x > self.hi, ops.zeros_like(dout), g)
        return (g,)


class PlainClipRoundSTE(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.rint = P.Rint()
        self.lo, self.hi = 0.0, 4.0

    def construct(self, x: Tensor) -> Any:
        return self.rint(P.clip_by_value(x, self.lo, self.hi))

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        g = ops.where(x < self.lo, ops.zeros_like(dout), dout)
        g = ops.where(x > self.hi, ops.zeros_like(dout), g)
        return (g,)


# --- 3. gradient reversal: identity forward, tuple return with zeros_like for the coeff -----
# (domain adaptation GRL; the outer cell keeps the coefficient in a frozen Parameter)


class KwReverseGrad(KwCell):
    def construct(self, x: Tensor, coeff: Tensor) -> Any:
        return x

    def bprop(self, x: Tensor, coeff: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout * -coeff, ops.zeros_like(coeff))


class PlainReverseGrad(nn.Cell):
    def construct(self, x: Tensor, coeff: Tensor) -> Any:
        return x

    def bprop(self, x: Tensor, coeff: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout * -coeff, ops.zeros_like(coeff))


class ScheduledReversal(nn.Cell):
    """Outer cell: holds the coefficient and calls the reversal positionally."""

    def __init__(self, grl: nn.Cell) -> None:
        super().__init__()
        self.coeff = Parameter(Tensor(0.75, ms.float32), requires_grad=False)
        self.grl = grl

    def construct(self, x: Tensor) -> Any:
        return self.grl(x, self.coeff) * 2.0


# --- 4. tensor-parallel region: `input_` vs `x`, int attribute branch, sub-cell in bprop ----
# (mindformers Copy/Reduce regions: world_size == 1 short cut, else a collective on dout)


class FakeAllReduce(nn.Cell):
    """Stand-in for an AllReduce over 2 devices holding the same value."""

    def construct(self, t: Tensor) -> Any:
        return t * 2.0


class KwCopyToRegion(KwCell):
    def __init__(self, world_size: int) -> None:
        super().__init__()
        self.world_size = world_size
        self.all_reduce = FakeAllReduce()

    def construct(self, input_: Tensor) -> Any:
        return ops.stop_gradient(input_)

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        if self.world_size == 1:
            return (dout,)
        return (self.all_reduce(dout),)


class PlainCopyToRegion(nn.Cell):
    def __init__(self, world_size: int) -> None:
        super().__init__()
        self.world_size = world_size
        self.all_reduce = FakeAllReduce()

    def construct(self, input_: Tensor) -> Any:
        return ops.stop_gradient(input_)

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        if self.world_size == 1:
            return (dout,)
        return (self.all_reduce(dout),)


class TwoRegions(nn.Cell):
    """Two instances of one bprop class with different attributes in one graph."""

    def __init__(self, first: nn.Cell, second: nn.Cell) -> None:
        super().__init__()
        self.first = first
        self.second = second

    def construct(self, x: Tensor) -> Any:
        return self.first(x) + self.second(x * 3.0)


# --- 5. `*args` bprop returning a bare Tensor through a module-level helper ----------------
# (mindformers sequence-parallel all-to-all: bprop(self, *args) uses args[-1] only)


class KwSeqAllToAll(KwCell):
    def __init__(self, scatter_idx: int, gather_idx: int) -> None:
        super().__init__()
        self.scatter_idx = scatter_idx
        self.gather_idx = gather_idx

    def construct(self, input_: Tensor) -> Any:
        return _swap(input_, self.scatter_idx, self.gather_idx) * 3.0

    def bprop(self, *args: Any) -> Any:
        return _swap(args[-1], self.gather_idx, self.scatter_idx) * 3.0


class PlainSeqAllToAll(nn.Cell):
    def __init__(self, scatter_idx: int, gather_idx: int) -> None:
        super().__init__()
        self.scatter_idx = scatter_idx
        self.gather_idx = gather_idx

    def construct(self, input_: Tensor) -> Any:
        return _swap(input_, self.scatter_idx, self.gather_idx) * 3.0

    def bprop(self, *args: Any) -> Any:
        return _swap(args[-1], self.gather_idx, self.scatter_idx) * 3.0


# --- 6. `*args` bprop picking inputs by index; `bias` input; tuple return -------------------
# (mindformers linear with all-gather: x, weight, bias = args[0], args[1], args[2]; dout = args[-1])


class KwGatherLinear(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.used_bprop_inputs = [0, 1, 2]

    def construct(self, x: Tensor, weight: Tensor, bias: Tensor) -> Any:
        return ops.matmul(x, weight.T) + bias

    def bprop(self, *args: Any) -> Any:
        x, weight, dout = args[0], args[1], args[-1]
        return ops.matmul(dout, weight), ops.matmul(dout.T, x), dout.sum(0)


class PlainGatherLinear(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.used_bprop_inputs = [0, 1, 2]

    def construct(self, x: Tensor, weight: Tensor, bias: Tensor) -> Any:
        return ops.matmul(x, weight.T) + bias

    def bprop(self, *args: Any) -> Any:
        x, weight, dout = args[0], args[1], args[-1]
        return ops.matmul(dout, weight), ops.matmul(dout.T, x), dout.sum(0)


# --- 7. bprop recomputing from `out` with primitives kept on self; name `input_x` -----------
# (model-zoo composite LogSoftmax: backward uses exp(out), not the input)


class KwLogSoftmax(KwCell):
    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self.axis = axis
        self.exp = P.Exp()
        self.sum_keep_dims = ops.ReduceSum(keep_dims=True)

    def construct(self, x: Tensor) -> Any:
        return P.log_softmax(x, self.axis)

    def bprop(self, input_x: Tensor, out: Tensor, dout: Tensor) -> Any:
        softmax = self.exp(out)
        return (dout - softmax * self.sum_keep_dims(dout, self.axis),)


class PlainLogSoftmax(nn.Cell):
    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self.axis = axis
        self.exp = P.Exp()
        self.sum_keep_dims = ops.ReduceSum(keep_dims=True)

    def construct(self, x: Tensor) -> Any:
        return P.log_softmax(x, self.axis)

    def bprop(self, input_x: Tensor, out: Tensor, dout: Tensor) -> Any:
        softmax = self.exp(out)
        return (dout - softmax * self.sum_keep_dims(dout, self.axis),)


# --- 8. bprop that calls a sub-cell's gradient (a GradOperation cell kept on self) ---------
# (MindSpore's own custom-bprop tests: bprop = 2 * grad of the wrapped cell)


class Square(nn.Cell):
    def construct(self, x: Tensor) -> Any:
        return x * x


class GradOfInput(nn.Cell):
    def __init__(self, net: nn.Cell) -> None:
        super().__init__()
        self.net = net
        self.grad_op = ops.GradOperation()

    def construct(self, x: Tensor) -> Any:
        return self.grad_op(self.net)(x)


class KwDoubledSquareGrad(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.f = Square()
        self.grad = GradOfInput(self.f)

    def construct(self, x: Tensor) -> Any:
        return self.f(x)

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (self.grad(x) * 2 * dout,)


class PlainDoubledSquareGrad(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.f = Square()
        self.grad = GradOfInput(self.f)

    def construct(self, x: Tensor) -> Any:
        return self.f(x)

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (self.grad(x) * 2 * dout,)


# --- 9. construct returns a tuple; bprop reads out[1] / dout[0] and returns a bare Tensor ---
# (sampling layers that return values and indices; gradient built from the index output)


class KwValueAndSquare(KwCell):
    def construct(self, x: Tensor) -> Any:
        return x * 2.0, x * x

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return 2.0 * dout[0] + (out[1] / x) * 2.0 * dout[1]


class PlainValueAndSquare(nn.Cell):
    def construct(self, x: Tensor) -> Any:
        return x * 2.0, x * x

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return 2.0 * dout[0] + (out[1] / x) * 2.0 * dout[1]


class FirstOutput(nn.Cell):
    """Uses only the first output (`a, _ = ...`): the second dout is zeros."""

    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, x: Tensor) -> Any:
        a, _ = self.inner(x)
        return a


# --- 10. non-Tensor inputs (float, int, str) with None placeholders; tuple output unpacked --
# (sync batch-norm style: bprop(self, input_x, weight, eps, ..., output, doutput))


class KwSyncScale(KwCell):
    def construct(self, x: Tensor, weight: Tensor, eps: float, world_size: int, group: str) -> Any:
        return x * weight + eps * world_size, (x * weight).sum()

    def bprop(
        self,
        input_x: Tensor,
        weight: Tensor,
        eps: float,
        world_size: int,
        group: str,
        output: Any,
        doutput: Any,
    ) -> Any:
        dout, dtotal = doutput
        grad_input = (dout + dtotal) * weight
        grad_weight = (dout + dtotal) * input_x
        return grad_input, grad_weight, None, None, None


class PlainSyncScale(nn.Cell):
    def construct(self, x: Tensor, weight: Tensor, eps: float, world_size: int, group: str) -> Any:
        return x * weight + eps * world_size, (x * weight).sum()

    def bprop(
        self,
        input_x: Tensor,
        weight: Tensor,
        eps: float,
        world_size: int,
        group: str,
        output: Any,
        doutput: Any,
    ) -> Any:
        dout, dtotal = doutput
        grad_input = (dout + dtotal) * weight
        grad_weight = (dout + dtotal) * input_x
        return grad_input, grad_weight, None, None, None


class SyncScaleCaller(nn.Cell):
    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, x: Tensor, w: Tensor) -> Any:
        y, total = self.inner(x, w, 0.001, 2, "tp")
        return y + total


# --- 11. intentionally "wrong" bprop on int32 tensors (MindSpore's classic MulAdd) ---------


class KwIntMulAdd(KwCell):
    def construct(self, x: Tensor, y: Tensor) -> Any:
        return 2 * x + y

    def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
        return 2 * dout, 2 * y


class PlainIntMulAdd(nn.Cell):
    def construct(self, x: Tensor, y: Tensor) -> Any:
        return 2 * x + y

    def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
        return 2 * dout, 2 * y


# --- 12. @jit construct, bprop returns more values than inputs (x_dout, y_dout, out, dout) --
# (MindSpore's jit + custom-bprop tests: MindSpore uses the first len(inputs) entries)

with warnings.catch_warnings():
    warnings.simplefilter("ignore", KwCellWarning)  # kwcell warns about the extra values

    class KwJitExtra(KwCell):
        @ms.jit
        def construct(self, x: Tensor, y: Tensor) -> Any:
            z = x * y
            return z * y

        def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
            x_dout = x + y
            y_dout = x * y
            return x_dout, y_dout, out, dout


class PlainJitExtra(nn.Cell):
    @ms.jit
    def construct(self, x: Tensor, y: Tensor) -> Any:
        z = x * y
        return z * y

    def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
        x_dout = x + y
        y_dout = x * y
        return x_dout, y_dout, out, dout


# --- 13. bprop in a base class, construct in subclasses (shared backward for a family) -----


class KwScaledBackward(KwCell):
    """Base with only bprop: every subclass scales dout by its own factor."""

    def __init__(self, factor: float) -> None:
        super().__init__()
        self.factor = factor

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout * self.factor,)


class KwSignRegion(KwScaledBackward):
    def construct(self, input_: Tensor) -> Any:
        return ops.sign(input_)


class KwTanhRegion(KwScaledBackward):
    def construct(self, input_: Tensor) -> Any:
        return ops.tanh(input_)


class PlainScaledBackward(nn.Cell):
    def __init__(self, factor: float) -> None:
        super().__init__()
        self.factor = factor

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout * self.factor,)


class PlainSignRegion(PlainScaledBackward):
    def construct(self, input_: Tensor) -> Any:
        return ops.sign(input_)


class PlainTanhRegion(PlainScaledBackward):
    def construct(self, input_: Tensor) -> Any:
        return ops.tanh(input_)


# --- 14. zeros for every input from a ZerosLike primitive kept on self ---------------------
# (MindSpore docs: a bprop that blocks the gradient)


class KwBlockGrad(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.zeros_like = P.ZerosLike()

    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x + y

    def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
        return self.zeros_like(out), self.zeros_like(out)


class PlainBlockGrad(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.zeros_like = P.ZerosLike()

    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x + y

    def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
        return self.zeros_like(out), self.zeros_like(out)


# --- 15. used_bprop_inputs = [0] with `*args`: out arrives as None in PYNATIVE --------------
# (MindSpore's memory-saving flag; only the input is kept for the backward)


class KwCubeUsedInput(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.used_bprop_inputs = [0]

    def construct(self, x: Tensor) -> Any:
        return x * x * x

    def bprop(self, *args: Any) -> Any:
        return (3 * args[0] * args[0] * args[-1],)


class PlainCubeUsedInput(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.used_bprop_inputs = [0]

    def construct(self, x: Tensor) -> Any:
        return x * x * x

    def bprop(self, *args: Any) -> Any:
        return (3 * args[0] * args[0] * args[-1],)


# --- 16. used_bprop_inputs = [2] (only dout), positional names `input_, output, dout` -------
# (mindformers reduce-scatter region, its documented memory optimisation)


class KwScatterRegion(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.used_bprop_inputs = [2]

    def construct(self, input_: Tensor) -> Any:
        return input_ * 0.5

    def bprop(self, input_: Tensor, output: Tensor, dout: Tensor) -> Any:
        return (dout * 0.5,)


class PlainScatterRegion(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.used_bprop_inputs = [2]

    def construct(self, input_: Tensor) -> Any:
        return input_ * 0.5

    def bprop(self, input_: Tensor, output: Tensor, dout: Tensor) -> Any:
        return (dout * 0.5,)


# --- 17. `*args` bprop with a bare return on one branch and a tuple on the other ------------
# (mindformers: `if self.world_size == 1: return dout` ... `return (output,)`)


class KwGatherRegion(KwCell):
    def __init__(self, world_size: int) -> None:
        super().__init__()
        self.world_size = world_size

    def construct(self, input_: Tensor) -> Any:
        return input_ * 1.0

    def bprop(self, *args: Any) -> Any:
        dout = args[-1]
        if self.world_size == 1:
            return dout
        return (dout * self.world_size,)


class PlainGatherRegion(nn.Cell):
    def __init__(self, world_size: int) -> None:
        super().__init__()
        self.world_size = world_size

    def construct(self, input_: Tensor) -> Any:
        return input_ * 1.0

    def bprop(self, *args: Any) -> Any:
        dout = args[-1]
        if self.world_size == 1:
            return dout
        return (dout * self.world_size,)


# --- 18. construct with a Python-number default; bprop returns a placeholder for it ---------


class KwLeakyReverse(KwCell):
    def construct(self, x: Tensor, lambd: float = 0.5) -> Any:
        return x * 1.0

    def bprop(self, x: Tensor, lambd: float, out: Tensor, dout: Tensor) -> Any:
        return dout * -lambd, 0.0


class PlainLeakyReverse(nn.Cell):
    def construct(self, x: Tensor, lambd: float = 0.5) -> Any:
        return x * 1.0

    def bprop(self, x: Tensor, lambd: float, out: Tensor, dout: Tensor) -> Any:
        return dout * -lambd, 0.0


class LeakyCallerDefault(nn.Cell):
    """Calls the cell without the defaulted argument, as most callers do."""

    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, x: Tensor) -> Any:
        return self.inner(x)


# --- 19. tuple input (a pair of tensors) and a nested-tuple gradient ------------------------


class KwPairProduct(KwCell):
    def construct(self, pair: Any) -> Any:
        a, b = pair
        return a * b

    def bprop(self, pair: Any, out: Tensor, dout: Tensor) -> Any:
        a, b = pair
        return ((dout * b, dout * a),)


class PlainPairProduct(nn.Cell):
    def construct(self, pair: Any) -> Any:
        a, b = pair
        return a * b

    def bprop(self, pair: Any, out: Tensor, dout: Tensor) -> Any:
        a, b = pair
        return ((dout * b, dout * a),)


class KwPairProductBuilt(KwCell):
    """The same with the gradient built before the return (normalised at run time)."""

    def construct(self, pair: Any) -> Any:
        a, b = pair
        return a * b

    def bprop(self, pair: Any, out: Tensor, dout: Tensor) -> Any:
        a, b = pair
        grads = ((dout * b, dout * a),)
        return grads


class PlainPairProductBuilt(nn.Cell):
    def construct(self, pair: Any) -> Any:
        a, b = pair
        return a * b

    def bprop(self, pair: Any, out: Tensor, dout: Tensor) -> Any:
        a, b = pair
        grads = ((dout * b, dout * a),)
        return grads


class PairCaller(nn.Cell):
    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, a: Tensor, b: Tensor) -> Any:
        return self.inner((a, b))


# --- 20. PYNATIVE-only bprops: numpy inside bprop, state saved by construct ---------------
# (a debugging "hook" bprop that records dout; a recompute cell that stashes its input)

RECORDED: list[Any] = []


class KwRecordingRelu(KwCell):
    def construct(self, x: Tensor) -> Any:
        return ops.relu(x)

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        RECORDED.append(dout.asnumpy())
        return (Tensor((out.asnumpy() > 0) * dout.asnumpy()),)


class PlainRecordingRelu(nn.Cell):
    def construct(self, x: Tensor) -> Any:
        return ops.relu(x)

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        RECORDED.append(dout.asnumpy())
        return (Tensor((out.asnumpy() > 0) * dout.asnumpy()),)


class KwStashCube(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.stash: list[Tensor] = []

    def construct(self, x: Tensor) -> Any:
        self.stash.append(x)
        return x * x * x

    def bprop(self, *args: Any) -> Any:
        x = self.stash.pop()
        return (3 * x * x * args[-1],)


class PlainStashCube(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.stash: list[Tensor] = []

    def construct(self, x: Tensor) -> Any:
        self.stash.append(x)
        return x * x * x

    def bprop(self, *args: Any) -> Any:
        x = self.stash.pop()
        return (3 * x * x * args[-1],)


# --- 21. bprop_debug = True set in __init__ ------------------------------------------------


class KwDebugScale(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.bprop_debug = True

    def construct(self, x: Tensor) -> Any:
        return x * 3.0

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout * 3.0 + 1.0,)


class PlainDebugScale(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.bprop_debug = True

    def construct(self, x: Tensor) -> Any:
        return x * 3.0

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout * 3.0 + 1.0,)


# --- 22. keyword-only construct parameter with a default ----------------------------------


class KwScaleKeywordOnly(KwCell):
    def construct(self, x: Tensor, *, scale: float = 2.0) -> Any:
        return x * scale

    def bprop(self, x: Tensor, scale: float, out: Tensor, dout: Tensor) -> Any:
        return dout * scale, 0


class PlainScaleKeywordOnly(nn.Cell):
    def construct(self, x: Tensor, *, scale: float = 2.0) -> Any:
        return x * scale

    def bprop(self, x: Tensor, scale: float, out: Tensor, dout: Tensor) -> Any:
        return dout * scale, 0


# --- 23. None for a Tensor input's gradient (mindformers: grad_weight = grad_bias = None) ---


class KwWeightFrozen(KwCell):
    def construct(self, x: Tensor, weight: Tensor) -> Any:
        return x * weight

    def bprop(self, x: Tensor, weight: Tensor, out: Tensor, dout: Tensor) -> Any:
        grad_weight = None
        return dout * weight, grad_weight


class PlainWeightFrozen(nn.Cell):
    def construct(self, x: Tensor, weight: Tensor) -> Any:
        return x * weight

    def bprop(self, x: Tensor, weight: Tensor, out: Tensor, dout: Tensor) -> Any:
        grad_weight = None
        return dout * weight, grad_weight


# --- 24. bprop reads a frozen Parameter (LSQ-style quantiser step size) ---------------------


class KwStepQuantizer(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.step = Parameter(Tensor(0.5, ms.float32), name="step", requires_grad=False)

    def construct(self, x: Tensor) -> Any:
        return P.round(x / self.step) * self.step

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout * self.step,)


class PlainStepQuantizer(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.step = Parameter(Tensor(0.5, ms.float32), name="step", requires_grad=False)

    def construct(self, x: Tensor) -> Any:
        return P.round(x / self.step) * self.step

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout * self.step,)


# --- 25. @jit construct of an outer cell with a Parameter around a bprop cell --------------
# (MindSpore's jit + custom bprop tests: bprop ignores dout and returns 2 * inputs)


class KwTwiceInputs(KwCell):
    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x * y

    def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
        return 2 * x, 2 * y


class PlainTwiceInputs(nn.Cell):
    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x * y

    def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
        return 2 * x, 2 * y


class JitOuter(nn.Cell):
    def __init__(self, sub: nn.Cell) -> None:
        super().__init__()
        self.sub_net = sub
        self.z = Parameter(Tensor(np.array([1.5], np.float32)), name="z")

    @ms.jit
    def construct(self, x: Tensor, y: Tensor) -> Any:
        x = x * self.z
        return self.sub_net(x, y)


# --- 26. GradOperation applied inline inside bprop -----------------------------------------

GRAD_FIRST = ops.GradOperation()


class KwInlineGrad(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.f = Square()

    def construct(self, x: Tensor) -> Any:
        return self.f(x) * 3.0

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (GRAD_FIRST(self.f)(x) * 3.0 * dout,)


class PlainInlineGrad(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.f = Square()

    def construct(self, x: Tensor) -> Any:
        return self.f(x) * 3.0

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (GRAD_FIRST(self.f)(x) * 3.0 * dout,)


# --- 27. bprop returning a list ------------------------------------------------------------


class KwListReturn(KwCell):
    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x * 2.0 + y

    def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
        return [dout * 2.0, dout]


class PlainListReturn(nn.Cell):
    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x * 2.0 + y

    def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
        return [dout * 2.0, dout]


# --- the table -------------------------------------------------------------------------------


@dataclass
class Case:
    """One shape: the KwCell network, its nn.Cell twin, inputs, and the bprop's own gradient."""

    kw: nn.Cell
    plain: nn.Cell
    inputs: Callable[[], tuple[Any, ...]]
    expected: Callable[..., Arrays]
    sens: Callable[[], Any] = lambda: Tensor(S)
    # modes where the nn.Cell twin cannot take this gradient (MindSpore limits), with the reason
    plain_fails: dict[str, str] = field(default_factory=dict)
    # modes where KwCell fails too (never a mode where nn.Cell works), with the reason
    kw_fails: dict[str, str] = field(default_factory=dict)
    # (modes, reason): KwCell should work there but does not; the test is a strict xfail
    xfail: tuple[frozenset[str], str] | None = None


VARARGS = r"requires at least 2 params 'out' and 'dout', but got only 1"
BARE = r"For bprop function, output should be a tuple"
OMITTED = r"The number of parameter of this primal function is 1, but the number of parameters of bprop is 2"
NULL_GRAPH = r"The pointer\[graph\] is null"


HOWS = ("pynative", "graph", "jit")


def GRAPH_AND_JIT(message: str) -> dict[str, str]:
    return {"graph": message, "jit": message}


def _t(*arrays: Any) -> Callable[[], tuple[Any, ...]]:
    return lambda: tuple(Tensor(a) for a in arrays)


XI = np.array([[1, -2, 3], [4, 0, -1]], np.int32)
YI = np.array([[2, 5, -3], [1, 1, 7]], np.int32)
SI = np.array([[1, 2, 3], [-1, 4, 2]], np.int32)

CASES: dict[str, Case] = {
    "quantizer_base_class_input_": Case(
        KwRoundQuantizer(),
        PlainRoundQuantizer(),
        _t(X),
        lambda x, s: (s,),
    ),
    "clip_ste_primitives_on_self": Case(
        KwClipRoundSTE(),
        PlainClipRoundSTE(),
        _t(X),
        lambda x, s: (np.where((x < 0) | (x > 4), 0.0, s),),
    ),
    "grl_zeros_like_nested_in_outer": Case(
        ScheduledReversal(KwReverseGrad()),
        ScheduledReversal(PlainReverseGrad()),
        _t(X),
        lambda x, s: (-0.75 * 2.0 * s,),
    ),
    "region_world2_subcell_in_bprop": Case(
        KwCopyToRegion(2),
        PlainCopyToRegion(2),
        _t(X),
        lambda x, s: (2.0 * s,),
    ),
    "two_instances_different_attrs": Case(
        TwoRegions(KwCopyToRegion(1), KwCopyToRegion(2)),
        TwoRegions(PlainCopyToRegion(1), PlainCopyToRegion(2)),
        _t(X),
        lambda x, s: (s + 3.0 * 2.0 * s,),
    ),
    "varargs_bare_return_helper": Case(
        KwSeqAllToAll(0, 1),
        PlainSeqAllToAll(0, 1),
        _t(X),
        lambda x, s: (3.0 * s.T,),
        sens=lambda: Tensor(np.ascontiguousarray(S.T)),
        plain_fails=GRAPH_AND_JIT(VARARGS),
    ),
    "varargs_index_picking_used_inputs": Case(
        KwGatherLinear(),
        PlainGatherLinear(),
        _t(X, Y, np.array([0.1, 0.2], np.float32)),
        lambda x, w, b, s: _lin(x, w, s),
        sens=lambda: Tensor(S[:, :2].copy()),
        plain_fails=GRAPH_AND_JIT(VARARGS),
    ),
    "recompute_from_out_input_x": Case(
        KwLogSoftmax(),
        PlainLogSoftmax(),
        _t(X),
        lambda x, s: (s - _softmax(x) * s.sum(-1, keepdims=True),),
    ),
    "bprop_calls_grad_of_subcell": Case(
        KwDoubledSquareGrad(),
        PlainDoubledSquareGrad(),
        _t(X),
        lambda x, s: (4.0 * x * s,),
    ),
    "tuple_output_one_used_outer": Case(
        FirstOutput(KwValueAndSquare()),
        FirstOutput(PlainValueAndSquare()),
        _t(X),
        lambda x, s: (2.0 * s,),
        plain_fails=GRAPH_AND_JIT(BARE),
    ),
    "non_tensor_inputs_none_placeholders": Case(
        SyncScaleCaller(KwSyncScale()),
        SyncScaleCaller(PlainSyncScale()),
        _t(X, Y),
        lambda x, w, s: ((s + s.sum()) * w, (s + s.sum()) * x),
    ),
    "int32_deliberately_wrong_bprop": Case(
        KwIntMulAdd(),
        PlainIntMulAdd(),
        _t(XI, YI),
        lambda x, y, s: (2 * s, 2 * y),
        sens=lambda: Tensor(SI),
    ),
    "jit_construct_extra_returns": Case(
        KwJitExtra(),
        PlainJitExtra(),
        _t(X, Y),
        lambda x, y, s: (x + y, x * y),
    ),
    "bprop_in_base_tanh": Case(
        KwTanhRegion(-2.0),
        PlainTanhRegion(-2.0),
        _t(X),
        lambda x, s: (-2.0 * s,),
    ),
    "zeros_like_primitive_on_self": Case(
        KwBlockGrad(),
        PlainBlockGrad(),
        _t(X, Y),
        lambda x, y, s: (0 * x, 0 * y),
    ),
    "used_bprop_inputs_varargs": Case(
        KwCubeUsedInput(),
        PlainCubeUsedInput(),
        _t(X),
        lambda x, s: (3 * x * x * s,),
        plain_fails=GRAPH_AND_JIT(VARARGS),
    ),
    "used_bprop_inputs_dout_only": Case(
        KwScatterRegion(),
        PlainScatterRegion(),
        _t(X),
        lambda x, s: (0.5 * s,),
    ),
    "varargs_bare_or_tuple_world1": Case(
        KwGatherRegion(1),
        PlainGatherRegion(1),
        _t(X),
        lambda x, s: (s,),
        plain_fails=GRAPH_AND_JIT(VARARGS),
    ),
    "varargs_bare_or_tuple_world4": Case(
        KwGatherRegion(4),
        PlainGatherRegion(4),
        _t(X),
        lambda x, s: (4.0 * s,),
        plain_fails=GRAPH_AND_JIT(VARARGS),
    ),
    "float_default_omitted_by_caller": Case(
        LeakyCallerDefault(KwLeakyReverse()),
        LeakyCallerDefault(PlainLeakyReverse()),
        _t(X),
        lambda x, s: (-0.5 * s,),
        plain_fails=GRAPH_AND_JIT(OMITTED),
    ),
    "tuple_input_nested_grad": Case(
        PairCaller(KwPairProduct()),
        PairCaller(PlainPairProduct()),
        _t(X, Y),
        lambda a, b, s: (s * b, s * a),
    ),
    "tuple_input_built_return": Case(
        PairCaller(KwPairProductBuilt()),
        PairCaller(PlainPairProductBuilt()),
        _t(X, Y),
        lambda a, b, s: (s * b, s * a),
    ),
    "numpy_in_bprop": Case(
        KwRecordingRelu(),
        PlainRecordingRelu(),
        _t(X),
        lambda x, s: ((x > 0) * s,),
    ),
    "state_stashed_by_construct": Case(
        KwStashCube(),
        PlainStashCube(),
        _t(X),
        lambda x, s: (3 * x * x * s,),
        plain_fails=GRAPH_AND_JIT(VARARGS),
        kw_fails=GRAPH_AND_JIT(r"The pop index out of range"),  # graphs cannot keep Python state
    ),
    "bprop_debug_flag": Case(
        KwDebugScale(),
        PlainDebugScale(),
        _t(X),
        lambda x, s: (3.0 * s + 1.0,),
        plain_fails=GRAPH_AND_JIT(NULL_GRAPH),
        kw_fails=GRAPH_AND_JIT(NULL_GRAPH),
    ),
    "keyword_only_construct_default": Case(
        KwScaleKeywordOnly(),
        PlainScaleKeywordOnly(),
        _t(X),
        lambda x, s: (2.0 * s,),
        plain_fails=GRAPH_AND_JIT(OMITTED),
    ),
    "none_for_a_tensor_input": Case(
        KwWeightFrozen(),
        PlainWeightFrozen(),
        _t(X, Y),
        lambda x, w, s: (s * w, 0 * w),  # nn.Cell gives None (no gradient) in graph mode: zeros
    ),
    "bprop_reads_frozen_parameter": Case(
        KwStepQuantizer(),
        PlainStepQuantizer(),
        _t(X),
        lambda x, s: (0.5 * s,),
        plain_fails=GRAPH_AND_JIT(r"does not support using Parameter"),
    ),
    "jit_outer_with_parameter": Case(
        JitOuter(KwTwiceInputs()),
        JitOuter(PlainTwiceInputs()),
        _t(X, Y),
        lambda x, y, s: (2 * 1.5 * x * 1.5, 2 * y),
    ),
    "inline_grad_operation_in_bprop": Case(
        KwInlineGrad(),
        PlainInlineGrad(),
        _t(X),
        lambda x, s: (6.0 * x * s,),
    ),
    "list_return": Case(
        KwListReturn(),
        PlainListReturn(),
        _t(X, Y),
        lambda x, y, s: (2.0 * s, s),
        plain_fails=GRAPH_AND_JIT(BARE),
    ),
}


def _lin(x: Any, w: Any, s: Any) -> Arrays:
    # y = x @ w.T + b with x (2, 3), w (2, 3), b (2,), dout (2, 2)
    return (s @ w, s.T @ x, s.sum(0))


def _softmax(x: Any) -> Any:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


GRAD_ALL = ops.GradOperation(get_all=True, sens_param=True)


def _grads(net: nn.Cell, how: str, args: tuple[Any, ...], sens: Any) -> Arrays:
    """All input gradients of ``net`` for the given dout, as numpy arrays."""
    g = GRAD_ALL(net)
    if how != "jit":
        out = g(*args, sens)
    else:

        @ms.jit
        def step1(a: Any, s: Any) -> Any:
            return g(a, s)

        @ms.jit
        def step2(a: Any, b: Any, s: Any) -> Any:
            return g(a, b, s)

        @ms.jit
        def step3(a: Any, b: Any, c: Any, s: Any) -> Any:
            return g(a, b, c, s)

        step: Callable[..., Any] = (step1, step2, step3)[len(args) - 1]
        out = step(*args, sens)
    return tuple(_np(o) for o in out)


def _np(v: Any) -> Any:
    if v is None:  # MindSpore's "no gradient" for an input (nn.Cell, graph mode)
        return None
    if isinstance(v, tuple):
        return tuple(_np(e) for e in v)
    return v.asnumpy()


def _flat(v: Any) -> list[Any]:
    if isinstance(v, tuple):
        return [e for item in v for e in _flat(item)]
    return [v if v is None else np.asarray(v)]


def _assert_same(ours: Any, theirs: Any) -> None:
    a, b = _flat(ours), _flat(theirs)
    assert len(a) == len(b), f"{len(a)} gradients, expected {len(b)}"
    for u, v in zip(a, b, strict=True):
        if u is None and v is None:  # both: no gradient
            continue
        if u is None:  # None: no gradient, i.e. zeros
            u = np.zeros_like(v)
        if v is None:
            v = np.zeros_like(u)
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)


def _params() -> list[Any]:
    params = []
    for name, case in CASES.items():
        for how in HOWS:
            marks = []
            if case.xfail is not None and how in case.xfail[0]:
                marks.append(pytest.mark.xfail(strict=True, reason=case.xfail[1]))
            params.append(pytest.param(name, how, marks=marks, id=f"{how}-{name}"))
    return params


@pytest.mark.parametrize(("name", "how"), _params())
def test_zoo_cell_matches_nn_cell(name: str, how: str) -> None:
    """KwCell gives nn.Cell's gradient and the bprop's own gradient, in PYNATIVE, GRAPH_MODE
    and an @ms.jit step; where MindSpore cannot run the nn.Cell twin, KwCell is not worse."""
    ms.set_context(mode=ms.GRAPH_MODE if how == "graph" else ms.PYNATIVE_MODE)
    case = CASES[name]
    args = case.inputs()
    sens = case.sens()
    expected = case.expected(*(a.asnumpy() for a in args), _np(sens))
    theirs: Any = None
    if how in case.plain_fails:
        with pytest.raises((RuntimeError, TypeError, ValueError), match=case.plain_fails[how]):
            _grads(case.plain, how, args, sens)
    else:
        theirs = _grads(case.plain, how, args, sens)
    if how in case.kw_fails:
        with pytest.raises((RuntimeError, TypeError, ValueError, IndexError), match=case.kw_fails[how]):
            _grads(case.kw, how, args, sens)
        return
    ours = _grads(case.kw, how, args, sens)
    if theirs is not None:
        _assert_same(ours, theirs)
    _assert_same(ours, expected)


def test_varargs_construct_with_varargs_bprop_works_like_nn_cell() -> None:
    """PYNATIVE only: nn.Cell itself cannot compile a ``*args`` bprop in GRAPH_MODE."""

    class KwRecomputeLike(KwCell):
        def construct(self, *inputs: Tensor) -> Any:
            return inputs[0] * inputs[1]

        def bprop(self, *args: Any) -> Any:
            return args[-1] * args[1], args[-1] * args[0]

    class PlainRecomputeLike(nn.Cell):
        def construct(self, *inputs: Tensor) -> Any:
            return inputs[0] * inputs[1]

        def bprop(self, *args: Any) -> Any:
            return args[-1] * args[1], args[-1] * args[0]

    args, sens = (Tensor(X), Tensor(Y)), Tensor(S)
    theirs = _grads(PlainRecomputeLike(), "pynative", args, sens)
    _assert_same(theirs, (S * Y, S * X))
    ours = _grads(KwRecomputeLike(), "pynative", args, sens)
    _assert_same(ours, theirs)
