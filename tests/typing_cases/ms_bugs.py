"""Thirteen MindSpore mistakes that each fail at run time, caught by both checkers from the stubs.

The mistakes sit in an ordinary training script; each marked line is the whole bug.
"""

# ruff: noqa: E501 (expected messages are quoted whole)
# each marked call stays on its own line:
# fmt: off
from __future__ import annotations

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore.dataset import GeneratorDataset
from mindspore.train import Model


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.dense = nn.Dense(4, "16")  # E: Argument 2 to "Dense" has incompatible type "str"; expected "int"
        self.conv = nn.Conv2d(1, 6, kernel_size=5, pad_mode="valid", has_bais=True)  # E: Unexpected keyword argument "has_bais" for "Conv2d"
        self.act = nn.ReLU()
        self.scale = Parameter(Tensor(np.ones(1, np.float32)), "scale", requires_grad="no")  # E: Argument "requires_grad" to "Parameter" has incompatible type "str"; expected "bool"

    def construct(self, x: Tensor) -> Tensor:
        h = self.act(x, x)  # E: Too many arguments for "__call__" of "Cell"
        return ops.matmul(h)  # E: Missing positional argument "other" in call to "matmul"


a = Tensor(np.ones((2, 4), np.float32))
nn.ReLU()(a, a)  # E: Too many arguments for "__call__" of "Cell"
net = Net()
optimizer = nn.Adam(net.trainable_params(), learning_rate="0.01")  # E: Argument "learning_rate" to "Adam" has incompatible type "str"
loss_fn = nn.MSELoss()
loss = loss_fn(net(a))  # E: Missing positional argument "labels" in call to "__call__" of "Cell"
both = ops.concat(a, a)  # E: Argument 2 to "concat" has incompatible type "Tensor"; expected "int"
rows = a.shape[0] + "1"  # E: Unsupported operand types for + ("int" and "str")
dataset = GeneratorDataset([(np.ones(4, np.float32),)], column_names=["x"], shuffle="yes")  # E: Argument "shuffle" to "GeneratorDataset" has incompatible type "str"; expected "bool | None"
Model(net, loss_fn, optimizer).train(dataset, 1)  # E: Argument 1 to "train" of "Model" has incompatible type "GeneratorDataset"; expected "int"
ms.load_param_into_net(ms.load_checkpoint("net.ckpt"), net)  # E: Argument 1 to "load_param_into_net" has incompatible type "dict[str, Parameter]"; expected "Cell"
