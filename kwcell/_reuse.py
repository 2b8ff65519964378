"""Compile once per class: the reuse key MindSpore's graph parser reads from a cell.

``class Act(KwCell, compile_once=True)`` asks MindSpore to parse one graph for all instances
of ``Act`` in a compile (GRAPH_MODE, ``@ms.jit``, outer graphs), as ``mindspore.lazy_inline``
does. MindSpore's parser (``get_object_key``) reads ``cell_init_args`` from every cell it meets
and reuses the graph of an earlier cell of the same class whose key is equal and starts with
``lazy_inline_``; ``no_inline = False`` lets the reused graph be inlined afterwards (the only
policy that runs on CPU). Measured on MindSpore 2.10 (CPU), a reused graph takes everything
from the first instance it was parsed for except the Parameters its forward reads, which
become graph inputs, so each instance keeps its own values and gradients. Parameters a
``bprop`` reads are *not* lifted: they stay the first instance's.

The cell that carries the key is not the user's cell but a hidden **shared cell** between the
instance's dispatcher and its core (:class:`KwCellShared`): every call reaches it in one
positional form with every argument, because the dispatcher, which stays the instance's own
graph, binds keywords and fills defaults first. Measured: when the reused graph is the cell a
call site reaches by keyword, by position or with a default omitted, MindSpore's reuse mixes
up the call forms (a silently wrong gradient, or "The parameters number of the function is
3"), for kwcell's cells and hand-written ``lazy_inline_`` cells alike. The shared cell lists the
owner's Parameters as its own (``parameters_and_names``: what MindSpore's reuse makes inputs of
the reused graph, ``GeneralizeReusingGraph``). A cell without a bprop (no dispatcher) carries
the key itself, and then only when its construct has no defaults. Instances without a single
Parameter never share: their reused graph, called with different Python values at different
call sites, gave another gradient than per-instance compiles in some runs and not others
(measured, for cells with and without a bprop).

So the key here is not ``__init__``'s arguments (``lazy_inline``'s key, silently wrong for an
instance changed after ``__init__``) but what the graph reads from the instance when it is
compiled: the attributes ``construct`` and ``bprop`` read from ``self`` (found in their source,
following the methods and properties they call on ``self``), by value, with Parameters by
shape and dtype where MindSpore lifts them and by identity where it does not (read by a
bprop, or reached other than as a cell's own attribute); sub-cells by their whole state; the
cell's own MindSpore flags (training, hooks, mixed precision, recompute...). What kwcell
cannot key on makes the property raise ``AttributeError``: MindSpore then compiles that
instance on its own, exactly as without ``compile_once``.

MindSpore keeps reused graphs for one compile only (measured: a later compile sees changed
attributes and globals), so the key only has to tell apart instances compiled together;
what is the same for every instance of a class (its methods, class attributes, globals)
needs no key beyond the class itself.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import re
import textwrap
import threading
import types
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mindspore import Parameter, Tensor, context, nn
from mindspore.common.dtype import Type as DType
from mindspore.ops import Primitive

from ._core import OWNER_LINK
from ._errors import KwCellDefinitionError
from ._info import info_of
from ._lookup import is_slot

__all__ = ["FLAG", "PREFIX", "Reads", "class_reads", "configure", "describe", "key_of", "shares_graphs"]

#: MindSpore reuses a cell's graph only for keys that start with this (checked in its C++ parser).
PREFIX = "lazy_inline_"
#: The class attribute that holds a class's ``compile_once`` setting (inherited).
FLAG = "_kwcell_compile_once"

# ---------------------------------------------------------------- serial numbers for identities

# Reentrant: a weakref callback (``forget``) can run in the middle of ``_serial`` when a
# collection happens there, in the same thread.
_lock = threading.RLock()
# id(obj) -> (weak or strong reference, serial): ``id`` values are reused once an object is
# freed; a serial never is.
_serials: dict[int, tuple[Callable[[], Any], int]] = {}
_next_serial = [0]


def _serial(obj: Any) -> int:
    """A number for ``obj`` that no other object, alive or dead, ever gets."""
    with _lock:
        found = _serials.get(id(obj))
        if found is not None and found[0]() is obj:
            return found[1]
        _next_serial[0] += 1
        serial = _next_serial[0]
        key = id(obj)
        try:
            ref: Callable[[], Any] = weakref.ref(obj, _forgetter(key, serial))
        except TypeError:  # not weakly referenceable: kept alive, so its id is never reused
            ref = _Strong(obj)
        _serials[key] = (ref, serial)
        return serial


def _forgetter(key: int, serial: int) -> Callable[[Any], None]:
    def forget(_: Any) -> None:
        with _lock:
            found = _serials.get(key)
            if found is not None and found[1] == serial:
                del _serials[key]

    return forget


class _Strong:
    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __call__(self) -> Any:
        return self.obj


# ---------------------------------------------------------------- what the source reads from self


@dataclass(frozen=True)
class Reads:
    """What a set of functions reads from ``self``, found in their source."""

    #: Attribute names read as ``self.<name>`` (methods and properties followed).
    names: frozenset[str]
    #: Why the reads cannot be listed (``self`` used other than as ``self.<name>``, ``super()``,
    #: no source), or ``""``.
    dynamic: str = ""


_NO_READS = Reads(frozenset())
_reads_cache: weakref.WeakKeyDictionary[types.CodeType, Reads] = weakref.WeakKeyDictionary()


def _function_node(fn: types.FunctionType) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None:
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a lambda in the middle of a line, for example
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == fn.__name__:
            return node
    return None


def _own_reads(fn: types.FunctionType) -> tuple[Reads, list[str]]:
    """The ``self.<name>`` reads of one function, and the names it calls as methods."""
    code = fn.__code__
    cached = _reads_cache.get(code)
    if cached is not None:
        return cached, sorted(cached.names)
    node = _function_node(fn)
    if node is None:
        reads = Reads(frozenset(), f"no source for {fn.__qualname__}")
    elif not node.args.args and not node.args.posonlyargs:
        reads = _NO_READS
    else:
        first = (node.args.posonlyargs or node.args.args)[0].arg
        names: set[str] = set()
        dynamic = ""
        attribute_values = {
            id(n.value)
            for n in ast.walk(node)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
        }
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == first:
                if not isinstance(sub.ctx, ast.Load):
                    dynamic = dynamic or f"{fn.__qualname__} assigns {first}.{sub.attr}"
                names.add(sub.attr)
            elif isinstance(sub, ast.Name) and sub.id == first and id(sub) not in attribute_values:
                dynamic = dynamic or f"{fn.__qualname__} uses {first} other than as {first}.<name>"
            elif isinstance(sub, ast.Name) and sub.id in ("super", "__class__", "vars", "locals"):
                dynamic = dynamic or f"{fn.__qualname__} calls {sub.id}()"
        reads = Reads(frozenset(names), dynamic)
    _reads_cache[code] = reads
    return reads, sorted(reads.names)


def _plain_function(obj: Any) -> types.FunctionType | None:
    obj = inspect.unwrap(obj) if callable(obj) else obj
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    return obj if isinstance(obj, types.FunctionType) else None


def reads_of(cls: type, functions: Iterable[Any], consulted: list[tuple[str, Any]]) -> Reads:
    """What ``functions`` (methods of ``cls``) read from ``self``, following the methods and
    properties of ``cls`` they reach through ``self``; the class attributes it looked at are
    added to ``consulted``."""
    names: set[str] = set()
    dynamic = ""
    todo = list(functions)
    seen: set[int] = set()
    while todo:
        raw = todo.pop()
        fn = _plain_function(raw)
        if fn is None:
            dynamic = dynamic or f"{raw!r} is not a Python function"
            continue
        if id(fn.__code__) in seen:
            continue
        seen.add(id(fn.__code__))
        reads, called = _own_reads(fn)
        dynamic = dynamic or reads.dynamic
        for name in called:
            names.add(name)
            attr = _class_attr(cls, name)
            consulted.append((name, attr))
            computed = _computed(attr)
            if computed:
                dynamic = dynamic or f"{fn.__qualname__} reads self.{name}, {computed}"
            if isinstance(attr, property):
                todo.extend(f for f in (attr.fget,) if f is not None)
            elif isinstance(attr, (staticmethod, classmethod)):
                continue  # the same for every instance: the class's key covers it
            elif isinstance(attr, types.FunctionType) and not _is_cell_machinery(cls, name):
                todo.append(attr)
    return Reads(frozenset(names), dynamic)


_MISSING = object()
_PLAIN_DESCRIPTORS = (types.FunctionType, staticmethod, classmethod, property)


def _computed(attr: Any) -> str:
    """Why the value read through ``attr`` (what a class holds under a name ``self.<name>``
    reads) is not what the instance's ``__dict__`` holds, or ``""``. Functions, static and
    class methods are the same for every instance; a property's getter is followed into its
    source. Any other descriptor (``functools.cached_property``, a user's descriptor, data or
    not) computes the value when it is read: the key cannot see it."""
    if attr is _MISSING or is_slot(attr) or isinstance(attr, _PLAIN_DESCRIPTORS):
        return ""
    kind = type(attr)
    if hasattr(kind, "__get__") and not isinstance(attr, _BY_IDENTITY_TYPES):
        return f"a {kind.__module__}.{kind.__qualname__} descriptor that computes its value"
    return ""


def _class_attr(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if name in klass.__dict__:
            found = klass.__dict__[name]
            if is_slot(found):  # a KwCell's construct/bprop: the function it stands for now
                return found.resolve(cls)
            return found
    return _MISSING


def _is_cell_machinery(cls: type, name: str) -> bool:
    """``nn.Cell``'s own methods (``self.cells()``, ...): MindSpore's, not the user's source."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__module__.startswith("mindspore.")
    return False


