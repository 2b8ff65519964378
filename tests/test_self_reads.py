"""``self`` in the user's construct and bprop means the user's cell, in every mode.

The hidden core's ``construct`` and ``bprop`` call the user's functions on the owner (the
user's cell), so ``self.<name>`` reads the owner's attributes, ``training``, sub-cells and
helper methods, as on ``nn.Cell``. (kwcell once gave the graph compiler copies of the user's
functions as the core's own; a construct and bprop calling the same ``ops`` composite then
failed to compile, so the copies are gone.) Every shape here is checked against analytic
gradients in PYNATIVE, GRAPH_MODE (an outer network's graph) and PyNative ``@ms.jit``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn, ops

import kwcell
from kwcell import KwCell
from kwcell._corecell import core_of

X = np.array([[0.1, -0.4, 0.7], [1.2, -0.3, 0.05]], np.float32)


class Outer(nn.Cell):
    """A network holding the cell, called with keywords: its graph is the outer graph."""

    def __init__(self, cell: nn.Cell) -> None:
        super().__init__()
        self.cell = cell

    def construct(self, x: Tensor) -> Any:
        return self.cell(x).sum()


class Alpha(Outer):
    def construct(self, x: Tensor) -> Any:
        return self.cell(x, alpha=2.0).sum()


class K4(Outer):
    def construct(self, x: Tensor) -> Any:
        return self.cell(x, k=4.0).sum()


class K2(Outer):
    def construct(self, x: Tensor) -> Any:
        return self.cell(x, k=2.0).sum()


class GainShift(Outer):
    def construct(self, x: Tensor) -> Any:
        return self.cell(x, gain=1.5, shift=0.25).sum()


class W2(Outer):
    def construct(self, x: Tensor) -> Any:
        return self.cell(x, w=2.0).sum()


class A3(Outer):
    def construct(self, x: Tensor) -> Any:
        return self.cell(x, a=3.0).sum()


class A2(Outer):
    def construct(self, x: Tensor) -> Any:
        return self.cell(x, a=2.0).sum()


def _grad(run: str, net: nn.Cell, x: Any) -> Any:
    g: Callable[..., Any] = ms.grad(net)
    if run == "jit":

        @ms.jit
        def step(a: Tensor) -> Any:
            return g(a)

        out = step(Tensor(x))
    else:
        out = g(Tensor(x))
    return out.asnumpy()


# --- construct and bprop read plain attributes of self -----------------------


class Scaled(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.scale = 3.0

    def construct(self, x: Tensor, alpha: float = 1.0) -> Any:
        return ops.tanh(alpha * x) * self.scale

    def bprop(self, x: Tensor, alpha: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        t = ops.tanh(alpha * x)
        return {"x": dout * (1 - t * t) * alpha * self.scale}


def test_attributes_of_self_read_as_the_owner(run: str) -> None:
    cell = Scaled()
    cell.scale = 5.0  # an instance value, read through the owner at compile time
    got = _grad(run, Alpha(cell), X)
    t = np.tanh(2.0 * X)
    np.testing.assert_allclose(got, (1 - t * t) * 2.0 * 5.0, rtol=1e-5)


# --- the owner's nn.Cell state, not the core's -----------------------------------------------


class Trained(KwCell):
    def construct(self, x: Tensor, k: float = 2.0) -> Any:
        if self.training:
            return x * k * 3.0
        return x * k

    def bprop(self, x: Tensor, k: float, out: Tensor, dout: Tensor) -> Any:
        if self.training:
            return dout * k * 3.0, 0.0
        return dout * k, 0.0


@pytest.mark.parametrize("training", [True, False])
def test_training_is_the_owners(run: str, training: bool) -> None:
    cell = Trained()
    cell.set_train(training)
    core = core_of(cell)
    assert core is None or core.training is False or training  # the core is not a child
    got = _grad(run, K4(cell), X)
    np.testing.assert_allclose(got, np.full_like(X, 12.0 if training else 4.0), rtol=1e-6)
    assert core_of(cell).training is False  # type: ignore[union-attr]


# --- sub-cells, helper methods, keyword-only inputs ------------------------------------------


class WithParts(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.inner = nn.Dense(3, 3, has_bias=False, weight_init="ones")

    def helper(self, x: Tensor) -> Any:
        return x * 2.0

    def construct(self, x: Tensor, *, shift: float = 0.0, gain: float = 1.0) -> Any:
        return self.helper(self.inner(x)) * gain + shift

    def bprop(self, x: Tensor, shift: float, gain: float, out: Tensor, dout: Tensor) -> Any:
        # d/dx of 2 * gain * (x @ ones): every row of dout summed, times 2 * gain
        return (self.helper(ops.matmul(dout, ops.ones((3, 3), ms.float32))) * gain, 0.0, 0.0)


def test_sub_cells_helpers_and_keyword_only_inputs(run: str) -> None:
    cell = WithParts()
    got = _grad(run, GainShift(cell), X)
    np.testing.assert_allclose(got, np.full_like(X, 3 * 2.0 * 1.5), rtol=1e-6)


# --- a bprop that reads a Parameter: the core keeps calling the owner's -----------------------


class ReadsParameter(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.s = Parameter(Tensor(np.float32(3.0)), name="s", requires_grad=False)

    def construct(self, x: Tensor, w: float = 1.0) -> Any:
        return self.s * w * ops.sin(x)

    def bprop(self, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
        return self.s * w * ops.cos(x) * dout, 0.0


def test_a_bprop_reading_a_parameter_keeps_its_own_graph(run: str) -> None:
    # MindSpore refuses Parameters in a cell's own bprop graph: the core's bprop stays a call
    # of the owner's (where they are allowed), decided per instance when MindSpore compiles.
    cell = ReadsParameter()
    got = _grad(run, W2(cell), X)
    np.testing.assert_allclose(got, 3.0 * 2.0 * np.cos(X), rtol=1e-5)


class MaybeParameter(KwCell):
    def __init__(self, value: Any) -> None:
        super().__init__()
        self.s = value

    def construct(self, x: Tensor) -> Any:
        return self.s * ops.sin(x)

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (self.s * ops.cos(x) * dout,)


@pytest.mark.parametrize("kind", ["float", "parameter"])
def test_the_same_class_reads_a_float_or_a_parameter(run: str, kind: str) -> None:
    value: Any = 2.5 if kind == "float" else Parameter(Tensor(np.float32(2.5)), name="s", requires_grad=False)
    cell = MaybeParameter(value)
    got = _grad(run, Outer(cell), X)
    np.testing.assert_allclose(got, 2.5 * np.cos(X), rtol=1e-5)


class PassesSelf(KwCell):
    k = 2.0

    def construct(self, x: Tensor) -> Any:
        return x * getattr(self, "k")  # noqa: B009 - what the test is about

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout * getattr(self, "k"),)  # noqa: B009


def test_a_bprop_passing_self_on(run: str) -> None:
    cell = PassesSelf()
    got = _grad(run, Outer(cell), X)
    np.testing.assert_allclose(got, np.full_like(X, 2.0), rtol=1e-6)


# --- super() in construct and bprop


class Base(KwCell):
    def construct(self, x: Tensor, a: float = 1.0) -> Any:
        return x * a

    def bprop(self, x: Tensor, a: float, out: Tensor, dout: Tensor) -> Any:
        return dout * a, 0.0


class UsesSuper(Base):
    def construct(self, x: Tensor, a: float = 1.0) -> Any:
        return super().construct(x, a) * 2.0

    def bprop(self, x: Tensor, a: float, out: Tensor, dout: Tensor) -> Any:
        gx, ga = super().bprop(x, a, out, dout)
        return gx * 2.0, ga


def test_super_keeps_the_owners_construct(run: str) -> None:
    cell = UsesSuper()
    np.testing.assert_allclose(_grad(run, A3(cell), X), np.full_like(X, 6.0), rtol=1e-6)


# --- PYNATIVE runs the user's own functions --------------------------------------------------

SEEN: list[str] = []


class Traced(KwCell):
    def construct(self, x: Tensor, a: float = 1.0) -> Any:
        SEEN.append("construct")
        return x * a

    def bprop(self, x: Tensor, a: float, out: Tensor, dout: Tensor) -> Any:
        SEEN.append("bprop")
        return dout * a, 0.0


def test_pynative_calls_the_users_functions() -> None:
    SEEN.clear()
    got = _grad("pynative", A2(Traced()), X)
    np.testing.assert_allclose(got, np.full_like(X, 2.0), rtol=1e-6)
    assert SEEN == ["construct", "bprop"]


# --- a bprop normalised at run time: the normalisation is the core's own graph ---------------


class ComputedReturn(KwCell):
    def construct(self, x: Tensor, a: float = 1.0, b: Tensor | None = None) -> Any:
        return x * a if b is None else x * a + b

    def bprop(self, x: Tensor, a: float, b: Any, out: Tensor, dout: Tensor) -> Any:
        grads = {"x": dout * a}
        return grads  # not a literal: normalised when the gradient runs


def _core_graph(cell: nn.Cell) -> str:
    core = core_of(cell)
    assert core is not None
    bprop: Any = getattr(type(core), "bprop")  # noqa: B009 - the generated function, read on the class
    return inspect.getsource(inspect.unwrap(bprop))


def test_a_computed_return_is_normalised_in_the_cores_graph(run: str) -> None:
    cell = ComputedReturn()
    got = _grad(run, A3(cell), X)
    np.testing.assert_allclose(got, np.full_like(X, 3.0), rtol=1e-6)
    assert "_kwcell_normalize(" in _core_graph(cell)
    assert "self._kwcell_owner._kwcell_rbprop_" in _core_graph(cell)


class Weighted(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.w = Parameter(Tensor(np.float32(1.5)), name="w")
        self.internal_params = [self.w]

    def construct(self, x: Tensor, k: float = 1.0) -> Any:
        return self.w * x * k

    def bprop(self, x: Tensor, k: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": self.w * dout * k, self.w: (x * dout * k).sum()}


def test_weight_gradients_through_the_cores_graph(run: str) -> None:
    cell = Weighted()
    net = K2(cell)
    g: Callable[..., Any] = kwcell.grad(net, 0, net.trainable_params())
    x = Tensor(X)
    if run == "jit":

        @ms.jit
        def step(a: Tensor) -> Any:
            return g(a)

        gx, (gw,) = step(x)
    else:
        gx, (gw,) = g(x)
    np.testing.assert_allclose(gx.asnumpy(), np.full_like(X, 1.5 * 2.0), rtol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), X.sum() * 2.0, rtol=1e-5)
    assert "_kwcell_w0" in _core_graph(cell)


class _Positional(Outer):
    def construct(self, x: Tensor) -> Any:
        return self.cell(x, 2.0).sum()


def _counting(base: type, augmented: bool) -> nn.Cell:
    class Counting(base):  # type: ignore[misc]
        """A construct that updates a Parameter of its own (as a step counter does)."""

        def __init__(self) -> None:
            super().__init__()
            self.step: Any = Parameter(Tensor(np.zeros(1, np.float32)), name="step", requires_grad=False)

        def construct(self, x: Tensor, alpha: float = 1.0) -> Any:
            if augmented:
                self.step += 1
            else:
                self.step = self.step + 1
            return ops.tanh(alpha * x)

        def bprop(self, x: Tensor, alpha: float, out: Tensor, dout: Tensor) -> Any:
            return dout * (1 - out * out) * alpha, 0.0

    cell: nn.Cell = Counting()
    return cell


@pytest.mark.parametrize("augmented", [False, True], ids=["assign", "augmented"])
def test_a_construct_setting_an_attribute_of_self_counts_as_nn_cell(run: str, augmented: bool) -> None:
    # A Parameter step counter updated in construct counts as on nn.Cell, and a gradient
    # compile adds nothing to it.
    t = np.tanh(2.0 * X)
    steps = []
    for base in (nn.Cell, KwCell):
        cell = _counting(base, augmented)
        net = _Positional(cell)  # nn.Cell's bprop cell cannot be called by keyword in a graph
        np.testing.assert_allclose(_grad(run, net, X), (1 - t * t) * 2.0, rtol=1e-5)
        steps.append(getattr(cell, "step").asnumpy().tolist())  # noqa: B009 - Cell is untyped here
    np.testing.assert_allclose(_grad(run, Alpha(cell), X), (1 - t * t) * 2.0, rtol=1e-5)
    steps.append(getattr(cell, "step").asnumpy().tolist())  # noqa: B009
    assert steps[1] == steps[0] and steps[2] == [2 * steps[0][0]]
