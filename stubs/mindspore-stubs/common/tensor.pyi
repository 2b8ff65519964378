from abc import abstractmethod
from typing import Any
from typing_extensions import Self
from collections.abc import Iterator, Sequence
from types import EllipsisType
from typing import Any, SupportsIndex, TypeAlias, overload

import numpy as np
import numpy.typing as npt
from mindspore.common.dtype import Type

_ArrayLike: TypeAlias = Tensor | npt.NDArray[Any] | np.generic | float | int | bool | complex | Sequence[Any]
_Axis: TypeAlias = int | tuple[int, ...] | list[int]
_DTypeLike: TypeAlias = Type | str | type[Any] | np.dtype[Any]
_Index: TypeAlias = SupportsIndex | slice | EllipsisType | Tensor | Sequence[Any] | npt.NDArray[Any] | None
_Shape: TypeAlias = tuple[int, ...] | list[int]
_TensorOrScalar: TypeAlias = Tensor | float | int | bool

class Tensor:
    def __init__(
        self,
        input_data: _ArrayLike | None = None,
        dtype: Type | None = None,
        shape: _Shape | int | None = None,
        init: Any = None,
        const_arg: bool = False,
        device: str | None = None,
    ) -> None: ...
    @property
    def T(self) -> Tensor: ...
    @property
    def dtype(self) -> Type: ...
    @property
    def ndim(self) -> int: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def size(self) -> int: ...
    def __abs__(self) -> Tensor: ...
    def __add__(self, other: _TensorOrScalar) -> Tensor: ...
    def __array__(self, dtype: Any = None) -> npt.NDArray[Any]: ...
    def __and__(self, other: _TensorOrScalar) -> Tensor: ...
    def __bool__(self) -> bool: ...
    def __eq__(self, other: object) -> Tensor: ...  # type: ignore[override]
    def __float__(self) -> float: ...
    def __floordiv__(self, other: _TensorOrScalar) -> Tensor: ...
    def __ge__(self, other: _TensorOrScalar) -> Tensor: ...
    def __getitem__(self, index: _Index | tuple[_Index, ...]) -> Tensor: ...
    def __gt__(self, other: _TensorOrScalar) -> Tensor: ...
    def __hash__(self) -> int: ...
    def __index__(self) -> int: ...
    def __int__(self) -> int: ...
    def __invert__(self) -> Tensor: ...
    def __iter__(self) -> Iterator[Tensor]: ...
    def __le__(self, other: _TensorOrScalar) -> Tensor: ...
    def __len__(self) -> int: ...
    def __lt__(self, other: _TensorOrScalar) -> Tensor: ...
    def __matmul__(self, other: Tensor) -> Tensor: ...
    def __mod__(self, other: _TensorOrScalar) -> Tensor: ...
    def __mul__(self, other: _TensorOrScalar) -> Tensor: ...
    def __ne__(self, other: object) -> Tensor: ...  # type: ignore[override]
    def __neg__(self) -> Tensor: ...
    def __or__(self, other: _TensorOrScalar) -> Tensor: ...
    def __pos__(self) -> Tensor: ...
    def __pow__(self, other: _TensorOrScalar) -> Tensor: ...
    def __radd__(self, other: _TensorOrScalar) -> Tensor: ...
    def __rfloordiv__(self, other: _TensorOrScalar) -> Tensor: ...
    def __rmatmul__(self, other: Tensor) -> Tensor: ...
    def __rmod__(self, other: _TensorOrScalar) -> Tensor: ...
    def __rmul__(self, other: _TensorOrScalar) -> Tensor: ...
    def __rpow__(self, other: _TensorOrScalar) -> Tensor: ...
    def __rsub__(self, other: _TensorOrScalar) -> Tensor: ...
    def __rtruediv__(self, other: _TensorOrScalar) -> Tensor: ...
    def __setitem__(self, index: _Index | tuple[_Index, ...], value: _TensorOrScalar) -> None: ...
    def __sub__(self, other: _TensorOrScalar) -> Tensor: ...
    def __truediv__(self, other: _TensorOrScalar) -> Tensor: ...
    def __xor__(self, other: _TensorOrScalar) -> Tensor: ...
    def asnumpy(self) -> npt.NDArray[Any]: ...
    def astype(self, dtype: _DTypeLike, copy: bool = True) -> Tensor: ...
    def copy(self) -> Tensor: ...
    def expand_dims(self, axis: int) -> Tensor: ...
    def item(self) -> float | int | bool: ...
    @overload
    def max(self) -> Tensor: ...
    @overload
    def max(self, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]: ...
    @overload
    def max(
        self,
        *,
        axis: _Axis | None = None,
        keepdims: bool = False,
        initial: float | None = None,
        where: Tensor | None = None,
        return_indices: bool = False,
    ) -> Tensor: ...
    @overload
    def mean(self, axis: _Axis | None = None, keep_dims: bool = False) -> Tensor: ...
    @overload
    def mean(
        self, dim: _Axis | None = None, keepdim: bool = False, *, dtype: Type | None = None
    ) -> Tensor: ...
    @overload
    def min(self) -> Tensor: ...
    @overload
    def min(self, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]: ...
    @overload
    def min(
        self,
        *,
        axis: _Axis | None = None,
        keepdims: bool = False,
        initial: float | None = None,
        where: Tensor | None = None,
        return_indices: bool = False,
    ) -> Tensor: ...
    @overload
    def reshape(self, shape: _Shape, /) -> Tensor: ...
    @overload
    def reshape(self, *shape: int) -> Tensor: ...
    def squeeze(self, axis: _Axis | None = None) -> Tensor: ...
    @overload
    def sum(
        self,
        axis: _Axis | None = None,
        dtype: Type | None = None,
        keepdims: bool = False,
        initial: float | None = None,
    ) -> Tensor: ...
    @overload
    def sum(
        self, dim: _Axis | None = None, keepdim: bool = False, *, dtype: Type | None = None
    ) -> Tensor: ...
    @overload
    def transpose(self, axes: _Shape, /) -> Tensor: ...
    @overload
    def transpose(self, *axes: int) -> Tensor: ...
    delta_seed: Any
    @property
    def H(self) -> Any: ...  # type: ignore[override]
    @property
    def has_init(self) -> Any: ...  # type: ignore[override]
    @property
    def itemsize(self) -> Any: ...  # type: ignore[override]
    @property
    def strides(self) -> Any: ...  # type: ignore[override]
    @property
    def nbytes(self) -> Any: ...  # type: ignore[override]
    @staticmethod
    def from_numpy(array: Any) -> Any: ...  # type: ignore[override]
    def ndimension(self) -> Any: ...  # type: ignore[override]
    def set_const_arg(self, const_arg: Any = ...) -> Any: ...  # type: ignore[override]
    def cauchy(self, median: Any = ..., sigma: Any = ...) -> Any: ...  # type: ignore[override]
    def log_normal(self, mean: Any = ..., std: Any = ...) -> Any: ...  # type: ignore[override]
    def assign_value(self, value: Any) -> Any: ...  # type: ignore[override]
    def itemset(self, *args: Any) -> Any: ...  # type: ignore[override]
    def get_bytes(self) -> Any: ...  # type: ignore[override]
    def numpy(self) -> Any: ...  # type: ignore[override]
    def slice_scatter(self, src: Any, axis: Any = ..., start: Any = ..., end: Any = ..., step: Any = ...) -> Any: ...  # type: ignore[override]
    def select_scatter(self, src: Any, axis: Any, index: Any) -> Any: ...  # type: ignore[override]
    def geqrf(self) -> Any: ...  # type: ignore[override]
    def value(self) -> Any: ...  # type: ignore[override]
    def contiguous(self) -> Any: ...  # type: ignore[override]
    def is_contiguous(self) -> Any: ...  # type: ignore[override]
    def stride(self, dim: Any = ...) -> Any: ...  # type: ignore[override]
    def storage_offset(self) -> Any: ...  # type: ignore[override]
    def register_hook(self, hook: Any) -> Any: ...  # type: ignore[override]
    def flush_from_cache(self) -> Any: ...  # type: ignore[override]
    def addcmul(self, tensor1: Any, tensor2: Any, value: Any = ...) -> Any: ...  # type: ignore[override]
    def addmm_(self, mat1: Any, mat2: Any, *, beta: Any = ..., alpha: Any = ...) -> Any: ...  # type: ignore[override]
    def addr(self, vec1: Any, vec2: Any, beta: Any = ..., alpha: Any = ...) -> Any: ...  # type: ignore[override]
    def adjoint(self) -> Any: ...  # type: ignore[override]
    def angle(self) -> Any: ...  # type: ignore[override]
    def bitwise_left_shift(self, other: Any) -> Any: ...  # type: ignore[override]
    def bitwise_right_shift(self, other: Any) -> Any: ...  # type: ignore[override]
    def scatter_mul(self, indices: Any, updates: Any) -> Any: ...  # type: ignore[override]
    def scatter_div(self, indices: Any, updates: Any) -> Any: ...  # type: ignore[override]
    def ger(self, vec2: Any) -> Any: ...  # type: ignore[override]
    def tanh_(self) -> Any: ...  # type: ignore[override]
    def cov(self, *, correction: Any = ..., fweights: Any = ..., aweights: Any = ...) -> Any: ...  # type: ignore[override]
    def floor_(self) -> Any: ...  # type: ignore[override]
    def norm(self, ord: Any = ..., dim: Any = ..., keepdim: Any = ..., *, dtype: Any = ...) -> Any: ...  # type: ignore[override]
    def renorm(self, p: Any, axis: Any, maxnorm: Any) -> Any: ...  # type: ignore[override]
    def approximate_equal(self, other: Any, tolerance: Any = ...) -> Any: ...  # type: ignore[override]
    def logit(self, eps: Any = ...) -> Any: ...  # type: ignore[override]
    def logcumsumexp(self, axis: Any) -> Any: ...  # type: ignore[override]
    def logdet(self) -> Any: ...  # type: ignore[override]
    def i0(self) -> Any: ...  # type: ignore[override]
    def isposinf(self) -> Any: ...  # type: ignore[override]
    def isreal(self) -> Any: ...  # type: ignore[override]
    def inv(self) -> Any: ...  # type: ignore[override]
    def invert(self) -> Any: ...  # type: ignore[override]
    def amin(self, axis: Any = ..., keepdims: Any = ..., *, initial: Any = ..., where: Any = ...) -> Any: ...  # type: ignore[override]
    def reverse(self, axis: Any) -> Any: ...  # type: ignore[override]
    def amax(self, axis: Any = ..., keepdims: Any = ..., *, initial: Any = ..., where: Any = ...) -> Any: ...  # type: ignore[override]
    def aminmax(self, *, axis: Any = ..., keepdims: Any = ...) -> Any: ...  # type: ignore[override]
    def reverse_sequence(self, seq_lengths: Any, seq_dim: Any = ..., batch_dim: Any = ...) -> Any: ...  # type: ignore[override]
    def col2im(self, output_size: Any, kernel_size: Any, dilation: Any, padding_value: Any, stride: Any) -> Any: ...  # type: ignore[override]
    def reshape_as(self, other: Any) -> Any: ...  # type: ignore[override]
    def ravel(self) -> Any: ...  # type: ignore[override]
    def rot90(self, k: Any, dims: Any) -> Any: ...  # type: ignore[override]
    def deg2rad(self) -> Any: ...  # type: ignore[override]
    def rad2deg(self) -> Any: ...  # type: ignore[override]
    def copysign(self, other: Any) -> Any: ...  # type: ignore[override]
    def nelement(self) -> Any: ...  # type: ignore[override]
    def numel(self) -> Any: ...  # type: ignore[override]
    def positive(self) -> Any: ...  # type: ignore[override]
    def float_power(self, other: Any) -> Any: ...  # type: ignore[override]
    def fmax(self, other: Any) -> Any: ...  # type: ignore[override]
    def fmin(self, other: Any) -> Any: ...  # type: ignore[override]
    def swapaxes(self, axis0: Any, axis1: Any) -> Any: ...  # type: ignore[override]
    def swapdims(self, dim0: Any, dim1: Any) -> Any: ...  # type: ignore[override]
    def slogdet(self) -> Any: ...  # type: ignore[override]
    def argmax_with_value(self, axis: Any = ..., keep_dims: Any = ...) -> Any: ...  # type: ignore[override]
    def argmin_with_value(self, axis: Any = ..., keep_dims: Any = ...) -> Any: ...  # type: ignore[override]
    def cummin(self, axis: Any) -> Any: ...  # type: ignore[override]
    def cummax(self, axis: Any) -> Any: ...  # type: ignore[override]
    def index_fill(self, axis: Any, index: Any, value: Any) -> Any: ...  # type: ignore[override]
    def inplace_update(self, v: Any, indices: Any) -> Any: ...  # type: ignore[override]
    def scatter_add_(self, dim: Any, index: Any, src: Any) -> Any: ...  # type: ignore[override]
    def scatter_sub(self, indices: Any, updates: Any) -> Any: ...  # type: ignore[override]
    def scatter_min(self, indices: Any, updates: Any) -> Any: ...  # type: ignore[override]
    def scatter_max(self, indices: Any, updates: Any) -> Any: ...  # type: ignore[override]
    def softmax(self, axis: Any, dtype: Any = ...) -> Any: ...  # type: ignore[override]
    def fill(self, value: Any) -> Any: ...  # type: ignore[override]
    def fills(self, value: Any) -> Any: ...  # type: ignore[override]
    def fill_diagonal(self, fill_value: Any, wrap: Any = ...) -> Any: ...  # type: ignore[override]
    def ptp(self, axis: Any = ..., keepdims: Any = ...) -> Any: ...  # type: ignore[override]
    def clamp_(self, min: Any = ..., max: Any = ...) -> Any: ...  # type: ignore[override]
    def init_data(self, slice_index: Any = ..., shape: Any = ..., opt_shard_group: Any = ...) -> Any: ...  # type: ignore[override]
    def resize(self, *new_shape: Any) -> Any: ...  # type: ignore[override]
    def det(self) -> Any: ...  # type: ignore[override]
    def diff(self, n: Any = ..., axis: Any = ..., prepend: Any = ..., append: Any = ...) -> Any: ...  # type: ignore[override]
    def argwhere(self) -> Any: ...  # type: ignore[override]
    def moveaxis(self, source: Any, destination: Any) -> Any: ...  # type: ignore[override]
    def movedim(self, source: Any, destination: Any) -> Any: ...  # type: ignore[override]
    def digamma(self) -> Any: ...  # type: ignore[override]
    def lgamma(self) -> Any: ...  # type: ignore[override]
    def diagonal(self, offset: Any = ..., axis1: Any = ..., axis2: Any = ...) -> Any: ...  # type: ignore[override]
    def diagonal_scatter(self, src: Any, offset: Any = ..., dim1: Any = ..., dim2: Any = ...) -> Any: ...  # type: ignore[override]
    def trace(self, offset: Any = ..., axis1: Any = ..., axis2: Any = ..., dtype: Any = ...) -> Any: ...  # type: ignore[override]
    def choose(self, choices: Any, mode: Any = ...) -> Any: ...  # type: ignore[override]
    def searchsorted(self, v: Any, side: Any = ..., sorter: Any = ...) -> Any: ...  # type: ignore[override]
    def gather_nd(self, indices: Any) -> Any: ...  # type: ignore[override]
    def uniform(self, from_: Any = ..., to: Any = ..., generator: Any = ...) -> Any: ...  # type: ignore[override]
    def uniform_(self, from_: Any = ..., to: Any = ..., *, generator: Any = ...) -> Any: ...  # type: ignore[override]
    def exponential_(self, lambd: Any = ..., *, generator: Any = ...) -> Any: ...  # type: ignore[override]
    def sum_to_size(self, *size: Any) -> Any: ...  # type: ignore[override]
    def nanmean(self, axis: Any = ..., keepdims: Any = ..., *, dtype: Any = ...) -> Any: ...  # type: ignore[override]
    def nanmedian(self, axis: Any = ..., keepdims: Any = ...) -> Any: ...  # type: ignore[override]
    def bernoulli(self, *, generator: Any = ...) -> Any: ...  # type: ignore[override]
    def bernoulli_(self, p: Any = ..., *, generator: Any = ...) -> Any: ...  # type: ignore[override]
    def random_(self, from_: Any = ..., to: Any = ..., *, generator: Any = ...) -> Any: ...  # type: ignore[override]
    def random_categorical(self, num_sample: Any, seed: Any = ..., dtype: Any = ...) -> Any: ...  # type: ignore[override]
    def gather_elements(self, dim: Any, index: Any) -> Any: ...  # type: ignore[override]
    def nonzero(self, *, as_tuple: Any = ...) -> Any: ...  # type: ignore[override]
    def svd(self, full_matrices: Any = ..., compute_uv: Any = ...) -> Any: ...  # type: ignore[override]
    def heaviside(self, values: Any) -> Any: ...  # type: ignore[override]
    def hypot(self, other: Any) -> Any: ...  # type: ignore[override]
    def soft_shrink(self, lambd: Any = ...) -> Any: ...  # type: ignore[override]
    def matrix_determinant(self) -> Any: ...  # type: ignore[override]
    def log_matrix_determinant(self) -> Any: ...  # type: ignore[override]
    def to_coo(self) -> Any: ...  # type: ignore[override]
    def to_csr(self) -> Any: ...  # type: ignore[override]
    def tolist(self) -> Any: ...  # type: ignore[override]
    def unsorted_segment_min(self, segment_ids: Any, num_segments: Any) -> Any: ...  # type: ignore[override]
    def unsorted_segment_max(self, segment_ids: Any, num_segments: Any) -> Any: ...  # type: ignore[override]
    def unsorted_segment_prod(self, segment_ids: Any, num_segments: Any) -> Any: ...  # type: ignore[override]
    def unique_consecutive(self, return_inverse: Any = ..., return_counts: Any = ..., dim: Any = ...) -> Any: ...  # type: ignore[override]
    def unique_with_pad(self, pad_num: Any) -> Any: ...  # type: ignore[override]
    def diagflat(self, offset: Any = ...) -> Any: ...  # type: ignore[override]
    def xdivy(self, y: Any) -> Any: ...  # type: ignore[override]
    def tensor_split(self, indices_or_sections: Any, axis: Any = ...) -> Any: ...  # type: ignore[override]
    def vsplit(self, indices_or_sections: Any) -> Any: ...  # type: ignore[override]
    def hsplit(self, indices_or_sections: Any) -> Any: ...  # type: ignore[override]
    def dsplit(self, indices_or_sections: Any) -> Any: ...  # type: ignore[override]
    def eigvals(self) -> Any: ...  # type: ignore[override]
    def top_k(self, k: Any, sorted: Any = ...) -> Any: ...  # type: ignore[override]
    def bmm(self, mat2: Any) -> Any: ...  # type: ignore[override]
    def to_(self, device: Any = ..., non_blocking: Any = ...) -> Any: ...  # type: ignore[override]
    def delete_(self, non_blocking: Any = ...) -> Any: ...  # type: ignore[override]
    def type(self, dtype: Any = ...) -> Any: ...  # type: ignore[override]
    def type_as(self, other: Any) -> Any: ...  # type: ignore[override]
    def bool(self) -> Any: ...  # type: ignore[override]
    def float(self) -> Any: ...  # type: ignore[override]
    def bfloat16(self) -> Any: ...  # type: ignore[override]
    def double(self) -> Any: ...  # type: ignore[override]
    def half(self) -> Any: ...  # type: ignore[override]
    def int(self) -> Any: ...  # type: ignore[override]
    def byte(self) -> Any: ...  # type: ignore[override]
    def long(self) -> Any: ...  # type: ignore[override]
    def short(self) -> Any: ...  # type: ignore[override]
    def cholesky(self, upper: Any = ...) -> Any: ...  # type: ignore[override]
    def cholesky_inverse(self, upper: Any = ...) -> Any: ...  # type: ignore[override]
    def cholesky_solve(self, input2: Any, upper: Any = ...) -> Any: ...  # type: ignore[override]
    def conj(self) -> Any: ...  # type: ignore[override]
    def cross(self, other: Any, dim: Any = ...) -> Any: ...  # type: ignore[override]
    def erfinv(self) -> Any: ...  # type: ignore[override]
    def erfinv_(self) -> Any: ...  # type: ignore[override]
    def lcm(self, other: Any) -> Any: ...  # type: ignore[override]
    def ldexp(self, other: Any) -> Any: ...  # type: ignore[override]
    def fold(self, output_size: Any, kernel_size: Any, dilation: Any = ..., padding: Any = ..., stride: Any = ...) -> Any: ...  # type: ignore[override]
    def unfold(self, kernel_size: Any, dilation: Any = ..., padding: Any = ..., stride: Any = ...) -> Any: ...  # type: ignore[override]
    def expand(self, *size: Any) -> Any: ...  # type: ignore[override]
    def cumprod(self, dim: Any, dtype: Any = ...) -> Any: ...  # type: ignore[override]
    def multiply(self, value: Any) -> Any: ...  # type: ignore[override]
    def equal(self, other: Any) -> Any: ...  # type: ignore[override]
    def index_add_(self, dim: Any, index: Any, source: Any, *, alpha: Any = ...) -> Any: ...  # type: ignore[override]
    def igamma(self, other: Any) -> Any: ...  # type: ignore[override]
    def igammac(self, other: Any) -> Any: ...  # type: ignore[override]
    def isnan(self) -> Any: ...  # type: ignore[override]
    def flip(self, dims: Any) -> Any: ...  # type: ignore[override]
    def fliplr(self) -> Any: ...  # type: ignore[override]
    def flipud(self) -> Any: ...  # type: ignore[override]
    def is_floating_point(self) -> Any: ...  # type: ignore[override]
    def lstsq(self, A: Any) -> Any: ...  # type: ignore[override]
    @property
    def mH(self) -> Any: ...  # type: ignore[override]
    @property
    def mT(self) -> Any: ...  # type: ignore[override]
    def mvlgamma(self, p: Any) -> Any: ...  # type: ignore[override]
    def inner(self, other: Any) -> Any: ...  # type: ignore[override]
    def multinomial(self, num_samples: Any, replacement: Any = ..., seed: Any = ...) -> Any: ...  # type: ignore[override]
    def matrix_power(self, n: Any) -> Any: ...  # type: ignore[override]
    def msort(self) -> Any: ...  # type: ignore[override]
    def zero_(self) -> Any: ...  # type: ignore[override]
    def sign(self) -> Any: ...  # type: ignore[override]
    def sign_(self) -> Any: ...  # type: ignore[override]
    def signbit(self) -> Any: ...  # type: ignore[override]
    def sgn(self) -> Any: ...  # type: ignore[override]
    def quantile(self, q: Any, axis: Any = ..., keepdims: Any = ...) -> Any: ...  # type: ignore[override]
    def nanquantile(self, q: Any, axis: Any = ..., keepdims: Any = ...) -> Any: ...  # type: ignore[override]
    def orgqr(self, input2: Any) -> Any: ...  # type: ignore[override]
    def lu_solve(self, LU_data: Any, LU_pivots: Any) -> Any: ...  # type: ignore[override]
    def nextafter(self, other: Any) -> Any: ...  # type: ignore[override]
    def qr(self, some: Any = ...) -> Any: ...  # type: ignore[override]
    def ormqr(self, input2: Any, input3: Any, left: Any = ..., transpose: Any = ...) -> Any: ...  # type: ignore[override]
    def index_put(self, indices: Any, values: Any, accumulate: Any = ...) -> Any: ...  # type: ignore[override]
    def index_put_(self, indices: Any, values: Any, accumulate: Any = ...) -> Any: ...  # type: ignore[override]
    def move_to(self, to: Any, blocking: Any = ...) -> Any: ...  # type: ignore[override]
    def data_ptr(self) -> Any: ...  # type: ignore[override]
    def normal_(self, mean: Any = ..., std: Any = ..., *, generator: Any = ...) -> Any: ...  # type: ignore[override]
    def triangular_solve(self, A: Any, upper: Any = ..., transpose: Any = ..., unitriangular: Any = ...) -> Any: ...  # type: ignore[override]
    @staticmethod
    def set_param_info(*args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def data_sync(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def pin_memory(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def is_pinned(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def is_shared(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    @staticmethod
    def setitem_index_info(*args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    @staticmethod
    def getitem_index_info(*args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    @staticmethod
    def convert_bytes_to_tensor(*args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def is_init(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def set_init_flag(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def dim(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def assign_value_cpp(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def set_dtype(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def offload(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def offload_file_path(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def set_cast_dtype(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def wait_pipeline(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def is_complex(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def is_signed(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
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
    def masked_fill_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def cos(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def narrow(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def view_as(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def index(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def isfinite(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def index_add(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
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
    def argmin(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def expand_as(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def floor_divide_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def log_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def sin(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
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
    def clone(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
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
    def unique(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
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
    def gcd(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def argmax(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def copy_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def index_copy_(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def new_zeros(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def subtract(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def xlogy(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    def repeat(self, *args: Any, **kwargs: Any) -> Any: ...  # type: ignore[override]
    param_info: Any
    init_finished: Any
    const_arg: Any
    init: Any
    device: Any
    is_meta: Any
    parent_tensor_: Any
    index_of_parent_: Any
    init_flag: Any
    virtual_flag: Any
    symbolic_shape: Any
    data: Any

# ---- generated by stubs/generate.py from MindSpore 2.10.0: names not written by hand ----
import enum
from abc import ABCMeta, abstractmethod
from typing import Any
from typing_extensions import Self
def tensor(input_data: Any = ..., dtype: Any = ..., shape: Any = ..., init: Any = ..., const_arg: Any = ..., device: Any = ...) -> Any: ...
def swap_tensors(t1: Any, t2: Any) -> Any: ...
