"""Finding a KwCell's ``construct`` and ``bprop`` when they are used, as ``nn.Cell`` does.

``nn.Cell`` keeps no snapshot: MindSpore reads ``cell.construct`` and ``cell.bprop`` when the
cell is called (PyNative) or compiled (the graph parser), from the instance and its class as
they are then. kwcell does the same. Each KwCell class holds its ``construct`` and ``bprop``
in two slots (data descriptors, :class:`ConstructSlot` and :class:`BpropSlot`) that keep the
user's function and answer every read the way ``nn.Cell`` would answer it, with two
exceptions that make the keyword machinery work:

- MindSpore reading a KwCell's ``construct`` (``Cell.__call__`` and its helpers, the graph
  compiler), when the cell has a bprop, gets kwcell's dispatcher: a ``construct`` with the
  current forward's exact signature that binds the call and calls the hidden core.
- MindSpore asking for the cell's own ``bprop`` (``Cell.__init__``, the graph compiler) gets
  no answer: the core carries the bprop, so the visible cell must not.

Every other read (user code, and ``super()`` in any form, including the graph compiler
resolving ``super().bprop`` in a bprop it compiles) sees what ``nn.Cell`` would show: an
instance's assignment first, then the class's function through the MRO. (The graph compiler
gets a parent's bprop in its positional form, which it can call.)
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

from mindspore import nn

__all__ = [
    "BpropSlot",
    "ConstructSlot",
    "class_backward",
    "class_forward",
    "instance_backward",
    "instance_forward",
    "is_slot",
]

_CELL_FILE = os.path.normcase(os.path.abspath(nn.cell.__file__))  # type: ignore[attr-defined]
_MS_DIR = os.path.dirname(os.path.dirname(_CELL_FILE)) + os.sep
_STOP = nn.Cell


def _from_mindspore(frame: types.FrameType) -> bool:
    """Whether a read comes from MindSpore: its Python code (``Cell.__call__``, the graph
    parser) or its C++ compiler, whose reads show the Python frame that called into it."""
    return frame.f_code.co_filename.startswith(_MS_DIR)


class _Slot:
    """A class's own ``construct`` or ``bprop``; ``fn`` is ``None`` when it inherits one."""

    name = ""

    def __init__(self, fn: Any, owner: type | None = None) -> None:
        self.fn = fn
        self.owner = owner

    def __set_name__(self, owner: type, name: str) -> None:
        self.owner = owner

    @property
    def __isabstractmethod__(self) -> bool:  # abc.abstractmethod on construct or bprop
        return bool(getattr(self.fn, "__isabstractmethod__", False))

    def resolve(self, cls: type) -> Any:
        """The function this slot stands for in ``cls``'s MRO: its own, or the next one after
        the class that holds it (``super()`` semantics, diamonds included)."""
        if self.fn is not None:
            return self.fn
        return _resolve(cls, self.name, after=self.owner)[1]

    def _nearest(self, obj: Any) -> bool:
        """Whether this slot is the first one ``type(obj)``'s MRO finds (not a ``super()`` read)."""
        return _first(type(obj), self.name) is self

    def __set__(self, obj: Any, value: Any) -> None:
        missing = object()
        previous = obj.__dict__.get(self.name, missing)
        obj.__dict__[self.name] = value
        _changed(obj, self.name, previous, missing)

    def __delete__(self, obj: Any) -> None:
        missing = object()
        previous = obj.__dict__.pop(self.name, missing)
        if previous is missing:
            raise AttributeError(self.name)
        _changed(obj, self.name, previous, missing)


def _changed(obj: Any, name: str, previous: Any, missing: Any) -> None:
    """Check an instance's new construct/bprop now; undo the change if it does not fit."""
    check = getattr(type(obj), "_kwcell_instance_changed", None)
    if check is None:
        return
    try:
        check(obj, name)
    except BaseException:
        if previous is missing:
            obj.__dict__.pop(name, None)
        else:
            obj.__dict__[name] = previous
        raise


