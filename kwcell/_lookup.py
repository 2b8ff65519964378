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
gets kwcell's copy of a parent's bprop, which it can parse.)

``super().bprop`` in a bprop kwcell copies for the graph compiler reads
``self._kwcell_super_<Owner>_<id>`` (:class:`SuperBprop`, one per class of a KwCell class's MRO),
which finds the next bprop after ``Owner`` in the instance's MRO when the graph is compiled and
gives the compiler kwcell's copy of it as written (``_source.written_copy``: it takes the
arguments that bprop takes and returns what it returns, as in PYNATIVE), whichever class holds
it: a KwCell or a plain mixin. The compiler's own ``super()`` means ``super(type(self), self)``
in every function it parses, so a plain mixin's bprop parsed as written would find itself again.

MindSpore reads a cell's ``construct`` on every PyNative call. An instance remembers what it
ran last (:func:`remember`: its class, the construct and bprop that class resolved to, the
dispatcher and the core it used); a read that finds the same class resolving to the same
functions, no instance assignment and the core still of that plan's class, answers from the
record without planning again. Nothing in the record is trusted without that check, which is
a few dictionary reads: a later ``Net.construct = f``, ``net.bprop = g``, ``del Net.bprop``, a
mixin changed, or a core switched to another plan is seen at the next read.
"""

from __future__ import annotations

import os
import re
import sys
import types
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from mindspore import nn

__all__ = [
    "SEEN",
    "BpropSlot",
    "ConstructSlot",
    "Seen",
    "SuperBprop",
    "class_backward",
    "class_forward",
    "install_super_readers",
    "instance_backward",
    "instance_forward",
    "is_slot",
    "listing",
    "remember",
    "same_listing",
    "still_seen",
    "super_key",
    "super_reader",
]

_CELL_FILE = os.path.normcase(os.path.abspath(nn.cell.__file__))  # type: ignore[attr-defined]
# A read comes from MindSpore when the frame that makes it runs a file of MindSpore's package:
# its Python code (``Cell.__call__``, the graph parser) or its C++ compiler, whose reads show
# the Python frame that called into it.
_MS_DIR = os.path.dirname(os.path.dirname(_CELL_FILE)) + os.sep
# Two kinds of MindSpore's reads of a KwCell's ``construct`` are not MindSpore running the
# cell, and get what user code gets, as on nn.Cell (the user's construct):
# - the graph parser's namespace of a cell's members, resolving ``self.inner.construct`` or
#   ``self.construct`` in the code it parses: the user's own call (autodiff, no bprop);
# - MindSpore's wrappers of a cell's forward, which read ``cell.construct`` to wrap it (and
#   may assign the wrapper back): ``amp.auto_mixed_precision(net, "auto")``, ``jit`` on a
#   cell or class in each capture mode. They wrap the user's forward, which kwcell then runs
#   as the instance's own, with the bprop; given the dispatcher, the wrapper would call it
#   again from inside the core, without end.
# Every other read from MindSpore's package runs the cell (``Cell.__call__``, the graph
# compiler, PIJit tracing a call): the dispatcher. (file name, function) of the wrappers;
# tests/test_mindspore_contract.py finds every site in MindSpore's package that reads a
# cell's construct to wrap it, and fails on one missing here.
_MEMBER_READS = os.sep + "namespace.py"  # mindspore/graph/_parse/ (2.9-2.10), _extends/parse/
WRAPPERS = frozenset(
    {
        ("amp.py", "_set_amp_decorator"),
        ("api.py", "wrap_func"),
        ("jit_trace.py", "wrap_func"),
        ("pijit_context.py", "__call__"),
    }
)


def _runs(frame: types.FrameType) -> bool:
    """Whether a read of ``construct`` made in ``frame`` is MindSpore running the cell (on the
    call path: a prefix test, then one dictionary read for MindSpore's functions)."""
    code = frame.f_code
    if not code.co_filename.startswith(_MS_DIR):
        return False
    found = _RUNS.get(code)
    if found is None:  # MindSpore's own functions: a few, each decided once
        filename = code.co_filename
        found = not filename.endswith(_MEMBER_READS)
        found = found and (os.path.basename(filename), code.co_name) not in WRAPPERS
        _RUNS[code] = found
    return found


_RUNS: dict[types.CodeType, bool] = {}


_STOP = nn.Cell
_CELL_GETATTR: Any = getattr(nn.Cell, "__getattr__")  # noqa: B009 - not in the stubs
_getframe = sys._getframe
_MethodType = types.MethodType

#: Where an instance keeps what MindSpore ran last (see :func:`remember`).
SEEN = "_kwcell_seen"


_UNSET: Any = object()
_T = TypeVar("_T")


def listing(obj: Any) -> Any:
    """``obj``'s ``internal_params`` as MindSpore reads it (``getattr``): the instance's, else
    its class's, read through a property or a ``__getattr__`` of the user's class. (Most cells
    list nothing: that is proved without ``nn.Cell.__getattr__``, which formats an error.)"""
    listed = obj.__dict__.get("internal_params", _UNSET)
    if listed is not _UNSET:
        return listed
    cls = type(obj)
    listed = getattr(cls, "internal_params", _UNSET)
    if listed is _UNSET:
        return getattr(obj, "internal_params", None) if cls.__getattr__ is not _CELL_GETATTR else None
    if hasattr(type(listed), "__get__"):  # a property, or another descriptor
        return getattr(obj, "internal_params", None)
    return listed


def same_listing(listed: Any, snapshot: tuple[Any, ...]) -> bool:
    """Whether ``internal_params`` still lists exactly ``snapshot`` (by identity)."""
    if not listed:
        return not snapshot
    return len(listed) == len(snapshot) and all(a is b for a, b in zip(listed, snapshot, strict=False))


class Seen(NamedTuple):
    """What an instance ran last (see :func:`remember`): a record, trusted only while it holds."""

    cls: type  # the instance's class then
    construct: Any  # the construct and bprop that class resolved to
    bprop: Any
    info: Any  # the plan (a KwCellInfo); None for a cell without a bprop, or one left as it is
    passes: bool  # left to MindSpore as it is (kwcell's plan is PASSTHROUGH)
    core: Any  # the hidden core, which must keep the plan's class (``info.core_cls``)
    weights: tuple[Any, ...]  # what internal_params listed (the dispatcher passes them)
    owner: weakref.ref[Any]  # the instance itself: a copy of its __dict__ is not it


def remember(
    obj: Any,
    construct: Any,
    bprop: Any,
    info: Any,
    passes: bool,
    core: Any,
    weights: tuple[Any, ...],
) -> None:
    """Record what MindSpore runs for ``obj`` while its class resolves to ``construct`` and
    ``bprop`` (and ``obj`` has neither of its own): the plan (a ``KwCellInfo``, whose dispatcher
    MindSpore runs; ``None`` for a cell without a bprop, or one kwcell leaves as it is,
    ``passes``), the core (which must keep the plan's class), and what ``internal_params``
    listed (a weighted plan's dispatcher passes those Parameters). The record names ``obj`` (weakly): a
    cell whose ``__dict__`` was copied from another (``mindspore.rewrite``, a user's clone) does
    not run the other's record. Only references: a dropped cell is freed at once (no reference
    cycle)."""
    obj.__dict__[SEEN] = Seen(type(obj), construct, bprop, info, passes, core, weights, weakref.ref(obj))


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
        frame = _getframe(1)
        from_mindspore = _runs(frame)
        if from_mindspore:
            # MindSpore's read on every call: what this instance ran last, while that holds.
            state = obj.__dict__
            seen = state.get(SEEN)
            if seen is not None:
                own = seen.cls.__dict__
                b = own.get("bprop")
                # still_seen for the usual case, inlined: this class's own slots hold the
                # construct and bprop it ran, and nothing is assigned on the instance.
                usual = (
                    seen.cls is type(obj)
                    and self.fn is seen.construct
                    and type(b) is BpropSlot
                    and b.fn is seen.bprop
                    and seen.construct is not None
                    and seen.bprop is not None
                    and "construct" not in state
                    and "bprop" not in state
                    and seen.owner() is obj
                    and (seen.core is None or type(seen.core) is seen.info.core_cls)
                    and same_listing(listing(obj), seen.weights)
                    and (not seen.weights or _same_layout(state, seen.core))
                )
                if (usual or still_seen(obj) is not None) and own.get("construct") is self:
                    if seen.info is not None:
                        if _compiling(frame):
                            _for_graph(obj)
                        return _MethodType(seen.info.dispatcher, obj)
                    if seen.construct is not None:  # no bprop: the user's construct, as on nn.Cell
                        return _bind(seen.construct, obj)
        nearest = self._nearest(obj)
        if nearest and from_mindspore:
            dispatcher = obj._kwcell_dispatcher()
            if dispatcher is not None:
                if _compiling(frame):
                    _for_graph(obj)
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
        frame = _getframe(1)
        from_mindspore = frame.f_code.co_filename.startswith(_MS_DIR)
        if from_mindspore:
            # MindSpore asking whether the cell has a bprop (each PyNative gradient of a top
            # cell): no, while what the instance ran last holds (as for construct).
            seen = still_seen(obj)
            if seen is not None and not seen.passes and seen.cls.__dict__.get("bprop") is self:
                raise AttributeError("bprop")
        nearest = self._nearest(obj)
        if nearest and from_mindspore and not obj._kwcell_passes_through():
            raise AttributeError("bprop")
        if nearest:
            assigned = obj.__dict__.get("bprop")
            if assigned is not None:
                return assigned
        fn = self.resolve(type(obj))
        if fn is None:
            raise AttributeError(f"{type(obj).__qualname__!r} object has no attribute 'bprop'")
        if from_mindspore:
            # The graph parser resolving ``self.bprop`` (or a ``super().bprop`` it did not get
            # through a reader) inside a bprop it compiles: kwcell's copy as written.
            holder = self.owner if self.fn is not None else _resolve(type(obj), "bprop", after=self.owner)[0]
            face = obj._kwcell_face_of(fn, holder)
            if face is not None:
                return face
        return _bind(fn, obj)


SUPER_PREFIX = "_kwcell_super_"
_NOT_WORD = re.compile(r"\W")


def super_key(owner: type) -> str:
    """What names ``owner``'s ``super().bprop`` reader: its name and identity. Two classes of
    one MRO can share a name (a library's ``Act`` subclassed as ``Act`` in another module): each
    continues the search after itself."""
    return f"{_NOT_WORD.sub('_', owner.__name__)}_{id(owner):x}"


def super_reader(key: str) -> str:
    """The attribute that stands for ``super().bprop`` in the bprop of the class ``key`` names
    (see :func:`super_key`), in graphs."""
    return SUPER_PREFIX + key


class SuperBprop:
    """``super().bprop`` in the bprop of ``owner``, read in a graph: the bprop after ``owner``
    in the instance's MRO, looked up now, as kwcell's copy of it as written (which takes the
    arguments it takes and returns what it returns, as in PYNATIVE)."""

    def __init__(self, owner: type) -> None:
        self.owner = owner

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        cls = type(obj)
        after = self.owner if self.owner in cls.__mro__ else None
        holder, fn = _resolve(cls, "bprop", after=after) if after is not None else (None, None)
        if fn is None:
            where = f"{self.owner.__qualname__}.bprop of {cls.__qualname__}"
            raise AttributeError(f"'super' object has no attribute 'bprop' ({where})")
        face = obj._kwcell_face_of(fn, holder)
        return face if face is not None else _bind(fn, obj)


_PARSER = os.sep + "parser.py"  # the graph compiler's Python side (mindspore/graph/_parse)


def _compiling(frame: types.FrameType) -> bool:
    """Whether a read from MindSpore comes from its graph compiler (GRAPH_MODE, ``@ms.jit``):
    its C++ side, called from ``compile`` in ``mindspore/graph/api.py``, or its parser. (PyNative
    reads come from ``Cell.__init__`` and the PyNative executor's custom-bprop call.)"""
    code = frame.f_code
    return code.co_name == "compile" or code.co_filename.endswith(_PARSER)


def _calls_super_bprop(fn: Any) -> bool:
    """Whether ``fn`` reads ``super().bprop`` (zero-argument ``super()``) in its source."""
    code = getattr(fn, "__code__", None)
    # Any use of super in a method gives it a __class__ cell: only those are parsed.
    if code is None or "__class__" not in code.co_freevars:
        return False
    if not {"super", "bprop"} <= set(code.co_names):
        return False
    from ._source import calls_super_bprop  # _source imports this module

    return calls_super_bprop(fn)


def _plain_method(cls: type, name: str) -> tuple[type | None, Any]:
    """The class of ``cls``'s MRO whose ``__dict__`` gives ``name`` first, and its function
    (``None`` unless it is a plain function)."""
    for klass in cls.__mro__:
        if klass is _STOP:
            break
        found = klass.__dict__.get(name)
        if found is not None:
            return (klass, found) if isinstance(found, types.FunctionType) else (None, None)
    return None, None


def _for_graph(obj: Any) -> None:
    """The graph compiler reading the forward it compiles: a gradient it would compile
    forever is reported now (its reads of bprop swallow errors), and so is a name the bprop
    reads that its module does not define, at the user's own line (the compiler's message
    would name kwcell's rewritten copy)."""
    problem = graph_recursion(obj)
    if problem is not None:
        raise RuntimeError(problem)
    bprop = obj.__dict__.get("bprop") or _resolve(type(obj), "bprop")[1]
    if isinstance(bprop, types.FunctionType) and bprop not in _NAMES_DEFINED:
        from ._source import undefined_name  # _source imports this module

        missing = undefined_name(bprop)
        if missing is not None:
            raise NameError(missing)
        _NAMES_DEFINED.add(bprop)
    if isinstance(bprop, types.FunctionType) and getattr(obj, "internal_params", None):
        from ._source import (
            attribute_keys,
            computed_key_lines,
            computed_weight_keys,
            helper_weight_message,
            self_calls,
        )

        # parsed once per function; the message names the instance's class now
        if _parsed_once(_COMPUTED_KEYS, bprop, computed_key_lines):
            raise RuntimeError(computed_weight_keys(type(obj), bprop)[0][1])

        # a method bprop calls that keys a dict by a weight: parsed once per function, its
        # method and its attributes looked up now (a later Net._grads = f, an attribute reset)
        for name, call_line in _parsed_once(_SELF_CALLS, bprop, self_calls):
            helper = _plain_method(type(obj), name)[1]
            for path, key_line in _parsed_once(_ATTRIBUTE_KEYS, helper, attribute_keys) if helper else ():
                if _is_weight(obj, path):
                    message = helper_weight_message(type(obj).__qualname__, name, call_line, path, key_line)
                    raise RuntimeError(message)


# bprops whose every global name was defined when a graph first compiled them (a name the
# module defines later is seen at the next compile; one it defined stays defined)
_NAMES_DEFINED: weakref.WeakSet[Any] = weakref.WeakSet()
# function -> what the graph checks read of its source (kwcell._source.computed_key_lines,
# self_calls, attribute_keys), each read once per function
_COMPUTED_KEYS: weakref.WeakKeyDictionary[Any, tuple[tuple[int, str], ...]] = weakref.WeakKeyDictionary()
_SELF_CALLS: weakref.WeakKeyDictionary[Any, tuple[tuple[str, int], ...]] = weakref.WeakKeyDictionary()
_ATTRIBUTE_KEYS: weakref.WeakKeyDictionary[Any, tuple[tuple[str, int], ...]] = weakref.WeakKeyDictionary()


def _parsed_once(cache: weakref.WeakKeyDictionary[Any, _T], fn: Any, read: Callable[[Any], _T]) -> _T:
    found = cache.get(fn)
    if found is None:
        found = cache[fn] = read(fn)
    return found


def _is_weight(obj: Any, path: str) -> bool:
    """Whether ``path`` (``"self.a.b"``, ``"self.internal_params[0]"``) reaches a Parameter of
    ``obj`` now."""
    from mindspore import Parameter

    value: Any = obj
    try:
        for part in path.split(".")[1:]:
            name, _, index = part.partition("[")
            value = getattr(value, name)
            if index:
                value = value[int(index.rstrip("]"))]
    except (AttributeError, IndexError, TypeError, ValueError):
        return False
    return isinstance(value, Parameter)


def graph_recursion(obj: Any) -> str | None:
    """Why compiling ``obj``'s gradient would recurse without end, or ``None``.

    MindSpore's graph compiler reads ``super()`` as ``super(type(self), self)`` in every
    function it parses as written. kwcell gives it copies of the bprops (whose ``super().bprop``
    continues after their own class), but not of the helper methods they call: a helper that
    reads ``super().bprop`` finds the wrong bprop when it is defined on a class other than the
    instance's (it finds the bprop that called it again), or finds a plain mixin's bprop, which
    the compiler then parses as written (its own ``super()`` finds itself). Either way the
    compile never ends (it hangs), so this is reported instead.
    """
    cls = type(obj)
    fn = obj.__dict__.get("bprop") or _resolve(cls, "bprop")[1]
    seen: set[int] = set()
    while fn is not None and id(fn) not in seen:
        seen.add(id(fn))
        code = getattr(fn, "__code__", None)
        if code is None:
            return None
        for name in code.co_names:
            holder, helper = _plain_method(cls, name)
            if holder is None or name in _NAMES or not _calls_super_bprop(helper):
                continue
            found = _resolve(cls, "bprop", after=cls)
            meant = _resolve(cls, "bprop", after=holder)[1]
            where = f"{holder.__qualname__}.{name}"
            if found[1] is not meant:
                return (
                    f"{cls.__qualname__}: {where} calls super().bprop, which MindSpore's graph "
                    f"compiler (GRAPH_MODE, @ms.jit) reads as super({cls.__name__}, self).bprop "
                    "outside a bprop, so the gradient would recurse without end. Call "
                    "super().bprop in bprop itself (kwcell continues it after the class that "
                    f"defines that bprop), write super({holder.__name__}, self).bprop in {where}, "
                    "or take this gradient in PYNATIVE mode"
                )
            provider, target = found
            if (
                provider is not None
                and not is_slot(provider.__dict__["bprop"])
                and _calls_super_bprop(target)
            ):
                mixin = f"{provider.__qualname__}.bprop"
                return (
                    f"{cls.__qualname__}: {where} calls super().bprop, which reaches {mixin}, "
                    "the bprop of a class that is not a KwCell and calls super().bprop itself: "
                    "MindSpore's graph compiler (GRAPH_MODE, @ms.jit) compiles it as written "
                    f"and reads its super() as super({cls.__name__}, self), so the gradient "
                    "would recurse without end. Call super().bprop in bprop itself (kwcell "
                    f"gives the compiler its own copy of {mixin} then), derive "
                    f"{provider.__qualname__} from KwCell, or take this gradient in PYNATIVE mode"
                )
        holder = next((k for k in cls.__mro__ if _holds(k, fn)), None)
        if holder is None or not _calls_super_bprop(fn):
            return None
        fn = _resolve(cls, "bprop", after=holder)[1]
    return None


_NAMES = ("construct", "bprop")


def _holds(klass: type, fn: Any) -> bool:
    found = klass.__dict__.get("bprop")
    return found is fn or (isinstance(found, _Slot) and found.fn is fn)


def install_super_readers(cls: type) -> None:
    """Give ``cls`` a :class:`SuperBprop` for each class of its MRO that has none yet."""
    for klass in cls.__mro__:
        if klass is _STOP:
            break
        name = super_reader(super_key(klass))
        if _first(cls, name) is None:
            type.__setattr__(cls, name, SuperBprop(klass))


def still_seen(obj: Any) -> Seen | None:
    """What :func:`remember` recorded for ``obj``, if it still holds (else ``None``): the same
    instance and class, resolving to the same construct and bprop, nothing assigned on the
    instance, the core still of the plan's class, and the same ``internal_params``. The usual
    case costs a few dictionary reads: the class's own slots hold the functions; an inheriting
    slot walks the MRO, as nn.Cell would."""
    state = obj.__dict__
    seen: Seen | None = state.get(SEEN)
    if seen is None or seen.cls is not type(obj) or "construct" in state or "bprop" in state:
        return None
    if seen.owner() is not obj:
        return None
    own = seen.cls.__dict__
    c = own.get("construct")
    b = own.get("bprop")
    construct = c.fn if type(c) is ConstructSlot and c.fn is not None else _resolve(seen.cls, "construct")[1]
    bprop = b.fn if type(b) is BpropSlot and b.fn is not None else _resolve(seen.cls, "bprop")[1]
    if construct is not seen.construct or bprop is not seen.bprop:
        return None
    if seen.core is not None and type(seen.core) is not seen.info.core_cls:
        return None
    if not same_listing(listing(obj), seen.weights):
        return None
    if seen.weights and not _same_layout(state, seen.core):
        return None
    return seen


def _same_layout(state: dict[str, Any], core: Any) -> bool:
    """Whether the weights the dispatcher passes still have the dtype and shape the core's
    weight keys recorded (the zeros and casts of their gradients are built from those): a
    Parameter cast or reshaped in place (``assign_value``, ``kwcell.gradcheck``'s float64
    run and its restore) makes the record stale."""
    weights = state.get("_kwcell_weights", ())
    keys = core.__dict__.get("_kwcell_weight_keys", ()) if core is not None else ()
    if len(keys) != len(weights):
        return False
    return all(k[1] == w.dtype and k[2] == tuple(w.shape) for k, w in zip(keys, weights, strict=True))


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