@dataclass(frozen=True)
class ClassReads:
    """What the graph of a compile-once class reads from an instance."""

    #: Read by the forward (``construct`` and what it calls on ``self``).
    forward: Reads
    #: Read by the bprop; Parameters reached from these are keyed by identity (MindSpore does
    #: not make them graph inputs of a reused graph).
    backward: Reads
    #: The attribute of the class's core that holds the user's construct (``None``: no bprop).
    construct_attr: str | None
    #: The class's kwcell information this was found from.
    info: Any = None
    #: Whether the class's construct is a Python function (``False``: no key; see _compute).
    construct_plain: bool = True
    #: What ``_compute`` keys on, by the names in an instance's ``__dict__`` (in their order):
    #: ``(name, kind, backward, nn.Cell's default)``, sorted by name, without the names it
    #: skips whatever their value. Found once for these reads, which are found again (a new
    #: ``ClassReads``) when the class changes.
    layouts: dict[tuple[str, ...], tuple[tuple[str, int, bool, Any], ...]] = field(
        default_factory=dict, compare=False, repr=False
    )


# Read by the hidden core's bprop from its owner (see _core.KwCellCore).
_CORE_READS = frozenset({"internal_params", "used_bprop_inputs"})


_class_cache: weakref.WeakKeyDictionary[type, tuple[tuple[tuple[str, Any], ...], ClassReads]] = (
    weakref.WeakKeyDictionary()
)


