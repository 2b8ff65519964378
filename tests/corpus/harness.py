"""How a corpus cell is described and run.

A corpus cell is a custom-bprop cell re-implemented, in this project's own code, from a public
MindSpore project: the same math, the same signatures and the same quirks (positional names that
differ from construct's, ``None`` for non-Tensor inputs, ``zeros_like`` on Python scalars, tuple
outputs with integer entries, a bprop that calls ``self.construct``...). Each is a :class:`Case`:

- ``body(base)`` builds the class on ``base`` from one class body, so that ``nn.Cell`` and
  ``KwCell`` run the very same code;
- ``natural()`` (optional) is the cell as a kwcell user would write it (a bprop by name, a dict
  return, keyword-only ``out``/``dout``);
- ``positional(cell, *tensors)`` calls it the way its project does, ``keyword(cell, *tensors)``
  the way a keyword caller would (the call kwcell exists for);
- ``expected(inputs, dout)`` is the gradient the bprop defines, in numpy, for the Tensor inputs
  (and ``expected_weights`` for the weights a bprop returns gradients for).

:func:`run` runs one case in one mode with one variant and returns the gradients;
``tests/corpus/test_corpus.py`` compares them with ``expected``. The modes:

- ``pynative``: ``ms.grad`` of a function that calls the cell, PYNATIVE;
- ``graph``: the same in GRAPH_MODE (the function is compiled);
- ``outer``: GRAPH_MODE, the cell called from an outer cell's ``construct``;
- ``jit``: PYNATIVE, the gradient taken inside an ``@ms.jit`` function (a training step);
- ``train``: three SGD steps (PYNATIVE and GRAPH_MODE) of a Parameter that scales the first
  input, through the cell's bprop, against the same steps computed with ``expected``; for a
  case with ``train_weights``, also three ``TrainOneStepCell`` SGD steps of the cell's own
  weights against the same steps computed with ``expected_weights``;
- ``twice``: GRAPH_MODE, one instance called twice in one graph (once by each call form).

The variants: ``nn`` (the body on ``nn.Cell``, called positionally: what the project runs
today), ``kw_positional`` and ``kw_keyword`` (the body on ``KwCell``, called both ways) and
``natural`` (the natural KwCell version, called by keyword).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, ParameterTuple, Tensor, nn

from kwcell import KwCell

Arrays = tuple[Any, ...]
MODES = ("pynative", "graph", "outer", "jit", "train", "twice")
VARIANTS = ("nn", "kw_positional", "kw_keyword", "natural")


def default_head(out: Any, s: Any) -> Any:
    """The scalar a test differentiates: ``sum(out * s)``, so bprop's ``dout`` is ``s``."""
    return (out * s).sum()


@dataclass(frozen=True)
class Case:
    """One corpus cell (see the module docstring)."""

    name: str
    source: str
    body: Callable[[type], type]
    inputs: Callable[[], Arrays]
    positional: Callable[..., Any]
    keyword: Callable[..., Any]
    expected: Callable[[Arrays, Any], Arrays]
    natural: Callable[[], type] | None = None
    # out -> scalar, with ``s`` the fixed dout (a Tensor, or a tuple of them for tuple outputs);
    # the default is sum(out * s)
    head: Callable[[Any, Any], Any] = default_head
    # dout for each float output, as numpy arrays; default: a fixed pattern of out's shape
    dout: Callable[[Any], Any] | None = None
    init: Callable[[], dict[str, Any]] = dict
    # the forward that shapes dout runs in GRAPH_MODE, not PYNATIVE: for a cell whose construct
    # MindSpore cannot run in PYNATIVE (a GradOperation inside a custom-bprop cell's construct)
    forward_graph: bool = False
    # weights the bprop gives gradients for: name -> expected(inputs, dout, cell) numpy array
    expected_weights: Callable[[Arrays, Any, Any], dict[str, Any]] | None = None
    # the train mode also trains the cell's own weights (those ``expected_weights`` names) for
    # three SGD steps, against numpy's steps: ``expected_weights`` then reads the weights'
    # current values from ``cell`` (its Parameters hold each step's values), not constants
    train_weights: bool = False
    # mode -> why: where the public cell is not right on nn.Cell (a MindSpore limit; the test
    # checks that nn.Cell still fails there), and where KwCell matches that limit (only where
    # nn.Cell fails too: kwcell may match MindSpore's bug, never add one)
    nn_fails: dict[str, str] = field(default_factory=dict)
    kw_fails: dict[str, str] = field(default_factory=dict)
    # mode -> description of a kwcell bug this cell finds, open until fixed: a strict xfail of
    # the KwCell variants (so the fix is noticed); a finished corpus has none
    kw_bugs: dict[str, str] = field(default_factory=dict)
    # the same for the KwCell variants called by keyword only (kw_keyword, natural)
    keyword_bugs: dict[str, str] = field(default_factory=dict)
    # modes this cell cannot take part in at all, with why (e.g. train: no float input)
    skip: dict[str, str] = field(default_factory=dict)
    rtol: float = 1e-4
    atol: float = 1e-5


