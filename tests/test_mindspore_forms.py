"""Drop-in for bprops written the way MindSpore projects write them.

Most public custom-bprop cells use MindSpore's positional form with their own names
(``_`` for out, ``grad_output`` for dout, ``input_`` for x). On KwCell they work exactly as
on nn.Cell: matched by position. Names that are exactly construct's are matched by name; a
name that would read differently by name and by position is an error naming both readings.
Problems that nn.Cell reports only when the gradient is taken keep that timing: a warning when
the class is created, the error at the gradient.
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import kwcell
from kwcell import KwCell, KwCellDefinitionError, KwCellWarning

X = np.array([0.5, -1.0, 2.0], np.float32)
Y = np.array([1.5, 0.25, -3.0], np.float32)


# --- cells as public projects write them, each with its nn.Cell twin ------------------------


class STERound(KwCell):
    """Straight-through estimator (quantisation-aware training)."""

    def construct(self, input_: Tensor) -> Any:
        return ops.floor(input_ + 0.5)

    def bprop(self, x: Tensor, _: Tensor, grad_output: Tensor) -> Any:
        return (grad_output,)


class PlainSTERound(nn.Cell):
    def construct(self, input_: Tensor) -> Any:
        return ops.floor(input_ + 0.5)

    def bprop(self, x: Tensor, _: Tensor, grad_output: Tensor) -> Any:
        return (grad_output,)


class GradScale(KwCell):
    """Identity forward, scaled gradient (mixed-precision and GAN training loops)."""

    def construct(self, x: Tensor, scale: Tensor) -> Any:
        return x * 1.0

    def bprop(self, inp: Tensor, s: Tensor, out: Tensor, grad_output: Tensor) -> Any:
        return grad_output * s, ops.zeros_like(s)


class PlainGradScale(nn.Cell):
    def construct(self, x: Tensor, scale: Tensor) -> Any:
        return x * 1.0

    def bprop(self, inp: Tensor, s: Tensor, out: Tensor, grad_output: Tensor) -> Any:
        return grad_output * s, ops.zeros_like(s)


class MulAdd(KwCell):
    """Same names for the inputs, other names for out and dout."""

    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x * y + x

    def bprop(self, x: Tensor, y: Tensor, _out: Tensor, g: Tensor) -> Any:
        return g * (y + 1), g * x


class PlainMulAdd(nn.Cell):
    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x * y + x

    def bprop(self, x: Tensor, y: Tensor, _out: Tensor, g: Tensor) -> Any:
        return g * (y + 1), g * x


class SwappedByName(KwCell):
    """construct's own names in another order: matched by name (nn.Cell would swap them)."""

    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x * y + x

    def bprop(self, y: Tensor, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return dout * (y + 1), dout * x


PAIRS: list[tuple[nn.Cell, nn.Cell, int]] = [
    (STERound(), PlainSTERound(), 1),
    (GradScale(), PlainGradScale(), 2),
    (MulAdd(), PlainMulAdd(), 2),
]


@pytest.fixture(params=["pynative", "graph", "jit"])
def any_mode(request: pytest.FixtureRequest) -> str:
    """PYNATIVE, GRAPH_MODE, and PYNATIVE with the gradient taken inside an @ms.jit function."""
    mode: str = request.param
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    return mode


def _grads(net: nn.Cell, mode: str, *args: Tensor) -> tuple[Any, ...]:
    g: Callable[..., Any] = ms.grad(net, grad_position=tuple(range(len(args))))

    @ms.jit
    def step1(a: Tensor) -> Any:
        return g(a)

    @ms.jit
    def step2(a: Tensor, b: Tensor) -> Any:
        return g(a, b)

    step = step1 if len(args) == 1 else step2
    out = step(*args) if mode == "jit" else g(*args)
    return tuple(out) if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize(
    ("kw", "plain", "arity"), PAIRS, ids=lambda v: type(v).__name__ if isinstance(v, nn.Cell) else ""
)
def test_positional_form_with_other_names_matches_nn_cell(
    any_mode: str, kw: nn.Cell, plain: nn.Cell, arity: int
) -> None:
    args = (Tensor(X), Tensor(Y))[:arity]
    ours = _grads(kw, any_mode, *args)
    theirs = _grads(plain, any_mode, *args)
    assert len(ours) == len(theirs) == arity
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)


def test_positional_form_values_are_the_analytic_gradient(any_mode: str) -> None:
    gx, gy = _grads(MulAdd(), any_mode, Tensor(X), Tensor(Y))
    np.testing.assert_allclose(gx.asnumpy(), Y + 1, rtol=1e-6)
    np.testing.assert_allclose(gy.asnumpy(), X, rtol=1e-6)


