"""``kwcell.grad`` and ``kwcell.value_and_grad``: MindSpore's, plus keywords and named positions.

When the gradient function is created, kwcell generates a function with the wrapped function's
exact signature (names, defaults, keyword-only parameters) that calls a single MindSpore
gradient object positionally. Python binds a top-level call; inside ``@ms.jit`` functions and
GRAPH_MODE cells, MindSpore's graph parser reads that function's source and binds keywords
itself, so ``grad_fn(data, label=label)`` works in every mode, where MindSpore's own wrapper
accepts ``*args`` only. ``grad_position`` counts parameters of the wrapped function, not
arguments of the call, and may name them.
"""

from __future__ import annotations

import inspect
import re
import types
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import mindspore as ms
from mindspore import nn

from ._binder import defaults_of, signature_source
from ._codegen import Unit, _release, compile_units
from ._meta import info_of
from ._spec import KEYWORD_ONLY, Signature, call_text, signature_of
from ._templates import HEADER

__all__ = ["grad", "value_and_grad"]

Position = int | str

# What MindSpore differentiates when the wrapped function has keyword-only parameters:
# MindSpore's gradient objects pass every argument positionally.
_ADAPTER = '''\
def positional({names}):
    """kwcell adapter: keyword-only parameters passed by keyword."""
    return _kwcell_fn({call})


def graph({names}):
    """kwcell adapter, as MindSpore's graph parser reads it when it cannot compile the callable."""
    raise TypeError(_kwcell_message)
'''

# What kwcell.grad returns: the wrapped function's signature, so that Python and MindSpore's
# graph parser bind the call (keywords, defaults) before MindSpore's gradient object sees it.
_GRADIENT = '''\
def {kind}({signature}):
    """kwcell {kind}: binds the call, then calls MindSpore's gradient positionally."""
{default_refs}    return _kwcell_gradient({args})
'''

# The same for a function that takes *args/**kwargs, whose calls cannot be bound: Python calls
# the first function, MindSpore's graph parser unwraps it to the second (``__wrapped__``), where
# MindSpore's gradient objects take arguments by position only.
_UNBOUND = '''\
def {kind}(*args, **kwargs):
    """kwcell {kind} of a function taking *args/**kwargs: the call is passed on as it is."""
    if kwargs and _kwcell_graph_mode():
        raise TypeError(_kwcell_message)
    return _kwcell_gradient(*args, **kwargs)


def graph(*args, **kwargs):
    """kwcell {kind}, as MindSpore's graph parser reads it: positional calls only."""
    if kwargs:
        raise TypeError(_kwcell_message)
    return _kwcell_gradient(*args)
'''


def _describe(fn: Any) -> str:
    if isinstance(fn, nn.Cell):
        return f"{type(fn).__qualname__}.construct"
    return getattr(fn, "__qualname__", repr(fn))


def _signature(fn: Any) -> Signature | None:
    """The parameters a call of ``fn`` binds to, or ``None`` if they cannot be fixed."""
    if isinstance(fn, nn.Cell):
        info = info_of(type(fn))
        sig = info.spec.construct if info is not None else signature_of(type(fn).construct)
    else:
        try:
            inspect.signature(fn)
        except (TypeError, ValueError):
            return None
        target = fn.__func__ if isinstance(fn, types.MethodType) else fn
        sig = signature_of(target, has_self=isinstance(fn, types.MethodType))
    if sig.var_positional is not None or sig.var_keyword is not None:
        return None
    return sig


def _positions(fn: Any, sig: Signature | None, grad_position: Any) -> Any:
    """Resolve names in ``grad_position`` to parameter indices."""
    if grad_position is None or isinstance(grad_position, int):
        return grad_position
    items: Sequence[Position] = (grad_position,) if isinstance(grad_position, str) else grad_position
    resolved: list[int] = []
    for item in items:
        if isinstance(item, str):
            if sig is None or item not in sig.names:
                known = ", ".join(sig.names) if sig else "unknown (the function takes *args/**kwargs)"
                msg = f"grad_position names {item!r}, which is not a parameter of {_describe(fn)} ({known})"
                raise ValueError(msg)
            resolved.append(sig.names.index(item))
        else:
            resolved.append(item)
    return resolved[0] if isinstance(grad_position, str) else tuple(resolved)


_GLOBALS = {"__name__": __name__, "__builtins__": __builtins__}