def pattern(shape: Sequence[int], seed: int = 7) -> Any:
    """A fixed, non-uniform float32 array (a dout that catches swapped or unscaled gradients)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0.3, 1.7, size=tuple(shape)).astype(np.float32)


def cell_class(case: Case, variant: str) -> type:
    if variant == "nn":
        return case.body(nn.Cell)
    if variant == "natural":
        assert case.natural is not None
        return case.natural()
    return case.body(KwCell)


def caller(case: Case, variant: str) -> Callable[..., Any]:
    return case.keyword if variant in ("kw_keyword", "natural") else case.positional


def _is_float_tensor(value: Any) -> bool:
    return isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating)


def tensor_positions(inputs: Arrays) -> tuple[int, ...]:
    """The positions of the float Tensor inputs: those are differentiated."""
    return tuple(i for i, v in enumerate(inputs) if _is_float_tensor(v))


def as_ms(value: Any) -> Any:
    return Tensor(value) if isinstance(value, np.ndarray) else value


def douts(case: Case, inputs: Arrays) -> Any:
    """dout: numpy, for each float output (from one PYNATIVE forward of the nn.Cell body, or
    GRAPH_MODE with ``forward_graph``)."""
    saved = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE if case.forward_graph else ms.PYNATIVE_MODE)
    try:
        out = case.positional(case.body(nn.Cell)(**case.init()), *[as_ms(v) for v in inputs])
    finally:
        ms.set_context(mode=saved)
    if case.dout is not None:
        return case.dout(out)
    if isinstance(out, tuple):
        return tuple(
            pattern(o.shape, seed=7 + i)
            if isinstance(o, Tensor) and o.dtype in (ms.float32, ms.float16)
            else None
            for i, o in enumerate(out)
        )
    return pattern(out.shape)


def _sens(d: Any) -> Any:
    if isinstance(d, tuple):
        return tuple(Tensor(v) if v is not None else None for v in d)
    return Tensor(d)


def _function(case: Case, variant: str, cell: Any, inputs: Arrays, s: Any) -> Callable[..., Any]:
    """f(*float tensors) -> scalar: the cell called with the other inputs fixed."""
    call = caller(case, variant)
    # as the graph function: a fixed numpy array (an int Tensor input) reaches the cell as a Tensor
    fixed = [as_ms(v) for v in inputs]
    positions = tensor_positions(inputs)
    head = case.head

    def f(*tensors: Any) -> Any:
        args = list(fixed)
        for p, t in zip(positions, tensors, strict=True):
            args[p] = t
        return head(call(cell, *args), s)

    # GRAPH_MODE compiles f: the non-Tensor inputs become constants of its closure
    return f


def _graph_function(case: Case, variant: str, cell: Any, inputs: Arrays, s: Any) -> Callable[..., Any]:
    """The same function, written out for the graph parser (fixed inputs as closure constants)."""
    call = caller(case, variant)
    head = case.head
    args = [as_ms(v) for v in inputs]
    positions = tensor_positions(inputs)
    n = len(positions)
    if n == 1:
        (p,) = positions

        def f1(a: Any) -> Any:
            return head(call(cell, *_put(args, p, a)), s)

        return f1
    if n == 2:
        p, q = positions

        def f2(a: Any, b: Any) -> Any:
            return head(call(cell, *_put(_put(args, p, a), q, b)), s)

        return f2
    if n == 3:
        p, q, r = positions

        def f3(a: Any, b: Any, c: Any) -> Any:
            return head(call(cell, *_put(_put(_put(args, p, a), q, b), r, c)), s)

        return f3
    raise AssertionError(f"{case.name}: 1 to 3 float Tensor inputs supported by the harness, got {n}")


def _put(args: Any, i: int, v: Any) -> Any:
    return tuple(v if j == i else a for j, a in enumerate(args))


class _Outer(nn.Cell):
    """An outer cell whose construct calls the corpus cell (GRAPH_MODE compiles both)."""

    def __init__(self, fn: Callable[..., Any], cell: Any) -> None:
        # auto_prefix=False: the corpus cell's Parameters keep their names (``expected_weights``
        # names them), not MindSpore's "inner.<attribute>"
        super().__init__(auto_prefix=False)
        self.inner = cell  # registers the corpus cell (and its Parameters) as a sub-cell
        self.fn = fn

    def construct(self, *tensors: Any) -> Any:
        return self.fn(*tensors)


class _Twice(nn.Cell):
    """One instance called twice in one graph: once positionally, once by keyword."""

    def __init__(self, f_pos: Callable[..., Any], f_kw: Callable[..., Any], cell: Any) -> None:
        super().__init__(auto_prefix=False)  # Parameter names as in _Outer
        self.inner = cell
        self.f_pos = f_pos
        self.f_kw = f_kw

    def construct(self, *tensors: Any) -> Any:
        return self.f_pos(*tensors) + 2.0 * self.f_kw(*tensors)


def _weights(cell: Any) -> Any:
    """The cell's trainable Parameters, then those its ``internal_params`` lists that it does
    not hold (a weight from outside the cell, such as a shared embedding)."""
    found = list(cell.trainable_params())
    for p in getattr(cell, "internal_params", None) or ():
        if isinstance(p, Parameter) and p.requires_grad and not any(p is q for q in found):
            found.append(p)
    return ParameterTuple(found)


def _require_gradients(case: Case, result: Any) -> None:
    """MindSpore's GRAPH_MODE gives ``None`` for an input whose bprop entry is ``None``: an
    AssertionError that names it (not an AttributeError on ``.asnumpy()``), so that a case can
    record it in ``nn_fails``."""
    if result is None:
        raise AssertionError(f"{case.name}: a gradient is None, not a Tensor")
    if isinstance(result, tuple):
        for item in result:
            _require_gradients(case, item)


def run(case: Case, variant: str, mode: str) -> tuple[Arrays, dict[str, Any]]:
    """The gradients of the float Tensor inputs (and of the cell's weights, if the case has
    ``expected_weights``), as numpy arrays."""
    inputs = case.inputs()
    s = _sens(douts(case, inputs))
    positions = tensor_positions(inputs)
    tensors = [Tensor(inputs[p]) for p in positions]
    ms.set_context(mode=ms.PYNATIVE_MODE if mode in ("pynative", "jit") else ms.GRAPH_MODE)
    cell = cell_class(case, variant)(**case.init())
    weights = _weights(cell) if case.expected_weights is not None else None
    # the names the cell gives its weights: wrapping it in an outer cell (outer, twice) renames
    # them after the attribute path ("inner.w")
    names = [w.name for w in weights] if weights is not None else []
    grad_position = tuple(range(len(tensors)))
    if mode == "pynative":
        fn: Any = _function(case, variant, cell, inputs, s)
    elif mode == "twice":
        # once as the project calls it, once as this variant calls it
        fn = _Twice(
            _graph_function(case, "nn", cell, inputs, s),
            _graph_function(case, variant, cell, inputs, s),
            cell,
        )
    else:
        fn = _graph_function(case, variant, cell, inputs, s)
        if mode == "outer":
            fn = _Outer(fn, cell)
    g: Callable[..., Any] = ms.grad(fn, grad_position=grad_position, weights=weights)
    if mode == "jit":
        inner = g

        @ms.jit
        def step(*a: Any) -> Any:
            return inner(*a)

        g = step
    result = g(*tensors)
    _require_gradients(case, result)
    if weights is not None:
        dx, dw = result
        named = {name: v.asnumpy() for name, v in zip(names, dw, strict=True)}
    else:
        dx, named = result, {}
    if not isinstance(dx, tuple):
        dx = (dx,)
    return tuple(v.asnumpy() for v in dx), named


def _scaled_dout(d: Any, factor: float) -> Any:
    if isinstance(d, tuple):
        return tuple(None if v is None else factor * v for v in d)
    return factor * d


def expected_grads(case: Case, mode: str) -> tuple[Arrays, dict[str, Any]]:
    inputs = case.inputs()
    d = douts(case, inputs)
    # twice: bprop runs once with dout and once with 2 * dout (``_Twice``), and the gradients
    # add up; a bprop need not be linear in dout (many return gradients that ignore it)
    sens = (d, _scaled_dout(d, 2.0)) if mode == "twice" else (d,)
    positions = tensor_positions(inputs)
    fulls = [case.expected(inputs, v) for v in sens]
    dx = tuple(sum(np.asarray(full[p], np.float32) for full in fulls) for p in positions)
    named: dict[str, Any] = {}
    if case.expected_weights is not None:
        cell = case.body(nn.Cell)(**case.init())
        weights = [case.expected_weights(inputs, v, cell) for v in sens]
        named = {k: sum(np.asarray(w[k], np.float32) for w in weights) for k in weights[0]}
    return dx, named


class _Scaled(nn.Cell):
    """The training net: a Parameter ``p`` scales the first float input of the corpus cell."""

    def __init__(self, fn: Callable[..., Any], cell: Any, shape: Sequence[int]) -> None:
        super().__init__()
        self.inner = cell
        self.fn = fn
        self.p = Parameter(Tensor(np.full(tuple(shape), 0.9, np.float32)), name="p")

    def construct(self, *tensors: Any) -> Any:
        return self.fn(tensors[0] * self.p, *tensors[1:])


def _training(case: Case, variant: str, graph: bool) -> tuple[Arrays, Any, tuple[int, ...], list[Any], Any]:
    """What a training run starts from: the inputs, the sensitivities, the Tensor inputs'
    positions and values, and a new instance of the cell (the mode set)."""
    inputs = case.inputs()
    s = _sens(douts(case, inputs))
    positions = tensor_positions(inputs)
    tensors = [Tensor(inputs[p]) for p in positions]
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE)
    return inputs, s, positions, tensors, cell_class(case, variant)(**case.init())


def train(case: Case, variant: str, graph: bool, steps: int = 3, lr: float = 0.05) -> Any:
    """``p`` after ``steps`` SGD steps of ``sum(out * dout)`` through the cell's bprop."""
    inputs, s, positions, tensors, cell = _training(case, variant, graph)
    net = _Scaled(_graph_function(case, variant, cell, inputs, s), cell, inputs[positions[0]].shape)
    opt = nn.SGD([net.p], learning_rate=lr)
    step = nn.TrainOneStepCell(net, opt)
    for _ in range(steps):
        step(*tensors)
    return net.p.asnumpy()


