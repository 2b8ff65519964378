"""kwcell.custom_bprop functions in the shape of a layer library: calls are typed from the function.

Every wrong call is flagged by mypy and by pyright from the decorated function's own signature
(names, order, kinds, types) and its return type; the kwcell mypy plugin also flags a backward
that does not fit its function, with the message the registration raises at runtime.
"""

# ruff: noqa: E501 (expected messages are quoted whole)
# each marked line stays on its own line:
# fmt: off
from __future__ import annotations

import mindspore as ms
from mindspore import nn, ops
from typing_extensions import reveal_type

import kwcell


@kwcell.custom_bprop
def surrogate_tanh(x: ms.Tensor, alpha: float = 1.0, *, beta: float = 1.0) -> ms.Tensor:
    """tanh forward, a rational surrogate gradient backward."""
    return beta * ops.tanh(alpha * x)


@surrogate_tanh.bprop
def _(x: ms.Tensor, alpha: float = 1.0, *, beta: float = 1.0, out: ms.Tensor, dout: ms.Tensor) -> dict[str, ms.Tensor]:
    u = alpha * x
    return {"x": dout * beta * alpha / (1.0 + u * u)}


@kwcell.custom_bprop(compile_once=True)
def scale_grad(x: ms.Tensor, factor: float = 1.0) -> ms.Tensor:
    """Identity forward; the gradient scaled by ``factor`` backward (-1.0: gradient reversal)."""
    return x


@scale_grad.bprop
def _scale_backward(x: ms.Tensor, factor: float = 1.0, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
    return factor * dout


class Block(nn.Cell):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.dense = nn.Dense(width, width)

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        h = surrogate_tanh(self.dense(x), 2.0, beta=0.5)
        h = surrogate_tanh(h, beta=0.5, alpha=2.0)
        h = surrogate_tanh(h, gamma=0.5)  # E: Unexpected keyword argument "gamma"
        h = surrogate_tanh(h, 2.0, 0.5)  # E: Too many positional arguments
        h = surrogate_tanh(h, alpha="2")  # E: has incompatible type "str"; expected "float"
        return scale_grad(h, factor=-1.0)


def shapes(x: ms.Tensor) -> None:
    reveal_type(surrogate_tanh(x))  # N[mypy]: Revealed type is "mindspore.common.tensor.Tensor" # N[pyright]: Tensor
    reveal_type(_scale_backward)  # N[mypy]: def (x: mindspore.common.tensor.Tensor, factor: float =, *, out: mindspore.common.tensor.Tensor, dout: mindspore.common.tensor.Tensor) -> mindspore.common.tensor.Tensor # N[pyright]: (x: Tensor, factor: float = 1, *, out: Tensor, dout: Tensor) -> Tensor
    grad_fn = kwcell.grad(surrogate_tanh, grad_position=("x", "alpha"))
    grads = grad_fn(x, beta=2.0)
    reveal_type(grads)  # N[mypy]: Revealed type is "tuple[mindspore.common.tensor.Tensor, ...]" # N[pyright]: tuple[Tensor, ...]
    grad_fn(x, gamma=2.0)  # E: Unexpected keyword argument "gamma"
    kwcell.gradcheck(surrogate_tanh, x, beta=2.0)


def as_int(x: ms.Tensor) -> int:
    return scale_grad(x)  # E: Incompatible return value type (got "Tensor", expected "int")


@kwcell.custom_bprop
def shifted(x: ms.Tensor, shift: float = 0.0) -> ms.Tensor:
    return x + shift


@shifted.bprop  # E[mypy]: shifted.bprop: parameter 'scale' is not a parameter of shifted(x, shift=0.0); expected e.g. @shifted.bprop def _(x, shift=0.0, *, out, dout)
def _shifted_backward(x: ms.Tensor, scale: float, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
    return dout


@kwcell.custom_bprop
def scaled(x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
    return w * x


@scaled.bprop
def _scaled_backward(x: ms.Tensor, w: float = 1.0, *, out: ms.Tensor, dout: ms.Tensor) -> dict[str, ms.Tensor]:
    return {"x": w * dout, "scale": dout}  # E[mypy]: returns a gradient for 'scale', which is not a parameter of scaled; expected names: (x, w)


@kwcell.custom_bprop
def offset(x: ms.Tensor) -> ms.Tensor:
    return x + 1.0


def _offset_backward(x: ms.Tensor, *, out: ms.Tensor) -> ms.Tensor:
    return out


offset.bprop(_offset_backward)  # E[mypy]: offset.bprop: missing parameter 'dout'; expected e.g. @offset.bprop def _(x, *, out, dout)