def _units(kind: str, fn: Any, sig: Signature, gradient: types.CellType) -> list[Unit]:
    """The gradient function's unit and, for keyword-only parameters, the adapter's."""
    method = isinstance(fn, (nn.Cell, types.MethodType))
    signature, default_refs, closure = signature_source(sig, with_self=method)
    body = _GRADIENT.format(
        kind=kind, signature=signature, default_refs=default_refs, args=", ".join(sig.names)
    )
    cells = {"_kwcell_gradient": gradient}
    units = [Unit("gradient", body, _GLOBALS, closure, cells, defaults={kind: defaults_of(sig)})]
    if any(p.kind is KEYWORD_ONLY for p in sig.params):
        adapter = _ADAPTER.format(names=", ".join(sig.names), call=call_text(sig.params))
        message = (
            f"{_describe(fn)} is not a function, method or Cell: MindSpore cannot compile its "
            "gradient in GRAPH_MODE or @ms.jit (it would silently be zero); wrap it in a def"
        )
        units.append(Unit("adapter", adapter, _GLOBALS, {"_kwcell_fn": fn, "_kwcell_message": message}))
    return units


def _compile(
    kind: str, label: str, params: str, units: list[Unit]
) -> dict[str, dict[str, types.FunctionType]]:
    # The label is the user's __qualname__ or repr: it reaches the generated file's name and
    # header comment only as plain characters, never as code.
    safe = re.sub(r"[^\w.<>-]", "_", label)[:100]
    mapping = f"{safe} -> MindSpore's {kind}({params})"
    return compile_units(
        kind=kind, label=safe, header=HEADER.format(label=safe, kind=kind, mapping=mapping), units=units
    )


def _finish(function: types.FunctionType, kind: str, label: str) -> types.FunctionType:
    """Name the generated function after ``label`` and drop its file with it."""
    function.__qualname__ = label
    function.__doc__ = f"kwcell.{kind} of {label}: {function.__doc__}"
    weakref.finalize(function, _release, function.__code__.co_filename)
    return function


def _make(
    kind: str, make: Callable[..., Any], fn: Any, grad_position: Any, **options: Any
) -> Callable[..., Any]:
    """MindSpore's gradient object for ``fn`` behind a generated function with ``fn``'s signature."""
    sig = _signature(fn)
    positions = _positions(fn, sig, grad_position)
    label = _describe(fn)
    if sig is None:
        return _unbound(kind, label, make(fn, grad_position=positions, **options))
    gradient = types.CellType()  # filled below, once MindSpore's gradient object exists
    fns = _compile(kind, label, ", ".join(sig.names), _units(kind, fn, sig, gradient))
    adapter = fns.get("adapter")
    if adapter is not None and not isinstance(fn, (types.FunctionType, types.MethodType, nn.Cell)):
        # Compiled, the adapter would call an object MindSpore runs as opaque Python (e.g. a
        # functools.partial): a constant, whose gradient is silently zero. Python runs it fine.
        adapter["positional"].__wrapped__ = adapter["graph"]  # type: ignore[attr-defined]
    target = adapter["positional"] if adapter is not None else fn
    gradient.cell_contents = make(target, grad_position=positions, **options)
    function = _finish(fns["gradient"][kind], kind, label)
    # A cell's (or a method's) gradient function is a method of the same object, so that
    # Python's messages count arguments as they would for ``net.construct(...)``.
    if isinstance(fn, nn.Cell):
        return types.MethodType(function, fn)
    if isinstance(fn, types.MethodType):
        return types.MethodType(function, fn.__self__)
    return function


def _graph_mode() -> bool:
    return bool(ms.get_context("mode") == ms.GRAPH_MODE)


def _unbound(kind: str, label: str, gradient: Callable[..., Any]) -> Callable[..., Any]:
    """The gradient of a function that takes ``*args``/``**kwargs``: calls are passed on."""
    message = (
        f"{label} takes *args/**kwargs, so keyword arguments cannot be bound for a GRAPH_MODE "
        "or @ms.jit gradient; pass them positionally"
    )
    closure = {"_kwcell_gradient": gradient, "_kwcell_graph_mode": _graph_mode, "_kwcell_message": message}
    fns = _compile(kind, label, "*args", [Unit("unbound", _UNBOUND.format(kind=kind), _GLOBALS, closure)])
    function = _finish(fns["unbound"][kind], kind, label)
    function.__wrapped__ = fns["unbound"]["graph"]  # type: ignore[attr-defined]
    return function