def class_reads(cls: type) -> ClassReads:
    """What the graph of ``cls`` reads from its instances, from the source of its methods.

    Cached with what it was found from (the class's attributes it followed), and found again
    when one of them is no longer what the class holds (``Net.helper = other``).
    """
    cached = _class_cache.get(cls)
    info = info_of(cls)
    if cached is not None and cached[1].info is info and all(_class_attr(cls, n) is v for n, v in cached[0]):
        return cached[1]
    consulted: list[tuple[str, Any]] = []
    if info is None:
        construct = _class_attr(cls, "construct")
        consulted.append(("construct", construct))
        result = ClassReads(reads_of(cls, [construct], consulted), _NO_READS, None, info)
    else:
        attr = "construct"
        construct = _class_attr(cls, attr)
        consulted.append((attr, construct))
        forward = reads_of(cls, [construct], consulted)
        backward = reads_of(cls, [info.user_bprop], consulted)
        backward = Reads(backward.names | _CORE_READS, backward.dynamic)
        # ``getattr(cls, attr)`` is what ``construct`` (consulted above) stands for now.
        plain = _plain_function(getattr(cls, attr)) is not None
        result = ClassReads(forward, backward, attr, info, plain)
    _class_cache[cls] = (tuple(consulted), result)
    return result


# ---------------------------------------------------------------- fingerprints of values


class _Unkeyable(Exception):
    """What kwcell cannot key on (the instance is then compiled on its own)."""


# nn.Cell bookkeeping that never changes a graph (times, ids, names, caches, compile state).
_VOLATILE = frozenset(
    {
        "_create_time",
        "_id",
        "_param_prefix",
        "_scope",
        "_auto_prefix",
        "_cell_init_args",
        "_compile_cache",
        "_phase_cache",
        "_compile_phase",
        "_compiled",
        "arguments_key",
        "_jit_graph_name",
        "_is_check_and_refresh",
        "_init_flag",
        "_lazy_construct_sig",
        "is_top_cell",
        "_exist_objs",
        "_exist_names",
        "_parameter_layout_dict",
        "_parallel_parameter_name_list",
        "_parallel_parameter_merge_net_dict",
        "_lazy_state_dict_hooks",
        "_lazy_state_dict_pre_hooks",
        "_lazy_load_state_dict_pre_hooks",
        "_lazy_load_state_dict_post_hooks",
        "_lazy_non_persistent_buffers_set",
        "no_inline",
    }
)
_PLAIN = (type(None), bool, int, float, complex, str, bytes)
_BY_IDENTITY_TYPES: tuple[type, ...] = (
    types.BuiltinFunctionType,
    types.MethodType,
    type,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
)
_BY_IDENTITY = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.ModuleType,
    type,
    types.BuiltinMethodType,
    types.MethodWrapperType,
)


