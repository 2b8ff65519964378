"""Train a small network with a KwCell activation: functional loop, step under ``@ms.jit``.

Run: ``python examples/train.py [--graph]``. Prints the loss every 20 steps; it goes down.
"""

from __future__ import annotations

import sys
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

import kwcell
from kwcell import KwCell


class SurrogateTanh(KwCell):
    """``beta * tanh(alpha * x)``, trained through a surrogate gradient."""

    def construct(self, x: Tensor, alpha: float = 1.0, beta: float = 1.0) -> Tensor:
        return beta * ops.tanh(alpha * x)

    def bprop(self, x: Tensor, alpha: float = 1.0, beta: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        u = alpha * x
        return {"x": dout * beta * alpha / (1.0 + u * u)}  # alpha, beta get zeros


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.dense1 = nn.Dense(4, 16)
        self.act = SurrogateTanh()
        self.dense2 = nn.Dense(16, 1)

    def construct(self, x: Tensor) -> Tensor:
        out: Tensor = self.dense2(self.act(self.dense1(x), beta=0.5, alpha=2.0))
        return out


def main() -> list[float]:
    ms.set_context(mode=ms.GRAPH_MODE if "--graph" in sys.argv else ms.PYNATIVE_MODE)
    ms.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = np.sin(x @ np.array([0.5, -1.0, 0.8, 0.3], np.float32))[:, None]

    net = Net()
    loss_fn = nn.MSELoss()
    optimizer = nn.Adam(net.trainable_params(), learning_rate=0.02)

    def forward(data: Tensor, label: Tensor) -> Tensor:
        loss: Tensor = loss_fn(net(data), label)
        return loss

    grad_fn = kwcell.value_and_grad(forward, None, optimizer.parameters)

    @ms.jit
    def train_step(data: Tensor, label: Tensor) -> Tensor:
        loss, grads = grad_fn(data, label)
        optimizer(grads)
        return loss

    data, label = Tensor(x), Tensor(y)
    losses = []
    for step in range(101):
        losses.append(float(train_step(data, label).asnumpy()))
        if step % 20 == 0:
            print(f"step {step:3d}  loss {losses[-1]:.4f}")
    assert losses[-1] < 0.5 * losses[0], "the loss did not go down"
    return losses


if __name__ == "__main__":
    main()
