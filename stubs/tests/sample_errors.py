"""Misuses of the MindSpore API that ``mypy --strict`` must report (see check_samples.py).

Each marked line ends with a comment ``E: <fragment of the expected message>``.
"""

from __future__ import annotations

import mindspore as ms
import mindspore.numpy as mnp
from mindspore import nn, ops


@ms.jit
def square_sum(x: ms.Tensor) -> ms.Tensor:
    return ops.sum(x * x)


@ms.jit(jit_level="O1")
def shifted(x: ms.Tensor, shift: float = 1.0) -> ms.Tensor:
    return x + shift


def misuse(x: ms.Tensor, net: nn.Cell) -> None:
    print(x + "1")  # E: Unsupported operand types for + ("Tensor" and "str")
    print(ops.sin(1.0))  # E: Argument 1 to "sin" has incompatible type "float"; expected "Tensor"
    print(ops.concat(x))  # E: "concat" has incompatible type "Tensor"; expected "Sequence[Tensor]"
    print(nn.Dense(4, "8"))  # E: Argument 2 to "Dense" has incompatible type "str"; expected "int"
    print(square_sum(x, x))  # E: Too many arguments for "square_sum"
    print(shifted(x, shift="a"))  # E: "shifted" has incompatible type "str"; expected "float"
    print(ms.grad(square_sum)(x, x))  # E: Too many arguments
    print(ms.value_and_grad(shifted)(x, shif=2.0))  # E: Unexpected keyword argument "shif"
    ms.set_context(mode="graph")  # E: "set_context" has incompatible type "str"; expected "int"
    print(ms.float32 + 1)  # E: Unsupported operand types for + ("Type" and "int")
    print(x.reshape("3"))  # E: No overload variant of "reshape" of "Tensor" matches argument type "str"
    print(net.trainable_paramz())  # E: "Cell" has no attribute "trainable_paramz"
    print(mnp.zeros((2, 3), dtype="float32"))  # E: Argument "dtype" to "zeros" has incompatible type "str"
    ms.Parameter(x, name="w").name = 3  # E: Incompatible types in assignment (expression has type "int"
    print(x.shape + 1)  # E: No overload variant of "__add__" of "tuple" matches argument type "int"
    print(ms.save_checkpoint(net, 123))  # E: "save_checkpoint" has incompatible type "int"; expected "str"
