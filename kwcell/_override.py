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
import threading
import types
import warnings
from typing import Any

from ._errors import KwCellWarning

__all__ = [
    "ASSIGNED",
    "REENTRY",
    "construct_attr",
    "retarget",
    "route_class_construct",
    "route_instance_construct",
]

#: An instance's replacement construct as the user assigned it (what pickle and deepcopy keep).
ASSIGNED = "_kwcell_assigned_construct"
#: Set on a core while an instance-level replacement forward runs: (thread id, plain forward).
REENTRY = "_kwcell_reentry"


def construct_attr(token: int) -> str:
    """The attribute the core of the class with ``token`` calls as the user's construct."""
    return f"_kwcell_construct_{token}"


def _refers(obj: Any, old: Any, seen: set[int] | None = None) -> bool:
    """Whether calling ``obj`` may call ``old``: ``obj`` is ``old``, wraps it (``__wrapped__``,
    as ``inspect.unwrap`` follows), or holds it in its closure, directly, bound, or in a
    decorator object there."""
    if obj is old:
        return True
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return False
    seen.add(id(obj))
    if isinstance(obj, types.MethodType):
        return _refers(obj.__func__, old, seen)
    if isinstance(obj, types.FunctionType):
        inner = [obj.__dict__.get("__wrapped__")]
        for cell in obj.__closure__ or ():
            try:
                inner.append(cell.cell_contents)
            except ValueError:  # an empty cell
                continue
        return any(_refers(v, old, seen) for v in inner if v is not None)
    state = getattr(obj, "__dict__", None)
    if isinstance(state, dict) and not isinstance(obj, type):
        return any(_holds(v, old, seen) for v in state.values())
    return False


def _holds(value: Any, old: Any, seen: set[int] | None = None) -> bool:
    """An attribute value of a decorator object that is ``old`` or a function leading to it."""
    functions = (types.FunctionType, types.MethodType)
    return value is old or (isinstance(value, functions) and _refers(value, old, seen))


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
            return self.function(obj) if _refers(obj, self.old) else obj
        state = getattr(obj, "__dict__", None)
        if isinstance(state, dict) and not isinstance(obj, type):
            # A decorator object holding the function (MindSpore's PIJit capture context).
            hits = {k: v for k, v in state.items() if _holds(v, self.old)}
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
        f"{where}: kwcell cannot apply {value!r} to the construct you wrote, only to kwcell's "
        "dispatcher, so the bprop is compiled into the same graph (bprop_debug and a bprop that "
        "takes gradients may then fail). Put @jit on construct in the class body instead"
    )
    warnings.warn(msg, KwCellWarning, stacklevel=5)


def route_instance_construct(
    cell: Any, value: Any, dispatcher: Any, token: int, kwonly: tuple[str, ...]
) -> bool:
    """Handle ``cell.construct = value`` for a KwCell whose class has a bprop.

    ``kwonly`` names construct's keyword-only parameters. Returns ``False`` when ``value``
    should be stored as an ordinary attribute instead.
    """
    attr = construct_attr(token)
    if isinstance(value, types.MethodType) and value.__func__ is dispatcher and value.__self__ is cell:
        cell.__dict__.pop(attr, None)  # the instance's own dispatcher: back to the class's forward
        cell.__dict__.pop(ASSIGNED, None)
        return True
    target = _forward(f"{type(cell).__qualname__}.construct", value, dispatcher, getattr(type(cell), attr))
    if target is None:
        return False
    object.__setattr__(
        cell, attr, _guarded(cell, cell.__dict__[f"_kwcell_core_{token}"], target, attr, kwonly)
    )
    object.__setattr__(cell, ASSIGNED, value)
    return True


