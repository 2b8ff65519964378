"""``@kwcell.keyword_bprop``: KwCell's behaviour for a class that cannot change its base.

A library's cells may carry a metaclass of their own (``class TrainStep(nn.Cell,
metaclass=ABCMeta)`` is fine for ``KwCell``, whose metaclass derives from ``ABCMeta``, but any
other metaclass conflicts) or bases the library controls. The decorator gives such a class,
and every subclass of it, what ``KwCell`` gives its subclasses, without touching its bases or
metaclass: its ``construct`` and ``bprop`` move into kwcell's slots (``kwcell._lookup``), the
instance methods MindSpore's dispatch needs are added, and subclasses are set up and checked
when their class statement runs (through ``__init_subclass__``, which every metaclass runs).

Nothing runs when a plain class attribute is assigned (``Sub.construct = f``, ``Sub.bprop = g``,
``del Sub.bprop``): what a metaclass does then is done when the class is next used instead, by
``_reslot``, which puts what the class holds now back into slots and checks it. It runs when an
instance is created or called, and when MindSpore's graph compiler probes an instance for
attributes it lacks (``__primitive_flag__``, ``__ms_class__``, ...), which it does for every
object before it reads a cell's ``construct``: existing instances see the change in every mode,
also inside an outer cell's graph. A bad assignment is reported then, not at the assignment.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, TypeVar, overload

from mindspore import nn
from mindspore.common.hook_handle import HookHandle  # type: ignore[import-untyped,unused-ignore]

from ._cell import KwCell, _prebind
from ._errors import KwCellDefinitionError
from ._info import info_of
from ._lookup import install_super_readers, is_slot
from ._meta import _SLOTS, _warn_ungraded_parameters, check_class, slot_for
from ._mode import GRAPH, KEY, MODE
from ._reuse import configure as _configure_reuse
from ._spec import safe_repr

__all__ = ["has_kwcell_behaviour", "keyword_bprop"]

_C = TypeVar("_C", bound=type)

MANAGED = "_kwcell_managed"
_super: Any = super  # two-argument super() with a class known only at run time
# KwCell's instance methods that MindSpore's dispatch and pickling need; they use no
# zero-argument super(), so the same functions serve a decorated class.
_BEHAVIOUR = (
    "_kwcell_core",
    "_kwcell_own_core",
    "_kwcell_plan",
    "_kwcell_found",
    "_kwcell_running_info",
    "_kwcell_dispatcher",
    "_kwcell_passes_through",
    "_kwcell_face_of",
    "_kwcell_instance_changed",
    "_construct_sig",
    "__getstate__",
    "__setstate__",
)


def _slotify(klass: type) -> None:
    """Put ``klass``'s own construct and bprop into slots (checked to be methods)."""
    for name, slot in _SLOTS.items():
        found = klass.__dict__.get(name)
        if found is None:
            type.__setattr__(klass, name, slot(None, klass))
        elif not is_slot(found):
            type.__setattr__(klass, name, slot_for(klass.__qualname__, name, found, klass))


def has_kwcell_behaviour(cls: type) -> bool:
    """Whether ``cls`` behaves as a KwCell: a ``KwCell`` subclass, or a class decorated with
    :func:`keyword_bprop` or derived from one (what the tools treat as a KwCell)."""
    return isinstance(cls, type(KwCell)) or any(MANAGED in klass.__dict__ for klass in cls.__mro__)


def _setup(klass: type, compile_once: bool | None) -> None:
    """What ``KwCellMeta.__new__`` and ``KwCell.__init_subclass__`` do for a KwCell, for a
    decorated class or a subclass of one: slots, super() readers, ``compile_once``, the
    definition checks.

    Looked up when it runs, so that ``kwcell check`` can record its errors
    (``kwcell._check``) as it does a KwCell class statement's."""
    _slotify(klass)
    install_super_readers(klass)
    _configure_reuse(klass, compile_once)
    check_class(klass)


