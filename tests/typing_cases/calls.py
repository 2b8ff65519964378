"""Bad calls of KwCell subclasses: each is flagged by mypy from construct's signature alone."""

from __future__ import annotations

import mindspore as ms
import numpy as np
from mindspore import ops
from typing_extensions import reveal_type

from kwcell import KwCell


class Scaled(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0, *, y: float = 1.0) -> ms.Tensor:
        return w * ops.sin(x) + y

    def bprop(
        self, x: ms.Tensor, w: float = 1.0, *, y: float = 1.0, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return w * ops.cos(x) * dout


class Pair(KwCell):
    def construct(self, x: ms.Tensor, n: int) -> tuple[ms.Tensor, int]:
        return x, n


net = Scaled()
x = ms.Tensor(np.ones((3,), np.float32))
net(x, z=1.0)  # E: Unexpected keyword argument "z" for "__call__" of "KwCell"
net(x, w="big")  # E: Argument "w" to "__call__" of "KwCell" has incompatible type "str"; expected "float"
net("x")  # E: Argument 1 to "__call__" of "KwCell" has incompatible type "str"; expected "Tensor"
net()  # E: Missing positional argument "x" in call to "__call__" of "KwCell"
net(w=2.0)  # E: Missing positional argument "x" in call to "__call__" of "KwCell"
net(x, 2.0, 3.0)  # E: Too many positional arguments for "__call__" of "KwCell"
net(x, 2.0, w=3.0)  # E: "__call__" of "KwCell" gets multiple values for keyword argument "w"
s: str = net(x)  # E: Incompatible types in assignment (expression has type "Tensor", variable has type "str")
Pair()(x)  # E: Missing positional argument "n" in call to "__call__" of "KwCell"
t, n = Pair()(x, 2)
n.upper()  # E: "int" has no attribute "upper"
u: ms.Tensor = Pair()(x, n=1)  # E: expression has type "tuple[Tensor, int]", variable has type "Tensor"
call = Pair().__call__  # self is not part of the call signature:
reveal_type(call)  # E: Revealed type is "def (x: mindspore.common.tensor.Tensor, n: int) -> tuple[
