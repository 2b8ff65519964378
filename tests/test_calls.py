"""Bad calls raise the TypeError Python raises for construct, naming the class,
before MindSpore starts working, in both modes and through kwcell.grad."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, ops

import kwcell
from kwcell import KwCell


class Net(KwCell):
    def construct(self, x: Tensor, w: Any = 1.0, *, y: Any = 0.0) -> Any:
        return w * ops.sin(x) + y

    def bprop(self, x: Tensor, w: Any = 1.0, *, y: Any = 0.0, out: Tensor, dout: Tensor) -> Any:
        return {"x": w * ops.cos(x) * dout}


def _reference() -> Callable[..., Any]:
    """A plain function with construct's signature, named like it: Python's own messages."""

    def construct(self: Any, x: Any, w: Any = 1.0, *, y: Any = 0.0) -> None:
        return None

    construct.__qualname__ = "Net.construct"
    return construct


X = Tensor(np.array([0.5, 1.0], np.float32))

BAD_CALLS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "unknown keyword": ((X,), {"z": 1.0}),
    "missing argument": ((), {"w": 2.0}),
    "too many": ((X, 2.0, 3.0), {}),
    "multiple values": ((X,), {"x": X}),
    "keyword-only given positionally": ((X, 2.0, 0.5), {}),
}


def _python_message(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    with pytest.raises(TypeError) as info:
        _reference()(None, *args, **kwargs)
    return str(info.value)


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_call_raises_pythons_type_error(mode: str, case: str) -> None:
    args, kwargs = BAD_CALLS[case]
    expected = _python_message(args, kwargs)
    assert expected.startswith("Net.construct()")
    with pytest.raises(TypeError) as info:
        Net()(*args, **kwargs)
    assert str(info.value) == expected


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_call_through_kwcell_grad(mode: str, case: str) -> None:
    args, kwargs = BAD_CALLS[case]
    expected = _python_message(args, kwargs)
    with pytest.raises(TypeError) as info:
        kwcell.grad(Net())(*args, **kwargs)
    assert str(info.value) == expected


def test_grad_position_unknown_name() -> None:
    with pytest.raises(
        ValueError,
        match=r"grad_position names 'z', which is not a parameter of Net.construct \(x, w, y\)",
    ):
        kwcell.grad(Net(), grad_position=("x", "z"))


def test_valid_calls_agree(mode: str) -> None:
    net = Net()
    expected = 2.0 * np.sin(X.asnumpy()) + 0.5
    for got in (net(X, 2.0, y=0.5), net(X, w=2.0, y=0.5), net(y=0.5, w=2.0, x=X)):
        np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(net(X).asnumpy(), np.sin(X.asnumpy()), rtol=1e-6)
    ms.set_context(mode=ms.PYNATIVE_MODE)
