"""Custom-gradient functions as a model library writes them with ``kwcell.custom_bprop``.

Each backward differs from what MindSpore's autodiff would give for the forward (a surrogate, a
straight-through estimator, a reversal), so a test that sees the analytic backward knows the
custom one ran. The cells below use the functions the way models do: keywords in any order,
defaults left out, several calls in one graph, Parameters passed as arguments. A module, not a
test file, so that GRAPH_MODE reads the source as written.
"""

from __future__ import annotations

from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

import kwcell


@kwcell.custom_bprop
def spike(x: Tensor, w: Any = 1.0, *, y: Any = 0.0) -> Tensor:
    """``w * step(x) + y``: a spiking unit. Its backward is a sigmoid surrogate for ``x``."""
    spikes: Tensor = w * ops.cast(x > 0, x.dtype) + y
    return spikes


@spike.bprop
def _spike_backward(x: Tensor, w: Any = 1.0, *, y: Any = 0.0, out: Tensor, dout: Tensor) -> Any:
    s = ops.sigmoid(4.0 * x)
    return {"x": w * 4.0 * s * (1.0 - s) * dout, "w": (ops.cast(x > 0, x.dtype) * dout).sum()}  # y: zeros


@kwcell.custom_bprop
def round_ste(x: Tensor) -> Tensor:
    """Rounding forward; the straight-through estimator (identity) backward."""
    rounded: Tensor = ops.round(x)
    return rounded


@round_ste.bprop
def _round_backward(x: Tensor, *, out: Tensor, dout: Tensor) -> Tensor:
    return dout  # a bare Tensor: the gradient of x


@kwcell.custom_bprop
def reverse_grad(x: Tensor, lam: float) -> Tensor:
    """Identity forward; the gradient multiplied by ``-lam`` backward (domain adaptation)."""
    return x * 1.0


@reverse_grad.bprop
def _reverse_backward(x: Tensor, lam: float, out: Tensor, dout: Tensor) -> tuple[Tensor, None]:
    return -lam * dout, None  # MindSpore's positional form, a tuple; None becomes zeros


@kwcell.custom_bprop
def sin_gate(x: Tensor, w: Tensor) -> Tensor:
    """``w * sin(x)`` with its true backward, for gradcheck."""
    return w * ops.sin(x)


@sin_gate.bprop
def _sin_gate_backward(*args: Tensor) -> tuple[Tensor, Tensor]:
    x, w, _, dout = args  # MindSpore's classic form: inputs, then out, dout
    return w * ops.cos(x) * dout, ops.sin(x) * dout


# A Parameter and a cell the functions close over (constants for the backward).
SCALE = Parameter(Tensor(np.array([2.0, 3.0], np.float32)), name="scale", requires_grad=False)
PROJECTION = nn.Dense(2, 2, weight_init="ones", bias_init="zeros")
for _frozen in PROJECTION.get_parameters():
    _frozen.requires_grad = False


@kwcell.custom_bprop
def scaled_by_param(x: Tensor) -> Tensor:
    return x * SCALE


@scaled_by_param.bprop
def _scaled_backward(x: Tensor, *, out: Tensor, dout: Tensor) -> dict[str, Tensor]:
    return {"x": 10.0 * SCALE * dout}


@kwcell.custom_bprop
def projected(x: Tensor) -> Tensor:
    return PROJECTION(x)


@projected.bprop
def _projected_backward(x: Tensor, *, out: Tensor, dout: Tensor) -> dict[str, Tensor]:
    return {"x": ops.matmul(dout, PROJECTION.weight) * 5.0}


class SpikingBlock(nn.Cell):
    """Calls ``spike`` four times in one graph, with keywords in both orders and defaults left out."""

    def __init__(self) -> None:
        super().__init__()
        self.w = Parameter(Tensor(np.float32(1.5)), name="w")

    def construct(self, x: Tensor) -> Tensor:
        a = spike(x, y=0.5, w=self.w)
        b = spike(w=2.0, x=x)
        c = spike(x)
        d = spike(x, 3.0, y=-1.0)
        return a + b + c + d


class Model(nn.Cell):
    """An outer cell around the block, and the other functions, as a model composes them."""

    def __init__(self) -> None:
        super().__init__()
        self.block = SpikingBlock()

    def construct(self, x: Tensor) -> Tensor:
        h = self.block(x) + round_ste(x) + reverse_grad(x, lam=0.5)
        return h + scaled_by_param(x) + projected(x.reshape(1, 2)).reshape(2)


@ms.jit
def jitted(x: Tensor, w: Tensor) -> Tensor:
    """The same calls from an ``@ms.jit`` function."""
    return spike(x, y=0.5, w=w) + spike(w=2.0, x=x) + spike(x) + round_ste(x) + reverse_grad(x, lam=0.5)


def sigmoid_surrogate(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The surrogate ``spike``'s backward gives for ``x`` (per unit of ``w``)."""
    s: np.ndarray[Any, Any] = 1.0 / (1.0 + np.exp(-4.0 * x))
    return 4.0 * s * (1.0 - s)