def test_keyword_call_reaches_a_positional_form_bprop_by_position(any_mode: str) -> None:
    """The reason to switch: nn.Cell would hand bprop the call's order, KwCell construct's."""
    net = MulAdd()
    g = kwcell.grad(net, grad_position=("x", "y"))

    @ms.jit
    def step(a: Tensor, b: Tensor) -> Any:
        return g(y=b, x=a)

    gx, gy = step(Tensor(X), Tensor(Y)) if any_mode == "jit" else g(y=Tensor(Y), x=Tensor(X))
    np.testing.assert_allclose(gx.asnumpy(), Y + 1, rtol=1e-6)
    np.testing.assert_allclose(gy.asnumpy(), X, rtol=1e-6)


def test_construct_names_in_another_order_are_matched_by_name(any_mode: str) -> None:
    gx, gy = _grads(SwappedByName(), any_mode, Tensor(X), Tensor(Y))
    np.testing.assert_allclose(gx.asnumpy(), Y + 1, rtol=1e-6)
    np.testing.assert_allclose(gy.asnumpy(), X, rtol=1e-6)


def test_a_name_at_another_position_is_an_error_naming_both_readings() -> None:
    with pytest.raises(
        KwCellDefinitionError,
        match=re.escape(
            "Ambiguous.bprop(y, b, out, dout) is ambiguous: MindSpore passes bprop its inputs by "
            "position (y=input 'x', b=input 'y', out=out, dout=dout), but 'y' (position 1) would "
            "receive input 'x' although construct names it otherwise"
        ),
    ):

        class Ambiguous(KwCell):
            def construct(self, x: Tensor, y: Tensor) -> Any:
                return x * y

            def bprop(self, y: Tensor, b: Tensor, out: Tensor, dout: Tensor) -> Any:
                return dout * b, dout * y


# --- MindSpore's timing for problems of its own form --------------------------------------


def _define_short_return() -> type[KwCell]:
    class ShortReturn(KwCell):
        def construct(self, x: Tensor, y: Tensor) -> Any:
            return x * y

        def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (dout * y,)

    return ShortReturn


def test_wrong_count_in_mindspore_form_warns_then_raises_at_the_gradient(mode: str) -> None:
    message = r"ShortReturn\.bprop \(line \d+\): returns 1 gradient, expected 2, one per construct parameter"
    with pytest.warns(KwCellWarning, match=message):
        cls = _define_short_return()
    net = cls()
    np.testing.assert_allclose(net(Tensor(X), Tensor(Y)).asnumpy(), X * Y)  # the forward works
    # a RuntimeError, as nn.Cell raises in both modes, and a KwCellDefinitionError
    with pytest.raises(RuntimeError, match=message) as info:
        kwcell.grad(net, grad_position=(0, 1))(Tensor(X), Tensor(Y))
    assert isinstance(info.value, KwCellDefinitionError)


def test_wrong_arity_in_mindspore_form_warns_then_raises_at_the_gradient() -> None:
    with pytest.warns(KwCellWarning, match=r"Arity\.bprop: construct parameter 'y' is missing from bprop"):

        class Arity(KwCell):
            def construct(self, x: Tensor, y: Tensor) -> Any:
                return x * y

            def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
                return (dout,)

    with pytest.raises(KwCellDefinitionError, match=r"Arity\.bprop: construct parameter 'y' is missing"):
        ms.grad(Arity())(Tensor(X), Tensor(Y))


def test_jit_on_a_mindspore_form_bprop_raises_in_pynative_only_like_nn_cell() -> None:
    """nn.Cell: graphs ignore @jit on bprop (measured: gradient 2); PYNATIVE refuses it with a
    RuntimeError when the gradient is taken. KwCell warns at class creation and does the same."""
    with pytest.warns(KwCellWarning, match=r"JitBprop\.bprop: MindSpore runs a bprop decorated with @jit"):

        class JitBprop(KwCell):
            def construct(self, x: Tensor) -> Any:
                return x * 2

            @ms.jit
            def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
                return (dout * 2,)

    with pytest.raises(RuntimeError, match=r"Decorating bprop with '@jit' is not supported\.") as info:
        ms.grad(JitBprop())(Tensor(X))
    assert isinstance(info.value, KwCellDefinitionError)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        net = JitBprop()

        def step(x: Tensor) -> Any:
            return net(x)

        np.testing.assert_allclose(ms.grad(step)(Tensor(X)).asnumpy(), 2.0)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


