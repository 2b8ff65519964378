from abc import abstractmethod
from typing import Any
from typing_extensions import Self
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
    def copy(self) -> Any: ...  # type: ignore[override]
    @property
    def inited_param(self) -> Any: ...  # type: ignore[override]
    @property
    def param_info(self) -> Any: ...
    @param_info.setter
    def param_info(self, value: Any) -> None: ...  # type: ignore[override]
    @property
    def sliced(self) -> Any: ...
    @sliced.setter
    def sliced(self, value: Any) -> None: ...  # type: ignore[override]
    @property
    def comm_fusion(self) -> Any: ...
    @comm_fusion.setter
    def comm_fusion(self, value: Any) -> None: ...  # type: ignore[override]
    @property
    def parallel_optimizer_comm_recompute(self) -> Any: ...
    @parallel_optimizer_comm_recompute.setter
    def parallel_optimizer_comm_recompute(self, value: Any) -> None: ...  # type: ignore[override]
    @property
    def unique(self) -> Any: ...
    @unique.setter
    def unique(self, value: Any) -> None: ...  # type: ignore[override]
    @property
    def layerwise_parallel(self) -> Any: ...
    @layerwise_parallel.setter
    def layerwise_parallel(self, value: Any) -> None: ...  # type: ignore[override]
    @property
    def parallel_optimizer(self) -> Any: ...
    @parallel_optimizer.setter
    def parallel_optimizer(self, value: Any) -> None: ...  # type: ignore[override]
    @property
    def cache_enable(self) -> Any: ...
    @cache_enable.setter
    def cache_enable(self, value: Any) -> None: ...  # type: ignore[override]
    @property
    def cache_shape(self) -> Any: ...
    @cache_shape.setter
    def cache_shape(self, value: Any) -> None: ...  # type: ignore[override]
    @property
    def key(self) -> Any: ...
    @key.setter
    def key(self, value: Any) -> None: ...  # type: ignore[override]
    def value(self) -> Any: ...  # type: ignore[override]
    def add_pipeline_stage(self, stage: Any) -> Any: ...  # type: ignore[override]
    def init_data(self, layout: Any = ..., set_sliced: Any = ...) -> Any: ...  # type: ignore[override]
    def register_hook(self, hook_fn: Any) -> Any: ...  # type: ignore[override]
    @staticmethod
    def set_param_info(*args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def asnumpy(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def data_sync(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    @staticmethod
    def from_numpy(*args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def pin_memory(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def is_pinned(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def is_shared(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    @staticmethod
    def setitem_index_info(*args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    @staticmethod
    def getitem_index_info(*args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def get_bytes(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    @staticmethod
    def convert_bytes_to_tensor(*args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def is_init(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def set_init_flag(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def dim(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def assign_value_cpp(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def set_dtype(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def offload(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def offload_file_path(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def move_to(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def set_cast_dtype(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def wait_pipeline(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def is_contiguous(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def is_complex(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def is_signed(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def stride(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def storage_offset(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    @staticmethod
    def remove_hook(*args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def set_device_address(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def hooks(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def storage(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def untyped_storage(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def requires_grad_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    @staticmethod
    def from_dlpack(*args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def to_dlpack(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def set_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def baddbmm(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def log(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def less_equal(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def le(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def argsort(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def logsumexp(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def mm(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def squeeze(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def masked_fill_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def cos(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def narrow(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def view_as(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def index(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def isfinite(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def index_add(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def sum(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def prod(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def floor(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def to(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def rsqrt(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def triu(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def add(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def tile(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def nan_to_num(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def eq(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def var(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def index_fill_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def trunc(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def addcdiv(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def unbind(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def t(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def logical_xor(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def exp(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def chunk(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def bincount(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def mean(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def argmin(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def expand_as(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def floor_divide_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def log_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def sin(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def min(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def dot(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def atan2(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def arctan2(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def count_nonzero(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def tan(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def isneginf(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def logaddexp2(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def frac(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def div_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def diag(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def imag(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def exp_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def not_equal(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def ne(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def masked_select(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def scatter_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def neg(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def negative(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def logical_and(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def less(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def lt(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def atan(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def arctan(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def mul_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def broadcast_to(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def reciprocal(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def tril(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def asin(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def arcsin(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def sort(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def isclose(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def ceil(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def sinc(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def cumsum(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def real(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def new_full(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def scatter(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def fill_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def bitwise_xor(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def sigmoid_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def mul(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def sub(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def logical_or(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def take(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def nansum(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def any(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def repeat_interleave(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def logaddexp(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def expm1(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def addbmm(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def unsqueeze(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def lerp(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def reshape(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def all(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def histc(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def sigmoid(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def kthvalue(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def sub_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def topk(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def add_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def index_select(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def scatter_add(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def matmul(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def new_ones(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def std(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def hardshrink(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def div(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def divide(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def bitwise_or(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def masked_scatter_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def outer(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def log10(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def maximum(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def log1p(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def remainder_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def log2(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def erf(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def view(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def allclose(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def tanh(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def abs(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def absolute(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def flatten(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def greater_equal(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def ge(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def sinh(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def addmv(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def minimum(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def inverse(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def roll(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def new_empty(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def fmod(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def asinh(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def arcsinh(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def masked_fill(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def median(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def permute(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def gather(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def sqrt(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def clamp(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def clip(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def cosh(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def fill_diagonal_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def logical_not(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def put_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def true_divide(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def transpose(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def round(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def split(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def square(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def select(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def where(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def acosh(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def arccosh(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def pow(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def isinf(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def masked_scatter(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def greater(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def gt(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def bitwise_and(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def floor_divide(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def erfc(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def remainder(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def addmm(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def acos(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def arccos(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def atanh(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def arctanh(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def bitwise_not(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def max(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def type_as(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def gcd(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def argmax(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def copy_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def index_copy_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def new_zeros(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def subtract(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def xlogy(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def repeat(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    init_finished: Any
    const_arg: Any
    init: Any
    device: Any
    is_meta: Any
    parent_tensor_: Any
    index_of_parent_: Any
    init_flag: Any
    dtype: Any
    shape: Any
    virtual_flag: Any
    symbolic_shape: Any

@disjoint_base
class ParameterTuple(tuple[Parameter, ...]):
    def __new__(cls, iterable: Iterable[Parameter]) -> Self: ...
    def clone(self, prefix: str, init: Any = "same") -> ParameterTuple: ...
    def index(self, value: Any, start: Any = ..., stop: Any = ..., /) -> Any: ...  # type: ignore[override]
    def count(self, value: Any, /) -> Any: ...  # type: ignore[override]

# ---- generated by stubs/generate.py from MindSpore 2.10.0: names not written by hand ----
import enum
from abc import ABCMeta, abstractmethod
from typing import Any
from typing_extensions import Self