class _Fingerprint:
    """Turns the state a graph reads into nested tuples of plain values (then hashed)."""

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}
        self.keep: list[Any] = []  # objects whose id is in ``seen`` stay alive meanwhile

    def value(self, v: Any, backward: bool, registered: bool = False) -> Any:
        kind = type(v)
        if kind in _PLAIN:
            return (kind.__name__, repr(v))
        if (kind is dict or kind is OrderedDict or kind is tuple or kind is list) and not v:
            # Empty (most of nn.Cell's hooks and caches): what the cases below give for it.
            return (kind.__name__, ())
        if isinstance(v, Parameter):
            if backward or not registered:
                return ("parameter", _serial(v))  # not a graph input of a reused graph
            return ("parameter", tuple(v.shape), str(v.dtype), bool(v.requires_grad))
        if isinstance(v, Tensor):
            data = v.asnumpy()
            return ("tensor", data.shape, str(data.dtype), hashlib.sha1(data.tobytes()).hexdigest())
        if isinstance(v, np.ndarray):
            return (
                "ndarray",
                v.shape,
                str(v.dtype),
                hashlib.sha1(np.ascontiguousarray(v).tobytes()).hexdigest(),
            )
        if isinstance(v, (np.generic,)):
            return ("np", type(v).__name__, repr(v))
        if isinstance(v, nn.Cell):
            return self.cell(v, backward)
        if isinstance(v, Primitive):
            attrs: Any = getattr(v, "attrs", {})
            return ("primitive", _serial(type(v)), self.value(dict(attrs), backward))
        if isinstance(v, _BY_IDENTITY):
            return ("object", _serial(v))
        if isinstance(v, DType):
            return ("dtype", str(v))
        if isinstance(v, (tuple, list)):
            return (type(v).__name__, tuple(self.value(x, backward) for x in v))
        if type(v) in (dict, OrderedDict):
            items = []
            for k, x in v.items():
                if type(k) not in _PLAIN:
                    raise _Unkeyable(f"a dict with a {type(k).__name__} key")
                items.append((repr(k), self.value(x, backward, registered)))
            return (type(v).__name__, tuple(items if type(v) is OrderedDict else sorted(items)))
        if type(v) in (set, frozenset) and all(type(x) in _PLAIN for x in v):
            return (type(v).__name__, tuple(sorted(repr(x) for x in v)))
        raise _Unkeyable(f"a value of type {type(v).__module__}.{type(v).__qualname__}")

    def cell(self, cell: nn.Cell, backward: bool) -> Any:
        """A sub-cell by its whole state (its graph is parsed within the reused one)."""
        index = self.seen.get(id(cell))
        if index is not None:
            return ("same cell as", index)
        self.seen[id(cell)] = len(self.seen)
        self.keep.append(cell)
        _check_lookups(type(cell))
        return ("cell", _serial(type(cell)), self.state(cell, backward or _bprop_reads(cell)))

    def state(self, cell: nn.Cell, backward: bool | frozenset[str]) -> Any:
        """``backward``: whether Parameters are keyed by identity, or the names for which
        they are (what the cell's own bprop reads)."""
        out = []
        defaults = _cell_bookkeeping()[1]
        for name, v in sorted(cell.__dict__.items()):
            if name in _VOLATILE or name.startswith("_kwcell_"):
                continue
            default = defaults.get(name, _MISSING)
            if default is not _MISSING and type(v) is type(default) and v == default:
                continue  # as nn.Cell.__init__ left it
            registered = name in ("_params", "_params_list")
            try:
                if isinstance(backward, frozenset) and type(v) in (dict, OrderedDict):
                    items = tuple(
                        (k, self.value(x, k in backward, registered)) for k, x in v.items() if type(k) is str
                    )
                    if len(items) != len(v):
                        raise _Unkeyable("a dict with keys that are not strings")
                    out.append((name, items))
                else:
                    b = backward if isinstance(backward, bool) else name in backward
                    out.append((name, self.value(v, b, registered)))
            except _Unkeyable as exc:
                raise _Unkeyable(f"{type(cell).__qualname__}.{name} is {exc}") from None
        return tuple(out)


