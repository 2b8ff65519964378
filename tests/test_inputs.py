"""Inputs that are not plain Tensors: ``ms.mutable`` numbers, tuples of Tensors, enum members
and ``@ms.jit_class`` objects.

Every KwCell here has an ``nn.Cell`` twin with the same construct and bprop; the gradients
must be the same as the twin's (and, where MindSpore differentiates the input, the analytic
value). Modes: ``pynative``, ``graph`` (GRAPH_MODE) and ``jit`` (PYNATIVE, the gradient
taken inside an ``@ms.jit`` train step, as training loops do). In PYNATIVE, MindSpore gives
neither a mutable number nor a tuple argument a gradient (for ``nn.Cell`` as for ``KwCell``),
so there only the Tensor inputs' gradients are compared.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

from kwcell import KwCell

A = np.array([0.5, 1.0, -2.0], np.float32)
B = np.array([2.0, 3.0, 0.25], np.float32)
Y = np.array([1.0, -1.0, 0.5], np.float32)
S = 2.0
ZEROS = np.zeros(3, np.float32)


@pytest.fixture(params=["pynative", "graph", "jit"])
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    name: str = request.param
    ms.set_context(mode=ms.GRAPH_MODE if name == "graph" else ms.PYNATIVE_MODE)
    yield name


def grad_of(net: Callable[..., Any], mode: str, positions: tuple[int, ...]) -> Callable[..., Any]:
    """``ms.grad(net)``, called directly or from inside an ``@ms.jit`` train step."""
    grad_fn = ms.grad(net, grad_position=positions)
    if mode != "jit":
        return grad_fn

    @ms.jit
    def train_step(*args: Any) -> Any:
        return grad_fn(*args)

    return train_step


def assert_same(got: Any, expected: Any) -> None:
    """The same nesting of tuples and lists, and equal values (Tensors or numbers)."""
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected), f"expected a {type(expected).__name__}, got {got!r}"
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert_same(g, e)
        return
    np.testing.assert_allclose(_numpy(got), _numpy(expected), rtol=1e-5, atol=1e-6)


def _numpy(value: Any) -> Any:
    return value.asnumpy() if isinstance(value, Tensor) else np.asarray(value)


# --- a number made variable with ms.mutable: f = s * x ---------------------------------


class Scale(nn.Cell):
    def construct(self, x: Tensor, s: float) -> Tensor:
        return x * s

    def bprop(self, x: Tensor, s: float, out: Tensor, dout: Tensor) -> Any:
        grads = (dout * s, (dout * x).sum())
        return grads


class KwScale(KwCell):
    def construct(self, x: Tensor, s: float) -> Tensor:
        return x * s

    def bprop(self, x: Tensor, s: float, out: Tensor, dout: Tensor) -> Any:
        grads = (dout * s, (dout * x).sum())
        return grads


class KwScaleByName(KwCell):
    def construct(self, x: Tensor, s: float) -> Tensor:
        return x * s

    def bprop(self, x: Tensor, s: float, *, out: Tensor, dout: Tensor) -> Any:
        return {"s": (dout * x).sum(), "x": dout * s}


SCALE_NETS = {"nn.Cell": Scale(), "KwCell": KwScale(), "KwCell dict": KwScaleByName()}


@pytest.mark.parametrize("name", ["KwCell", "KwCell dict"])
def test_mutable_number_gets_its_gradient(mode: str, name: str) -> None:
    x = Tensor(A)
    got = grad_of(SCALE_NETS[name], mode, (0, 1))(x, ms.mutable(S))
    expected = grad_of(SCALE_NETS["nn.Cell"], mode, (0, 1))(x, ms.mutable(S))
    assert_same(got, expected)
    if mode != "pynative":
        assert_same(got, (S * np.ones(3, np.float32), A.sum()))


class KwScaleFirst(KwCell):
    """The mutable number first, and a bare return: its gradient."""

    def construct(self, s: float, x: Tensor) -> Tensor:
        return x * s

    def bprop(self, s: float, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        gs = (dout * x).sum()
        return gs


def test_bare_return_for_a_mutable_first_number(mode: str) -> None:
    """In a graph the bare return is the mutable number's gradient. PYNATIVE passes bprop a
    plain number and gives it no gradient, so the value would be lost: an error there."""
    grad_fn = grad_of(KwScaleFirst(), mode, (0, 1))
    if mode == "pynative":
        with pytest.raises(
            ValueError, match=r"KwScaleFirst\.bprop returned a single value, .* 's' is not a Tensor"
        ):
            grad_fn(ms.mutable(S), Tensor(A))
        return
    assert_same(grad_fn(ms.mutable(S), Tensor(A)), (A.sum(), ZEROS))


# --- a tuple of Tensors: f = (xs[0] * xs[1] + y) * s -----------------------------------


class PairProduct(nn.Cell):
    def construct(self, y: Tensor, xs: tuple[Tensor, Tensor], s: float = S) -> Tensor:
        return (xs[0] * xs[1] + y) * s

    def bprop(self, y: Tensor, xs: tuple[Tensor, Tensor], s: float, out: Tensor, dout: Tensor) -> Any:
        a, b = xs
        grads = (dout * s, (dout * b * s, dout * a * s), 0)
        return grads


class KwPairProduct(KwCell):
    def construct(self, y: Tensor, xs: tuple[Tensor, Tensor], s: float = S) -> Tensor:
        return (xs[0] * xs[1] + y) * s

    def bprop(self, y: Tensor, xs: tuple[Tensor, Tensor], s: float, out: Tensor, dout: Tensor) -> Any:
        a, b = xs
        grads = (dout * s, (dout * b * s, dout * a * s), 0)
        return grads


class KwPairProductNone(KwPairProduct):
    """``None`` for one element of the tuple's gradient: zeros for that element."""

    def bprop(self, y: Tensor, xs: tuple[Tensor, Tensor], s: float, out: Tensor, dout: Tensor) -> Any:
        grads = (dout * s, (None, dout * xs[0] * s), None)
        return grads


