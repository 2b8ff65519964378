"""Layers whose bprop gives their own weight gradients, and the same layers left to autodiff.

Real source file: GRAPH_MODE and ``@ms.jit`` parse these functions from their source.

Each ``Custom*`` layer lists its Parameters in ``internal_params`` and returns their
gradients from its bprop (the analytic ones, so that a network of them trains exactly as the
``Auto*`` twin, which MindSpore differentiates itself). They use the three forms a bprop can
give weight gradients in: a dict mixing input names and Parameters (``CustomDense``),
MindSpore's ``(input_grads, {parameter: grad})`` (``CustomLayerNorm``), and a dict with only a
Parameter key (``CustomEmbedding``, whose integer input has no gradient).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from mindspore import Parameter, Tensor, nn, ops

from kwcell import KwCell

VOCAB, DIM, OUT = 10, 6, 3
Array = npt.NDArray[np.float32]


def initial_weights(seed: int = 0) -> dict[str, Array]:
    rng = np.random.default_rng(seed)
    return {
        "table": rng.normal(0.0, 1.0, (VOCAB, DIM)).astype(np.float32),
        "gamma": rng.uniform(0.5, 1.5, (DIM,)).astype(np.float32),
        "beta": rng.normal(0.0, 0.1, (DIM,)).astype(np.float32),
        "weight": rng.normal(0.0, 0.5, (OUT, DIM)).astype(np.float32),
        "bias": rng.normal(0.0, 0.1, (OUT,)).astype(np.float32),
    }


class CustomDense(KwCell):
    """``x @ weight.T + bias`` with a bprop giving ``x``, ``weight`` and ``bias`` gradients."""

    def __init__(self, weight: Array, bias: Array) -> None:
        super().__init__()
        self.weight = Parameter(Tensor(weight), name="weight")
        self.bias = Parameter(Tensor(bias), name="bias")
        self.internal_params = [self.weight, self.bias]

    def construct(self, x: Tensor, scale: float = 1.0) -> Tensor:
        return scale * (ops.matmul(x, self.weight.T) + self.bias)

    def bprop(self, x: Tensor, scale: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        g = scale * dout
        return {
            "x": ops.matmul(g, self.weight),
            self.weight: ops.matmul(g.T, x),
            self.bias: g.sum(axis=0),
        }


class AutoDense(nn.Cell):
    def __init__(self, weight: Array, bias: Array) -> None:
        super().__init__()
        self.weight = Parameter(Tensor(weight), name="weight")
        self.bias = Parameter(Tensor(bias), name="bias")

    def construct(self, x: Tensor, scale: float = 1.0) -> Tensor:
        return scale * (ops.matmul(x, self.weight.T) + self.bias)


class CustomLayerNorm(KwCell):
    """Layer normalisation over the last axis; the bprop gives the analytic input, gamma and
    beta gradients in MindSpore's ``(input_grads, {parameter: grad})`` form."""

    def __init__(self, gamma: Array, beta: Array) -> None:
        super().__init__()
        self.gamma = Parameter(Tensor(gamma), name="gamma")
        self.beta = Parameter(Tensor(beta), name="beta")
        self.internal_params = [self.gamma, self.beta]

    def construct(self, x: Tensor, eps: float = 1e-5) -> Tensor:
        mean = x.mean(axis=-1, keep_dims=True)
        xc = x - mean
        var = (xc * xc).mean(axis=-1, keep_dims=True)
        return self.gamma * xc / ops.sqrt(var + eps) + self.beta

    def bprop(self, x: Tensor, eps: float = 1e-5, *, out: Tensor, dout: Tensor) -> Any:
        mean = x.mean(axis=-1, keep_dims=True)
        xc = x - mean
        var = (xc * xc).mean(axis=-1, keep_dims=True)
        inv = 1.0 / ops.sqrt(var + eps)
        xhat = xc * inv
        g = dout * self.gamma
        dx = inv * (g - g.mean(axis=-1, keep_dims=True) - xhat * (g * xhat).mean(axis=-1, keep_dims=True))
        return (dx, None), {self.gamma: (dout * xhat).sum(axis=0), self.beta: dout.sum(axis=0)}


class AutoLayerNorm(nn.Cell):
    def __init__(self, gamma: Array, beta: Array) -> None:
        super().__init__()
        self.gamma = Parameter(Tensor(gamma), name="gamma")
        self.beta = Parameter(Tensor(beta), name="beta")

    def construct(self, x: Tensor, eps: float = 1e-5) -> Tensor:
        mean = x.mean(axis=-1, keep_dims=True)
        xc = x - mean
        var = (xc * xc).mean(axis=-1, keep_dims=True)
        return self.gamma * xc / ops.sqrt(var + eps) + self.beta


