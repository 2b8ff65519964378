"""Every return form bprop may use, normalised to MindSpore's tuple, in every mode."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from mindspore import Tensor, ops

import kwcell
from kwcell import KwCell, KwCellDefinitionError, KwCellWarning

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


# --- a bare return is the first parameter's gradient: never a silent zero ---------------


class ScaledSin(KwCell):
    """``scale`` first, as in ``Net(scale, x)`` layers: f = scale * sin(x)."""

    def construct(self, scale: float, x: Tensor) -> Tensor:
        return scale * ops.sin(x)

    def bprop(self, scale: float, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        dx = scale * ops.cos(x) * dout
        return dx  # meant for x, but a bare return is the gradient of 'scale'


class ScaledSinFixed(ScaledSin):
    def bprop(self, scale: float, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        dx = scale * ops.cos(x) * dout
        return {"x": dx}


SCALED = {ScaledSin: ScaledSin(), ScaledSinFixed: ScaledSinFixed()}
BARE_FIRST = (
    r"ScaledSin\.bprop returned a single value, which would be the gradient of the first "
    r"construct parameter 'scale', but 'scale' is not a Tensor, so that gradient would be lost; "
    r"return a dict keyed by parameter name, e.g\. \{'x': \.\.\.\}, or a tuple with one entry per "
    r"construct parameter \(scale, x\)"
)


def _step_grad(net: KwCell, mode: str) -> Any:
    """``d net(S, x) / dx`` in ``mode``; ``jit``: PYNATIVE, from an ``@ms.jit`` train step."""
    import mindspore as ms

    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    grad_fn = kwcell.grad(net, grad_position="x")
    if mode == "jit":

        @ms.jit
        def train_step(x: Tensor) -> Any:
            return grad_fn(S, x)

        return train_step(Tensor(X))
    return grad_fn(S, Tensor(X))


@pytest.mark.parametrize("mode", ["pynative", "graph", "jit"])
def test_bare_return_for_a_non_tensor_first_parameter_is_an_error(mode: str) -> None:
    with pytest.raises(ValueError, match=BARE_FIRST):
        _step_grad(SCALED[ScaledSin], mode)
    got = _step_grad(SCALED[ScaledSinFixed], mode)
    np.testing.assert_allclose(got.asnumpy(), S * np.cos(X), rtol=1e-5)


def test_bare_return_for_a_float_first_parameter_fails_at_class_creation() -> None:
    with pytest.raises(
        KwCellDefinitionError,
        match=r"Net\.bprop \(line \d+\): returns a single value, which would be the gradient of the "
        r"first construct parameter 'scale', but 'scale' cannot be a Tensor \(it is annotated 'float'\), "
        r"so that gradient would be lost; return a dict keyed by parameter name, e\.g\. "
        r'\{"x": \.\.\.\}, or a tuple with one entry per construct parameter \(scale, x\)',
    ):

        class Net(KwCell):
            def construct(self, scale: float, x: Tensor) -> Tensor:
                return scale * ops.sin(x)

            def bprop(self, scale: float, x: Tensor, *, out: Tensor, dout: Tensor) -> Any:
                return scale * ops.cos(x) * dout


def test_bare_return_for_a_defaulted_first_parameter_fails_at_class_creation() -> None:
    with pytest.raises(KwCellDefinitionError, match=r"'gain' cannot be a Tensor \(its default is 2\.0\)"):

        class Net(KwCell):
            def construct(self, gain=2.0, x=None):  # type: ignore[no-untyped-def]
                return gain * ops.sin(x)

            def bprop(self, gain=2.0, x=None, *, out, dout):  # type: ignore[no-untyped-def]
                return -gain * ops.cos(x) * dout


def test_bare_return_is_fine_when_the_first_parameter_can_be_a_tensor() -> None:
    class Net(KwCell):
        def construct(self, x: Tensor, scale: float = 2.0) -> Tensor:
            return scale * ops.sin(x)

        def bprop(self, x: Tensor, scale: float = 2.0, *, out: Tensor, dout: Tensor) -> Any:
            return scale * ops.cos(x) * dout

    got = kwcell.grad(Net(), grad_position="x")(Tensor(X))
    np.testing.assert_allclose(got.asnumpy(), 2.0 * np.cos(X), rtol=1e-5)


# --- a generator is no gradient: say what to return --------------------------------------


def test_generator_literal_fails_at_class_creation() -> None:
    with pytest.raises(
        KwCellDefinitionError,
        match=r"Net\.bprop \(line \d+\): returns a generator, which MindSpore cannot use as "
        r"gradients; return a tuple with one gradient per construct parameter \(x, w\) \(write "
        r"tuple\(\.\.\.\) around it\), a dict keyed by parameter name, or a Tensor",
    ):

        class Net(KwCell):
            def construct(self, x: Tensor, w: Tensor) -> Tensor:
                return x * w

            def bprop(self, x: Tensor, w: Tensor, *, out: Tensor, dout: Tensor) -> Any:
                return (dout * g for g in (w, x))


class GeneratorVariable(FullTuple):
    def bprop(self, x: Tensor, w: Tensor, s: float, out: Tensor, dout: Tensor) -> Any:
        grads = (g for g in (w * ops.cos(x) * s * dout, ops.sin(x) * s * dout, None))
        return grads


def test_generator_variable_is_an_error_in_pynative() -> None:
    """PYNATIVE only: a graph has no generators (MindSpore's compiler turns this one into a
    list, a valid return), and the literal form fails at class creation in every mode."""
    with pytest.raises(
        TypeError,
        match=r"GeneratorVariable\.bprop returned a generator or iterator; return a tuple with one "
        r"gradient per construct parameter \(x, w, s\) \(e\.g\. tuple\(\.\.\.\) around it\)",
    ):
        kwcell.grad(GeneratorVariable(), grad_position=("x", "w"))(Tensor(X), w=Tensor(W))


# --- MindSpore's own bprop form keeps MindSpore's timing ---------------------------------


def _classic_cells() -> dict[str, KwCell]:
    """Cells in MindSpore's positional form: ``nn.Cell`` fails only when the gradient is
    taken, so kwcell warns at class creation and raises then (the module still imports)."""
    with pytest.warns(KwCellWarning, match=r"Pairwise\.bprop \(line \d+\): returns a generator"):

        class Pairwise(KwCell):
            def construct(self, x: Tensor, w: Tensor) -> Tensor:
                return x * w

            def bprop(self, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
                return (dout * g for g in (w, x))

    with pytest.warns(KwCellWarning, match=r"Gain\.bprop \(line \d+\): returns a single value"):

        class Gain(KwCell):
            def construct(self, gain: float, x: Tensor) -> Tensor:
                return gain * ops.sin(x)

            def bprop(self, gain: float, x: Tensor, out: Tensor, dout: Tensor) -> Any:
                return gain * ops.cos(x) * dout

    return {"generator": Pairwise(), "bare": Gain()}


@pytest.mark.parametrize("mode", ["pynative", "graph", "jit"])
def test_mindspore_form_warns_then_raises_when_the_gradient_is_taken(mode: str) -> None:
    import mindspore as ms

    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    nets = _classic_cells()
    calls: dict[str, tuple[Any, ...]] = {"generator": (Tensor(X), Tensor(W)), "bare": (S, Tensor(X))}
    messages = {
        "generator": r"Pairwise\.bprop .*returns a generator",
        "bare": r"Gain\.bprop .*'gain' cannot be",
    }
    for name, net in nets.items():
        grad_fn = ms.grad(net, grad_position=1)
        if mode == "jit":
            grad_fn = ms.jit(grad_fn)
        with pytest.raises(TypeError, match=messages[name]):
            grad_fn(*calls[name])


class GeneratorFixed(FullTuple):
    """What the generator error says to write: ``tuple(...)`` around it."""

    def bprop(self, x: Tensor, w: Tensor, s: float, out: Tensor, dout: Tensor) -> Any:
        return tuple(g for g in (w * ops.cos(x) * s * dout, ops.sin(x) * s * dout, None))


GENERATOR_FIXED = GeneratorFixed()


@pytest.mark.parametrize("mode", ["pynative", "graph", "jit"])
def test_tuple_around_a_generator_works(mode: str) -> None:
    import mindspore as ms

    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    grad_fn = ms.grad(GENERATOR_FIXED, grad_position=(0, 1))
    if mode == "jit":
        grad_fn = ms.jit(grad_fn)
    gx, gw = grad_fn(Tensor(X), Tensor(W), S)
    np.testing.assert_allclose(gx.asnumpy(), DX, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), DW, rtol=1e-5, atol=1e-6)
