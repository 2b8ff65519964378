"""``kwcell.gradcheck``: a custom ``bprop`` against central finite differences of ``construct``.

The cell is called exactly as the user calls it (same positional and keyword arguments), once
under autodiff, where MindSpore runs the custom bprop, and ``2 * n`` times without autodiff
for the ``n`` elements of the floating-point Tensor inputs and of the weights checked (the
Parameters ``internal_params`` lists, and on request every trainable Parameter). Both sides
differentiate the scalar ``sum(out * v)`` for a fixed random cotangent ``v``, so every output
element counts.

The dtype is decided once, before any gradient is taken: float64, with the floating inputs
cast and the cell's floating Parameters cast in place (and restored afterwards, whatever
happens), unless a plain float64 forward call fails; then the inputs' and Parameters' own
dtypes. A failure inside autodiff never switches the dtype: that is an error to report.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn

from ._codegen import compile_unit
from ._errors import GradcheckError, KwCellDefinitionError
from ._functional import CustomBprop, function_info
from ._grad import grad as _kwgrad
from ._meta import info_of
from ._spec import KEYWORD_ONLY, Signature, signature_of

__all__ = ["gradcheck"]

_SEED = 0
_FLOATING = (ms.float16, ms.bfloat16, ms.float32, ms.float64)

_WRAPPER = '''\
def weighted({params}):
    """kwcell gradcheck for {label}: sum(out * v), the cell called as the user called it."""
    out = _kwcell_cell({call})
    return {total}
'''


@dataclass(frozen=True)
class _Input:
    """One floating-point Tensor argument of the call: its name and where it was passed."""

    name: str
    key: int | str  # position in args, or keyword


@dataclass(frozen=True)
class _Weight:
    """A Parameter whose gradient is checked: its name (``self.weight``) and whether the
    instance lists it in ``internal_params`` (the only weights a custom bprop can give
    gradients to)."""

    name: str
    param: Parameter
    listed: bool


@dataclass(frozen=True)
class _Row:
    name: str
    shape: tuple[int, ...]
    abs_err: float
    rel_err: float
    index: tuple[int, ...] | None
    bprop: float
    numeric: float
    ok: bool
    note: str = ""


class _Owner:
    """Keeps the generated wrapper's source file alive for the duration of one check."""


def _is_float_tensor(value: Any) -> bool:
    return isinstance(value, Tensor) and value.dtype in _FLOATING


@dataclass(frozen=True)
class _Target:
    """What is checked: a cell, or a ``kwcell.custom_bprop`` function (called as the user calls it)."""

    call: Callable[..., Any]
    qualname: str
    label: str  # module.qualname
    sig: Signature
    forward: str  # what bprop is compared with: "construct", or the function's name


def _target(obj: Any) -> _Target:
    found = function_info(obj)
    if found is not None:
        if found.cls is None:
            raise KwCellDefinitionError(f"gradcheck: {found.unregistered}")
        spec = found.spec
        return _Target(obj, spec.qualname, f"{spec.module}.{spec.qualname}", spec.construct, spec.qualname)
    if not isinstance(obj, nn.Cell):
        msg = (
            f"gradcheck: expected an nn.Cell or a kwcell.custom_bprop function, got {type(obj).__qualname__}"
        )
        raise TypeError(msg)
    cls = type(obj)
    info = info_of(cls)
    sig = info.spec.construct if info is not None else signature_of(cls.construct)
    return _Target(obj, cls.__qualname__, f"{cls.__module__}.{cls.__qualname__}", sig, "construct")


def _name_of(sig: Signature, position: int) -> str:
    positional = [p.name for p in sig.params if p.kind is not KEYWORD_ONLY]
    if position < len(positional):
        return positional[position]
    star = sig.var_positional or "args"
    return f"{star}[{position - len(positional)}]"


