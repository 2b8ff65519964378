"""``construct`` replaced or wrapped from outside the class body, as on ``nn.Cell``.

On an ``nn.Cell`` with a ``bprop``, ``net.construct = f``, ``net.construct =
jit(net.construct)`` and ``@jit`` on the class all change only the *forward* that the bprop
wraps: PyNative still runs the cell's forward (jitted or not) without recording it and calls
the bprop. A KwCell's visible ``construct`` is a dispatcher that calls the hidden core, which
carries the bprop. Installed as it is, a replacement would bypass the core (the bprop is
silently dropped), and a ``jit`` of the dispatcher would compile the core and its bprop into
one graph (``bprop_debug`` then fails, and a bprop that takes gradients itself gives wrong
values). So the visible class or instance keeps its dispatcher, and the new forward goes
where the core finds the user's construct (``_kwcell_construct_<token>``); a wrapper of the
dispatcher (``jit``, or any decorator written with ``functools.wraps``) is re-targeted onto
the user's construct: a copy of the wrapper whose closure holds the construct where it held
the dispatcher.
"""

from __future__ import annotations

import copy
import types
import warnings
from typing import Any

from ._errors import KwCellWarning

__all__ = ["construct_attr", "retarget", "route_class_construct", "route_instance_construct"]


def construct_attr(token: int) -> str:
    """The attribute the core of the class with ``token`` calls as the user's construct."""
    return f"_kwcell_construct_{token}"


def _reaches(fn: Any, old: Any) -> bool:
    """Whether ``fn`` is ``old`` or wraps it (following ``__wrapped__`` like ``inspect.unwrap``)."""
    seen: set[int] = set()
    while fn is not None and id(fn) not in seen:
        if fn is old:
            return True
        seen.add(id(fn))
        if isinstance(fn, types.MethodType):
            fn = fn.__func__
            continue
        fn = fn.__dict__.get("__wrapped__") if isinstance(fn, types.FunctionType) else None
    return False


class _Retargeter:
    """Copies the functions (and the plain objects in their closures) that lead to ``old``."""

    def __init__(self, old: Any, new: Any) -> None:
        self.old = old
        self.new = new
        self.memo: dict[int, Any] = {}
        self.replaced = False  # ``old`` was found where the wrapper calls it (a closure)

    def value(self, obj: Any) -> Any:
        if obj is self.old:
            self.replaced = True
            return self.new
        if isinstance(obj, types.MethodType):
            func = self.value(obj.__func__)
            return obj if func is obj.__func__ else types.MethodType(func, obj.__self__)
        if isinstance(obj, types.FunctionType):
            return self.function(obj) if _reaches(obj, self.old) else obj
        state = getattr(obj, "__dict__", None)
        if isinstance(state, dict) and not isinstance(obj, type):
            # A decorator object holding the function (MindSpore's PIJit capture context).
            hits = {k: v for k, v in state.items() if v is self.old or _reaches(v, self.old)}
            if hits:
                if id(obj) in self.memo:
                    return self.memo[id(obj)]
                clone = copy.copy(obj)
                self.memo[id(obj)] = clone
                for key, v in hits.items():
                    setattr(clone, key, self.value(v))
                return clone
        return obj

    def function(self, fn: types.FunctionType) -> types.FunctionType:
        if id(fn) in self.memo:
            result: types.FunctionType = self.memo[id(fn)]
            return result
        closure = fn.__closure__ or ()
        cells = tuple(types.CellType() for _ in closure)
        clone = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, cells or None)
        clone.__kwdefaults__ = fn.__kwdefaults__
        clone.__qualname__ = fn.__qualname__
        clone.__module__ = fn.__module__
        clone.__doc__ = fn.__doc__
        clone.__dict__.update(fn.__dict__)
        self.memo[id(fn)] = clone  # before the closure: wrappers may refer to themselves
        for old_cell, new_cell in zip(closure, cells, strict=True):
            try:
                contents = old_cell.cell_contents
            except ValueError:  # an empty cell
                continue
            new_cell.cell_contents = self.value(contents)
        if "__wrapped__" in fn.__dict__:
            replaced = self.replaced
            clone.__wrapped__ = self.value(fn.__dict__["__wrapped__"])  # type: ignore[attr-defined]
            self.replaced = replaced  # __wrapped__ is only what inspect and the parser read
        return clone


def retarget(wrapper: Any, old: Any, new: Any) -> Any | None:
    """A copy of ``wrapper`` (a function or method wrapping ``old``) that wraps ``new``.

    Returns ``None`` when ``old`` is not found in the wrapper's closure (a wrapper written
    in C, or one that reaches ``old`` some other way).
    """
    retargeter = _Retargeter(old, new)
    result = retargeter.value(wrapper)
    return result if retargeter.replaced else None


def _cannot_retarget(where: str, value: Any) -> None:
    msg = (
        f"{where}: kwcell cannot see inside {value!r} to apply it to the user's construct; "
        "it wraps kwcell's dispatcher instead, so under jit the bprop is compiled into the same "
        "graph (bprop_debug is then not possible). Apply it to construct in the class body instead"
    )
    warnings.warn(msg, KwCellWarning, stacklevel=4)


def route_instance_construct(cell: Any, value: Any, dispatcher: Any, token: int, user: Any) -> bool:
    """Handle ``cell.construct = value`` for a KwCell whose class has a bprop.

    Returns ``False`` when the value should be stored as an ordinary attribute instead.
    """
    attr = construct_attr(token)
    func = value.__func__ if isinstance(value, types.MethodType) else value
    if func is dispatcher:
        if getattr(value, "__self__", None) is cell:  # restoring the dispatcher
            cell.__dict__.pop(attr, None)
            return True
        object.__setattr__(cell, attr, value)  # another instance's forward
        return True
    if _reaches(value, dispatcher):
        target = retarget(value, dispatcher, user)
        if target is None:
            _cannot_retarget(f"{type(cell).__qualname__}.construct", value)
            return False
        object.__setattr__(cell, attr, target)
        return True
    if not callable(value):
        return False
    object.__setattr__(cell, attr, value)
    return True


def route_class_construct(cls: type, value: Any, dispatcher: Any, token: int, user: Any) -> bool:
    """Handle ``Cls.construct = value`` (for example ``@jit`` on the class) for a KwCell class
    with a bprop. Returns ``False`` when the value should be set as an ordinary attribute."""
    attr = construct_attr(token)
    if value is dispatcher:
        type.__setattr__(cls, attr, user)
        return False
    if _reaches(value, dispatcher):
        target = retarget(value, dispatcher, cls.__dict__[attr])
        if target is None:
            _cannot_retarget(f"{cls.__qualname__}.construct", value)
            return False
        type.__setattr__(cls, attr, target)
        return True
    if not callable(value):
        return False
    type.__setattr__(cls, attr, value)
    return True
