"""Classes decorated with ``@kwcell.keyword_bprop``, in the shape of a model library.

A library base decorated once (``PreTrainedModel``, which keeps its mixin), a base with a
metaclass of its own, and the models derived from them: calls are typed from ``construct`` as
a KwCell's are (the decorator returns the class itself), and the plugin checks each bprop
against construct with the messages the class statement raises.
"""

# ruff: noqa: E501 (expected messages are quoted whole)
# each marked call stays on its own line:
# fmt: off
from __future__ import annotations

from typing import Any

import mindspore as ms
import numpy as np
from mindspore import nn, ops
from typing_extensions import reveal_type

import kwcell
from kwcell import keyword_bprop as kw_bprop


class GenerationMixin:
    def generate(self, steps: int) -> list[int]:
        return list(range(steps))


@kwcell.keyword_bprop
class PreTrainedModel(nn.Cell, GenerationMixin):
    """A library's base: decorated once, every model derived from it gets KwCell's behaviour."""

    def __init__(self, hidden: int = 4) -> None:
        super().__init__()
        self.hidden = hidden


class Registry(type):
    """A library's own metaclass (KwCell's could not be combined with it)."""

    classes: list[str] = []  # noqa: RUF012 - the registry itself

    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any], **kw: Any) -> Registry:
        cls = super().__new__(mcls, name, bases, ns, **kw)
        mcls.classes.append(name)
        return cls


@kw_bprop(compile_once=True)
class RegisteredLayer(nn.Cell, metaclass=Registry):
    pass


class SurrogateGelu(PreTrainedModel):
    def construct(self, x: ms.Tensor, alpha: float = 1.0, *, beta: float = 1.0) -> ms.Tensor:
        return beta * ops.tanh(alpha * x)

    def bprop(
        self, x: ms.Tensor, alpha: float = 1.0, *, beta: float = 1.0, out: ms.Tensor, dout: ms.Tensor
    ) -> dict[str, ms.Tensor]:
        u = alpha * x
        return {"x": dout * beta * alpha / (1.0 + u * u)}


class ScaledLayer(RegisteredLayer):
    def construct(self, x: ms.Tensor, scale: float = 2.0) -> ms.Tensor:
        return scale * x

    def bprop(self, x: ms.Tensor, scale: float = 2.0, *, out: ms.Tensor, dout: ms.Tensor) -> dict[str, ms.Tensor]:
        return {"x": scale * dout}


class WrongDefault(PreTrainedModel):
    def construct(self, x: ms.Tensor, alpha: float = 1.0) -> ms.Tensor:
        return alpha * x

    def bprop(  # E[mypy]: WrongDefault.bprop: parameter 'alpha' has default 2.0 but construct gives it default 1.0; bprop always receives the value construct got, so drop the default or make it match; expected e.g. bprop(self, x, alpha=1.0, *, out, dout)  [kwcell-bprop]
        self, x: ms.Tensor, alpha: float = 2.0, *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


class UnknownName(RegisteredLayer):
    def construct(self, x: ms.Tensor, y: ms.Tensor) -> ms.Tensor:
        return x * y

    def bprop(  # E[mypy]: UnknownName.bprop: parameter 'z' is not a parameter of construct(self, x, y); expected e.g. bprop(self, x, y, *, out, dout)  [kwcell-bprop]
        self, x: ms.Tensor, z: ms.Tensor, *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


@kwcell.keyword_bprop
class Standalone(nn.Cell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(  # N[mypy]: Standalone.bprop: construct parameter 'w' is missing from bprop; name it, or add '**kwargs' to receive the inputs bprop does not name
        self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor
    ) -> tuple[ms.Tensor]:
        return (dout,)


# A subclass passes compile_once as KwCell's subclasses do; pyright knows no __init_subclass__
# taking it (the decorator cannot change the class's type): @kwcell.keyword_bprop(compile_once=True)
# on the subclass is the form both checkers accept.
class OnceGelu(SurrogateGelu, compile_once=True):  # E[pyright]: No parameter named "compile_once"
    pass


class TwiceGelu(SurrogateGelu, compile_once="yes"):  # E[mypy]: Argument "compile_once" to "__init_subclass__" of "PreTrainedModel" has incompatible type "str"; expected "bool | None"  # E[pyright]: No parameter named "compile_once"
    pass


@kwcell.keyword_bprop(compile_once=True)
class OnceLayer(ScaledLayer):
    pass


x = ms.Tensor(np.ones((4, 4), np.float32))
act = SurrogateGelu(8)
layer = ScaledLayer()
reveal_type(act)  # N[mypy]: Revealed type is "tests.typing_cases.decorated.SurrogateGelu"  # N[pyright]: Type of "act" is "SurrogateGelu"
reveal_type(RegisteredLayer)  # N[mypy]: Revealed type is "def (auto_prefix: bool =, flags: dict[str, Any] | None =) -> tests.typing_cases.decorated.RegisteredLayer"  # N[pyright]: Type of "RegisteredLayer" is "type[RegisteredLayer]"
y: ms.Tensor = act(x, alpha=2.0, beta=0.5)
steps: list[int] = act.generate(3)  # the mixin's methods are kept
layer(x, scale=3.0)
OnceLayer()(x, scale=3.0)
act(x, gamma=0.5)  # E: Unexpected keyword argument "gamma" for "__call__" of "Cell"
act(x, 2.0, 0.5)  # E: Too many positional arguments for "__call__" of "Cell"
act(x, alpha="big")  # E: Argument "alpha" to "__call__" of "Cell" has incompatible type "str"; expected "float"
act(beta=2.0)  # E: Missing positional argument "x" in call to "__call__" of "Cell"
layer(x, size=3.0)  # E: Unexpected keyword argument "size" for "__call__" of "Cell"
s: str = layer(x)  # E: Incompatible types in assignment (expression has type "Tensor", variable has type "str")
SurrogateGelu("8")  # E: Argument 1 to "SurrogateGelu" has incompatible type "str"; expected "int"
grad_fn = kwcell.value_and_grad(act)
reveal_type(grad_fn)  # N[mypy]: Revealed type is "def (x: mindspore.common.tensor.Tensor, alpha: float =, *, beta: float =) -> tuple[mindspore.common.tensor.Tensor, mindspore.common.tensor.Tensor]"  # N[pyright]: Type of "grad_fn" is "(x: Tensor, alpha: float = 1, *, beta: float = 1) -> tuple[Tensor, Tensor]"
grad_fn(x, gamma=2.0)  # E: Unexpected keyword argument "gamma"
kwcell.grad(layer)(x, scale="2")  # E: Argument "scale" has incompatible type "str"; expected "float"
