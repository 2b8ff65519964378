from collections.abc import Callable
from typing import Any, ParamSpec, Protocol, TypeVar, overload

from mindspore import amp as amp
from mindspore import common as common
from mindspore import communication as communication
from mindspore import context as context
from mindspore import dataset as dataset
from mindspore import nn as nn
from mindspore import numpy as numpy
from mindspore import ops as ops
from mindspore import train as train
from mindspore.common import dtype as dtype
from mindspore.common.dtype import Type as Type
from mindspore.common.dtype import bfloat16 as bfloat16
from mindspore.common.dtype import bool_ as bool_
from mindspore.common.dtype import complex64 as complex64
from mindspore.common.dtype import complex128 as complex128
from mindspore.common.dtype import double as double
from mindspore.common.dtype import float16 as float16
from mindspore.common.dtype import float32 as float32
from mindspore.common.dtype import float64 as float64
from mindspore.common.dtype import float_ as float_
from mindspore.common.dtype import half as half
from mindspore.common.dtype import int8 as int8
from mindspore.common.dtype import int16 as int16
from mindspore.common.dtype import int32 as int32
from mindspore.common.dtype import int64 as int64
from mindspore.common.dtype import int_ as int_
from mindspore.common.dtype import single as single
from mindspore.common.dtype import uint8 as uint8
from mindspore.common.dtype import uint16 as uint16
from mindspore.common.dtype import uint32 as uint32
from mindspore.common.dtype import uint64 as uint64
from mindspore.common.parameter import Parameter as Parameter
from mindspore.common.parameter import ParameterTuple as ParameterTuple
from mindspore.common.tensor import Tensor as Tensor
from mindspore.context import GRAPH_MODE as GRAPH_MODE
from mindspore.context import PYNATIVE_MODE as PYNATIVE_MODE
from mindspore.context import get_context as get_context
from mindspore.context import set_context as set_context
from mindspore.ops import grad as grad
from mindspore.ops import value_and_grad as value_and_grad

_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T")

class _JitDecorator(Protocol):
    def __call__(self, function: Callable[_P, _R], /) -> Callable[_P, _R]: ...

@overload
def jit(
    function: Callable[_P, _R],
    *,
    capture_mode: str = "ast",
    jit_level: str = "O0",
    dynamic: int = 0,
    fullgraph: bool = False,
    backend: str = "",
    **options: Any,
) -> Callable[_P, _R]: ...
@overload
def jit(
    function: None = None,
    *,
    capture_mode: str = "ast",
    jit_level: str = "O0",
    dynamic: int = 0,
    fullgraph: bool = False,
    backend: str = "",
    **options: Any,
) -> _JitDecorator: ...
def load_checkpoint(
    ckpt_file_name: str,
    net: nn.Cell | None = None,
    strict_load: bool = False,
    filter_prefix: str | list[str] | tuple[str, ...] | None = None,
    dec_key: bytes | None = None,
    dec_mode: str = "AES-GCM",
    specify_prefix: str | list[str] | tuple[str, ...] | None = None,
    choice_func: Callable[[str], bool] | None = None,
    crc_check: bool = False,
    remove_redundancy: bool = False,
    format: str = "ckpt",
) -> dict[str, Parameter]: ...
def load_param_into_net(
    net: nn.Cell,
    parameter_dict: dict[str, Parameter],
    strict_load: bool = False,
    remove_redundancy: bool = False,
) -> tuple[list[str], list[str]]: ...
def mutable(input_data: _T, dynamic_len: bool = False) -> _T: ...
def save_checkpoint(
    save_obj: nn.Cell | list[Any] | dict[str, Any],
    ckpt_file_name: str,
    integrated_save: bool = True,
    async_save: bool = False,
    append_dict: dict[str, Any] | None = None,
    enc_key: bytes | None = None,
    enc_mode: str = "AES-GCM",
    choice_func: Callable[[str], bool] | None = None,
    crc_check: bool = False,
    format: str = "ckpt",
    **kwargs: Any,
) -> None: ...
def set_seed(seed: int) -> None: ...
