"""A typical MindSpore user module; must pass ``mypy --strict`` with the stubs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import mindspore as ms
import mindspore.numpy as mnp
import numpy as np
from mindspore import nn, ops
from mindspore.common import dtype as mstype
from mindspore.ops import operations as P


class Scaled(nn.Cell):
    def __init__(self, scale: float = 2.0) -> None:
        super().__init__()
        self.scale = scale
        self.w = ms.Parameter(ms.Tensor(np.ones((3,), np.float32)), name="w")
        self.mul = P.Mul()

    def construct(self, x: ms.Tensor, y: ms.Tensor) -> ms.Tensor:
        out: ms.Tensor = self.mul(self.w, ops.sin(x)) * self.scale + ops.exp(-y)
        return out

    def bprop(
        self, x: ms.Tensor, y: ms.Tensor, out: ms.Tensor, dout: ms.Tensor
    ) -> tuple[ms.Tensor, ms.Tensor]:
        return self.scale * ops.cos(x) * dout, ops.zeros_like(y)


class Mlp(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell(nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 1, has_bias=False))

    @ms.jit
    def construct(self, x: ms.Tensor) -> ms.Tensor:
        out: ms.Tensor = self.body(x)
        return out


@ms.jit
def square_sum(x: ms.Tensor) -> ms.Tensor:
    return ops.sum(x * x)


@ms.jit(capture_mode="ast", jit_level="O0")
def shifted(x: ms.Tensor, shift: float = 1.0) -> ms.Tensor:
    return ops.clamp(x + shift, min=0.0) / 2


def tensor_basics() -> float:
    a = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = ms.Tensor([1.0, 2.0, 3.0], ms.float32)
    c = ms.Tensor(3, dtype=mstype.int32)
    d = (a + b) * 2.0 - 1 / (b + 1) + (1 - a) ** 2 + a @ b.reshape(3, 1).transpose().T
    e = -abs(d)[0, 1:] + a[a > 1.0].sum() + c.astype(ms.float32)
    mask = (a >= 1.0) & (a < 4.0)
    picked = ops.where(mask, a, ops.zeros_like(a))
    shape: tuple[int, ...] = picked.shape
    rows = [row.mean() for row in a]
    total = a.sum(axis=0, keepdims=True).squeeze(0).expand_dims(0).max()
    values, indices = a.max(1)
    assert a.dtype == ms.float32 and a.ndim == 2 and a.size == 6 and len(a) == 2
    arr: np.ndarray[Any, Any] = e.asnumpy()
    return (
        float(total.item())
        + len(rows)
        + len(shape)
        + float(arr.sum())
        + values.copy().min().item()
        + indices.ndim
    )


def ops_and_numpy(x: ms.Tensor) -> ms.Tensor:
    y = ops.concat([ops.relu(x), ops.sigmoid(x), ops.tanh(x)], axis=0)
    parts = ops.split(y, 3)
    z = ops.stack(list(parts)).mean()
    r = ops.ReduceSum(keep_dims=True)(x, 0) + ops.reduce_sum(x) + ops.cast(z, ms.float32)
    w = mnp.add(mnp.ones((3,)), mnp.sin(x)) + mnp.arange(3) + mnp.linspace(0.0, 1.0, 3)
    return ops.depend(r + ops.stop_gradient(w) + ops.softmax(x) + ops.pow(x, 2), z)


def gradients() -> tuple[Any, Any]:
    net = Scaled()
    x = ms.Tensor(np.ones((3,), np.float32))
    y = ms.Tensor(np.zeros((3,), np.float32))
    grad_fn: Callable[[ms.Tensor, ms.Tensor], Any] = ms.grad(net, grad_position=(0, 1))
    dx = grad_fn(x, y)
    value_and_grad_fn = ms.value_and_grad(square_sum, grad_position=0)
    loss, dsq = value_and_grad_fn(x)
    weight_grad = ops.grad(net, grad_position=None, weights=net.trainable_params())(x, y)
    return (dx, dsq, weight_grad), loss


def train_step(steps: int = 2) -> float:
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    net = Mlp()
    loss_fn = nn.MSELoss()
    optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-2)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), optimizer)
    step.set_train()
    data = ms.Tensor(np.ones((5, 4), np.float32))
    label = ms.Tensor(np.zeros((5, 1), np.float32))
    loss: ms.Tensor = step(data, label)
    for _ in range(steps):
        loss = step(data, label)
    for name, param in net.parameters_and_names():
        assert isinstance(name, str) and param.requires_grad
    sgd = nn.SGD(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    grads = ms.value_and_grad(net, None, sgd.parameters)(data)[1]
    sgd(grads)
    return float(loss.asnumpy())


def containers() -> int:
    layers = nn.CellList([nn.Dense(2, 2), nn.GELU()])
    layers.append(nn.Dropout(p=0.1))
    heads = nn.CellDict({"cls": nn.Dense(2, 3), "act": nn.Softmax()})
    params = ms.ParameterTuple(layers.trainable_params())
    named = dict(heads.parameters_and_names())
    cells = [name for name, _ in heads.cells_and_names()]
    return len(layers) + len(heads) + len(params) + len(named) + len(cells) + len(list(heads.keys()))


def high_level(path: str) -> dict[str, Any]:
    def rows() -> Iterator[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
        for i in range(4):
            yield np.full((4,), i, np.float32), np.zeros((1,), np.float32)

    dataset = ms.dataset.GeneratorDataset(rows, column_names=["data", "label"], shuffle=False).batch(2)
    net = ms.amp.auto_mixed_precision(Mlp(), amp_level="O0")
    model = ms.train.Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9), {"loss"})
    model.train(1, dataset, callbacks=[ms.train.LossMonitor()])
    ms.save_checkpoint(net, path)
    not_loaded, _ = ms.load_param_into_net(net, ms.load_checkpoint(path))
    rank = ms.communication.get_rank() if ms.get_context("device_target") == "Ascend" else 0
    return {"eval": model.eval(dataset), "not_loaded": not_loaded, "rank": rank}


if __name__ == "__main__":
    print(tensor_basics(), ops_and_numpy(ms.Tensor(np.ones((3,), np.float32))).shape)
    print(gradients()[1], train_step())
    print(shifted(ms.Tensor([-1.0, 1.0])), ms.get_context("mode") == ms.PYNATIVE_MODE)
    print(containers())
