from collections.abc import Iterable
from typing import Any

from mindspore.common.tensor import Tensor, _ArrayLike
from typing_extensions import Self, disjoint_base

class Parameter(Tensor):
    def __init__(
        self,
        default_input: _ArrayLike,
        name: str | None = None,
        requires_grad: bool = True,
        layerwise_parallel: bool = False,
        parallel_optimizer: bool = True,
        storage_format: str = "",
        device: str | None = None,
    ) -> None: ...
    @property
    def data(self) -> Self: ...
    @property
    def name(self) -> str: ...
    @name.setter
    def name(self, name_: str) -> None: ...
    @property
    def requires_grad(self) -> bool: ...
    @requires_grad.setter
    def requires_grad(self, value: bool = True) -> None: ...
    def clone(self, init: Any = "same") -> Parameter: ...
    def set_data(self, data: Tensor | float | int | bool, slice_shape: bool = False) -> Self: ...

@disjoint_base
class ParameterTuple(tuple[Parameter, ...]):
    def __new__(cls, iterable: Iterable[Parameter]) -> Self: ...
    def clone(self, prefix: str, init: Any = "same") -> ParameterTuple: ...
