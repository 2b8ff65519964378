"""Every class-creation rule that the kwcell mypy plugin sees statically, one class each.

The expected fragments are the runtime ``KwCellDefinitionError`` messages.
"""

# ruff: noqa: E501 (expected messages are quoted whole)
from __future__ import annotations

from typing import Any, Final

import mindspore as ms
from mindspore import ops

from kwcell import KwCell

LIMIT: Final = 3
OTHER = 1.0


def make_default() -> float:
    return 1.0


class UnknownParam(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(  # E[mypy]: UnknownParam.bprop: parameter 'z' is not a parameter of construct(self, x, w=1.0); expected e.g. bprop(self, x, w=1.0, *, out, dout)  [kwcell-bprop]
        self, x: ms.Tensor, z: float, *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


class MissingParam(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(  # N[mypy]: MissingParam.bprop: construct parameter 'w' is missing from bprop; name it, or add '**kwargs' to receive the inputs bprop does not name
        self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


class MissingDout(KwCell):
    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return ops.sin(x)

    def bprop(  # N[mypy]: MissingDout.bprop: missing parameter 'dout'; expected e.g. bprop(self, x, *, out, dout)
        self, x: ms.Tensor, out: ms.Tensor
    ) -> ms.Tensor:
        return out


class MissingOut(KwCell):
    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return ops.sin(x)

    def bprop(  # E[mypy]: MissingOut.bprop: missing parameter 'out'
        self, x: ms.Tensor, *, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


class OutInConstruct(KwCell):
    def construct(self, x: ms.Tensor, out: ms.Tensor) -> ms.Tensor:
        return x + out

    def bprop(  # E[mypy]: OutInConstruct.construct: parameter 'out' in construct(self, x, out) clashes with bprop's 'out' argument
        self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


class DoutInConstruct(KwCell):
    def construct(self, x: ms.Tensor, *, dout: float = 0.0) -> ms.Tensor:
        return x + dout

    def bprop(  # E[mypy]: DoutInConstruct.construct: parameter 'dout' in construct(self, x, *, dout=0.0) clashes
        self, x: ms.Tensor, out: ms.Tensor, **kwargs: Any
    ) -> ms.Tensor:
        return out


class DifferentDefault(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(  # E[mypy]: DifferentDefault.bprop: parameter 'w' has default 2.0 but construct gives it default 1.0; bprop always receives the value construct got, so drop the default or make it match
        self, x: ms.Tensor, w: float = 2.0, *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


class DefaultWithoutOne(KwCell):
    def construct(self, x: ms.Tensor, w: float) -> ms.Tensor:
        return w * x

    def bprop(  # E[mypy]: parameter 'w' has default -1.5 but construct gives it no default
        self, x: ms.Tensor, w: float = -1.5, *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


class DefaultTypeDiffers(KwCell):
    def construct(self, x: ms.Tensor, n: float = 1) -> ms.Tensor:
        return n * x

    def bprop(  # E[mypy]: parameter 'n' has default 1.0 but construct gives it default 1
        self, x: ms.Tensor, n: float = 1.0, *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


class FinalConstantDiffers(KwCell):
    def construct(self, x: ms.Tensor, n: int = LIMIT) -> ms.Tensor:
        return n * x

    def bprop(  # E[mypy]: parameter 'n' has default 4 but construct gives it default 3
        self, x: ms.Tensor, n: int = 4, *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


class NamedDefaultDiffers(KwCell):
    def construct(self, x: ms.Tensor, w: float = OTHER) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, w: float = make_default(), *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        # a call cannot be evaluated statically: not reported (the runtime compares the values)
        return dout


class NamedDefaultSame(KwCell):
    def construct(self, x: ms.Tensor, w: float = OTHER, n: int = LIMIT) -> ms.Tensor:
        return w * x

    def bprop(
        self, x: ms.Tensor, w: float = OTHER, n: int = 3, *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


class NamedDefaultWithoutOne(KwCell):
    def construct(self, x: ms.Tensor, w: float) -> ms.Tensor:
        return w * x

    def bprop(  # E[mypy]: parameter 'w' has default OTHER but construct gives it no default
        self, x: ms.Tensor, w: float = OTHER, *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


class VarArgs(KwCell):
    def construct(self, x: ms.Tensor, *more: ms.Tensor) -> ms.Tensor:
        return x

    def bprop(  # E[mypy]: VarArgs.construct: parameter '*more' in construct(self, x, *more) cannot be used with a bprop that names its inputs
        self, x: ms.Tensor, *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


class VarKwargs(KwCell):
    def construct(self, x: ms.Tensor, **options: float) -> ms.Tensor:
        return x

    def bprop(  # E[mypy]: VarKwargs.construct: parameter '**options' in construct(self, x, **options) cannot be used with a bprop that names its inputs
        self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor, **kwargs: Any
    ) -> ms.Tensor:
        return dout


class StarInNamedBprop(KwCell):
    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return x

    def bprop(  # E[mypy]: StarInNamedBprop.bprop: '*grads' can only be used alone, as MindSpore's classic bprop(self, *grads)
        self, x: ms.Tensor, *grads: ms.Tensor
    ) -> ms.Tensor:
        return x


class OnlyBprop(KwCell):
    """A base that defines only bprop: its subclasses bring construct (as for nn.Cell)."""

    def bprop(self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout


class Base(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, w: float = 1.0, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return w * dout


class InheritsBprop(Base):
    def construct(  # E[mypy]: InheritsBprop.construct does not fit the bprop it inherits from Base: construct parameter 'y' is missing from bprop
        self, x: ms.Tensor, w: float = 1.0, y: float = 0.0
    ) -> ms.Tensor:
        return w * x + y


class InheritsConstruct(Base):
    def bprop(  # type: ignore[override]  # pyright: ignore[reportIncompatibleMethodOverride]  # E[mypy]: InheritsConstruct.bprop: construct parameter 'w' is missing from bprop
        self, x: ms.Tensor, *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


class Middle(Base):
    """No construct, no bprop of its own: nothing new to report."""


class Grandchild(Middle):
    def bprop(  # E[mypy]: Grandchild.bprop: parameter 'w' has default 5.0 but construct gives it default 1.0
        self, x: ms.Tensor, w: float = 5.0, *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout


def factory() -> type[KwCell]:
    class Local(KwCell):
        def construct(self, x: ms.Tensor) -> ms.Tensor:
            return x

        def bprop(  # E[mypy]: Local.bprop: parameter 'y' is not a parameter of construct(self, x)
            self, y: ms.Tensor, *, out: ms.Tensor, dout: ms.Tensor
        ) -> ms.Tensor:
            return dout

    return Local
