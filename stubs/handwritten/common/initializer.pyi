# Hand-written: the initializers users pass to layers and Parameters. stubs/generate.py adds
# every other public name of mindspore.common.initializer.
from typing import Any

import numpy as np
import numpy.typing as npt
from mindspore.common.dtype import Type
from mindspore.common.tensor import Tensor

class Initializer:
    def __init__(self, **kwargs: Any) -> None: ...
    def __call__(self, arr: npt.NDArray[Any]) -> None: ...

class Normal(Initializer):
    def __init__(self, sigma: float = 0.01, mean: float = 0.0) -> None: ...

class TruncatedNormal(Initializer):
    def __init__(self, sigma: float = 0.01, mean: float = 0.0, a: float = -2.0, b: float = 2.0) -> None: ...

class Uniform(Initializer):
    def __init__(self, scale: float = 0.07) -> None: ...

class HeUniform(Initializer):
    def __init__(
        self, negative_slope: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
    ) -> None: ...

class HeNormal(Initializer):
    def __init__(
        self, negative_slope: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
    ) -> None: ...

class XavierUniform(Initializer):
    def __init__(self, gain: float = 1) -> None: ...

class XavierNormal(Initializer):
    def __init__(self, gain: float = 1) -> None: ...

class Constant(Initializer):
    def __init__(self, value: float | int | bool) -> None: ...

class Zero(Initializer):
    def __init__(self, **kwargs: Any) -> None: ...

class One(Initializer):
    def __init__(self, **kwargs: Any) -> None: ...

def initializer(
    init: str | Initializer | Tensor | float | int | bool | npt.NDArray[Any] | np.generic,
    shape: int | tuple[int, ...] | list[int] | None = None,
    dtype: Type = ...,
) -> Tensor: ...