_CELL_GETATTR: Any = getattr(nn.Cell, "__getattr__")  # noqa: B009 - not in the stubs


def _check_lookups(cls: type) -> None:
    """A class whose attribute reads Python computes (``__getattr__``, ``__getattribute__``
    overrides, or a descriptor that computes a value on the class): the key cannot see by
    value what the graph reads, so the instance compiles on its own."""
    if cls.__getattr__ is not _CELL_GETATTR:  # type: ignore[attr-defined]
        raise _Unkeyable(f"{cls.__qualname__} overrides __getattr__")
    if cls.__getattribute__ is not object.__getattribute__:  # type: ignore[comparison-overlap]
        raise _Unkeyable(f"{cls.__qualname__} overrides __getattribute__")
    for klass in cls.__mro__:
        if klass.__module__.startswith("mindspore.") or klass is object:
            continue
        for name, attr in vars(klass).items():
            if name.startswith(("_kwcell_", "__")) or name in ("cell_init_args", "no_inline"):
                continue
            why = _computed(attr)
            if why:
                raise _Unkeyable(f"{cls.__qualname__}.{name} is {why}")


def _bprop_reads(cell: nn.Cell) -> bool | frozenset[str]:
    """For a sub-cell: whether all its Parameters are read by a bprop (MindSpore does not make
    those graph inputs of a reused graph), or the names its KwCell bprop reads."""
    if info_of(type(cell)) is not None:
        reads = class_reads(type(cell))
        return True if reads.backward.dynamic else reads.backward.names
    return hasattr(type(cell), "bprop")


# Attributes ``nn.Cell`` itself keeps on an instance, and the plain values a fresh cell has:
# found once, from a fresh cell and nn.Cell's source.
_bookkeeping: list[tuple[frozenset[str], dict[str, Any]]] = []


_SET_ON_SELF = re.compile(r"""self\.(\w+)\s*=[^=]|__setattr__\(\s*(?:self\s*,\s*)?["'](\w+)["']""")


def _cell_bookkeeping() -> tuple[frozenset[str], dict[str, Any]]:
    if not _bookkeeping:
        fresh = nn.Cell().__dict__
        names = set(fresh)
        try:  # what nn.Cell's methods set on a cell later (add_flags, recompute, hooks...)
            path = inspect.getsourcefile(nn.Cell)
            text = open(path, encoding="utf-8").read() if path else ""  # noqa: SIM115
        except (OSError, TypeError):  # pragma: no cover - MindSpore ships its source
            text = ""
        for match in _SET_ON_SELF.finditer(text):
            name = match.group(1) or match.group(2)
            if name.startswith("_"):  # public names here are the docstrings' examples
                names.add(name)
        defaults = {k: v for k, v in fresh.items() if type(v) in _PLAIN}
        _bookkeeping.append((frozenset(names), defaults))
    return _bookkeeping[0]


# What ``_compute`` does with an instance attribute, by name (see ``ClassReads.plan``).
_SKIP, _VALUE, _CONTAINER = 0, 1, 2
_CONTAINERS = frozenset({"_params", "_params_list", "_cells", "_buffers"})
_REGISTERED = frozenset({"_params", "_params_list"})


def _plan_name(reads: ClassReads, name: str) -> tuple[int, bool]:
    """What the key takes of attribute ``name`` whatever its value: (kind, backward)."""
    if name in _VOLATILE or name.startswith("_kwcell_"):
        return _SKIP, False
    if not (reads.forward.dynamic or reads.backward.dynamic):
        wanted = reads.forward.names | reads.backward.names
        if name not in wanted and name not in _cell_bookkeeping()[0]:
            return _SKIP, False  # a user attribute the graph does not read
    backward = name in reads.backward.names or bool(reads.backward.dynamic)
    return (_CONTAINER if name in _CONTAINERS else _VALUE), backward


_MAX_LAYOUTS = 64


def _layout(reads: ClassReads, state: dict[str, Any]) -> tuple[tuple[str, int, bool, Any], ...]:
    names = tuple(state)
    found = reads.layouts.get(names)
    if found is None:
        defaults = _cell_bookkeeping()[1]
        out = []
        for name in sorted(names):
            kind, backward = _plan_name(reads, name)
            if kind != _SKIP:
                out.append((name, kind, backward, defaults.get(name, _MISSING)))
        found = tuple(out)
        if len(reads.layouts) >= _MAX_LAYOUTS:  # instances with ever new attribute names
            reads.layouts.clear()
        reads.layouts[names] = found
    return found


