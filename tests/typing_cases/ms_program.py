"""A MindSpore training program as users write it: ``mypy --strict`` and basedpyright report nothing.

LeNet-5 and an MLP, a GeneratorDataset pipeline, a value_and_grad + ``@ms.jit`` training loop,
``Model`` with callbacks, checkpoints, initializers, ops and Tensor methods. It uses only
MindSpore (no kwcell), so the stubs alone decide what the checkers see.
"""

from __future__ import annotations

from collections.abc import Iterator

import mindspore as ms
import numpy as np
import numpy.typing as npt
from mindspore import Parameter, Tensor, nn, ops
from mindspore.common.initializer import HeUniform, Normal, initializer
from mindspore.dataset import GeneratorDataset
from mindspore.train import LossMonitor, Model

ms.set_seed(0)
ms.set_context(mode=ms.PYNATIVE_MODE)


class RandomDigits:
    """A random-access source of 28x28 images and their labels."""

    def __init__(self, size: int = 64) -> None:
        rng = np.random.default_rng(0)
        self.images = rng.random((size, 1, 28, 28), dtype=np.float32)
        self.labels = rng.integers(0, 10, size=(size,)).astype(np.int32)

    def __getitem__(self, index: int) -> tuple[npt.NDArray[np.float32], np.int32]:
        return self.images[index], self.labels[index]

    def __len__(self) -> int:
        return len(self.labels)


def regression_batches(n: int) -> Iterator[tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]:
    rng = np.random.default_rng(1)
    for _ in range(n):
        x = rng.standard_normal((8, 4)).astype(np.float32)
        yield x, x.sum(axis=1, keepdims=True)


class LeNet5(nn.Cell):
    def __init__(self, num_classes: int = 10, num_channel: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.fc1 = nn.Dense(16 * 4 * 4, 120, weight_init=Normal(0.02))
        self.fc2 = nn.Dense(120, 84, weight_init=HeUniform())
        self.fc3 = nn.Dense(84, num_classes)
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x: Tensor) -> Tensor:
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


class MLP(nn.Cell):
    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(4, width), nn.ReLU(), nn.Dense(width, width), nn.Tanh()])
        self.head = nn.Dense(width, 1)
        self.scale = Parameter(initializer("ones", [1], ms.float32), name="scale")

    def construct(self, x: Tensor) -> Tensor:
        return self.head(self.body(x)) * self.scale


def classification_pipeline(batch_size: int) -> ms.dataset.Dataset:
    dataset: ms.dataset.Dataset = GeneratorDataset(
        RandomDigits(), column_names=["image", "label"], shuffle=True
    )
    dataset = dataset.map(operations=lambda image: image * 2.0 - 1.0, input_columns="image")
    return dataset.batch(batch_size, drop_remainder=True)


def train_mlp(epochs: int) -> float:
    net = MLP()
    loss_fn = nn.MSELoss()
    optimizer = nn.Adam(net.trainable_params(), learning_rate=0.01)

    def forward(x: Tensor, y: Tensor) -> Tensor:
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

    @ms.jit
    def train_step(x: Tensor, y: Tensor) -> Tensor:
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        return loss

    dataset = GeneratorDataset(list(regression_batches(16)), column_names=["x", "y"])
    last = 0.0
    for _ in range(epochs):
        net.set_train()
        for x, y in dataset.create_tuple_iterator():
            last = float(train_step(x, y).asnumpy())
    return last


def evaluate(net: nn.Cell, images: Tensor, labels: Tensor) -> float:
    net.set_train(False)
    logits = net(images)
    predicted = ops.argmax(logits, dim=1)
    correct = (predicted == labels).astype(ms.float32)
    return float(correct.mean().asnumpy())


def tensor_tour() -> Tensor:
    a = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    b = ops.ones((3, 4), ms.float32)
    c = (a + b) * 2.0 - a / 4.0
    d = ops.matmul(c, c.T).sum(axis=1, keepdims=True)
    e = ops.concat([a, b], axis=0).reshape((2, 3, 4)).transpose(0, 2, 1)
    assert e.shape == (2, 4, 3)
    assert d.dtype == ms.float32
    f = ops.relu(c - c.mean()) + ops.exp(ops.zeros_like(c)) + ops.sigmoid(c).pow(2.0)
    g = ops.clip_by_value(f, Tensor(0.0, ms.float32), Tensor(5.0, ms.float32))
    h = ops.stack([g, g]).squeeze().astype(ms.float16).astype(ms.float32)
    values: npt.NDArray[np.float32] = h.asnumpy()
    print(values.shape, h.ndim, h.size, h.max(), h.min())
    return ops.reduce_sum(h, 0) if h.ndim > 1 else h


def train_lenet(ckpt: str) -> float:
    net = LeNet5()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    model = Model(net, loss_fn=loss, optimizer=optimizer, metrics={"accuracy"})
    dataset = classification_pipeline(batch_size=16)
    model.train(1, dataset, callbacks=[LossMonitor(per_print_times=2)], dataset_sink_mode=False)
    result = model.eval(dataset, dataset_sink_mode=False)
    ms.save_checkpoint(net, ckpt)
    restored = LeNet5()
    params = ms.load_checkpoint(ckpt)
    not_loaded, _ = ms.load_param_into_net(restored, params)
    assert not not_loaded
    batch = next(dataset.create_dict_iterator())
    print("eval", result, evaluate(restored, batch["image"], batch["label"]))
    return float(result["accuracy"])


def train_with_wrapper_cells(steps: int) -> float:
    net = MLP(width=8)
    with_loss = nn.WithLossCell(net, nn.MSELoss())
    train_net = nn.TrainOneStepCell(with_loss, nn.SGD(net.trainable_params(), learning_rate=0.05))
    train_net.set_train()
    x = Tensor(np.ones((8, 4), np.float32))
    y = Tensor(np.full((8, 1), 4.0, np.float32))
    loss = Tensor(0.0, ms.float32)
    for _ in range(steps):
        loss = train_net(x, y)
    return float(loss.asnumpy())


def gradients_by_position() -> tuple[Tensor, Tensor]:
    def f(x: Tensor, y: Tensor) -> Tensor:
        return (x * x * y).sum()

    x = Tensor(np.array([1.0, 2.0], np.float32))
    y = Tensor(np.array([3.0, 4.0], np.float32))
    dx, dy = ms.grad(f, grad_position=(0, 1))(x, y)
    return dx, dy


if __name__ == "__main__":
    print("mlp", train_mlp(epochs=2))
    print("wrapped", train_with_wrapper_cells(steps=3))
    print("tensors", tensor_tour())
    print("grads", gradients_by_position())
    print("lenet", train_lenet("/tmp/lenet.ckpt"))
