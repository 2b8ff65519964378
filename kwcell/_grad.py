"""``kwcell.grad`` and ``kwcell.value_and_grad``: MindSpore's, plus keywords and named positions.

The wrapped function's signature is read once, when the gradient function is created. Each
call is bound by a generated binder (Python's own binding) and handed to a single MindSpore
gradient object positionally, so keyword calls work in GRAPH_MODE too, where MindSpore's own
wrapper accepts ``*args`` only. ``grad_position`` counts parameters of the wrapped function,
not arguments of the call, and may name them.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Sequence
from typing import Any

import mindspore as ms
from mindspore import nn

from ._binder import make_binder
from ._codegen import compile_unit
from ._meta import info_of
from ._spec import KEYWORD_ONLY, Signature, call_text, signature_of

__all__ = ["grad", "value_and_grad"]

Position = int | str

_ADAPTER = '''\
def positional({names}):
    """kwcell adapter for {label}: keyword-only parameters passed by keyword."""
    return _kwcell_fn({call})
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


class _GradFunction:
    """A MindSpore gradient function that also takes keyword arguments."""

    def __init__(self, make: Callable[..., Any], fn: Any, grad_position: Any, **options: Any) -> None:
        self._fn = fn
        sig = _signature(fn)
        # Fast path: a purely positional call that fills every parameter needs no binding.
        # Not with keyword-only parameters: Python rejects them given positionally.
        positional = sig is not None and all(p.kind is not KEYWORD_ONLY for p in sig.params)
        self._n = len(sig.params) if sig is not None and positional else -1
        self._bind: Callable[..., tuple[Any, ...]] | None = None
        # A cell's (or a method's) binder takes a placeholder self, so that Python's messages
        # count arguments as they would for ``net.construct(...)``.
        method = isinstance(fn, (nn.Cell, types.MethodType))
        self._self: tuple[None, ...] = (None,) if method else ()
        target = fn
        if sig is not None:
            label = _describe(fn)
            self._bind = make_binder(sig, label=label, qualname=label, owner=self, with_self=method)
            if any(p.kind is KEYWORD_ONLY for p in sig.params):
                target = _adapter(fn, sig, label, self)
        self._inner = make(target, grad_position=_positions(fn, sig, grad_position), **options)
        self.__wrapped__ = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and len(args) == self._n:
            return self._inner(*args)
        if self._bind is None:
            if kwargs and ms.get_context("mode") == ms.GRAPH_MODE:
                msg = (
                    f"{_describe(self._fn)} takes *args/**kwargs, so keyword arguments cannot be "
                    "bound for a GRAPH_MODE gradient; pass them positionally"
                )
                raise TypeError(msg)
            return self._inner(*args, **kwargs)
        return self._inner(*self._bind(*self._self, *args, **kwargs))


def _adapter(fn: Any, sig: Signature, label: str, owner: object) -> Callable[..., Any]:
    call = call_text(sig.params)
    return compile_unit(
        kind="adapter",
        label=label,
        header=f"Generated by kwcell for {label} (adapter). Do not edit.",
        body=_ADAPTER.format(names=", ".join(sig.names), call=call, label=label),
        closure={"_kwcell_fn": fn},
        globals_={"__name__": __name__, "__builtins__": __builtins__},
        owner=owner,
    )["positional"]


def grad(
    fn: Any,
    grad_position: Any = 0,
    weights: Any = None,
    has_aux: bool = False,
    return_ids: bool = False,
) -> Callable[..., Any]:
    """:func:`mindspore.grad` that accepts keyword arguments at the call, in every mode.

    ``grad_position`` counts the parameters of ``fn`` (for a cell, of its ``construct``) and
    may name them: ``kwcell.grad(net, grad_position=("x", "y"))(a, y=b)``.
    """
    return _GradFunction(ms.grad, fn, grad_position, weights=weights, has_aux=has_aux, return_ids=return_ids)


def value_and_grad(
    fn: Any,
    grad_position: Any = 0,
    weights: Any = None,
    has_aux: bool = False,
    return_ids: bool = False,
) -> Callable[..., Any]:
    """:func:`mindspore.value_and_grad` that accepts keyword arguments at the call, in every mode."""
    return _GradFunction(
        ms.value_and_grad, fn, grad_position, weights=weights, has_aux=has_aux, return_ids=return_ids
    )