def grad(
    fn: Any,
    grad_position: Any = 0,
    weights: Any = None,
    has_aux: bool = False,
    return_ids: bool = False,
) -> Callable[..., Any]:
    """`mindspore.grad` that accepts keyword arguments at the call, in every mode.

    The gradient function has `fn`'s own signature (for a cell, its `construct`'s), so a call
    binds keywords and fills defaults as a call of `fn` does, at top level, inside `@ms.jit`
    functions and inside GRAPH_MODE cells. It works for any `nn.Cell` or function, not only a
    `KwCell`. Create it once and reuse it: MindSpore caches compiled graphs per gradient
    function.

    Args:
        fn: The cell or function to differentiate.
        grad_position: Which parameters to differentiate: an index, a parameter name, or a
            tuple of them. Indices count the parameters of `fn` (for a cell, of `construct`),
            not the arguments of the call. `None` differentiates `weights` only.
        weights: Parameters to differentiate too (`net.trainable_params()`), or `None`.
        has_aux: As in `mindspore.grad`: `fn` returns `(output, aux...)` and only the
            output is differentiated.
        return_ids: As in `mindspore.grad`: pair each gradient with its position or
            parameter name.

    Returns:
        A function with `fn`'s signature that returns what `mindspore.grad` returns: a Tensor
            for one position, a tuple for several, `(inputs, weights)` with `weights`.

    Raises:
        ValueError: `grad_position` names a parameter `fn` does not have.
        TypeError: Called inside a graph with keyword arguments when `fn` takes
            `*args`/`**kwargs` (there are no names to bind them to), or for a callable
            MindSpore cannot compile (a `functools.partial`) that has keyword-only
            parameters. Bad calls raise the `TypeError` a call of `fn` raises.

    Example:
        ```python
        import numpy as np
        from mindspore import Tensor, ops

        import kwcell


        def f(x, w=1.0, *, y):
            return (w * ops.sin(x) + y * x).sum()


        x = Tensor(np.array([0.5, 1.0], np.float32))
        gx, gy = kwcell.grad(f, grad_position=("x", "y"))(x, y=Tensor(np.ones(2, np.float32)))
        assert np.allclose(gx.asnumpy(), np.cos(x.asnumpy()) + 1) and np.allclose(gy.asnumpy(), x.asnumpy())
        ```
    """
    return _make("grad", ms.grad, fn, grad_position, weights=weights, has_aux=has_aux, return_ids=return_ids)


def value_and_grad(
    fn: Any,
    grad_position: Any = 0,
    weights: Any = None,
    has_aux: bool = False,
    return_ids: bool = False,
) -> Callable[..., Any]:
    """`mindspore.value_and_grad` that accepts keyword arguments at the call, in every mode.

    The same as [`kwcell.grad`][kwcell._grad.grad], returning `fn`'s value with the gradients.

    Args:
        fn: The cell or function to differentiate.
        grad_position: Which parameters to differentiate: an index, a parameter name, or a
            tuple of them, counting the parameters of `fn` (for a cell, of `construct`).
            `None` differentiates `weights` only.
        weights: Parameters to differentiate too (`optimizer.parameters`), or `None`.
        has_aux: As in `mindspore.value_and_grad`: `fn` returns `(output, aux...)` and only
            the output is differentiated.
        return_ids: As in `mindspore.value_and_grad`: pair each gradient with its position or
            parameter name.

    Returns:
        A function with `fn`'s signature that returns `(value, gradients)`, the gradients
            shaped as `mindspore.value_and_grad` shapes them.

    Raises:
        ValueError: `grad_position` names a parameter `fn` does not have.
        TypeError: As for [`kwcell.grad`][kwcell._grad.grad].

    Example:
        ```python
        import numpy as np
        from mindspore import Tensor, nn

        import kwcell

        net, loss_fn = nn.Dense(2, 1), nn.MSELoss()


        def forward(x, *, target):
            return loss_fn(net(x), target)


        grad_fn = kwcell.value_and_grad(forward, None, net.trainable_params())
        x, y = Tensor(np.ones((4, 2), np.float32)), Tensor(np.zeros((4, 1), np.float32))
        loss, (gw, gb) = grad_fn(x, target=y)
        assert gw.shape == (1, 2) and gb.shape == (1,)
        ```
    """
    return _make(
        "value_and_grad",
        ms.value_and_grad,
        fn,
        grad_position,
        weights=weights,
        has_aux=has_aux,
        return_ids=return_ids,
    )