class KwPairProductByName(KwPairProduct):
    """A dict that leaves the tuple out: zeros for each of its elements."""

    def bprop(self, y: Tensor, xs: tuple[Tensor, Tensor], s: float, out: Tensor, dout: Tensor) -> Any:
        return {"y": dout * s}


class PairFirst(nn.Cell):
    """The tuple first: ``((ga, gb), gy)`` is MindSpore's weight form to PyNative's eyes."""

    def construct(self, xs: tuple[Tensor, Tensor], y: Tensor) -> Tensor:
        return xs[0] * xs[1] + y

    def bprop(self, xs: tuple[Tensor, Tensor], y: Tensor, out: Tensor, dout: Tensor) -> Any:
        grads = ((dout * xs[1], dout * xs[0]), dout * 3)
        return grads


class KwPairFirst(KwCell):
    def construct(self, xs: tuple[Tensor, Tensor], y: Tensor) -> Tensor:
        return xs[0] * xs[1] + y

    def bprop(self, xs: tuple[Tensor, Tensor], y: Tensor, out: Tensor, dout: Tensor) -> Any:
        grads = ((dout * xs[1], dout * xs[0]), dout * 3)
        return grads


PAIR_NETS = {
    "nn.Cell": PairProduct(),
    "KwCell": KwPairProduct(),
    "KwCell None": KwPairProductNone(),
    "KwCell dict": KwPairProductByName(),
}
PAIR_EXPECTED = {
    "KwCell": (S * np.ones(3, np.float32), (B * S, A * S)),
    "KwCell None": (S * np.ones(3, np.float32), (ZEROS, A * S)),
    "KwCell dict": (S * np.ones(3, np.float32), (ZEROS, ZEROS)),
}


@pytest.mark.parametrize("mutable", [False, True], ids=["tuple", "mutable tuple"])
@pytest.mark.parametrize("name", sorted(PAIR_EXPECTED))
def test_tuple_input_gets_a_tuple_of_gradients(mode: str, name: str, mutable: bool) -> None:
    pair = (Tensor(A), Tensor(B))
    xs = ms.mutable(pair) if mutable else pair
    got = grad_of(PAIR_NETS[name], mode, (0, 1))(Tensor(Y), xs, S)
    if name == "KwCell":
        assert_same(got, grad_of(PAIR_NETS["nn.Cell"], mode, (0, 1))(Tensor(Y), xs, S))
    if mutable and mode != "pynative":
        assert_same(got, PAIR_EXPECTED[name])
    else:
        # A constant tuple (or any tuple in PYNATIVE) gets no gradient from MindSpore.
        assert_same(got, S * np.ones(3, np.float32))