_NO_PARAMETERS = (
    "it has no Parameters: MindSpore's cell reuse gives Parameter-free instances called with "
    "different Python values another gradient in some runs (measured)"
)


def _has_defaults(cls: type) -> bool:
    construct = _plain_function(_class_attr(cls, "construct"))
    return construct is None or bool(construct.__defaults__ or construct.__kwdefaults__)


def _compute(cell: nn.Cell) -> str:
    cls = type(cell)
    state = cell.__dict__
    reads = class_reads(cls)
    if "construct" in state or "bprop" in state:
        raise _Unkeyable("its construct or bprop was replaced on the instance")
    _check_lookups(cls)
    if reads.construct_attr is not None and not reads.construct_plain:
        raise _Unkeyable("its construct is not a Python function")
    if next(iter(cell.get_parameters()), None) is None:
        raise _Unkeyable(_NO_PARAMETERS)
    if reads.construct_attr is None and _has_defaults(cls):
        raise _Unkeyable(
            "its construct has defaults and no bprop: MindSpore's reuse mixes up calls that give "
            "and omit a default"
        )
    fp = _Fingerprint()
    fp.seen[id(cell)] = 0
    parts: list[Any] = [("class", _serial(cls))]
    backward_names = reads.backward.names
    for name, kind, backward, default in _layout(reads, state):
        v = state[name]
        if default is not _MISSING and type(v) is type(default) and v == default:
            continue  # as nn.Cell.__init__ left it
        if kind == _CONTAINER:
            # What nn.Cell.__getattr__ finds as self.<key>: keyed as if it were read directly.
            registered = name in _REGISTERED
            items = []
            for key, item in v.items():
                b = backward or key in backward_names
                try:
                    items.append((key, fp.value(item, b, registered=registered)))
                except _Unkeyable as exc:
                    raise _Unkeyable(f"{cls.__qualname__}.{key} is {exc}") from None
            parts.append((name, tuple(items)))
            continue
        try:
            parts.append((name, fp.value(v, backward)))
        except _Unkeyable as exc:
            raise _Unkeyable(f"{cls.__qualname__}.{name} is {exc}") from None
    digest = hashlib.sha1(repr(parts).encode()).hexdigest()[:24]
    del fp
    return f"{PREFIX}kwcell{_serial(cls)}_{digest}"


# Compile-once cells found inside another compile-once cell. Measured: MindSpore crashes
# (segmentation fault) when one reused graph serves both an instance inside another reused
# graph and one outside it; inside a reused graph a cell is parsed once anyway.
_nested: weakref.WeakSet[nn.Cell] = weakref.WeakSet()


_CELLS_AND_NAMES = nn.Cell.cells_and_names


def _mark_nested(cell: nn.Cell) -> None:
    children = cell.__dict__.get("_cells", _MISSING)
    if not children and children is not _MISSING and type(cell).cells_and_names is _CELLS_AND_NAMES:
        return  # no sub-cells: nn.Cell.cells_and_names would find nothing but the cell itself
    for _, sub in cell.cells_and_names():
        if sub is not cell and getattr(type(sub), FLAG, False):
            _nested.add(sub)


def key_of(cell: nn.Cell) -> tuple[str | None, str]:
    """The reuse key of ``cell``, or ``None`` and why it compiles on its own."""
    if not getattr(type(cell), FLAG, False):
        return None, f"{type(cell).__qualname__} is not compile_once"
    try:
        _mark_nested(cell)
        if cell in _nested:
            return None, "it sits inside another compile-once cell, whose shared graph holds it"
        return _compute(cell), ""
    except _Unkeyable as exc:
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 - a user's property or value that fails to read
        # Never worse than without compile_once: this instance gets a graph of its own.
        return None, f"reading its state raised {type(exc).__name__}: {exc}"


# ---------------------------------------------------------------- what the class carries


class _ReuseKey:
    """``cell_init_args`` of a compile-once class: its reuse key, read when MindSpore parses it.

    ``AttributeError`` (``hasattr`` is then false) when the instance must be compiled on its
    own. Setting it (``lazy_inline``, MindSpore's ``cell_attr_register``) keeps the value where
    ``nn.Cell`` keeps it, without making it the key.
    """

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        if context._get_mode() != context.GRAPH_MODE:
            # Under PYNATIVE, @ms.jit graphs are compiled one jitted function at a time, and a
            # graph shared in an earlier one was served with stale results (measured in the test
            # suite): there, every instance compiles on its own.
            raise AttributeError("cell_init_args")
        if obj._kwcell_plan() is not None:
            # A cell with a bprop: its shared cell carries the key (see KwCellShared).
            raise AttributeError("cell_init_args")
        key, _ = key_of(obj)
        if key is None:
            raise AttributeError("cell_init_args")
        return key

    def __set__(self, obj: Any, value: Any) -> None:
        if not isinstance(value, str):
            msg = (
                f"For 'Cell', the property 'cell_init_args' must be string type, but got type {type(value)}."
            )
            raise TypeError(msg)
        object.__setattr__(obj, "_cell_init_args", value)