def _inputs(target: _Target, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[_Input]:
    sig = target.sig
    found = [_Input(_name_of(sig, i), i) for i, a in enumerate(args) if _is_float_tensor(a)]
    found += [_Input(k, k) for k, v in kwargs.items() if _is_float_tensor(v)]
    order = {name: i for i, name in enumerate(sig.names)}
    return sorted(found, key=lambda inp: order.get(inp.name, len(order)))  # construct's order


def _outputs(out: Any, path: str = "out") -> Iterator[tuple[str, Tensor]]:
    """The floating-point Tensors in ``out`` (nested tuples/lists), with source paths to them."""
    if isinstance(out, (tuple, list)):
        for i, item in enumerate(out):
            yield from _outputs(item, f"{path}[{i}]")
    elif _is_float_tensor(out):
        yield path, out


def _wrapper(
    target: _Target, args: tuple[Any, ...], kwargs: dict[str, Any], inputs: list[_Input], paths: list[str]
) -> tuple[Callable[..., Any], _Owner]:
    """A function ``weighted(t0, .., v0, ..)`` computing ``sum(out * v)`` with the user's call."""
    where = {inp.key: f"t{k}" for k, inp in enumerate(inputs)}
    closure: dict[str, Any] = {"_kwcell_cell": target.call}
    call: list[str] = []
    for i, a in enumerate(args):
        if i not in where:
            closure[f"_kwcell_a{i}"] = a
        call.append(where.get(i, f"_kwcell_a{i}"))
    for j, (k, v) in enumerate(kwargs.items()):
        if not k.isidentifier():
            msg = f"gradcheck: keyword argument {k!r} is not a Python identifier"
            raise TypeError(msg)
        if k not in where:
            closure[f"_kwcell_k{j}"] = v
        call.append(f"{k}={where.get(k, f'_kwcell_k{j}')}")
    params = [*where.values(), *(f"v{m}" for m in range(len(paths)))]
    total = " + ".join(f"({p} * v{m}).sum()" for m, p in enumerate(paths))
    label = target.label
    owner = _Owner()
    fn = compile_unit(
        kind="gradcheck",
        label=label,
        header=f"Generated by kwcell for {label} (gradcheck). Do not edit.",
        body=_WRAPPER.format(params=", ".join(params), call=", ".join(call), total=total, label=label),
        closure=closure,
        globals_={"__name__": __name__, "__builtins__": __builtins__},
        owner=owner,
    )["weighted"]
    return fn, owner


def _weighted_sum(out: Any, cotangents: list[np.ndarray[Any, Any]]) -> float:
    values = [t.asnumpy().astype(np.float64) for _, t in _outputs(out)]
    return float(sum(float((a * v).sum()) for a, v in zip(values, cotangents, strict=True)))


def _compare(
    name: str,
    analytic: np.ndarray[Any, Any],
    numeric: np.ndarray[Any, Any],
    atol: float,
    rtol: float,
    note: str = "",
) -> _Row:
    shape = tuple(numeric.shape)
    if analytic.shape != numeric.shape:
        note = f"bprop gave shape {tuple(analytic.shape)}"
        return _Row(name, shape, math.inf, math.inf, None, math.nan, math.nan, False, note)
    diff = np.abs(analytic - numeric)
    scale = np.abs(numeric)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(diff == 0, 0.0, diff / scale)
        badness = diff / (atol + rtol * scale)
    if diff.size == 0:
        return _Row(name, shape, 0.0, 0.0, None, 0.0, 0.0, True)
    worst = np.unravel_index(int(np.nanargmax(np.nan_to_num(badness, nan=np.inf))), shape)
    ok = bool(np.all(diff <= atol + rtol * scale))  # False for NaN
    return _Row(
        name,
        shape,
        float(np.nanmax(diff)) if not np.all(np.isnan(diff)) else math.nan,
        float(np.nanmax(rel)) if not np.all(np.isnan(rel)) else math.nan,
        tuple(int(i) for i in worst),
        float(analytic[worst]),
        float(numeric[worst]),
        ok,
        "" if ok else note,
    )


def _attribute_names(cell: nn.Cell) -> dict[int, str]:
    """``self.<path>`` of every Parameter of ``cell`` and its sub-cells, by ``id`` (the first
    path that reaches it)."""
    names: dict[int, str] = {}
    for prefix, sub in cell.cells_and_names():
        params: dict[str, Any] = getattr(sub, "_params", {})  # nn.Cell's own Parameters by name
        for name, p in params.items():
            names.setdefault(id(p), "self." + (f"{prefix}.{name}" if prefix else name))
    return names


def _weights(target: _Target, trainable_params: bool) -> list[_Weight]:
    """The floating Parameters whose gradients are checked: those the instance lists in
    ``internal_params``, then (with ``trainable_params``) the cell's other trainable ones."""
    cell = target.call
    if not isinstance(cell, nn.Cell):
        if trainable_params:
            msg = f"gradcheck: trainable_params=True needs a cell; {target.qualname} is a function"
            raise TypeError(msg)
        return []
    names = _attribute_names(cell)
    found: list[_Weight] = []
    listed = getattr(cell, "internal_params", None) or ()
    for i, p in enumerate(listed):
        if not isinstance(p, Parameter):
            msg = (
                f"gradcheck: {target.qualname}.internal_params[{i}] is a {type(p).__name__}; "
                "internal_params lists the Parameters its bprop gives gradients to"
            )
            raise TypeError(msg)
        if _is_float_tensor(p) and not any(w.param is p for w in found):
            found.append(_Weight(names.get(id(p), f"internal_params[{i}]"), p, listed=True))
    if trainable_params:
        below = _listed_below(cell)
        for p in cell.trainable_params():
            if _is_float_tensor(p) and not any(w.param is p for w in found):
                found.append(_Weight(names.get(id(p), p.name), p, listed=id(p) in below))
    return found


def _listed_below(cell: nn.Cell) -> set[int]:
    """``id`` of every Parameter some cell of ``cell``'s tree lists in ``internal_params``."""
    return {
        id(p)
        for _, sub in cell.cells_and_names()
        for p in (getattr(sub, "internal_params", None) or ())
        if isinstance(p, Parameter)
    }


class _Float64Parameters:
    """The cell's floating Parameters cast to float64 in place (the same objects, so that
    ``internal_params`` and the cell's attributes still hold them), and put back as they were.

    A float32 weight in a float64 computation is MindSpore's ``MatMul`` dtype error; casting
    every floating Parameter of the cell (trainable or not, of every sub-cell) keeps the
    whole forward and backward in one dtype.
    """

    def __init__(self, cell: Any, weights: list[_Weight]) -> None:
        params: list[Parameter] = []
        if isinstance(cell, nn.Cell):
            params = [p for p in cell.get_parameters() if _is_float_tensor(p)]
        for w in weights:
            if not any(w.param is p for p in params):
                params.append(w.param)  # listed in internal_params, held by another cell
        self._saved = [(p, p.copy()) for p in params if p.dtype != ms.float64]

    def __enter__(self) -> None:
        for p, _ in self._saved:
            Tensor.assign_value(p, p.astype(ms.float64))

    def __exit__(self, *exc: object) -> None:
        for p, saved in self._saved:
            Tensor.assign_value(p, saved)


def _numeric(
    base: np.ndarray[Any, Any], evaluate: Callable[[np.ndarray[Any, Any]], float], eps: float
) -> Any:
    """Central differences of ``evaluate`` at ``base``, element by element."""
    np_dtype = base.dtype.type
    numeric = np.zeros(base.shape, np.float64)
    for index in np.ndindex(*base.shape):
        plus, minus = base.copy(), base.copy()
        plus[index] = base[index] + np_dtype(eps)
        minus[index] = base[index] - np_dtype(eps)
        step = float(plus[index]) - float(minus[index])  # the step the dtype could represent
        numeric[index] = (evaluate(plus) - evaluate(minus)) / step
    return numeric


def _analytic(g: Any, shape: tuple[int, ...]) -> tuple[np.ndarray[Any, Any], str]:
    if g is None:
        # No gradient at all: what a compiled graph gives for an input whose bprop entry
        # is None and that construct does not use (PYNATIVE gives zeros).
        return np.zeros(shape, np.float64), "bprop gave None: read as zeros"
    if isinstance(g, Tensor):
        return g.asnumpy().astype(np.float64), ""
    return np.asarray(g, np.float64), ""


def _autodiff(
    fn: Callable[..., Any], inputs: list[Tensor], cotangents: list[Tensor], weights: list[_Weight]
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The gradients of ``fn`` for ``inputs`` and for ``weights``, through the custom bprop."""
    params = [w.param for w in weights]
    positions = tuple(range(len(inputs))) or None
    grads = _kwgrad(fn, grad_position=positions, weights=params or None)(*inputs, *cotangents)
    if params:
        input_grads, weight_grads = grads if inputs else ((), grads)
    else:
        input_grads, weight_grads = grads, ()
    if len(inputs) == 1 and not isinstance(input_grads, (tuple, list)):
        input_grads = (input_grads,)  # one position: the gradient itself (a Tensor, or None)
    return tuple(input_grads), tuple(weight_grads)


def _check(
    target: _Target,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    inputs: list[_Input],
    weights: list[_Weight],
    out: Any,
    eps: float,
    atol: float,
    rtol: float,
) -> list[_Row]:
    """Compare, for every input and weight, the bprop's gradient with finite differences
    (``args``/``kwargs`` and the Parameters already in the dtype of the check; ``out`` the
    forward's output with them)."""

    def value(inp: _Input) -> Tensor:
        v = args[inp.key] if isinstance(inp.key, int) else kwargs[inp.key]
        assert isinstance(v, Tensor)
        return v

    cell = target.call
    outputs = list(_outputs(out))
    if not outputs:
        msg = f"gradcheck: {target.qualname} returned no floating-point Tensor to differentiate"
        raise ValueError(msg)
    rng = np.random.default_rng(_SEED)
    cotangents = [rng.standard_normal(t.shape) for _, t in outputs]
    v_tensors = [Tensor(c, dtype=t.dtype) for c, (_, t) in zip(cotangents, outputs, strict=True)]
    fn, owner = _wrapper(target, args, kwargs, inputs, [p for p, _ in outputs])
    input_grads, weight_grads = _autodiff(fn, [value(i) for i in inputs], v_tensors, weights)
    del owner

    rows: list[_Row] = []
    for inp, g in zip(inputs, input_grads, strict=True):
        x = value(inp)

        def shifted_input(shifted: np.ndarray[Any, Any], inp: _Input = inp, x: Tensor = x) -> float:
            t = Tensor(shifted, x.dtype)
            call_args = tuple(t if inp.key == i else a for i, a in enumerate(args))
            call_kwargs = {k: (t if inp.key == k else v) for k, v in kwargs.items()}
            return _weighted_sum(cell(*call_args, **call_kwargs), cotangents)

        base = x.asnumpy()
        numeric = _numeric(base, shifted_input, eps)
        analytic, note = _analytic(g, base.shape)
        rows.append(_compare(inp.name, analytic, numeric, atol, rtol, note))
    for w, g in zip(weights, weight_grads, strict=True):
        param = w.param
        base = param.asnumpy()

        def shifted_weight(shifted: np.ndarray[Any, Any], param: Parameter = param) -> float:
            param.set_data(Tensor(shifted, param.dtype))
            return _weighted_sum(cell(*args, **kwargs), cotangents)

        try:
            numeric = _numeric(base, shifted_weight, eps)
        finally:
            param.set_data(Tensor(base, param.dtype))
        analytic, note = _analytic(g, base.shape)
        if not w.listed:
            note = "in no internal_params: a custom bprop gives it no gradient"
        rows.append(_compare(w.name, analytic, numeric, atol, rtol, note))
    return rows


def _format(value: float) -> str:
    return f"{value:.3g}"


def _table(target: _Target, rows: list[_Row], dtype_note: str, eps: float, atol: float, rtol: float) -> str:
    failed = [r.name for r in rows if not r.ok]
    head = (
        f"gradcheck: {target.qualname}'s bprop disagrees with finite differences of {target.forward} "
        f"for {', '.join(repr(n) for n in failed)} ({dtype_note}; eps={eps:g}, atol={atol:g}, rtol={rtol:g})"
    )
    table = [("input", "shape", "max abs err", "max rel err", "at index", "bprop", "finite diff", "result")]
    for r in rows:
        table.append(
            (
                r.name,
                str(r.shape),
                _format(r.abs_err),
                _format(r.rel_err),
                str(r.index) if r.index is not None else "-",
                _format(r.bprop),
                _format(r.numeric),
                ("ok" if r.ok else "FAIL") + (f" ({r.note})" if r.note else ""),
            )
        )
    widths = [max(len(line[c]) for line in table) for c in range(len(table[0]))]
    lines = [
        "  ".join(cell_.ljust(w) for cell_, w in zip(line, widths, strict=True)).rstrip() for line in table
    ]
    return "\n".join([head, *("  " + line for line in lines)])


def gradcheck(
    cell: nn.Cell | CustomBprop[..., Any],
    *args: Any,
    eps: float = 1e-3,
    atol: float = 1e-3,
    rtol: float = 1e-2,
    trainable_params: bool = False,
    float64: bool | None = None,
    **kwargs: Any,
) -> bool:
    """Check `cell`'s custom bprop against central finite differences of its `construct`.

    `cell` is called as `cell(*args, **kwargs)`, exactly as written, so a call that passes
    inputs by keyword is checked as such. For every floating-point Tensor among `args` and
    `kwargs`, and every floating Parameter the cell lists in `internal_params` (the weights
    its bprop gives gradients to), the gradient of `sum(cell(...) * v)` (`v` a fixed-seed
    random cotangent with the output's shape, so that every output element matters) is taken
    twice:

    * through autodiff ([`kwcell.grad`][kwcell._grad.grad], with the Parameters as
      `weights`), which runs the custom bprop, and
    * by central differences, `(f(x + eps) - f(x - eps)) / 2 eps` element by element, with
      plain forward calls (no autodiff); a Parameter is shifted in place and put back.

    An element passes when `|bprop - finite_diff| <= atol + rtol * |finite_diff|`. Weights
    are reported by attribute, `self.weight` or `self.lora_a.weight`, beside the inputs.

    The dtype is chosen once, before any gradient is taken. By default (`float64=None`) the
    check runs in float64: floating inputs are cast, and so is every floating Parameter of the
    cell and its sub-cells (in place, restored afterwards, even when the check raises), so a
    float32 layer never mixes dtypes with float64 inputs. If a plain float64 forward call
    raises (a construct that refuses float64, an op without a float64 kernel, a float32
    Tensor constant), the check runs in the inputs' and Parameters' own dtypes instead, and
    the message says so. A failure in the backward is never retried in another dtype: it is
    raised. `float64=True` insists on float64, `float64=False` uses the own dtypes.

    Tolerances: in float64 the defaults leave room for the central difference's truncation
    error (about `eps**2 / 6` times the third derivative) and nothing else matters; in float32
    each difference also carries about `1e-7 * |f| / eps` of rounding error (`f` the weighted
    sum), which the defaults absorb for outputs of a few hundred elements of order one. For
    float16/bfloat16, or large outputs in float32, raise `eps` and `atol` (e.g. `eps=1e-2`,
    `atol=1e-2`), or check in float64.

    It runs in the current mode, PYNATIVE or GRAPH_MODE (call it once per mode to check
    both), for a `KwCell` or any `nn.Cell`. Tensors nested in tuples are not checked.

    Cost: one forward, one forward and backward, and **2 forward evaluations per element** of
    every floating Tensor input and checked weight: use small inputs and layers.

    Args:
        cell: The cell to check, or a `kwcell.custom_bprop` function (its backward is
            checked against finite differences of the function).
        *args: Positional arguments of the call, as you would pass them.
        eps: The finite-difference step.
        atol: Absolute tolerance.
        rtol: Relative tolerance, against the finite difference.
        trainable_params: Also check every trainable Parameter of the cell and its
            sub-cells (`cell.trainable_params()`), not only those `internal_params` lists:
            a trainable weight construct uses but no custom bprop gives a gradient to
            (MindSpore then uses zeros) fails, marked "in no internal_params".
        float64: `None` (the default): float64 unless a float64 forward call fails;
            `True`: float64, or raise; `False`: the inputs' and Parameters' own dtypes.
        **kwargs: Keyword arguments of the call, as you would pass them.

    Returns:
        `True` when every element of every checked input and weight passes.

    Raises:
        GradcheckError: Some gradient disagrees (an `AssertionError`); the message is a
            table with one line per input and weight: name, shape, largest absolute and
            relative error, the index of the worst element, and the two values there.
        TypeError: `cell` is neither an `nn.Cell` nor a `kwcell.custom_bprop` function, an
            entry of `internal_params` is not a Parameter, or `trainable_params=True` for a
            function.
        KwCellDefinitionError: `cell` is a `kwcell.custom_bprop` function with no backward
            registered yet.
        ValueError: There is nothing to check: no argument is a floating-point Tensor and
            no floating weight is checked.

    Example:
        ```python
        import numpy as np
        from mindspore import Parameter, Tensor, ops

        import kwcell
        from kwcell import KwCell


        class Scaled(KwCell):
            def __init__(self):
                super().__init__()
                self.weight = Parameter(Tensor(np.array([1.5, -2.0], np.float32)), name="weight")
                self.internal_params = [self.weight]

            def construct(self, x, shift=0.0):
                return self.weight * ops.sin(x) + shift

            def bprop(self, x, shift=0.0, *, out, dout):
                return {"x": self.weight * ops.cos(x) * dout, self.weight: ops.sin(x) * dout}


        x = Tensor(np.array([0.5, 1.0], np.float32))
        assert kwcell.gradcheck(Scaled(), x, shift=2.0)  # x and self.weight, in float64
        ```
    """
    target = _target(cell)
    inputs = _inputs(target, args, kwargs)
    weights = _weights(target, trainable_params)
    if not inputs and not weights:
        msg = (
            f"gradcheck: no floating-point Tensor among the arguments of {target.qualname}, and no "
            "floating Parameter in its internal_params"
            + (
                ""
                if trainable_params or not isinstance(target.call, nn.Cell)
                else " (trainable_params=False)"
            )
        )
        raise ValueError(msg)
    floating = [a for a in (*args, *kwargs.values()) if _is_float_tensor(a)] + [w.param for w in weights]
    own = "/".join(sorted({str(t.dtype) for t in floating}))
    if float64 is False:
        rows = _check(target, args, kwargs, inputs, weights, target.call(*args, **kwargs), eps, atol, rtol)
        return _result(target, rows, f"computed in {own} (float64=False)", eps, atol, rtol)

    def cast(v: Any) -> Any:
        return v.astype(ms.float64) if _is_float_tensor(v) else v

    args64 = tuple(cast(a) for a in args)
    kwargs64 = {k: cast(v) for k, v in kwargs.items()}
    failed: Exception | None = None
    with _Float64Parameters(target.call, weights):
        try:
            out = target.call(*args64, **kwargs64)
        except Exception as exc:  # decided here, before any gradient: the own dtypes
            if float64:
                raise
            failed = exc
        else:
            rows = _check(target, args64, kwargs64, inputs, weights, out, eps, atol, rtol)
            return _result(target, rows, "computed in float64", eps, atol, rtol)
    first = str(failed).splitlines()[0] if str(failed) else ""
    note = f"computed in {own}: float64 failed with {type(failed).__name__}: {first}"
    rows = _check(target, args, kwargs, inputs, weights, target.call(*args, **kwargs), eps, atol, rtol)
    return _result(target, rows, note, eps, atol, rtol)


def _result(target: _Target, rows: list[_Row], dtype_note: str, eps: float, atol: float, rtol: float) -> bool:
    if all(r.ok for r in rows):
        return True
    raise GradcheckError(_table(target, rows, dtype_note, eps, atol, rtol))
