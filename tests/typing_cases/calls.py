"""Wrong calls of KwCell subclasses and of their gradient functions, in the shape of a training script.

Every marked line is flagged by mypy and by pyright from ``construct``'s signature alone (no
plugin): names, order, kinds and types of the arguments, and construct's return type.
"""

# ruff: noqa: E501 (expected messages are quoted whole)
# each marked call stays on its own line:
# fmt: off
from __future__ import annotations

import mindspore as ms
import numpy as np
from mindspore import nn, ops
from typing_extensions import reveal_type

import kwcell
from kwcell import KwCell


class SurrogateTanh(KwCell):
    """tanh forward, a rational surrogate gradient backward."""

    def construct(self, x: ms.Tensor, alpha: float = 1.0, *, beta: float = 1.0) -> ms.Tensor:
        return beta * ops.tanh(alpha * x)

    def bprop(
        self, x: ms.Tensor, alpha: float = 1.0, *, beta: float = 1.0, out: ms.Tensor, dout: ms.Tensor
    ) -> dict[str, ms.Tensor]:
        u = alpha * x
        return {"x": dout * beta * alpha / (1.0 + u * u)}


class ClipGrad(KwCell):
    """Identity forward; the gradient clipped to [-bound, bound] backward."""

    def construct(self, x: ms.Tensor, bound: float, /, mask: ms.Tensor | None = None) -> ms.Tensor:
        return x if mask is None else x * mask

    def bprop(self, *args: ms.Tensor) -> tuple[ms.Tensor, ...]:
        dout = args[-1]
        return (ops.clip_by_value(dout, -1.0, 1.0), ops.zeros_like(dout), ops.zeros_like(dout))


class Pair(KwCell):
    def construct(self, x: ms.Tensor, n: int) -> tuple[ms.Tensor, int]:
        return x, n


class Block(nn.Cell):
    """A Dense layer, then the surrogate activation, as a model would use them."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.dense = nn.Dense(width, width)
        self.act = SurrogateTanh()
        self.clip = ClipGrad()

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        h = self.act(self.dense(x), 2.0, gamma=0.5)  # E: Unexpected keyword argument "gamma" for "__call__" of "KwCell"
        h = self.act(h, 2.0, 0.5)  # E: Too many positional arguments for "__call__" of "KwCell"
        h = self.clip(h, bound=1.0)  # E: Unexpected keyword argument "bound" for "__call__" of "KwCell"
        h = self.clip(h)  # E: Too few arguments for "__call__" of "KwCell"
        h = self.clip(h, 1.0, mask=0.5)  # E: Argument "mask" to "__call__" of "KwCell" has incompatible type "float"; expected "Tensor | None"
        return self.act(alpha=2.0)  # E: Missing positional argument "x" in call to "__call__" of "KwCell"


act = SurrogateTanh()
clip = ClipGrad()
x = ms.Tensor(np.ones((4, 4), np.float32))
act(x, z=1.0)  # E: Unexpected keyword argument "z" for "__call__" of "KwCell"
act(x, alpha="big")  # E: Argument "alpha" to "__call__" of "KwCell" has incompatible type "str"; expected "float"
act("x")  # E: Argument 1 to "__call__" of "KwCell" has incompatible type "str"; expected "Tensor"
act(np.ones((4, 4), np.float32))  # E: Argument 1 to "__call__" of "KwCell" has incompatible type "ndarray
act()  # E: Missing positional argument "x" in call to "__call__" of "KwCell"
act(beta=2.0)  # E: Missing positional argument "x" in call to "__call__" of "KwCell"
act(x, 2.0, 3.0)  # E: Too many positional arguments for "__call__" of "KwCell"
act(x, 2.0, alpha=3.0)  # E: "__call__" of "KwCell" gets multiple values for keyword argument "alpha"
act(x, None)  # E: Argument 2 to "__call__" of "KwCell" has incompatible type "None"; expected "float"
act(x, beta=None)  # E: Argument "beta" to "__call__" of "KwCell" has incompatible type "None"; expected "float"
act(*[x, x])  # E: Argument 1 to "__call__" of "KwCell" has incompatible type "*list[Tensor]"; expected "float"
act(x, **{"alpha": "2"})  # E: Argument 2 to "__call__" of "KwCell" has incompatible type "**dict[str, str]"; expected "float"
s: str = act(x)  # E: Incompatible types in assignment (expression has type "Tensor", variable has type "str")
act(x).no_such_method()  # E: "Tensor" has no attribute "no_such_method"
clip(x=x, bound=1.0)  # E: Unexpected keyword argument "bound" for "__call__" of "KwCell"
clip(x, "1.0")  # E: Argument 2 to "__call__" of "KwCell" has incompatible type "str"; expected "float"
Pair()(x)  # E: Missing positional argument "n" in call to "__call__" of "KwCell"
Pair()(x, 2.5)  # E: Argument 2 to "__call__" of "KwCell" has incompatible type "float"; expected "int"
_, n = Pair()(x, 2)
n.upper()  # E: "int" has no attribute "upper"
u: ms.Tensor = Pair()(x, n=1)  # E: expression has type "tuple[Tensor, int]", variable has type "Tensor"
a, b, c = Pair()(x, 1)  # E: Need more than 2 values to unpack (3 expected)
call = Pair().__call__  # self is not part of the call signature:
reveal_type(call)  # N[mypy]: Revealed type is "def (x: mindspore.common.tensor.Tensor, n: int) -> tuple[  # N[pyright]: Type of "call" is "(x: Tensor, n: int) -> tuple[Tensor, int]"
Block(4)(x, x)  # E: Too many arguments for "__call__" of "Cell"
Block("4")  # E: Argument 1 to "Block" has incompatible type "str"; expected "int"

# Gradient functions keep the cell's parameters.
grad_fn = kwcell.value_and_grad(act)
reveal_type(grad_fn)  # N[mypy]: Revealed type is "def (x: mindspore.common.tensor.Tensor, alpha: float =, *, beta: float =) -> tuple[mindspore.common.tensor.Tensor, mindspore.common.tensor.Tensor]"  # N[pyright]: Type of "grad_fn" is "(x: Tensor, alpha: float = 1, *, beta: float = 1) -> tuple[Tensor, Tensor]"
grad_fn(x, gamma=2.0)  # E: Unexpected keyword argument "gamma"
grad_fn(x, 2.0, 3.0)  # E: Too many positional arguments
grad_fn(x, alpha="2")  # E: Argument "alpha" has incompatible type "str"; expected "float"
loss, dx = grad_fn(x, beta=0.5)
dx.no_such_method()  # E: "Tensor" has no attribute "no_such_method"
kwcell.grad(act, grad_position=("x", "alpha"))(x, gamma=1.0)  # E: Unexpected keyword argument "gamma"
kwcell.grad(clip, 0)(x, bound=1.0)  # E: Unexpected keyword argument "bound"
kwcell.grad(act)(x).no_such_method()  # E: "Tensor" has no attribute "no_such_method"
kwcell.value_and_grad(act, None, act.trainable_params())(x, 1.0, 2.0)  # E: Too many positional arguments


def train_step(data: ms.Tensor, label: ms.Tensor) -> ms.Tensor:
    value, _ = kwcell.value_and_grad(Pair(), grad_position=0)(data, n=label)  # E: Argument "n" has incompatible type "Tensor"; expected "int"
    return value[0]
