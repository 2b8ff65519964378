"""Cells for tests/test_gradcheck.py: right and deliberately wrong custom bprops.

They live in a real source file because GRAPH_MODE parses cells from their source.
Every wrong bprop is wrong in exactly one named way, so that gradcheck must name that input.
"""

from __future__ import annotations

from typing import Any

import mindspore as ms
from mindspore import nn, ops

from kwcell import KwCell


class Scaled(KwCell):
    """Right: d/dx = w cos x + y, d/dw = sin x, d/dy = x."""

    def construct(self, x: Any, w: Any = 1.0, y: Any = 1.0) -> Any:
        return w * ops.sin(x) + y * x

    def bprop(self, x: Any, w: Any, y: Any, *, out: Any, dout: Any) -> Any:
        return {"x": (w * ops.cos(x) + y) * dout, "w": ops.sin(x) * dout, "y": x * dout}


class WrongScale(KwCell):
    """Wrong: the gradient of ``w`` is twice what it should be; ``x`` and ``y`` are right."""

    def construct(self, x: Any, w: Any = 1.0, y: Any = 1.0) -> Any:
        return w * ops.sin(x) + y * x

    def bprop(self, x: Any, w: Any, y: Any, *, out: Any, dout: Any) -> Any:
        return {"x": (w * ops.cos(x) + y) * dout, "w": 2 * ops.sin(x) * dout, "y": x * dout}


class Swapped(KwCell):
    """Wrong: the gradients of ``x`` and ``y`` are returned in each other's place."""

    def construct(self, x: Any, y: Any) -> Any:
        return x * ops.exp(y)

    def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
        return x * ops.exp(y) * dout, ops.exp(y) * dout


class NoDout(KwCell):
    """Wrong: the gradient of ``x`` forgets the ``dout`` factor; ``y`` is right."""

    def construct(self, x: Any, y: Any) -> Any:
        return ops.sin(x) * y

    def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
        return ops.cos(x) * y, ops.sin(x) * dout


class WrongKeywordOnly(KwCell):
    """Wrong only for the keyword-only ``scale``, which the tests pass by keyword."""

    def construct(self, x: Any, *, scale: Any) -> Any:
        return scale * x * x

    def bprop(self, x: Any, *, scale: Any, out: Any, dout: Any) -> Any:
        return {"x": 2 * scale * x * dout, "scale": x * dout}


class TwoOutputs(KwCell):
    """Wrong: ignores the cotangent of the second output (``x + y``)."""

    def construct(self, x: Any, y: Any) -> Any:
        return x * y, x + y

    def bprop(self, x: Any, y: Any, *, out: Any, dout: Any) -> Any:
        return {"x": y * dout[0], "y": x * dout[0]}


class TwoOutputsRight(KwCell):
    """Right: both outputs' cotangents reach both inputs."""

    def construct(self, x: Any, y: Any) -> Any:
        return x * y, x + y

    def bprop(self, x: Any, y: Any, *, out: Any, dout: Any) -> Any:
        return {"x": y * dout[0] + dout[1], "y": x * dout[0] + dout[1]}


class Float32Only(KwCell):
    """construct refuses float64, so gradcheck falls back to float32; ``y``'s gradient is wrong."""

    def construct(self, x: Any, y: Any) -> Any:
        if x.dtype == ms.float64:
            raise TypeError("Float32Only takes float32 only")
        return x * y

    def bprop(self, x: Any, y: Any, *, out: Any, dout: Any) -> Any:
        return {"x": y * dout, "y": x * 3 * dout}


class PlainRight(nn.Cell):
    """A plain ``nn.Cell`` with a right classic bprop."""

    def construct(self, x: Any, y: Any) -> Any:
        return x * ops.sin(y)

    def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
        return ops.sin(y) * dout, x * ops.cos(y) * dout


class PlainSwapsKeywords(nn.Cell):
    """A plain ``nn.Cell`` whose classic bprop is right for positional calls only.

    Called ``net(y=b, x=a)``, MindSpore 2.10 hands bprop the inputs, and takes its gradients,
    in call order (measured in PYNATIVE and GRAPH_MODE), so ``x`` and ``y`` trade gradients.
    """

    def construct(self, x: Any, y: Any) -> Any:
        return 2 * x + 3 * y

    def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
        return 2 * dout, 3 * dout


SCALED = Scaled()
WRONG_SCALE = WrongScale()
SWAPPED = Swapped()
NO_DOUT = NoDout()
WRONG_KEYWORD_ONLY = WrongKeywordOnly()
TWO_OUTPUTS = TwoOutputs()
TWO_OUTPUTS_RIGHT = TwoOutputsRight()
FLOAT32_ONLY = Float32Only()
PLAIN_RIGHT = PlainRight()
PLAIN_SWAPS_KEYWORDS = PlainSwapsKeywords()


class PlainUnusedInput(nn.Cell):
    """Right: ``y`` is not used, and bprop says so with ``None`` (a compiled graph then gives
    no gradient for ``y`` at all; PYNATIVE gives zeros)."""

    def construct(self, x: Any, y: Any) -> Any:
        return x * 2.0

    def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
        return dout * 2.0, None


class PlainForgottenInput(nn.Cell):
    """Wrong: ``y`` is used (d/dy = 3), but bprop gives ``None`` for it."""

    def construct(self, x: Any, y: Any) -> Any:
        return x * 2.0 + y * 3.0

    def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
        return dout * 2.0, None


class PlainOnlyInputNone(nn.Cell):
    """Wrong: the only input's gradient is ``None`` (d/dx = 2)."""

    def construct(self, x: Any) -> Any:
        return x * 2.0

    def bprop(self, x: Any, out: Any, dout: Any) -> Any:
        return (None,)