# ---------------------------------------------------------------- the shared cell

# owner -> its shared cell (as _corecell.CORES keeps cores: outside the owner's ``__dict__``).
_SHARED: dict[weakref.ref[Any], nn.Cell] = {}
_SHARED_CLASSES: dict[int, type] = {}
_SHARED_TEMPLATE = '''\
def construct(self, {params}):
    """kwcell shared cell of a compile_once class: reached positionally with every argument
    by the instance's dispatcher; calls the instance's core."""
    return self._kwcell_real({params})
'''


def _drop_shared(key: weakref.ref[Any]) -> None:
    _SHARED.pop(key, None)


class _SharedOwnerKey:
    """``cell_init_args`` of a shared cell: its owner's key, found when the owner's dispatcher
    reached it (``_SharedEntry``), in the same parse."""

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        key = obj.__dict__.get("_kwcell_key")
        if key is None:
            raise AttributeError("cell_init_args")
        return key

    def __set__(self, obj: Any, value: Any) -> None:
        object.__setattr__(obj, "_cell_init_args", value)


class _RealCore:
    """``_kwcell_real`` of a shared cell: its owner's core."""

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        from ._corecell import attach_core, core_of

        cell = obj._kwcell_owner
        core = core_of(cell)
        return core if core is not None else attach_core(cell)


class KwCellShared(nn.Cell):
    """The cell the instances of a compile-once class share (see the module docstring)."""

    cell_init_args = _SharedOwnerKey()
    no_inline = False
    _kwcell_real = _RealCore()

    _kwcell_owner = OWNER_LINK  # a core's weak link to its owner

    def parameters_and_names(self, *args: Any, **kwargs: Any) -> Any:
        # What MindSpore's reuse turns into inputs of the reused graph, matched by position
        # between instances: the owner's Parameters, which the graph reads.
        return self._kwcell_owner.parameters_and_names(*args, **kwargs)

    def construct(self, *args: Any) -> Any:  # replaced per signature (_shared_class)
        msg = "kwcell: a shared cell was called without its plan"
        raise RuntimeError(msg)


def _shared_class(inputs: int) -> type:
    """A shared cell class whose construct takes ``inputs`` positional inputs (construct's,
    then the Parameters ``internal_params`` lists)."""
    from ._codegen import Unit, compile_units

    found = _SHARED_CLASSES.get(inputs)
    if found is None:
        params = ", ".join(f"_kwcell_in{i}" for i in range(inputs))
        label = f"shared{inputs}"
        fns = compile_units(
            kind="shared cell",
            label=label,
            header=f"Generated by kwcell: a compile_once shared cell ({inputs} inputs). Do not edit.",
            units=[Unit("shared", _SHARED_TEMPLATE.format(params=params), {"__name__": __name__})],
        )
        found = type(
            "_KwCellShared",
            (KwCellShared,),
            {
                "construct": fns["shared"]["construct"],
                "__module__": __name__,
                "__qualname__": "_KwCellShared",
            },
        )
        _SHARED_CLASSES[inputs] = found
    return found


class _SharedEntry:
    """``_kwcell_core`` of a compile-once class: what its dispatcher calls. In a GRAPH_MODE
    compile, an instance that has a key gets its shared cell (which carries the key and calls
    the core); otherwise, and in PYNATIVE, its core, as without ``compile_once``."""

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        from ._corecell import CORES, attach_core, ref

        core = CORES.get(ref(obj))
        if core is None:
            core = attach_core(obj)
        if not getattr(type(obj), FLAG, False) or context._get_mode() != context.GRAPH_MODE:
            return core
        key, _ = key_of(obj)
        info = obj._kwcell_running_info()
        if key is None or info is None or not info.routes:
            return core
        inputs = len(info.spec.names) + len(obj.__dict__.get("_kwcell_weights", ()))
        cls = _shared_class(inputs)
        shared = _SHARED.get(ref(obj))
        if shared is None:
            shared = cls()
            object.__setattr__(shared, "_kwcell_owner_ref", weakref.ref(obj))
            _SHARED[ref(obj, _drop_shared)] = shared
        elif type(shared) is not cls:
            shared.__class__ = cls
        shared.__dict__["_kwcell_key"] = key
        return shared


