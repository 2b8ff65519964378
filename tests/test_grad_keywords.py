"""Keyword calls of ``kwcell.grad`` / ``kwcell.value_and_grad`` wherever training loops make them.

The gradient function is called with keywords (``g(y=b, x=a)``, ``g(a, y=b)``,
``grad_fn(data, label=label)``) from each place a MindSpore program calls it:

- ``pynative``: plain Python, PYNATIVE;
- ``pynative_jit``: PYNATIVE, inside an ``@ms.jit`` step function;
- ``graph``: GRAPH_MODE, called from Python;
- ``graph_jit``: GRAPH_MODE, inside a ``@ms.jit`` function;
- ``graph_cell``: GRAPH_MODE, from an outer cell's ``construct``.

Inside ``@ms.jit`` and cells, MindSpore's graph parser binds the call itself. Gradients are
compared with analytic values; the training loop is compared step by step with MindSpore's
own ``value_and_grad`` called positionally.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import mindspore as ms
import numpy as np
import numpy.typing as npt
import pytest
from mindspore import Tensor, nn

import kwcell
from kwcell import KwCell
from tests import training_nets as tn

Array = npt.NDArray[np.float32]
A = np.array([0.5, -1.0, 2.0], np.float32)
B = np.array([3.0, 0.25, -2.0], np.float32)

PLACES = ("pynative", "pynative_jit", "graph", "graph_jit", "graph_cell")


@pytest.fixture(params=PLACES)
def place(request: pytest.FixtureRequest) -> Iterator[str]:
    name: str = request.param
    ms.set_context(mode=ms.GRAPH_MODE if name.startswith("graph") else ms.PYNATIVE_MODE)
    yield name


# --- what is differentiated: f = scale * x * x * y, so df/dx = 2*scale*x*y, df/dy = scale*x*x --


class Product(nn.Cell):
    """A plain ``nn.Cell``: MindSpore's own autodiff."""

    def construct(self, x: Tensor, y: Tensor, scale: float = 2.0) -> Tensor:
        return scale * x * x * y


