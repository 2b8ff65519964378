"""SPEC 2.3: every return form bprop may use, normalised to MindSpore's tuple, in both modes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from mindspore import Tensor, ops

import kwcell
from kwcell import KwCell

X = np.array([0.5, 1.0, -2.0], np.float32)
W = np.array([2.0, -1.0, 0.5], np.float32)
S = 3.0  # a Python float input: its gradient entry is only a placeholder


def _f(x: Tensor, w: Tensor, s: float) -> Tensor:
    return w * ops.sin(x) * s


class FullTuple(KwCell):
    def construct(self, x: Tensor, w: Tensor, s: float = S) -> Tensor:
        return _f(x, w, s)

    def bprop(self, x: Tensor, w: Tensor, s: float, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * s * dout, ops.sin(x) * s * dout, 123.0


class NoneEntries(FullTuple):
    def bprop(self, x: Tensor, w: Tensor, s: float, out: Tensor, dout: Tensor) -> Any:
        return None, ops.sin(x) * s * dout, None


class ByName(KwCell):
    def construct(self, x: Tensor, w: Tensor, s: float = S) -> Tensor:
        return _f(x, w, s)

    def bprop(self, x: Tensor, w: Tensor, s: float = S, *, out: Tensor, dout: Tensor) -> Any:
        return {"w": ops.sin(x) * s * dout}


class BareTensor(FullTuple):
    def bprop(self, x: Tensor, w: Tensor, s: float, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * s * dout


class DictVariable(FullTuple):
    def bprop(self, x: Tensor, w: Tensor, s: float, out: Tensor, dout: Tensor) -> Any:
        grads = {"x": w * ops.cos(x) * s * dout}
        return grads


DX = W * np.cos(X) * S
DW = np.sin(X) * S
ZERO = np.zeros(3, np.float32)

EXPECTED: dict[type[KwCell], tuple[Any, Any]] = {
    FullTuple: (DX, DW),
    NoneEntries: (ZERO, DW),
    ByName: (ZERO, DW),
    BareTensor: (DX, ZERO),
    DictVariable: (DX, ZERO),
}
NETS = {cls: cls() for cls in EXPECTED}


@pytest.mark.parametrize("cls", list(EXPECTED), ids=lambda c: c.__name__)
def test_return_form(mode: str, cls: type[KwCell]) -> None:
    gx, gw = kwcell.grad(NETS[cls], grad_position=("x", "w"))(Tensor(X), w=Tensor(W))
    np.testing.assert_allclose(gx.asnumpy(), EXPECTED[cls][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), EXPECTED[cls][1], rtol=1e-5, atol=1e-6)


class TooMany(FullTuple):
    def bprop(  # type: ignore[override]
        self, x: Tensor, w: Tensor, s: float, *, out: Tensor, dout: Tensor
    ) -> Any:
        grads = (dout, dout, dout, dout)
        return grads


class UnknownKey(FullTuple):
    def bprop(self, x: Tensor, w: Tensor, s: float, out: Tensor, dout: Tensor) -> Any:
        grads = {"y": dout}
        return grads


class ReturnsNone(FullTuple):
    def bprop(self, x: Tensor, w: Tensor, s: float, out: Tensor, dout: Tensor) -> Any:
        grads = None
        return grads


ERRORS: dict[type[KwCell], str] = {
    TooMany: r"TooMany\.bprop returned 4 gradients, expected 3, one per construct parameter in this "
    r"order: \(x, w, s\)",
    UnknownKey: r"UnknownKey\.bprop returned a gradient for 'y', which is not a parameter of construct; "
    r"expected names: \(x, w, s\)",
    ReturnsNone: r"ReturnsNone\.bprop returned None; return one gradient per construct parameter",
}
BAD_NETS = {cls: cls() for cls in ERRORS}


@pytest.mark.parametrize("cls", list(ERRORS), ids=lambda c: c.__name__)
def test_bad_return_is_an_error_naming_the_inputs(mode: str, cls: type[KwCell]) -> None:
    with pytest.raises(ValueError, match=ERRORS[cls]):
        kwcell.grad(BAD_NETS[cls], grad_position=("x", "w"))(Tensor(X), w=Tensor(W))


def test_dict_built_at_run_time_under_pynative_jit_is_a_known_limit() -> None:
    """README 'Known limits': MindSpore has no CPU kernel for a dict that a bprop returns under
    PyNative @ms.jit; a ``{...}`` literal return is rewritten to a tuple and works (ByName)."""
    import mindspore as ms

    net, literal = DictVariable(), ByName()

    @ms.jit
    def variable_step(x: Tensor, w: Tensor) -> Any:
        return net(x, w)

    @ms.jit
    def literal_step(x: Tensor, w: Tensor) -> Any:
        return literal(x, w)

    _, gw = ms.grad(literal_step, grad_position=(0, 1))(Tensor(X), Tensor(W))
    np.testing.assert_allclose(gw.asnumpy(), DW, rtol=1e-5)
    with pytest.raises(RuntimeError, match=r"Unsupported op \[make_dict\] on CPU"):
        ms.grad(variable_step, grad_position=(0, 1))(Tensor(X), Tensor(W))
