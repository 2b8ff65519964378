"""Networks and training loops shared by the training, state and data-parallel tests.

Real source file: GRAPH_MODE and ``@ms.jit`` parse these functions from their source.

``KwNet`` is ``Dense -> SurrogateTanh -> Dense`` where ``SurrogateTanh`` is a ``KwCell``
with a custom bprop (a surrogate gradient, deliberately *not* the derivative of construct,
so that a test can tell whether the bprop was used) called with keywords in reverse order
and non-default values. ``RefNet`` is the same network written the MindSpore way: a
positional ``nn.Cell`` with the equivalent positional bprop, called positionally.
``AutodiffNet`` has no bprop at all (MindSpore differentiates tanh): its losses must differ.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import mindspore as ms
import numpy as np
import numpy.typing as npt
from mindspore import Parameter, Tensor, nn, ops
from mindspore.dataset import GeneratorDataset
from mindspore.train import Callback, Model

import kwcell
from kwcell import KwCell

IN, HIDDEN, OUT = 4, 8, 1
ALPHA, BETA = 2.0, 0.5  # the non-default keyword values of the activation call
LR = 0.1

Array = npt.NDArray[np.float32]
Weights = dict[str, Array]


class SurrogateTanh(KwCell):
    """``beta * tanh(alpha * x)`` whose bprop uses the surrogate ``beta*alpha / (1 + (alpha*x)**2)``."""

    def construct(self, x: Tensor, alpha: float = 1.0, beta: float = 1.0) -> Tensor:
        return beta * ops.tanh(alpha * x)

    def bprop(self, x: Tensor, alpha: float = 1.0, beta: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        u = alpha * x
        return {"x": dout * beta * alpha / (1.0 + u * u)}


class PositionalSurrogateTanh(nn.Cell):
    """The same activation written for plain MindSpore: positional construct and bprop."""

    def construct(self, x: Tensor, alpha: float, beta: float) -> Tensor:
        return beta * ops.tanh(alpha * x)

    def bprop(self, x: Tensor, alpha: float, beta: float, out: Tensor, dout: Tensor) -> Any:
        u = alpha * x
        return dout * beta * alpha / (1.0 + u * u), 0, 0


class PlainTanh(nn.Cell):
    """The activation without a custom bprop: MindSpore's autodiff of tanh."""

    def construct(self, x: Tensor, alpha: float, beta: float) -> Tensor:
        return beta * ops.tanh(alpha * x)


def _dense(n_in: int, n_out: int, weights: Weights, name: str) -> nn.Dense:
    return nn.Dense(
        n_in,
        n_out,
        weight_init=Tensor(weights[f"{name}.weight"]),
        bias_init=Tensor(weights[f"{name}.bias"]),
    )


class KwNet(KwCell):
    """Dense -> KwCell activation (keyword call, non-default values) -> Dense."""

    def __init__(self, weights: Weights) -> None:
        super().__init__()
        self.dense1 = _dense(IN, HIDDEN, weights, "dense1")
        self.act = SurrogateTanh()
        self.dense2 = _dense(HIDDEN, OUT, weights, "dense2")

    def construct(self, x: Tensor) -> Tensor:
        out: Tensor = self.dense2(self.act(self.dense1(x), beta=BETA, alpha=ALPHA))
        return out


class RefNet(nn.Cell):
    """``KwNet`` written with positional ``nn.Cell`` cells and a hand-written positional bprop."""

    def __init__(self, weights: Weights, act: nn.Cell | None = None) -> None:
        super().__init__()
        self.dense1 = _dense(IN, HIDDEN, weights, "dense1")
        self.act = act if act is not None else PositionalSurrogateTanh()
        self.dense2 = _dense(HIDDEN, OUT, weights, "dense2")

    def construct(self, x: Tensor) -> Tensor:
        out: Tensor = self.dense2(self.act(self.dense1(x), ALPHA, BETA))
        return out


def autodiff_net(weights: Weights) -> RefNet:
    """The network with MindSpore's own gradient of tanh (no custom bprop anywhere)."""
    return RefNet(weights, act=PlainTanh())


def initial_weights(seed: int = 0) -> Weights:
    rng = np.random.default_rng(seed)
    return {
        "dense1.weight": rng.normal(0.0, 0.5, (HIDDEN, IN)).astype(np.float32),
        "dense1.bias": rng.normal(0.0, 0.1, (HIDDEN,)).astype(np.float32),
        "dense2.weight": rng.normal(0.0, 0.5, (OUT, HIDDEN)).astype(np.float32),
        "dense2.bias": np.zeros((OUT,), np.float32),
    }