with warnings.catch_warnings():
    warnings.simplefilter("ignore", KwCellWarning)  # the warning is tested below

    class Extra(KwCell):
        def construct(self, x: Tensor) -> Any:
            return x * 3

        def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
            return dout * 3, dout  # the second was meant for a weight


class PlainExtra(nn.Cell):
    def construct(self, x: Tensor) -> Any:
        return x * 3

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return dout * 3, dout


def test_extra_gradients_are_ignored_like_nn_cell_with_a_warning(mode: str) -> None:
    with pytest.warns(
        KwCellWarning, match=r"returns 2 gradients for 1 input\(s\) \(x\); MindSpore ignores the last 1"
    ):

        class Again(KwCell):
            def construct(self, x: Tensor) -> Any:
                return x * 3

            def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
                return dout * 3, dout

    ours = ms.grad(Extra())(Tensor(X))
    theirs = ms.grad(PlainExtra())(Tensor(X))
    np.testing.assert_allclose(ours.asnumpy(), theirs.asnumpy())
    np.testing.assert_allclose(ours.asnumpy(), np.full(3, 3.0, np.float32))


def test_one_broken_mindspore_form_cell_does_not_break_its_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MindSpore's own test files keep deliberately broken cells next to good ones."""
    (tmp_path / "zoo_cells.py").write_text("""
from mindspore import ops
from kwcell import KwCell

class Broken(KwCell):
    def construct(self, x, y):
        return x * y

    def bprop(self, x, y, out, dout):
        return (dout,)

class Good(KwCell):
    def construct(self, x):
        return ops.sin(x)

    def bprop(self, x, out, dout):
        return (ops.cos(x) * dout,)
""")
    monkeypatch.syspath_prepend(str(tmp_path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        zoo = importlib.import_module("zoo_cells")
    assert [type(w.message) for w in caught] == [KwCellWarning]
    assert caught[0].filename == str(tmp_path / "zoo_cells.py"), "the warning points at the class"
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        g = ms.grad(zoo.Good())(Tensor(X))
        np.testing.assert_allclose(g.asnumpy(), np.cos(X), rtol=1e-6)
        with pytest.raises(RuntimeError, match=r"Broken\.bprop \(line 10\): returns 1") as info:
            ms.grad(zoo.Broken(), grad_position=(0, 1))(Tensor(X), Tensor(Y))
        assert isinstance(info.value, KwCellDefinitionError)


def test_kwcell_forms_still_fail_at_class_creation() -> None:
    with pytest.raises(KwCellDefinitionError, match=r"returns 1 gradient, expected 2"):

        class KeywordOnly(KwCell):
            def construct(self, x: Tensor, y: Tensor) -> Any:
                return x * y

            def bprop(self, x: Tensor, y: Tensor, *, out: Tensor, dout: Tensor) -> Any:
                return (dout * y,)

    with pytest.raises(KwCellDefinitionError, match=r"returns a gradient for 'z'"):

        class DictReturn(KwCell):
            def construct(self, x: Tensor, y: Tensor) -> Any:
                return x * y

            def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
                return {"z": dout}


class PlainStatic(nn.Cell):
    def construct(self, x: Tensor) -> Any:
        return x * 2

    @staticmethod
    def bprop(x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout * 5,)


def test_nn_cell_staticmethod_bprop_runs_in_pynative_only() -> None:
    """Why kwcell rejects a static bprop (tests/test_definition.py): on nn.Cell it is the custom
    gradient in PYNATIVE and silently ignored in GRAPH_MODE (autodiff's 2 instead of 5)."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(ms.grad(PlainStatic())(Tensor(X)).asnumpy(), np.full(3, 5.0))
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(ms.grad(PlainStatic())(Tensor(X)).asnumpy(), np.full(3, 2.0))


def test_a_bprop_that_yields_warns_then_raises_what_nn_cell_raises() -> None:
    """A generator function is never a bprop: PYNATIVE's nn.Cell raises TypeError ("Unreasonable
    data type"), GRAPH_MODE fails on the yield; kwcell names the class and says what to return."""
    with pytest.warns(KwCellWarning, match=r"Yields\.bprop uses yield, so it returns a generator"):

        class Yields(KwCell):
            def construct(self, x: Tensor) -> Any:
                return x * 2

            def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
                yield dout

    with pytest.raises(TypeError, match=r"Unreasonable data type: <class 'generator'>\.\n.*uses yield"):
        ms.grad(Yields())(Tensor(X))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(TypeError, match=r"Yields\.bprop uses yield"):
            ms.grad(Yields())(Tensor(X))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