def test_tuple_first_works_where_nn_cell_fails_in_pynative() -> None:
    """PYNATIVE only: in a graph both cells work (``test_tuple_input_gets_a_tuple_of_gradients``
    covers the same return there). PyNative takes ``((ga, gb), gy)`` for MindSpore's weight
    form ``(input_grads, {parameter: grad})`` and fails on ``nn.Cell``; kwcell hands the
    tuple's gradient on as a list, which PyNative does not mistake for it."""
    pair, y = (Tensor(A), Tensor(B)), Tensor(Y)
    with pytest.raises(TypeError, match="dictionary update sequence"):
        ms.grad(PairFirst(), grad_position=(0, 1))(pair, y)
    assert_same(ms.grad(KwPairFirst(), grad_position=(0, 1))(pair, y), 3 * np.ones(3, np.float32))


@pytest.mark.parametrize("mode", ["graph", "jit"], indirect=True)
def test_tuple_first_in_graph(mode: str) -> None:
    """The same cell in a graph (PYNATIVE: the test above)."""
    pair = ms.mutable((Tensor(A), Tensor(B)))
    got = grad_of(KwPairFirst(), mode, (0, 1))(pair, Tensor(Y))
    assert_same(got, grad_of(PairFirst(), mode, (0, 1))(pair, Tensor(Y)))
    assert_same(got, ((B, A), 3 * np.ones(3, np.float32)))


def test_tuple_built_inside_jit_is_flattened_for_nn_cell_and_kwcell() -> None:
    """MindSpore limit (PYNATIVE @ms.jit only): a tuple built inside the jitted function and
    passed to a bprop cell reaches the bprop flattened into separate inputs, which MindSpore
    refuses, for ``nn.Cell`` and ``KwCell`` alike."""
    for net in (PairProduct(), KwPairProduct()):

        @ms.jit
        def forward(a: Tensor, b: Tensor, y: Tensor, net: nn.Cell = net) -> Any:
            return net(y, (a, b), S)

        with pytest.raises(TypeError, match="requires the forward inputs as well as the 'out' and 'dout'"):
            ms.grad(forward, grad_position=(0, 1, 2))(Tensor(A), Tensor(B), Tensor(Y))


# --- nested tuples and lists: f = (xs[0][0] * xs[0][1] + y) * xs[1] -----------------------


class Nested(nn.Cell):
    def construct(self, y: Tensor, xs: tuple[tuple[Tensor, Tensor], Tensor]) -> Tensor:
        return (xs[0][0] * xs[0][1] + y) * xs[1]

    def bprop(self, y: Tensor, xs: tuple[tuple[Tensor, Tensor], Tensor], out: Tensor, dout: Tensor) -> Any:
        (a, b), c = xs
        grads = (dout * c, ((dout * b * c, dout * a * c), dout * (a * b + y)))
        return grads


class KwNested(KwCell):
    def construct(self, y: Tensor, xs: tuple[tuple[Tensor, Tensor], Tensor]) -> Tensor:
        return (xs[0][0] * xs[0][1] + y) * xs[1]

    def bprop(self, y: Tensor, xs: tuple[tuple[Tensor, Tensor], Tensor], out: Tensor, dout: Tensor) -> Any:
        (a, b), c = xs
        grads = (dout * c, ((dout * b * c, dout * a * c), dout * (a * b + y)))
        return grads


class KwNestedNone(KwNested):
    def bprop(self, y: Tensor, xs: tuple[tuple[Tensor, Tensor], Tensor], out: Tensor, dout: Tensor) -> Any:
        (a, b), c = xs
        grads = (dout * c, (None, dout * (a * b + y)))
        return grads


class ListPair(nn.Cell):
    def construct(self, y: Tensor, xs: list[Tensor]) -> Tensor:
        return xs[0] * xs[1] + y

    def bprop(self, y: Tensor, xs: list[Tensor], out: Tensor, dout: Tensor) -> Any:
        grads = (dout, [dout * xs[1], dout * xs[0]])
        return grads


class KwListPair(KwCell):
    def construct(self, y: Tensor, xs: list[Tensor]) -> Tensor:
        return xs[0] * xs[1] + y

    def bprop(self, y: Tensor, xs: list[Tensor], out: Tensor, dout: Tensor) -> Any:
        grads = (dout, [dout * xs[1], dout * xs[0]])
        return grads