def make_data(n: int = 32, seed: int = 1) -> tuple[Array, Array]:
    """A smooth regression target the network can fit: y = sin(x . v)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, (n, IN)).astype(np.float32)
    v = np.array([0.5, -1.0, 0.8, 0.3], np.float32)
    y = np.sin(x @ v)[:, None].astype(np.float32)
    return x, y


def parameters_of(net: nn.Cell) -> Weights:
    return {p.name: p.asnumpy().copy() for p in net.trainable_params()}


# (a) functional loop: value_and_grad + optimizer, step under @ms.jit.
def train_functional(
    net: nn.Cell,
    x: Array,
    y: Array,
    steps: int,
    value_and_grad: Callable[..., Any] = kwcell.value_and_grad,
) -> list[float]:
    loss_fn = nn.MSELoss()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=LR)

    def forward(data: Tensor, label: Tensor) -> Tensor:
        loss: Tensor = loss_fn(net(data), label)
        return loss

    grad_fn = value_and_grad(forward, None, optimizer.parameters)

    @ms.jit
    def step(data: Tensor, label: Tensor) -> Tensor:
        loss, grads = grad_fn(data, label)
        optimizer(grads)
        return loss  # type: ignore[no-any-return]

    data, label = Tensor(x), Tensor(y)
    return [float(step(data, label).asnumpy()) for _ in range(steps)]


# (b) nn.WithLossCell + nn.TrainOneStepCell.
def train_one_step_cell(net: nn.Cell, x: Array, y: Array, steps: int) -> list[float]:
    optimizer = nn.SGD(net.trainable_params(), learning_rate=LR)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
    step.set_train()
    data, label = Tensor(x), Tensor(y)
    return [float(step(data, label).asnumpy()) for _ in range(steps)]


class _Batches:
    """A random-access source for ``GeneratorDataset`` yielding fixed mini-batches in order."""

    def __init__(self, x: Array, y: Array, batch: int) -> None:
        self._x, self._y, self._batch = x, y, batch

    def __getitem__(self, i: int) -> tuple[Array, Array]:
        s = slice(i * self._batch, (i + 1) * self._batch)
        return self._x[s], self._y[s]

    def __len__(self) -> int:
        return len(self._x) // self._batch

    def __iter__(self) -> Iterator[tuple[Array, Array]]:
        return (self[i] for i in range(len(self)))


class _RecordLoss(Callback):
    def __init__(self) -> None:
        super().__init__()
        self.losses: list[float] = []

    def on_train_step_end(self, run_context: Any) -> None:
        loss = run_context.original_args().net_outputs
        self.losses.append(float(loss.asnumpy()))


# (c) mindspore.train.Model.train over a GeneratorDataset.
def train_model(net: nn.Cell, x: Array, y: Array, epochs: int, batch: int) -> list[float]:
    dataset = GeneratorDataset(
        _Batches(x, y, batch), column_names=["data", "label"], shuffle=False, python_multiprocessing=False
    )
    optimizer = nn.SGD(net.trainable_params(), learning_rate=LR)
    model = Model(net, loss_fn=nn.MSELoss(), optimizer=optimizer)
    record = _RecordLoss()
    model.train(epochs, dataset, callbacks=[record], dataset_sink_mode=False)
    return record.losses


class Scale(KwCell):
    """``w * x + shift`` whose bprop gives the input *and* the weight gradient (PyNative).

    The weight gradient is deliberately ``2 * dout * x`` (twice the true one) so that a test
    can tell the bprop's weight gradient from MindSpore's autodiff.
    """

    def __init__(self, w: Array) -> None:
        super().__init__()
        self.w = Parameter(Tensor(w), name="w")
        self.internal_params = [self.w]

    def construct(self, x: Tensor, shift: float = 0.0) -> Tensor:
        return self.w * x + shift

    def bprop(self, x: Tensor, shift: float = 0.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": self.w * dout, self.w: 2.0 * dout * x}


class ScaledNet(KwCell):
    """A container (a ``KwCell`` without bprop) holding a weighted bprop cell and a Dense."""

    def __init__(self, weights: Weights) -> None:
        super().__init__()
        self.scale = Scale(np.linspace(0.5, 2.0, IN).astype(np.float32))
        self.dense1 = _dense(IN, HIDDEN, weights, "dense1")

    def construct(self, x: Tensor) -> Tensor:
        out: Tensor = self.dense1(self.scale(x, shift=0.25))
        return out


class RefScale(nn.Cell):
    """``Scale`` written for plain MindSpore: ``internal_params`` and a positional bprop."""

    def __init__(self, w: Array) -> None:
        super().__init__()
        self.w = Parameter(Tensor(w), name="w")
        self.internal_params = [self.w]

    def construct(self, x: Tensor, shift: float) -> Tensor:
        return self.w * x + shift

    def bprop(self, x: Tensor, shift: float, out: Tensor, dout: Tensor) -> Any:
        return (self.w * dout, 0), {self.w: 2.0 * dout * x}


class RefScaledNet(nn.Cell):
    """``ScaledNet`` written with positional ``nn.Cell`` cells."""

    def __init__(self, weights: Weights) -> None:
        super().__init__()
        self.scale = RefScale(np.linspace(0.5, 2.0, IN).astype(np.float32))
        self.dense1 = _dense(IN, HIDDEN, weights, "dense1")

    def construct(self, x: Tensor) -> Tensor:
        out: Tensor = self.dense1(self.scale(x, 0.25))
        return out