class KwProduct(KwCell):
    """A ``KwCell`` with a custom bprop matched by name."""

    def construct(self, x: Tensor, y: Tensor, scale: float = 2.0) -> Tensor:
        return scale * x * x * y

    def bprop(self, x: Tensor, y: Tensor, scale: float = 2.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": 2.0 * scale * x * y * dout, "y": scale * x * x * dout}


TWO = Tensor(2.0, ms.float32)


class KeywordOnlyProduct(KwCell):
    """Keyword-only ``scale`` whose default is not a literal (a Tensor)."""

    def construct(self, x: Tensor, y: Tensor, *, scale: Tensor = TWO) -> Tensor:
        return scale * x * x * y

    def bprop(self, x: Tensor, y: Tensor, *, scale: Tensor = TWO, out: Tensor, dout: Tensor) -> Any:
        return {"x": 2.0 * scale * x * y * dout, "y": scale * x * x * dout}


_inner = KwProduct()


def product(x: Tensor, y: Tensor, scale: float = 2.0) -> Tensor:
    """A plain function that calls a KwCell with keywords."""
    out: Tensor = _inner(y=y, x=x, scale=scale)
    return out


class ProductModel(nn.Cell):
    """A cell whose method is differentiated (``kwcell.grad(self.forward)``)."""

    def forward(self, x: Tensor, y: Tensor, scale: float = 2.0) -> Tensor:
        return scale * x * x * y


def _targets() -> dict[str, Callable[..., Any]]:
    # One gradient function per target, created once: MindSpore caches compiled graphs per
    # gradient object. grad_position names the parameters.
    return {
        "nn.Cell": kwcell.grad(Product(), grad_position=("x", "y")),
        "KwCell": kwcell.grad(KwProduct(), grad_position=("x", "y")),
        "function": kwcell.grad(product, grad_position=("x", "y")),
        "method": kwcell.grad(ProductModel().forward, grad_position=("x", "y")),
        "keyword-only": kwcell.grad(KeywordOnlyProduct(), grad_position=("x", "y")),
    }


GRADS = _targets()


def _calls(g: Callable[..., Any]) -> dict[str, Callable[[Tensor, Tensor], Any]]:
    """The call styles, as a user writes them: each function calls ``g`` once."""

    def keywords(a: Tensor, b: Tensor) -> Any:
        return g(y=b, x=a)

    def mixed(a: Tensor, b: Tensor) -> Any:
        return g(a, y=b)

    def keywords_and_default(a: Tensor, b: Tensor) -> Any:
        return g(scale=3.0, y=b, x=a)

    return {"keywords": keywords, "mixed": mixed, "keywords_and_default": keywords_and_default}


SCALE = {"keywords": 2.0, "mixed": 2.0, "keywords_and_default": 3.0}


class Outer(nn.Cell):
    """A training cell that calls a gradient function from its own construct."""

    def __init__(self, step: Callable[[Tensor, Tensor], Any]) -> None:
        super().__init__()
        self.step = step

    def construct(self, a: Tensor, b: Tensor) -> Any:
        return self.step(a, b)


CALLS = {target: _calls(g) for target, g in GRADS.items()}
JITTED = {target: {style: ms.jit(fn) for style, fn in calls.items()} for target, calls in CALLS.items()}
OUTERS = {target: {style: Outer(fn) for style, fn in calls.items()} for target, calls in CALLS.items()}


def _run(place: str, target: str, style: str, *args: Tensor) -> Any:
    if place in ("pynative", "graph"):
        return CALLS[target][style](*args)
    if place in ("pynative_jit", "graph_jit"):
        return JITTED[target][style](*args)
    return OUTERS[target][style](*args)


@pytest.mark.parametrize("style", sorted(SCALE))
@pytest.mark.parametrize("target", sorted(GRADS))
def test_keyword_call_gives_analytic_gradients(place: str, target: str, style: str) -> None:
    dx, dy = _run(place, target, style, Tensor(A), Tensor(B))
    s = SCALE[style]
    np.testing.assert_allclose(dx.asnumpy(), 2.0 * s * A * B, rtol=1e-6)
    np.testing.assert_allclose(dy.asnumpy(), s * A * A, rtol=1e-6)


# --- value_and_grad(forward, None, optimizer.parameters, has_aux=True) ---------------------

DATA = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [0.0, 1.0, 1.0], [-2.0, 0.5, 0.75]], np.float32)
LABEL = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [-1.0, 2.0]], np.float32)
WEIGHT = np.array([[0.2, -0.4, 0.1], [0.3, 0.5, -0.2]], np.float32)
BIAS = np.array([0.05, -0.1], np.float32)


model = nn.Dense(3, 2, weight_init=Tensor(WEIGHT), bias_init=Tensor(BIAS))
loss_fn = nn.MSELoss()
optimizer = nn.SGD(model.trainable_params(), learning_rate=0.1)


def forward_fn(data: Tensor, label: Tensor) -> tuple[Tensor, Tensor]:
    logits = model(data)
    return loss_fn(logits, label), logits


grad_fn = kwcell.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)


def _aux_calls() -> dict[str, Callable[[Tensor, Tensor], Any]]:
    def mixed(data: Tensor, label: Tensor) -> Any:
        return grad_fn(data, label=label)

    def keywords(data: Tensor, label: Tensor) -> Any:
        return grad_fn(label=label, data=data)

    return {"mixed": mixed, "keywords": keywords}


AUX_CALLS = _aux_calls()
AUX_JITTED = {style: ms.jit(fn) for style, fn in AUX_CALLS.items()}
AUX_OUTERS = {style: Outer(fn) for style, fn in AUX_CALLS.items()}