class KwListPairByName(KwListPair):
    def bprop(self, y: Tensor, xs: list[Tensor], out: Tensor, dout: Tensor) -> Any:
        return {"y": dout}


class KwPairLiteral(KwCell):
    """Literal returns (rewritten when the class is created): ``None`` inside the tuple's
    gradient gives zeros for that element, as in a returned variable."""

    def construct(self, y: Tensor, xs: tuple[Tensor, Tensor]) -> Tensor:
        return xs[0] * xs[1] + y

    def bprop(self, y: Tensor, xs: tuple[Tensor, Tensor], out: Tensor, dout: Tensor) -> Any:
        return dout, (None, dout * xs[0])


class KwPairLiteralByName(KwPairLiteral):
    def bprop(self, y: Tensor, xs: tuple[Tensor, Tensor], out: Tensor, dout: Tensor) -> Any:
        return {"xs": [dout * xs[1], None]}


C = np.array([1.5, -0.5, 4.0], np.float32)
STRUCTURED: dict[str, tuple[nn.Cell, nn.Cell | None, Any, Any]] = {
    # name: (KwCell, nn.Cell twin or None, argument, expected gradient of (y, xs) in a graph)
    "nested": (KwNested(), Nested(), ((A, B), C), (C, ((B * C, A * C), A * B + Y))),
    "nested None": (KwNestedNone(), None, ((A, B), C), (C, ((ZEROS, ZEROS), A * B + Y))),
    "list": (KwListPair(), ListPair(), [A, B], (np.ones(3, np.float32), [B, A])),
    "list dict": (KwListPairByName(), None, [A, B], (np.ones(3, np.float32), [ZEROS, ZEROS])),
    "literal None": (KwPairLiteral(), None, (A, B), (np.ones(3, np.float32), (ZEROS, A))),
    "literal dict": (KwPairLiteralByName(), None, (A, B), (ZEROS, [B, ZEROS])),
}


def _tensors(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_tensors(v) for v in value)
    if isinstance(value, list):
        return [_tensors(v) for v in value]
    return Tensor(value)


@pytest.mark.parametrize("name", list(STRUCTURED))
def test_nested_tuples_and_lists(mode: str, name: str) -> None:
    net, twin, arg, expected = STRUCTURED[name]
    xs = ms.mutable(_tensors(arg))
    got = grad_of(net, mode, (0, 1))(Tensor(Y), xs)
    if twin is not None:
        assert_same(got, grad_of(twin, mode, (0, 1))(Tensor(Y), xs))
    assert_same(got, expected if mode != "pynative" else expected[0])


# --- a construct that calls ops.zeros_like, and a dict that leaves a Tensor out --------


