"""Cells for tests/test_self_state.py: a bprop reading what construct stored on self.

MindSpeed's ``RMSNorm2D`` shape (``self.norm_x`` set in construct, read in bprop), on
``nn.Cell`` and on ``KwCell``, with and without a value set in ``__init__``, and the two fixes
kwcell's warning suggests. In a real file: GRAPH_MODE parses cells from their source.
"""

from __future__ import annotations

import warnings
from typing import Any

from mindspore import Tensor, nn, ops

from kwcell import KwCell, KwCellWarning

EPS = 1e-6


def _rstd(x: Any) -> Any:
    return ops.rsqrt((x * x).mean(-1, keep_dims=True) + EPS)


def _rms_grad(x: Any, norm_x: Any, dout: Any) -> Any:
    """d/dx of ``x * rstd(x)`` against ``dout``."""
    return _rstd(x) * (dout - norm_x * (dout * norm_x).mean(-1, keep_dims=True))


class PlainStateNorm(nn.Cell):
    """The pattern on a plain nn.Cell (MindSpore's own behaviour, for comparison)."""

    def construct(self, x: Any) -> Any:
        self.norm_x = x * _rstd(x)
        return self.norm_x

    def bprop(self, x: Any, out: Any, dout: Any) -> Any:
        return (_rms_grad(x, self.norm_x, dout),)


class PlainStateNormDefault(nn.Cell):
    """The same, with ``__init__`` giving ``norm_x`` a value first."""

    def __init__(self) -> None:
        super().__init__()
        self.norm_x = Tensor([[0.0, 0.0, 0.0]])

    def construct(self, x: Any) -> Any:
        self.norm_x = x * _rstd(x)
        return self.norm_x

    def bprop(self, x: Any, out: Any, dout: Any) -> Any:
        return (_rms_grad(x, self.norm_x, dout),)


with warnings.catch_warnings():  # tests/test_self_state.py asserts these warnings
    warnings.simplefilter("ignore", KwCellWarning)

    class StateNorm(KwCell):
        """The pattern on a KwCell."""

        def construct(self, x: Any) -> Any:
            self.norm_x = x * _rstd(x)
            return self.norm_x

        def bprop(self, x: Any, out: Any, dout: Any) -> Any:
            return (_rms_grad(x, self.norm_x, dout),)

    class StateNormDefault(KwCell):
        """On a KwCell, with ``__init__`` giving ``norm_x`` a value first."""

        def __init__(self) -> None:
            super().__init__()
            self.norm_x = Tensor([[0.0, 0.0, 0.0]])

        def construct(self, x: Any) -> Any:
            self.norm_x = x * _rstd(x)
            return self.norm_x

        def bprop(self, x: Any, out: Any, dout: Any) -> Any:
            return (_rms_grad(x, self.norm_x, dout),)


class NormFromOut(KwCell):
    """Fixed: construct's output is what bprop needs, so bprop reads it from ``out``."""

    def construct(self, x: Any) -> Any:
        return x * _rstd(x)

    def bprop(self, x: Any, out: Any, dout: Any) -> Any:
        return (_rms_grad(x, out, dout),)


class NormRecomputed(KwCell):
    """Fixed: bprop recomputes what it needs from the inputs."""

    def construct(self, x: Any) -> Any:
        return x * _rstd(x)

    def bprop(self, x: Any, out: Any, dout: Any) -> Any:
        return (_rms_grad(x, x * _rstd(x), dout),)