def expected_train(case: Case, steps: int = 3, lr: float = 0.05) -> Any:
    """The same steps in numpy, from ``expected``: dp = expected_dx(x * p) * x."""
    inputs = case.inputs()
    d = douts(case, inputs)
    first = tensor_positions(inputs)[0]
    x = inputs[first]
    p = np.full(x.shape, 0.9, np.float32)
    for _ in range(steps):
        scaled = list(inputs)
        scaled[first] = x * p
        dx = np.asarray(case.expected(tuple(scaled), d)[first], np.float32)
        p = (
            p - lr * (dx * x).reshape(p.shape)
            if dx.shape == p.shape
            else p - lr * np.broadcast_to(dx * x, p.shape)
        )
    return p


def train_weights(case: Case, variant: str, graph: bool, steps: int = 3, lr: float = 0.05) -> dict[str, Any]:
    """The cell's weights after ``steps`` ``TrainOneStepCell`` SGD steps of ``head(out, dout)``
    (the float inputs fixed), by name: the weights' gradients come from the cell's bprop."""
    inputs, s, _, tensors, cell = _training(case, variant, graph)
    weights = list(_weights(cell))
    names = [w.name for w in weights]  # before the wrapper: as expected_weights names them
    net = _Outer(_graph_function(case, variant, cell, inputs, s), cell)
    step = nn.TrainOneStepCell(net, nn.SGD(weights, learning_rate=lr))
    for _ in range(steps):
        step(*tensors)
    return {name: w.asnumpy() for name, w in zip(names, weights, strict=True)}


def expected_train_weights(case: Case, steps: int = 3, lr: float = 0.05) -> dict[str, Any]:
    """The same steps in numpy: each weight ``expected_weights`` names moves by ``-lr`` times
    its gradient at the current weights (an nn.Cell instance of the body holds them)."""
    assert case.expected_weights is not None, f"{case.name}: train_weights needs expected_weights"
    inputs = case.inputs()
    d = douts(case, inputs)
    saved = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        cell = case.body(nn.Cell)(**case.init())
        weights = {w.name: w for w in _weights(cell)}
        for _ in range(steps):
            grads = case.expected_weights(inputs, d, cell)
            for name, g in grads.items():
                w = weights[name]
                new = w.asnumpy() - lr * np.asarray(g, np.float32).reshape(w.shape)
                w.set_data(Tensor(new.astype(np.float32)))
        return {name: weights[name].asnumpy() for name in grads}
    finally:
        ms.set_context(mode=saved)
