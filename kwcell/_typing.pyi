# Static signatures of kwcell.grad and kwcell.value_and_grad (kwcell/_grad.py implements them).
#
# The gradient function keeps the wrapped function's parameters (for a cell, those of its
# construct), so a wrong keyword or argument at the gradient call is reported as it is for a
# call of the cell. The results follow MindSpore's: the gradient of one position is a Tensor, of
# a tuple of positions a tuple of Tensors; with weights, (input gradients, weight gradients), or
# the weight gradients alone when grad_position is None. value_and_grad returns (value,
# gradients), value being the wrapped function's own result. Forms whose result depends on
# values (has_aux for grad, return_ids, a single Parameter as weights) give Any.

from collections.abc import Callable, Sequence
from typing import Any, Literal, ParamSpec, TypeAlias, TypeVar, overload

from mindspore import Parameter, Tensor

_P = ParamSpec("_P")
_R = TypeVar("_R")

Position: TypeAlias = int | str
_Weights: TypeAlias = Sequence[Parameter]

@overload
def grad(
    fn: Callable[_P, Any],
    grad_position: Position = 0,
    weights: None = None,
    has_aux: Literal[False] = False,
    return_ids: Literal[False] = False,
) -> Callable[_P, Tensor]: ...
@overload
def grad(
    fn: Callable[_P, Any],
    grad_position: tuple[Position, ...],
    weights: None = None,
    has_aux: Literal[False] = False,
    return_ids: Literal[False] = False,
) -> Callable[_P, tuple[Tensor, ...]]: ...
@overload
def grad(
    fn: Callable[_P, Any],
    grad_position: None,
    weights: _Weights,
    has_aux: Literal[False] = False,
    return_ids: Literal[False] = False,
) -> Callable[_P, tuple[Tensor, ...]]: ...
@overload
def grad(
    fn: Callable[_P, Any],
    grad_position: Position = 0,
    *,
    weights: _Weights,
    has_aux: Literal[False] = False,
    return_ids: Literal[False] = False,
) -> Callable[_P, tuple[Tensor, tuple[Tensor, ...]]]: ...
@overload
def grad(
    fn: Callable[_P, Any],
    grad_position: Position,
    weights: _Weights,
    has_aux: Literal[False] = False,
    return_ids: Literal[False] = False,
) -> Callable[_P, tuple[Tensor, tuple[Tensor, ...]]]: ...
@overload
def grad(
    fn: Callable[_P, Any],
    grad_position: tuple[Position, ...],
    weights: _Weights,
    has_aux: Literal[False] = False,
    return_ids: Literal[False] = False,
) -> Callable[_P, tuple[tuple[Tensor, ...], tuple[Tensor, ...]]]: ...
@overload
def grad(
    fn: Callable[_P, Any],
    grad_position: Position | Sequence[Position] | None = 0,
    weights: Parameter | Sequence[Parameter] | None = None,
    has_aux: bool = False,
    return_ids: bool = False,
) -> Callable[_P, Any]: ...
@overload
def value_and_grad(
    fn: Callable[_P, _R],
    grad_position: Position = 0,
    weights: None = None,
    has_aux: bool = False,
    return_ids: Literal[False] = False,
) -> Callable[_P, tuple[_R, Tensor]]: ...
@overload
def value_and_grad(
    fn: Callable[_P, _R],
    grad_position: tuple[Position, ...],
    weights: None = None,
    has_aux: bool = False,
    return_ids: Literal[False] = False,
) -> Callable[_P, tuple[_R, tuple[Tensor, ...]]]: ...
@overload
def value_and_grad(
    fn: Callable[_P, _R],
    grad_position: None,
    weights: _Weights,
    has_aux: bool = False,
    return_ids: Literal[False] = False,
) -> Callable[_P, tuple[_R, tuple[Tensor, ...]]]: ...
@overload
def value_and_grad(
    fn: Callable[_P, _R],
    grad_position: Position = 0,
    *,
    weights: _Weights,
    has_aux: bool = False,
    return_ids: Literal[False] = False,
) -> Callable[_P, tuple[_R, tuple[Tensor, tuple[Tensor, ...]]]]: ...
@overload
def value_and_grad(
    fn: Callable[_P, _R],
    grad_position: Position,
    weights: _Weights,
    has_aux: bool = False,
    return_ids: Literal[False] = False,
) -> Callable[_P, tuple[_R, tuple[Tensor, tuple[Tensor, ...]]]]: ...
@overload
def value_and_grad(
    fn: Callable[_P, _R],
    grad_position: tuple[Position, ...],
    weights: _Weights,
    has_aux: bool = False,
    return_ids: Literal[False] = False,
) -> Callable[_P, tuple[_R, tuple[tuple[Tensor, ...], tuple[Tensor, ...]]]]: ...
@overload
def value_and_grad(
    fn: Callable[_P, _R],
    grad_position: Position | Sequence[Position] | None = 0,
    weights: Parameter | Sequence[Parameter] | None = None,
    has_aux: bool = False,
    return_ids: bool = False,
) -> Callable[_P, tuple[_R, Any]]: ...