class ConstructSlot(_Slot):
    """``construct`` of a KwCell class (see the module docstring)."""

    name = "construct"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            assert owner is not None
            fn = self.resolve(owner)
            if fn is None:
                return nn.Cell.construct
            return fn
        nearest = self._nearest(obj)
        if nearest and _from_mindspore(sys._getframe(1)):
            dispatcher = obj._kwcell_dispatcher()
            if dispatcher is not None:
                return dispatcher
        if nearest:
            assigned = obj.__dict__.get("construct")
            if assigned is not None:
                return assigned
        fn = self.resolve(type(obj))
        if fn is None:
            return types.MethodType(nn.Cell.construct, obj)
        return _bind(fn, obj)


class BpropSlot(_Slot):
    """``bprop`` of a KwCell class (see the module docstring)."""

    name = "bprop"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            assert owner is not None
            fn = self.resolve(owner)
            if fn is None:
                raise AttributeError(f"type object {owner.__qualname__!r} has no attribute 'bprop'")
            return fn
        frame = sys._getframe(1)
        nearest = self._nearest(obj)
        if nearest and _from_mindspore(frame) and not obj._kwcell_passes_through():
            raise AttributeError("bprop")
        if nearest:
            assigned = obj.__dict__.get("bprop")
            if assigned is not None:
                return assigned
        fn = self.resolve(type(obj))
        if fn is None:
            raise AttributeError(f"{type(obj).__qualname__!r} object has no attribute 'bprop'")
        if _from_mindspore(frame):
            # The graph parser resolving ``super().bprop`` (or ``self.bprop``) inside a bprop
            # it compiles: the positional version, which it can call.
            face = obj._kwcell_face_of(fn)
            if face is not None:
                return face
        return _bind(fn, obj)


def is_slot(value: Any) -> bool:
    return isinstance(value, _Slot)


def _bind(fn: Any, obj: Any) -> Any:
    get = getattr(type(fn), "__get__", None)
    if get is None:
        return fn
    return get(fn, obj, type(obj))


def _resolve(cls: type, name: str, *, after: type | None = None) -> tuple[type | None, Any]:
    """The class that provides ``name`` to ``cls`` through the MRO, and the user's function.

    Slots give the function they hold (an inheriting slot is skipped); any other class, a
    plain mixin for example, gives what its ``__dict__`` holds. ``nn.Cell`` and what comes after
    it do not count. With ``after``, the search starts after that class (``super()``).
    """
    mro = cls.__mro__
    start = mro.index(after) + 1 if after is not None and after in mro else 0
    for klass in mro[start:]:
        if klass is _STOP:
            break
        found = klass.__dict__.get(name)
        if found is None:
            continue
        if isinstance(found, _Slot):
            if found.fn is None:
                continue
            return klass, found.fn
        return klass, found
    return None, None


def class_forward(cls: type) -> tuple[type | None, Any]:
    return _resolve(cls, "construct")


def class_backward(cls: type) -> tuple[type | None, Any]:
    return _resolve(cls, "bprop")


def _first(cls: type, name: str) -> Any:
    """What ``cls``'s MRO finds first under ``name`` in a class ``__dict__`` (or ``None``)."""
    found = cls.__dict__.get(name)
    if found is not None:  # the usual case: the class's own slot
        return found
    for klass in cls.__mro__:
        found = klass.__dict__.get(name)
        if found is not None:
            return found
    return None


def _instance(obj: Any, name: str) -> tuple[Any, bool]:
    """``obj``'s ``name`` now (``None`` for none), and whether it is called with self: an
    instance's assignment (called as it is, as on nn.Cell), else the class's function."""
    assigned = obj.__dict__.get(name)
    if assigned is not None and isinstance(_first(type(obj), name), _Slot):
        return assigned, False
    return _resolve(type(obj), name)[1], True


def instance_forward(obj: Any) -> tuple[Any, bool]:
    """The forward ``obj`` runs now, and whether it is a class function (called with self)."""
    return _instance(obj, "construct")


def instance_backward(obj: Any) -> tuple[Any, bool]:
    """The bprop ``obj`` has now (``None`` for none), and whether it is called with self."""
    return _instance(obj, "bprop")