def _reslot(cls: type, *, check: bool = True) -> None:
    """Slots again for construct/bprop assigned as plain attributes since (``Sub.bprop = f``),
    or deleted (``del Sub.bprop``: the class inherits again). Without ``check``, what does not
    fit is reported when MindSpore next reads the cell's construct (the plan is made then)."""
    managed_seen = False
    for klass in cls.__mro__:
        if klass is nn.Cell:
            break
        state = klass.__dict__
        if MANAGED not in state:
            if not managed_seen and _derives_from_managed(klass):
                # A subclass that was never set up: one below an __init_subclass__ that does not
                # call super(), or one that existed before its base was decorated.
                _adopt(klass)
                state = klass.__dict__
            else:
                continue
        managed_seen = True
        if not (is_slot(state.get("construct")) and is_slot(state.get("bprop"))):
            _slotify(klass)
            if check:
                check_class(klass)


def _derives_from_managed(klass: type) -> bool:
    return issubclass(klass, nn.Cell) and any(MANAGED in k.__dict__ for k in klass.__mro__[1:])


def _adopt(klass: type) -> None:
    """Set up a subclass of a decorated class that was not set up when it was created."""
    type.__setattr__(klass, MANAGED, True)
    _setup(klass, None)


def _install(cls: type, compile_once: bool | None) -> None:
    type.__setattr__(cls, MANAGED, True)
    for name in _BEHAVIOUR:
        if name not in cls.__dict__:
            type.__setattr__(cls, name, KwCell.__dict__[name])
    root: type = cls
    original_init = cls.__dict__.get("__init__")

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        _reslot(type(self))
        if original_init is not None:
            original_init(self, *args, **kwargs)
        else:
            _super(root, self).__init__(*args, **kwargs)
        # As KwCellMeta.__call__ does once the instance is built (the core, as for a KwCell,
        # is made when MindSpore first runs the cell).
        if type(self).__init__ is __init__ and info_of(type(self)) is not None:
            _warn_ungraded_parameters(self)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__doc__ = getattr(original_init, "__doc__", None)
    type.__setattr__(cls, "__init__", __init__)

    # A decorated class keeps a __call__ of its own (a KwCell has none on MindSpore 2.10, see
    # KwCell._predict): with no metaclass, a call is where construct or bprop assigned on the
    # class since is put back into a slot. A GRAPH_MODE call binds with Python's own binding
    # first, as a KwCell's does.
    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        _reslot(type(self))
        if MODE[KEY] == GRAPH:  # as KwCell.__call__: the mode read in place, on every call
            _prebind(self, args, kwargs)
        return _super(root, self).__call__(*args, **kwargs)

    if "__call__" not in cls.__dict__:
        type.__setattr__(cls, "__call__", __call__)

    def __getattr__(self: Any, name: str) -> Any:
        # Only for attributes the instance lacks (no cost for the others). MindSpore's graph
        # compiler probes for some before it reads construct, also for a cell inside an outer
        # graph, whose __call__ does not run: see the module docstring. An error raised here
        # would reach the user as "no attribute" (MindSpore's probes expect AttributeError):
        # what does not fit is reported by the next call, or when construct is read.
        with contextlib.suppress(KwCellDefinitionError):
            _reslot(type(self), check=False)
        return _super(root, self).__getattr__(name)

    if "__getattr__" not in cls.__dict__:
        type.__setattr__(cls, "__getattr__", __getattr__)

    def register_forward_hook(self: Any, hook_fn: Any, *args: Any, **kwargs: Any) -> Any:
        # nn.Cell ignores forward hooks on a cell with a bprop: so does a decorated cell.
        if self._kwcell_plan() is not None:
            return HookHandle()
        return _super(root, self).register_forward_hook(hook_fn, *args, **kwargs)

    if "register_forward_hook" not in cls.__dict__:
        type.__setattr__(cls, "register_forward_hook", register_forward_hook)

    original_subclass_hook = cls.__dict__.get("__init_subclass__")

    def __init_subclass__(sub: type, /, **kwargs: Any) -> None:
        once = kwargs.pop("compile_once", None)
        if original_subclass_hook is not None:
            original_subclass_hook.__func__(sub, **kwargs)
        else:
            _super(root, sub).__init_subclass__(**kwargs)
        type.__setattr__(sub, MANAGED, True)  # its construct and bprop are in slots too
        _setup(sub, once)

    type.__setattr__(cls, "__init_subclass__", classmethod(__init_subclass__))
    _setup(cls, compile_once)
    # Subclasses that exist already (the decorator applied to a library's base after its
    # subclasses were defined) are set up now, as their class statements would have been.
    pending: list[type] = list(cls.__subclasses__())
    while pending:
        sub = pending.pop(0)
        if MANAGED not in sub.__dict__:
            _adopt(sub)
        pending.extend(sub.__subclasses__())