class _Absent:
    """An attribute a class must not have although a base has it (``compile_once=False``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is not None and self.name in obj.__dict__:
            return obj.__dict__[self.name]
        raise AttributeError(self.name)


def configure(cls: type, compile_once: Any) -> None:
    """Apply a class's ``compile_once`` keyword (``None``: not given, inherited as it is).

    The one entry point for every way a class gets kwcell's behaviour (``KwCell``'s class
    keyword; the class decorator may call it the same way).
    """
    if compile_once is None:
        return
    if not isinstance(compile_once, bool):
        msg = (
            f"{cls.__qualname__}: compile_once must be True or False, got {compile_once!r}; "
            f"write {_how_to_ask(cls)}"
        )
        raise KwCellDefinitionError(msg)
    if compile_once != shares_graphs(cls):
        _forget_plans(cls)  # a compile_once plan's dispatcher differs (_templates.ROUTE)
    type.__setattr__(cls, FLAG, compile_once)
    if compile_once:
        type.__setattr__(cls, "cell_init_args", _ReuseKey())
        type.__setattr__(cls, "no_inline", False)
        type.__setattr__(cls, "_kwcell_core", _SharedEntry())
    elif any(getattr(base, FLAG, False) for base in cls.__mro__[1:]):
        type.__setattr__(cls, "cell_init_args", nn.Cell.__dict__["cell_init_args"])
        type.__setattr__(cls, "no_inline", _Absent("no_inline"))


def shares_graphs(cls: type) -> bool:
    """Whether ``cls`` compiles once (its instances may share a graph): its dispatcher then
    routes (``_templates.ROUTE``)."""
    return bool(getattr(cls, FLAG, False))


def _forget_plans(cls: type) -> None:
    """Drop what was generated for ``cls`` and its subclasses (made again when next used)."""
    from ._info import forget_plans

    for klass in [cls, *_subclasses(cls)]:
        forget_plans(klass)


def _subclasses(cls: type) -> list[type]:
    found: list[type] = []
    todo: list[type] = list(type.__subclasses__(cls))
    while todo:
        klass = todo.pop()
        if klass not in found:
            found.append(klass)
            todo.extend(type.__subclasses__(klass))
    return found


#: The class attribute ``@keyword_bprop`` marks a decorated class with (``_decorate.MANAGED``).
_DECORATED = "_kwcell_managed"


def _how_to_ask(cls: type) -> str:
    """How the user turns compile_once on for ``cls``: KwCell's class keyword, or the class
    decorator's argument for a decorated class (its class statement does not take the keyword)."""
    if any(_DECORATED in klass.__dict__ for klass in cls.__mro__):
        return f"@keyword_bprop(compile_once=True) on class {cls.__name__}"
    return f"class {cls.__name__}(KwCell, compile_once=True)"


def describe(cell_or_cls: Any) -> list[str]:
    """Lines for ``kwcell.explain``: whether the class compiles once, on what key."""
    cls = cell_or_cls if isinstance(cell_or_cls, type) else type(cell_or_cls)
    if not getattr(cls, FLAG, False):
        return [f"compile once: off (each instance compiles its own graph; to share one: {_how_to_ask(cls)})"]
    owner = next(k for k in cls.__mro__ if FLAG in k.__dict__)
    origin = "" if owner is cls else f" (inherited from {owner.__qualname__})"
    reads = class_reads(cls)
    lines = [
        f"compile once: on{origin}: instances compiled together share one graph when their keys are equal",
        "  shared: calls whose inputs are all Tensors; a call with a Python value (a number, None, a "
        "tuple, a default left out) compiles the instance on its own",
    ]
    dynamic = reads.forward.dynamic or reads.backward.dynamic
    if dynamic:
        lines.append(f"  key: the class and the whole state of the instance ({dynamic})")
    else:
        fwd = ", ".join(sorted(reads.forward.names)) or "nothing"
        bwd = ", ".join(sorted(reads.backward.names - _CORE_READS)) or "nothing"
        lines.append(
            f"  key: the class, its MindSpore flags and what the graph reads from self: construct reads "
            f"{fwd}; bprop reads {bwd} (values by value, Parameters by shape and dtype, or by identity "
            "when a bprop reads them, sub-cells by their whole state)"
        )
    if not isinstance(cell_or_cls, type):
        key, why = key_of(cell_or_cls)
        lines.append(
            f"  this instance: key {key}" if key else f"  this instance: compiles on its own ({why})"
        )
    return lines
