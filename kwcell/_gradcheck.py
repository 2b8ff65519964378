"""``kwcell.gradcheck``: a custom ``bprop`` against central finite differences of ``construct``.

The cell is called exactly as the user calls it (same positional and keyword arguments), once
under autodiff, where MindSpore runs the custom bprop, and ``2 * n`` times without autodiff
for the ``n`` elements of the floating-point Tensor inputs. Both sides differentiate the
scalar ``sum(out * v)`` for a fixed random cotangent ``v``, so every output element counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

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


def _check(
    target: _Target,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    inputs: list[_Input],
    eps: float,
    atol: float,
    rtol: float,
    float64: bool,
) -> list[_Row]:
    def cast(v: Any) -> Any:
        return v.astype(ms.float64) if float64 and _is_float_tensor(v) else v

    args = tuple(cast(a) for a in args)
    kwargs = {k: cast(v) for k, v in kwargs.items()}

    def value(inp: _Input) -> Tensor:
        v = args[inp.key] if isinstance(inp.key, int) else kwargs[inp.key]
        assert isinstance(v, Tensor)
        return v

    cell = target.call
    out = cell(*args, **kwargs)
    outputs = list(_outputs(out))
    if not outputs:
        msg = f"gradcheck: {target.qualname} returned no floating-point Tensor to differentiate"
        raise ValueError(msg)
    rng = np.random.default_rng(_SEED)
    cotangents = [rng.standard_normal(t.shape) for _, t in outputs]
    v_tensors = [Tensor(c, dtype=t.dtype) for c, (_, t) in zip(cotangents, outputs, strict=True)]
    fn, owner = _wrapper(target, args, kwargs, inputs, [p for p, _ in outputs])
    grads = _kwgrad(fn, grad_position=tuple(range(len(inputs))))(*[value(i) for i in inputs], *v_tensors)
    del owner
    if len(inputs) == 1 and not isinstance(grads, (tuple, list)):
        grads = (grads,)  # one position: the gradient itself (a Tensor, or None)

    rows: list[_Row] = []
    for inp, g in zip(inputs, grads, strict=True):
        x = value(inp)
        base = x.asnumpy()
        np_dtype = base.dtype.type
        numeric = np.zeros(base.shape, np.float64)
        for index in np.ndindex(*base.shape):
            plus, minus = base.copy(), base.copy()
            plus[index] = base[index] + np_dtype(eps)
            minus[index] = base[index] - np_dtype(eps)
            f = []
            for shifted in (plus, minus):
                t = Tensor(shifted, x.dtype)
                call_args = tuple(t if inp.key == i else a for i, a in enumerate(args))
                call_kwargs = {k: (t if inp.key == k else v) for k, v in kwargs.items()}
                f.append(_weighted_sum(cell(*call_args, **call_kwargs), cotangents))
            step = float(plus[index]) - float(minus[index])  # the step the dtype could represent
            numeric[index] = (f[0] - f[1]) / step
        note = ""
        if g is None:
            # No gradient at all: what a compiled graph gives for an input whose bprop entry
            # is None and that construct does not use (PYNATIVE gives zeros).
            analytic, note = np.zeros(base.shape, np.float64), "bprop gave None: read as zeros"
        elif isinstance(g, Tensor):
            analytic = g.asnumpy().astype(np.float64)
        else:
            analytic = np.asarray(g, np.float64)
        rows.append(_compare(inp.name, analytic, numeric, atol, rtol, note))
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
    **kwargs: Any,
) -> bool:
    """Check `cell`'s custom bprop against central finite differences of its `construct`.

    `cell` is called as `cell(*args, **kwargs)`, exactly as written, so a call that passes
    inputs by keyword is checked as such. For every floating-point Tensor among `args` and
    `kwargs` the gradient of `sum(cell(...) * v)` (`v` a fixed-seed random cotangent with
    the output's shape, so that every output element matters) is taken twice:

    * through autodiff ([`kwcell.grad`][kwcell._grad.grad]), which runs the custom bprop, and
    * by central differences, `(f(x + eps) - f(x - eps)) / 2 eps` element by element, with
      plain forward calls (no autodiff).

    An element passes when `|bprop - finite_diff| <= atol + rtol * |finite_diff|`. The check
    runs in float64 (floating inputs are cast) when the cell accepts it, otherwise in the
    inputs' own dtype; the error message says which. It runs in the current mode, PYNATIVE or
    GRAPH_MODE (call it once per mode to check both), for a `KwCell` or any `nn.Cell`.
    Tensors nested in tuples and the cell's Parameters are not checked.

    Cost: one forward, one forward and backward, and **2 forward evaluations per element** of
    every floating Tensor input: use small inputs.

    Args:
        cell: The cell to check, or a `kwcell.custom_bprop` function (its backward is
            checked against finite differences of the function).
        *args: Positional arguments of the call, as you would pass them.
        eps: The finite-difference step.
        atol: Absolute tolerance.
        rtol: Relative tolerance, against the finite difference.
        **kwargs: Keyword arguments of the call, as you would pass them.

    Returns:
        `True` when every element of every floating Tensor input passes.

    Raises:
        GradcheckError: Some input's gradient disagrees (an `AssertionError`); the message is
            a table with one line per input: name, shape, largest absolute and relative
            error, the index of the worst element, and the two values there.
        TypeError: `cell` is neither an `nn.Cell` nor a `kwcell.custom_bprop` function.
        KwCellDefinitionError: `cell` is a `kwcell.custom_bprop` function with no backward
            registered yet.
        ValueError: No argument is a floating-point Tensor.

    Example:
        ```python
        import numpy as np
        from mindspore import Tensor, ops

        import kwcell
        from kwcell import KwCell


        class Scaled(KwCell):
            def construct(self, x, w=1.0):
                return w * ops.sin(x)

            def bprop(self, x, w=1.0, *, out, dout):
                return {"x": w * ops.cos(x) * dout}


        assert kwcell.gradcheck(Scaled(), Tensor(np.array([0.5, 1.0], np.float32)), w=2.0)
        ```
    """
    target = _target(cell)
    inputs = _inputs(target, args, kwargs)
    if not inputs:
        msg = f"gradcheck: no floating-point Tensor among the arguments of {target.qualname}"
        raise ValueError(msg)
    originals = {str(a.dtype) for a in (*args, *kwargs.values()) if _is_float_tensor(a)}
    dtype_note = "computed in float64"
    try:
        rows = _check(target, args, kwargs, inputs, eps, atol, rtol, float64=True)
    except Exception as exc:  # any failure in float64: use the inputs' own dtype, and say so
        if originals <= {str(ms.float64)}:
            raise
        dtype_note = (
            f"computed in {'/'.join(sorted(originals))}: float64 failed with {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}"
        )
        rows = _check(target, args, kwargs, inputs, eps, atol, rtol, float64=False)
    if all(r.ok for r in rows):
        return True
    raise GradcheckError(_table(target, rows, dtype_note, eps, atol, rtol))