class MaskedShift(KwCell):
    """f = x * y + zeros_like(x): construct uses ``ops.zeros_like`` as real code does."""

    def construct(self, x: Tensor, y: Tensor) -> Tensor:
        return ops.zeros_like(x) + x * y

    def bprop(self, x: Tensor, y: Tensor, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": dout * y}


class MaskedShiftVariable(MaskedShift):
    def bprop(self, x: Tensor, y: Tensor, *, out: Tensor, dout: Tensor) -> Any:
        grads = (dout * y, None)
        return grads


ZEROS_LIKE_NETS = {"dict literal": MaskedShift(), "tuple variable": MaskedShiftVariable()}


@pytest.mark.parametrize("name", sorted(ZEROS_LIKE_NETS))
def test_generated_zeros_compile_next_to_ops_zeros_like(mode: str, name: str) -> None:
    got = grad_of(ZEROS_LIKE_NETS[name], mode, (0, 1))(Tensor(A), Tensor(Y))
    assert_same(got, (Y, ZEROS))


# --- a dict input, and an input used_bprop_inputs leaves out ---------------------------------


def _dict_cells() -> list[type[nn.Cell]]:
    cells: list[type[nn.Cell]] = []
    for base in (nn.Cell, KwCell):

        class DictInput(base):  # type: ignore[valid-type,misc]
            def construct(self, d: Any) -> Any:
                return d["w"] * ops.sin(d["x"])

            def bprop(self, d: Any, out: Any, dout: Any) -> Any:
                return ({"x": d["w"] * ops.cos(d["x"]) * dout, "w": ops.sin(d["x"]) * dout},)

        cells.append(DictInput)
    return cells


def _calling(net: nn.Cell) -> Callable[[Any], Any]:
    def f(d: Any) -> Any:
        return net(d)

    return f


def test_a_dict_input_gets_the_dict_bprop_gives_in_graph_mode() -> None:
    """``ms.mutable({...})`` in GRAPH_MODE: nn.Cell passes bprop's dict on (it was 0 on KwCell)."""
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        x = np.array([0.5, 1.0], np.float32)
        w = np.array([2.0, 3.0], np.float32)
        for cls in _dict_cells():
            g = ms.grad(_calling(cls()))(ms.mutable({"x": Tensor(x), "w": Tensor(w)}))
            np.testing.assert_allclose(g["x"].asnumpy(), w * np.cos(x), rtol=1e-6)
            np.testing.assert_allclose(g["w"].asnumpy(), np.sin(x), rtol=1e-6)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_none_for_an_input_used_bprop_inputs_leaves_out_is_zeros_as_on_nn_cell() -> None:
    """PYNATIVE passes bprop None for inputs not in ``used_bprop_inputs``; a None gradient for
    one is MindSpore's to fill (it was a broadcast RuntimeError naming no class)."""

    class Used(KwCell):
        def __init__(self) -> None:
            super().__init__()
            self.used_bprop_inputs = [0]

        def construct(self, x: Tensor, w: Tensor) -> Any:
            return w * ops.sin(x)

        def bprop(self, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (ops.cos(x) * dout, None)

    x = np.array([0.5, 1.0], np.float32)
    gx, gw = ms.grad(Used(), grad_position=(0, 1))(Tensor(x), Tensor(np.ones(2, np.float32)))
    np.testing.assert_allclose(gx.asnumpy(), np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), np.zeros(2), rtol=1e-6)


# --- an enum member and an @ms.jit_class object: constants that get a placeholder ------


class Act(enum.Enum):
    SIN = 1
    COS = 2


@ms.jit_class
class Gain:
    def __init__(self, s: float) -> None:
        self.s = s


class Activation(nn.Cell):
    def construct(self, x: Tensor, act: Act, gain: Gain) -> Tensor:
        return gain.s * (ops.sin(x) if act == Act.SIN else ops.cos(x))

    def bprop(self, x: Tensor, act: Act, gain: Gain, out: Tensor, dout: Tensor) -> Any:
        return gain.s * (ops.cos(x) if act == Act.SIN else -ops.sin(x)) * dout, 0, 0


class KwActivationDict(KwCell):
    def construct(self, x: Tensor, act: Act, gain: Gain) -> Tensor:
        return gain.s * (ops.sin(x) if act == Act.SIN else ops.cos(x))

    def bprop(self, x: Tensor, act: Act, gain: Gain, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": gain.s * (ops.cos(x) if act == Act.SIN else -ops.sin(x)) * dout}


class KwActivationNone(KwCell):
    def construct(self, x: Tensor, act: Act, gain: Gain) -> Tensor:
        return gain.s * (ops.sin(x) if act == Act.SIN else ops.cos(x))

    def bprop(self, x: Tensor, act: Act, gain: Gain, out: Tensor, dout: Tensor) -> Any:
        return gain.s * (ops.cos(x) if act == Act.SIN else -ops.sin(x)) * dout, None, None


@pytest.mark.parametrize("cls", [KwActivationDict, KwActivationNone], ids=["dict", "None entries"])
def test_enum_and_jit_class_inputs_get_placeholders(mode: str, cls: type[KwCell]) -> None:
    """A dict return or None entries for an enum member and a jit_class object: their zero
    placeholder compiles in graphs (it was "cannot be converted to MindSpore type")."""
    gain = Gain(3.0)

    net, twin = cls(), Activation()

    def kw_model(x: Tensor) -> Any:
        return net(x, Act.COS, gain=gain)

    def model(x: Tensor) -> Any:
        return twin(x, Act.COS, gain)  # an nn.Cell takes no keyword arguments in a graph

    got = grad_of(kw_model, mode, (0,))(Tensor(A))
    expected = grad_of(model, mode, (0,))(Tensor(A))
    assert_same(got, expected)
    assert_same(got, -3.0 * np.sin(A))