@overload
def keyword_bprop(cls: _C, /) -> _C: ...
@overload
def keyword_bprop(*, compile_once: bool | None = None) -> Callable[[_C], _C]: ...
def keyword_bprop(cls: Any = None, /, *, compile_once: bool | None = None) -> Any:
    """Give an `nn.Cell` subclass `KwCell`'s behaviour without changing its bases or metaclass.

    Use it where a class cannot derive from [`kwcell.KwCell`][kwcell.KwCell]: a library base
    with a metaclass of its own, or a hierarchy whose bases the library controls. Decorating a
    base gives every subclass that defines `bprop` the same, as `KwCell` subclasses get it:
    bprop is matched to construct by name, keyword calls and omitted defaults reach it in every
    mode, and definitions are checked when the class statement runs. Decorating a `KwCell`, or
    a class twice, changes nothing.

    Args:
        cls: The class to decorate (an `nn.Cell` subclass), when used as `@keyword_bprop`.
        compile_once: As `class Act(KwCell, compile_once=True)`: one graph for the instances
            whose graphs would be identical (subclasses inherit it), when used as
            `@keyword_bprop(compile_once=True)`.

    Returns:
        The class itself, changed in place (or, called with only `compile_once`, the
            decorator to apply).

    Raises:
        KwCellDefinitionError: `cls` is not an `nn.Cell` subclass, or its construct and
            bprop do not fit together (the same errors as a `KwCell` class statement).

    Example:
        ```python
        import numpy as np
        from mindspore import Tensor, nn, ops

        import kwcell


        class LibraryMeta(type(nn.Cell)):  # a metaclass KwCell's could not be combined with
            pass


        @kwcell.keyword_bprop
        class Base(nn.Cell, metaclass=LibraryMeta):
            pass


        class Act(Base):
            def construct(self, x, w=1.0):
                return w * ops.sin(x)

            def bprop(self, x, w=1.0, *, out, dout):
                return {"x": w * ops.cos(x) * dout}


        x = Tensor(np.array([0.5, 1.0], np.float32))
        assert np.allclose(kwcell.grad(Act())(x, w=2.0).asnumpy(), 2.0 * np.cos(x.asnumpy()))
        ```
    """

    def decorate(klass: Any) -> Any:
        if not (isinstance(klass, type) and issubclass(klass, nn.Cell)):
            msg = f"keyword_bprop: expected a subclass of mindspore.nn.Cell, got {safe_repr(klass)}"
            raise KwCellDefinitionError(msg)
        if isinstance(klass, type(KwCell)):
            return klass  # a KwCell
        if MANAGED in klass.__dict__:
            # Decorated already, or derived from a decorated class: only compile_once to set,
            # as the class keyword sets it.
            _configure_reuse(klass, compile_once)
            return klass
        _install(klass, compile_once)
        return klass

    if cls is None:
        return decorate
    return decorate(cls)