@pytest.mark.parametrize("style", sorted(AUX_CALLS))
def test_value_and_grad_with_weights_and_aux(place: str, style: str) -> None:
    data, label = Tensor(DATA), Tensor(LABEL)
    if place == "graph_cell":
        (loss, logits), (dw, db) = AUX_OUTERS[style](data, label)
    elif place.endswith("jit"):
        (loss, logits), (dw, db) = AUX_JITTED[style](data, label)
    else:
        (loss, logits), (dw, db) = AUX_CALLS[style](data, label)
    expected_logits = DATA @ WEIGHT.T + BIAS
    residual = expected_logits - LABEL
    np.testing.assert_allclose(logits.asnumpy(), expected_logits, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(loss.asnumpy(), np.mean(residual**2), rtol=1e-6)
    np.testing.assert_allclose(dw.asnumpy(), 2.0 / residual.size * residual.T @ DATA, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(db.asnumpy(), 2.0 / residual.size * residual.sum(axis=0), rtol=1e-5, atol=1e-7)


# --- a real training loop: the step makes the keyword call ----------------------------------


def train_with_keywords(net: nn.Cell, x: Array, y: Array, steps: int) -> list[float]:
    """``tn.train_functional`` as users write it with kwcell: ``grad_fn(data, label=label)``."""
    loss_fn = nn.MSELoss()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=tn.LR)

    def forward(data: Tensor, label: Tensor) -> Tensor:
        loss: Tensor = loss_fn(net(data), label)
        return loss

    grad_fn = kwcell.value_and_grad(forward, None, optimizer.parameters)

    @ms.jit
    def step(data: Tensor, label: Tensor) -> Tensor:
        loss, grads = grad_fn(data, label=label)
        optimizer(grads)
        return loss

    data, label = Tensor(x), Tensor(y)
    return [float(step(data, label).asnumpy()) for _ in range(steps)]


def test_training_loop_with_keyword_call(mode: str) -> None:
    """The loss goes down and equals, step by step, MindSpore's positional loop on ``RefNet``."""
    x, y = tn.make_data(32)
    w = tn.initial_weights()
    steps = 6
    kw = train_with_keywords(tn.KwNet(w), x, y, steps)
    ref = tn.train_functional(tn.RefNet(w), x, y, steps, value_and_grad=ms.value_and_grad)
    np.testing.assert_allclose(kw, ref, rtol=1e-5)
    assert kw[-1] < kw[0], kw


# --- functions whose calls cannot be bound (*args/**kwargs) ---------------------------------


def varargs_product(x: Tensor, *rest: Tensor, **options: float) -> Tensor:
    """``scale * x * x * y`` with ``y`` passed in ``*rest`` and ``scale`` in ``**options``."""
    scale = options.get("scale", 2.0)
    return scale * x * x * rest[0]


VARARGS_GRAD = kwcell.grad(varargs_product, grad_position=(0, 1))


def _varargs_positional(a: Tensor, b: Tensor) -> Any:
    return VARARGS_GRAD(a, b)


def _varargs_keyword(a: Tensor, b: Tensor) -> Any:
    return VARARGS_GRAD(a, b, scale=3.0)


VARARGS_CALLS = {"positional": _varargs_positional, "keyword": _varargs_keyword}
VARARGS_JITTED = {style: ms.jit(fn) for style, fn in VARARGS_CALLS.items()}
VARARGS_OUTERS = {style: Outer(fn) for style, fn in VARARGS_CALLS.items()}
UNBINDABLE = r"varargs_product takes \*args/\*\*kwargs, so keyword arguments cannot be bound for a GRAPH_MODE"


def _run_varargs(place: str, style: str) -> Any:
    a, b = Tensor(A), Tensor(B)
    if place in ("pynative", "graph"):
        return VARARGS_CALLS[style](a, b)
    if place.endswith("jit"):
        return VARARGS_JITTED[style](a, b)
    return VARARGS_OUTERS[style](a, b)


def test_varargs_function_positional_call(place: str) -> None:
    dx, dy = _run_varargs(place, "positional")
    np.testing.assert_allclose(dx.asnumpy(), 4.0 * A * B, rtol=1e-6)
    np.testing.assert_allclose(dy.asnumpy(), 2.0 * A * A, rtol=1e-6)


def test_varargs_function_keyword_call(place: str) -> None:
    """PYNATIVE passes keywords on, as ``ms.grad`` does; graphs take positions only: a clear error."""
    if place == "pynative":
        dx, dy = _run_varargs(place, "keyword")
        np.testing.assert_allclose(dx.asnumpy(), 6.0 * A * B, rtol=1e-6)
        np.testing.assert_allclose(dy.asnumpy(), 3.0 * A * A, rtol=1e-6)
        return
    with pytest.raises(TypeError, match=UNBINDABLE):
        _run_varargs(place, "keyword")


# --- what the gradient function is -----------------------------------------------------------


def test_gradient_function_has_the_wrapped_signature() -> None:
    """Help, IDEs and ``inspect`` show the parameters the call binds to."""
    assert str(inspect.signature(GRADS["KwCell"])) == "(x, y, scale=2.0)"
    keyword_only = inspect.signature(GRADS["keyword-only"]).parameters
    assert list(keyword_only) == ["x", "y", "scale"]
    assert keyword_only["scale"].kind is inspect.Parameter.KEYWORD_ONLY
    assert keyword_only["scale"].default is TWO  # the user's object, not a copy
    assert GRADS["KwCell"].__qualname__ == "KwProduct.construct"
    assert GRADS["function"].__qualname__ == "product"


def _hostile(x: Tensor, y: Tensor) -> Tensor:
    return x * x * y


# A name is only text: it names the gradient function and must never run.
_hostile.__qualname__ = '"""\nraise SystemExit("injected")\n"""/../x'


def test_label_never_reaches_generated_source_as_code() -> None:
    g = kwcell.grad(_hostile, grad_position=(0, 1))
    dx, dy = g(y=Tensor(B), x=Tensor(A))
    np.testing.assert_allclose(dx.asnumpy(), 2.0 * A * B, rtol=1e-6)
    np.testing.assert_allclose(dy.asnumpy(), A * A, rtol=1e-6)
    assert g.__qualname__ == _hostile.__qualname__


class TrainStep(nn.Cell):
    """A training-step cell as MindSpore projects write it: the gradient of its own method."""

    def __init__(self, network: nn.Cell, optimizer: nn.Optimizer) -> None:
        super().__init__()
        self.network, self.loss_fn, self.optimizer = network, nn.MSELoss(), optimizer
        self.grad_fn = kwcell.value_and_grad(self.forward, None, optimizer.parameters)

    def forward(self, data: Tensor, label: Tensor) -> Tensor:
        loss: Tensor = self.loss_fn(self.network(data), label)
        return loss

    def construct(self, data: Tensor, label: Tensor) -> Tensor:
        loss, grads = self.grad_fn(label=label, data=data)
        self.optimizer(grads)
        return loss


def test_train_step_cell_with_keyword_call(mode: str) -> None:
    """``self.grad_fn(label=label, data=data)`` in a cell's construct trains like ``RefNet``."""
    x, y = tn.make_data(32)
    w = tn.initial_weights()
    net = tn.KwNet(w)
    step = TrainStep(net, nn.SGD(net.trainable_params(), learning_rate=tn.LR))
    kw = [float(step(Tensor(x), Tensor(y)).asnumpy()) for _ in range(4)]
    ref = tn.train_one_step_cell(tn.RefNet(w), x, y, 4)
    np.testing.assert_allclose(kw, ref, rtol=1e-5)
    assert kw[-1] < kw[0], kw


# --- a callable MindSpore cannot compile: never a silent zero -------------------------------

PARTIAL_GRAD = kwcell.grad(functools.partial(Product().construct, scale=3.0), grad_position=("x", "y"))
NOT_COMPILABLE = r"functools.partial\(.*\) is not a function, method or Cell: MindSpore cannot compile"


def _partial_call(a: Tensor, b: Tensor) -> Any:
    return PARTIAL_GRAD(a, y=b)


PARTIAL_JITTED = ms.jit(_partial_call)
PARTIAL_OUTER = Outer(_partial_call)


def test_partial_is_right_in_pynative_and_an_error_in_graphs(place: str) -> None:
    """A ``functools.partial`` whose keyword is bound by the partial (``scale`` becomes
    keyword-only): Python runs it, MindSpore's graphs would treat it as a constant."""
    a, b = Tensor(A), Tensor(B)
    if place == "pynative":
        dx, dy = _partial_call(a, b)
        np.testing.assert_allclose(dx.asnumpy(), 6.0 * A * B, rtol=1e-6)
        np.testing.assert_allclose(dy.asnumpy(), 3.0 * A * A, rtol=1e-6)
        return
    runs: dict[str, Callable[[Tensor, Tensor], Any]] = {"graph": _partial_call, "graph_cell": PARTIAL_OUTER}
    run = runs.get(place, PARTIAL_JITTED)
    with pytest.raises(TypeError, match=NOT_COMPILABLE):
        run(a, b)