def _guarded(cell: Any, core: Any, target: Any, attr: str, kwonly: tuple[str, ...]) -> Any:
    """``target`` as the instance's forward, made safe to call the instance's original forward.

    A replacement often calls the construct it replaced (``orig = net.construct`` before
    ``net.construct = patched``), through a global or anything else kwcell cannot rewrite.
    That reaches the dispatcher, which calls the core again: while ``target`` runs, the core
    then runs the class's forward directly, as ``nn.Cell`` would run the original construct.
    MindSpore's graph parser unwraps this function (``__wrapped__``) and sees ``target``.
    """

    def plain(*args: Any) -> Any:
        forward = getattr(type(cell), attr)
        split = len(args) - len(kwonly)
        return forward(cell, *args[:split], **dict(zip(kwonly, args[split:], strict=True)))

    def call(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return _with_reentry(core, plain, func, args, kwargs)

    if isinstance(target, types.MethodType):
        # Stay a bound method, so that the parser's unwrapping keeps ``self``.
        method = target.__func__

        def construct_method(self: Any, *args: Any, **kwargs: Any) -> Any:
            return call(method, (self, *args), kwargs)

        construct_method.__wrapped__ = method  # type: ignore[attr-defined]
        return types.MethodType(construct_method, target.__self__)

    def construct(*args: Any, **kwargs: Any) -> Any:
        return call(target, args, kwargs)

    construct.__wrapped__ = target  # type: ignore[attr-defined]
    return construct


def _with_reentry(core: Any, plain: Any, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Call ``func`` while ``core``, when the dispatcher calls it again, runs ``plain`` instead."""
    previous = core.__dict__.get(REENTRY)
    object.__setattr__(core, REENTRY, (threading.get_ident(), plain))
    try:
        return func(*args, **kwargs)
    finally:
        if previous is None:
            core.__dict__.pop(REENTRY, None)
        else:
            object.__setattr__(core, REENTRY, previous)


def _guarded_function(target: Any, replaced: Any, token: int, kwonly: tuple[str, ...]) -> Any:
    """``target`` as a class's forward, made safe to call the forward it replaced (as
    :func:`_guarded` for an instance; ``self`` is known only at call time)."""
    core_attr = f"_kwcell_core_{token}"

    def construct(self: Any, *args: Any, **kwargs: Any) -> Any:
        core = self.__dict__.get(core_attr)
        if core is None:
            return target(self, *args, **kwargs)

        def plain(*inputs: Any) -> Any:
            split = len(inputs) - len(kwonly)
            return replaced(self, *inputs[:split], **dict(zip(kwonly, inputs[split:], strict=True)))

        return _with_reentry(core, plain, target, (self, *args), kwargs)

    construct.__wrapped__ = target  # type: ignore[attr-defined]
    return construct


def route_class_construct(
    cls: type, value: Any, dispatcher: Any, token: int, user: Any, kwonly: tuple[str, ...], own_attr: str
) -> bool:
    """Handle ``Cls.construct = value`` (for example ``@jit`` on the class) for a KwCell class
    with a bprop; ``user`` is the construct kwcell generated the class's code for, ``kwonly``
    construct's keyword-only parameters, ``own_attr`` where the metaclass looks for a class's
    own construct (so that subclasses inherit the new forward). Returns ``False`` when
    ``value`` should be set as an ordinary class attribute."""
    attr = construct_attr(token)
    if value is dispatcher:  # back to the construct the class's code was generated for
        type.__setattr__(cls, attr, user)
        type.__setattr__(cls, own_attr, user)
        return False
    replaced = getattr(cls, attr)
    target = _forward(f"{cls.__qualname__}.construct", value, dispatcher, replaced)
    if target is None:
        return False
    type.__setattr__(cls, own_attr, target)
    if target is value and isinstance(target, types.FunctionType):
        # Not re-targeted (it may call the replaced forward through a global): guard it.
        target = _guarded_function(target, replaced, token, kwonly)
    type.__setattr__(cls, attr, target)
    return True


def _forward(where: str, value: Any, dispatcher: Any, user: Any) -> Any | None:
    """What the core should call for a new ``construct`` ``value`` (``None``: not a forward)."""
    if not callable(value):
        return None
    if not _refers(value, dispatcher):
        return value
    target = retarget(value, dispatcher, user)
    if target is not None:
        return target
    if getattr(value, "__wrapped_by_jit__", False):  # MindSpore's mark on its jit wrappers
        _cannot_retarget(where, value)
    return value