class CustomEmbedding(KwCell):
    """A table lookup; the bprop scatters ``dout`` back into the rows that were read."""

    def __init__(self, table: Array) -> None:
        super().__init__()
        self.table = Parameter(Tensor(table), name="table")
        self.internal_params = [self.table]

    def construct(self, ids: Tensor) -> Tensor:
        out: Tensor = ops.gather(self.table, ids, 0)
        return out

    def bprop(self, ids: Tensor, out: Tensor, dout: Tensor) -> Any:
        rows = ops.unsorted_segment_sum(dout.reshape((-1, DIM)), ids.reshape((-1,)), VOCAB)
        return {self.table: rows}  # ids (integers) get zeros


class AutoEmbedding(nn.Cell):
    def __init__(self, table: Array) -> None:
        super().__init__()
        self.table = Parameter(Tensor(table), name="table")

    def construct(self, ids: Tensor) -> Tensor:
        out: Tensor = ops.gather(self.table, ids, 0)
        return out


class Model(nn.Cell):
    """Embedding -> LayerNorm -> Dense, the layers called with keywords; custom or autodiff."""

    def __init__(self, weights: dict[str, Array], custom: bool) -> None:
        super().__init__()
        w = weights
        if custom:
            self.embed: nn.Cell = CustomEmbedding(w["table"])
            self.norm: nn.Cell = CustomLayerNorm(w["gamma"], w["beta"])
            self.dense: nn.Cell = CustomDense(w["weight"], w["bias"])
        else:
            self.embed = AutoEmbedding(w["table"])
            self.norm = AutoLayerNorm(w["gamma"], w["beta"])
            self.dense = AutoDense(w["weight"], w["bias"])

    def construct(self, ids: Tensor) -> Tensor:
        h = self.norm(self.embed(ids=ids), eps=1e-5)
        out: Tensor = self.dense(h, scale=0.5)
        return out


def batches(steps: int, batch: int = 5, seed: int = 3) -> list[tuple[Tensor, Tensor]]:
    rng = np.random.default_rng(seed)
    return [
        (
            Tensor(rng.integers(0, VOCAB, (batch,)).astype(np.int32)),
            Tensor(rng.normal(0.0, 1.0, (batch, OUT)).astype(np.float32)),
        )
        for _ in range(steps)
    ]


def train(net: nn.Cell, steps: int) -> dict[str, Array]:
    """Train with ``TrainOneStepCell`` (SGD with momentum) and give the final weights by name."""
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
    step.set_train()
    for ids, label in batches(steps):
        step(ids, label)
    return {p.name.split(".")[-1]: p.asnumpy().copy() for p in net.trainable_params()}


# ---- the same weighted bprop reached through the class machinery ----------------------------

W0 = np.array([1.0, 2.0, 0.5], np.float32)


class Weighted(KwCell):
    """``w * x + shift``; the bprop's weight gradient is deliberately ``3 * x * dout``."""

    def __init__(self, w: Array = W0) -> None:
        super().__init__()
        self.w = Parameter(Tensor(w), name="w")
        self.internal_params = [self.w]

    def construct(self, x: Tensor, shift: float = 0.0) -> Tensor:
        return self.w * x + shift

    def bprop(self, x: Tensor, shift: float = 0.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": self.w * dout, self.w: 3.0 * x * dout}


class WeightedChild(Weighted):
    """Inherits the bprop."""


class WeightedSuper(Weighted):
    """Passes the parent's gradients on through ``super().bprop``."""

    def bprop(self, x: Tensor, shift: float = 0.0, *, out: Tensor, dout: Tensor) -> Any:
        return super().bprop(x, shift, out=out, dout=dout)


class WeightedOnce(Weighted, compile_once=True):
    """compile_once: instances with weights are compiled on their own."""


class WeightedPositional(KwCell):
    """MindSpore's own positional form, as written for an ``nn.Cell`` with ``internal_params``."""

    def __init__(self) -> None:
        super().__init__()
        self.w = Parameter(Tensor(W0), name="w")
        self.internal_params = [self.w]

    def construct(self, x: Tensor, shift: float) -> Tensor:
        return self.w * x + shift

    def bprop(self, x: Tensor, shift: float, out: Tensor, dout: Tensor) -> Any:
        return (self.w * dout, 0), {self.w: 3.0 * dout * x}
