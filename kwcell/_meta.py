"""``KwCellMeta``: inspect -> validate -> generate -> attach, once per class statement."""

from __future__ import annotations

import abc
import inspect
import itertools
import sys
import threading
import types
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mindspore import context, nn

try:  # MindSpore 2.10 moved it; the old module logs a deprecation warning when imported
    from mindspore.graph.api import _pynative_executor  # type: ignore[import-untyped,unused-ignore]
except ImportError:  # MindSpore 2.8, 2.9
    from mindspore.common.api import _pynative_executor

from . import _runtime
from ._binder import binder_unit, defaults_of, signature_source
from ._codegen import Unit, compile_units
from ._errors import KwCellDefinitionError, KwCellWarning
from ._override import REENTRY, route_class_construct
from ._source import ZERO, rewrite_bprop
from ._spec import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    BpropSpec,
    CellSpec,
    Signature,
    call_text,
    safe_repr,
    signature_of,
)
from ._templates import CORE, CORE_STATIC, DISPATCHER, GRAPH_BPROP, HEADER, PY_BPROP, RAISE_BPROP
from ._validate import (
    BY_NAME,
    CLASSIC_ARGS,
    check_bprop,
    check_construct,
    is_mindspore_form,
    passes_through,
)

__all__ = ["KwCellInfo", "KwCellMeta", "info_of", "keyword_only", "own_infos"]

_INFO = "_kwcell_info"
GRAPH = context.GRAPH_MODE
_MISSING = object()
_TOKENS = itertools.count(1)


@dataclass(frozen=True)
class KwCellInfo:
    """What kwcell generated for one class: kept on the class as ``_kwcell_info``."""

    spec: CellSpec
    user_construct: Callable[..., Any]
    user_bprop: Callable[..., Any]
    positional_bprop: Callable[..., Any]
    core_cls: type[nn.Cell]
    dispatcher: types.FunctionType
    bind: types.FunctionType
    files: dict[str, str] = field(default_factory=dict)
    token: int = 0
    #: What PYNATIVE calls as the bprop (the user's own function behind a normalizer); its
    #: ``__wrapped__`` is ``positional_bprop``, which the graph compiler parses.
    py_bprop: Callable[..., Any] | None = None
    #: How bprop receives construct's inputs: ``_validate.CLASSIC_ARGS``, ``BY_POSITION`` or
    #: ``BY_NAME``.
    reading: str = ""


def own_infos(cls: type) -> list[KwCellInfo]:
    """The kwcell information of every class in ``cls``'s MRO that generated code, nearest first."""
    return [info for klass in cls.__mro__ if (info := klass.__dict__.get(_INFO)) is not None]


def info_of(cls: type) -> KwCellInfo | None:
    """The kwcell information of ``cls`` or of the nearest base that has one."""
    for klass in cls.__mro__:
        info = klass.__dict__.get(_INFO)
        if info is not None or _INFO in klass.__dict__:
            return info
    return None


class _KwCellCore(nn.Cell):
    """Base of the hidden per-class core cell that carries the generated bprop.

    The core reaches its owner through ``_kwcell_owner`` (a weak reference, set with
    ``object.__setattr__`` so that neither cell becomes the other's child, and so that an owner
    and its core form no reference cycle: a dropped network is freed at once, not by the cyclic
    garbage collector) and forwards the attributes MindSpore reads from a cell with a bprop.
    """

    _init_flag: bool  # set by nn.Cell once its parameters are initialised

    @property
    def _kwcell_owner(self) -> nn.Cell:
        owner = self._kwcell_owner_or_none()
        if owner is None:
            raise AttributeError("_kwcell_owner")
        return owner

    def __call__(self, *args: Any) -> Any:
        reentry = self.__dict__.get(REENTRY)
        if reentry is not None and reentry[0] == threading.get_ident():
            # An instance's replacement forward called the original construct (see _override).
            return reentry[1](*args)
        # The PyNative forward with nothing to record: Cell.__call__ would call construct
        # directly too (the core has no hooks, shard, recompute, mixed precision or dynamic
        # shapes of its own); skipping its checks saves a few microseconds per call.
        if self._init_flag and not _pynative_executor.requires_grad() and context._get_mode() != GRAPH:
            return self.construct(*args)
        return super().__call__(*args)

    def _kwcell_owner_or_none(self) -> nn.Cell | None:
        ref = self.__dict__.get("_kwcell_owner_ref")
        return ref() if ref is not None else None

    @property
    def bprop_debug(self) -> bool:
        owner = self._kwcell_owner_or_none()
        return bool(owner.bprop_debug) if owner is not None else False

    @bprop_debug.setter
    def bprop_debug(self, value: bool) -> None:
        owner = self._kwcell_owner_or_none()
        if owner is not None:
            owner.bprop_debug = value

    @property
    def _bprop_debug(self) -> bool:
        return self.bprop_debug

    @_bprop_debug.setter
    def _bprop_debug(self, value: bool) -> None:
        """Set by ``Cell.__init__``; the owner's flag is the one that counts."""

    def _kwcell_forwarded(self, name: str) -> Any:
        # getattr, not dir(): MindSpore reads these on every backward, and dir() of a cell
        # costs about 50 us.
        value = getattr(self._kwcell_owner_or_none(), name, _MISSING)
        if value is _MISSING:
            raise AttributeError(name)
        return value

    @property
    def used_bprop_inputs(self) -> Any:
        return self._kwcell_forwarded("used_bprop_inputs")

    @property
    def internal_params(self) -> Any:
        return self._kwcell_forwarded("internal_params")

    @property
    def _kwcell_weighted(self) -> bool:
        """Whether the owner asks for weight gradients (read as a constant by the graph parser)."""
        owner = self._kwcell_owner_or_none()
        return owner is not None and bool(getattr(owner, "internal_params", None))


def keyword_only(spec: CellSpec) -> tuple[str, ...]:
    """construct's keyword-only parameters (the core passes them on by keyword)."""
    return tuple(p.name for p in spec.construct.params if p.kind is KEYWORD_ONLY)


def _is_classic(sig: Signature) -> bool:
    return sig.var_positional is not None and not sig.params and sig.var_keyword is None


def _label(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _user_call(spec: CellSpec, reading: str) -> str:
    """Source of the call of the user's own bprop from the generated PYNATIVE bprop."""
    assert spec.bprop is not None
    bsig = spec.bprop.signature
    if reading != BY_NAME:
        return ", ".join(["self", *spec.names, "out", "dout"])
    parts = ["self"]
    for p in bsig.params:
        parts.append(p.name if p.kind is POSITIONAL_ONLY else f"{p.name}={p.name}")
    if bsig.var_keyword is not None:
        parts += [f"{n}={n}" for n in spec.names if bsig.get(n) is None]
    return ", ".join(parts)


@dataclass(frozen=True)
class _Bprop:
    """The two faces of a class's bprop: what PYNATIVE runs, and what the graph compiler parses."""

    units: list[Unit]
    static: bool
    note: str
    #: What the graph version calls as ``self._kwcell_rbprop_<token>`` when it is not one of
    #: the units (the user's own ``bprop(self, *args)``, which needs no rewriting).
    rbprop: Callable[..., Any] | None = None


def _raise_unit(name: str, fmt: dict[str, Any], error: str, message: str, closure: dict[str, Any]) -> Unit:
    return Unit(
        name,
        RAISE_BPROP.format(**fmt, error=error, message=message),
        {"__name__": __name__, "__builtins__": __builtins__},
        closure=closure,
    )


def _bprop_units(
    cls: type,
    spec: CellSpec,
    bprop: Callable[..., Any],
    reading: str,
    deferred: str | None,
    lenient: bool,
    token: int,
    graph_error: str = "TypeError",
) -> tuple[_Bprop, list[str]]:
    """Units for the PYNATIVE bprop (``py``) and its graph version (``graph``), and warnings."""
    names = spec.names
    where = f"{cls.__qualname__}.bprop"
    fmt: dict[str, Any] = {
        "self_args": ", ".join(["self", *names]),
        "qualname": cls.__qualname__,
        "args_tuple": "".join(f"{n}, " for n in names),
        "names": names,
        "where": where,
        "extras_ok": lenient,
        "token": token,
    }
    if deferred is not None:
        # MindSpore's own form with a problem MindSpore reports only at gradient time: so
        # does kwcell (it warned when the class was created).
        py = _raise_unit("py", fmt, "_kwcell_error", deferred, {"_kwcell_error": KwCellDefinitionError})
        graph = _raise_unit("graph", fmt, graph_error, deferred, {})
        return _Bprop([py, graph], True, "bprop: raises its definition error when the gradient is taken"), []
    py = Unit(
        "py",
        PY_BPROP.format(**fmt, user_call=_user_call(spec, reading)),
        {"__name__": __name__, "__builtins__": __builtins__},
        closure={"_kwcell_user": bprop, "_kwcell_normalize": _runtime.normalize},
    )
    graph = Unit(
        "graph",
        GRAPH_BPROP.format(**fmt),
        {"__name__": __name__, "__builtins__": __builtins__},
        closure={"_kwcell_normalize": _runtime.normalize},
    )
    if reading == CLASSIC_ARGS:
        # bprop(self, *args) takes construct's inputs as they come: the graph compiler parses
        # the user's own function, as for nn.Cell, and its return is normalised.
        note = "bprop: the classic bprop(self, *args), called positionally; its return normalised"
        return _Bprop([py, graph], False, note, rbprop=bprop), []
    rewritten = rewrite_bprop(bprop, spec, reading, lenient=lenient, super_attr=f"_kwcell_super_{token}")
    if rewritten is None:
        message = (
            f"{where}: GRAPH_MODE and @ms.jit compile bprop from its source text, and kwcell cannot "
            "find source that matches this function (it was made by exec or in a REPL, is a lambda, "
            "comes from a module without its .py file, or its file was edited after import). "
            "Define the class in a .py file (reload the module after editing it), or take this "
            "gradient in PYNATIVE mode"
        )
        graph = _raise_unit("graph", fmt, "RuntimeError", message, {})
        return _Bprop([py, graph], True, "bprop: PYNATIVE only (no source for the graph compiler)"), []
    code = bprop.__code__
    cells = dict(zip(code.co_freevars, bprop.__closure__ or (), strict=True))
    cells[ZERO] = types.CellType(_runtime.graph_zero)  # the rewritten bprop runs in graphs only
    user = Unit("rewritten", rewritten.source, bprop.__globals__, cells=cells)
    note = f"bprop: the user's own in PYNATIVE; rewritten from {rewritten.origin} for the graph compiler"
    if rewritten.static:
        return _Bprop([py, user], True, note), list(rewritten.notes)
    return _Bprop([py, user, graph], False, note), list(rewritten.notes)


def _decorated(bprop: Callable[..., Any]) -> bool:
    return inspect.unwrap(bprop) is not bprop


def _generate(
    cls: type, construct: Callable[..., Any], bprop: Callable[..., Any], inherited_bprop: str
) -> KwCellInfo | None:
    """Check and generate; ``None`` for a cell kwcell leaves to MindSpore as it is."""
    bsig = signature_of(bprop)
    spec = CellSpec(
        module=cls.__module__,
        qualname=cls.__qualname__,
        construct=signature_of(construct),
        bprop=BpropSpec(bsig, _is_classic(bsig)),
        inherited_bprop=inherited_bprop,
    )
    check_construct(spec)
    if passes_through(spec):
        return None
    token = next(_TOKENS)
    # MindSpore's own forms keep MindSpore's timing: a problem nn.Cell reports only when the
    # gradient is taken is a warning now and an error then, so that one broken cell does not
    # make its whole module fail to import. kwcell's own forms fail here.
    lenient = is_mindspore_form(bsig)
    deferred: str | None = None
    reading = CLASSIC_ARGS
    try:
        reading = check_bprop(spec)
        if _decorated(bprop):
            msg = (
                f"{cls.__qualname__}.bprop: decorators on bprop are not supported (MindSpore calls "
                "bprop itself, and kwcell reads its source); move the decorated logic into a helper"
            )
            raise KwCellDefinitionError(msg)
        bprop_parts, notes = _bprop_units(cls, spec, bprop, reading, None, lenient, token)
    except KwCellDefinitionError as exc:
        if not lenient or exc._kwcell_at_definition:
            raise
        deferred = f"{exc}"
        bprop_parts, notes = _bprop_units(
            cls, spec, bprop, reading, deferred, lenient, token, graph_error=exc._kwcell_graph_error
        )
        notes = [
            f"{deferred} (MindSpore's bprop form: the gradient of {cls.__qualname__} will raise this error)"
        ]
    for note in notes:
        warnings.warn(note, KwCellWarning, stacklevel=4)  # _generate, _setup, the metaclass
    label = _label(cls)
    qualname = cls.__qualname__
    names = spec.names
    args = ", ".join(names)
    module_globals = vars(inspect.getmodule(cls) or types.ModuleType(cls.__module__))
    construct_args = call_text(spec.construct.params)
    core_unit = Unit(
        "core",
        (CORE_STATIC if bprop_parts.static else CORE).format(
            self_args=", ".join(["self", *names]),
            construct_args=construct_args,
            token=token,
            args_tuple="".join(f"{n}, " for n in names),
            qualname=qualname,
            weights_error=_weights_in_graph_message(f"{qualname}.bprop"),
        ),
        module_globals,
        closure={"_kwcell_in_graph": _runtime.in_graph},
    )
    rendered = signature_source(spec.construct, with_self=True)
    signature, default_refs, closure = rendered
    dispatcher_unit = Unit(
        "dispatcher",
        DISPATCHER.format(
            signature=signature, default_refs=default_refs, args=args, token=token, qualname=qualname
        ),
        module_globals,
        closure=closure,
        defaults={"construct": defaults_of(spec.construct)},
    )
    units = [core_unit, dispatcher_unit, *bprop_parts.units]
    units.append(
        binder_unit(spec.construct, qualname=f"{qualname}.construct", with_self=True, rendered=rendered)
    )
    mapping = f"construct({signature}) -> core({args}); {bprop_parts.note}"
    fns = compile_units(
        kind="bprop",
        label=label,
        header=HEADER.format(label=label, kind="bprop", mapping=mapping),
        units=units,
        owner=cls,
        defer_write=True,  # written when the first instance is created (KwCell.__init__)
    )
    (py_bprop,) = fns["py"].values()
    (graph_bprop,) = fns["graph" if "graph" in fns else "rewritten"].values()
    extra: dict[str, Callable[..., Any]] = {}
    # GRAPH_BPROP calls the rewritten bprop, or the user's own bprop(self, *args).
    if "graph" in fns and "rewritten" in fns:
        (rewritten,) = fns["rewritten"].values()
        rewritten.__qualname__ = f"{qualname}.bprop"
        extra[f"_kwcell_rbprop_{token}"] = rewritten
    elif bprop_parts.rbprop is not None:
        extra[f"_kwcell_rbprop_{token}"] = bprop_parts.rbprop
    for fn in (py_bprop, graph_bprop):
        fn.__qualname__ = f"{qualname}.bprop"
    # MindSpore's graph parser unwraps what it parses: GRAPH_MODE and @ms.jit compile the
    # positional graph version, PYNATIVE calls the user's own bprop through ``py``.
    py_bprop.__wrapped__ = graph_bprop  # type: ignore[attr-defined]
    core_cls = type(
        "_KwCellCore",
        (_KwCellCore,),
        {
            "construct": fns["core"]["construct"],
            "bprop": fns["core"]["bprop"],
            "__module__": __name__,
            "__qualname__": "_KwCellCore",
            "_kwcell_label": label,
        },
    )
    dispatcher = fns["dispatcher"]["construct"]
    dispatcher.__qualname__ = f"{qualname}.construct"
    # The user's docstring and annotations (typing.get_type_hints, help()); not __wrapped__,
    # which the graph parser would follow to the user's construct.
    dispatcher.__doc__ = getattr(construct, "__doc__", None) or dispatcher.__doc__
    dispatcher.__annotations__ = dict(getattr(construct, "__annotations__", {}))
    dispatcher._kwcell_generated = True  # type: ignore[attr-defined]
    bind = fns["binder"]["bind"]
    bind.__qualname__ = f"{qualname}.construct"
    path = dispatcher.__code__.co_filename
    for attr, extra_fn in extra.items():
        setattr(cls, attr, extra_fn)
    return KwCellInfo(
        spec=spec,
        user_construct=construct,
        user_bprop=bprop,
        positional_bprop=graph_bprop,
        core_cls=core_cls,
        dispatcher=dispatcher,
        bind=bind,
        files={"bprop": path},
        token=token,
        py_bprop=py_bprop,
        reading=reading,
    )


def _weights_in_graph_message(where: str) -> str:
    return (
        f"{where}: weight gradients from a bprop (internal_params) work only in PYNATIVE mode; "
        "MindSpore's GRAPH_MODE and @ms.jit do not let a bprop use Parameters. Take this "
        "gradient in PYNATIVE mode without @ms.jit, or leave the parameters to MindSpore's "
        "autodiff (outside the cell with the bprop)"
    )


_WARNED: weakref.WeakSet[type] = weakref.WeakSet()


def _warn_ungraded_parameters(cell: nn.Cell) -> None:
    """Warn once per class when a bprop cell has trainable parameters it gives no gradient."""
    cls = type(cell)
    if cls in _WARNED:
        return
    state = cell.__dict__
    if not state.get("_params", True) and not state.get("_cells", True):
        return  # no parameters and no sub-cells: nothing to walk (most bprop cells)
    params = cell.trainable_params()
    if not params:
        return
    graded = getattr(cell, "internal_params", None) or ()
    ungraded = [p for p in params if not any(p is q for q in graded)]
    if not ungraded:
        return
    _WARNED.add(cls)
    names = ", ".join(repr(p.name) for p in ungraded)
    msg = (
        f"{cls.__qualname__}.bprop gives no gradient to trainable parameter(s) {names}: MindSpore "
        "uses zeros for them, so they will not train. To train them, set "
        "self.internal_params = [...] in __init__ and return (input_grads, {param: grad}) or a "
        "dict with Parameter keys from bprop (PYNATIVE only); to keep them fixed, create them "
        "with requires_grad=False"
    )
    warnings.warn(msg, KwCellWarning, stacklevel=3)


# Code objects of every function some KwCell uses as its bprop: only their frames see
# ``bprop`` on an instance (``super().bprop(...)``); MindSpore must not.
_BPROP_CODES: weakref.WeakSet[types.CodeType] = weakref.WeakSet()


class _HiddenBprop:
    """The ``bprop`` attribute of a KwCell class with a bprop.

    MindSpore treats any cell that has an attribute ``bprop`` as a custom-bprop cell and would
    call it with the visible call's arguments; kwcell's hidden core carries the bprop instead.
    So instances answer ``bprop`` only to the code of a user's bprop (``super().bprop(...)``
    from a subclass); the class answers with the user's function (``Net.bprop``).
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self.fn
        if sys._getframe(1).f_code in _BPROP_CODES:
            return types.MethodType(self.fn, obj)
        raise AttributeError("bprop")


class _LazyCore:
    """A class's core attribute for instances that do not have it yet (see ``_setup``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        obj._kwcell_attach_cores()
        return obj.__dict__[self.name]


_OWN = "_kwcell_own_"  # + "bprop" / "construct": the user's function a KwCell class defined


def _resolve(cls: type, name: str, *, after: type | None = None) -> tuple[type | None, Any]:
    """The class that provides ``name`` to ``cls`` through the MRO, and the user's function.

    KwCell classes keep their own ``construct``/``bprop`` under ``_kwcell_own_<name>`` (the
    visible attributes are kwcell's dispatcher and ``_HiddenBprop``); any other class, a
    mixin for example, provides the function it defines. ``nn.Cell``'s own construct does
    not count. With ``after``, the search starts after that class (``super()``).
    """
    mro = cls.__mro__
    for klass in mro[mro.index(after) + 1 :] if after is not None else mro:
        if klass is nn.Cell:
            break
        found = klass.__dict__.get(_OWN + name)
        if found is None:
            found = klass.__dict__.get(name)
            if isinstance(found, _HiddenBprop) or getattr(found, "_kwcell_generated", False):
                continue
        if found is not None:
            return klass, found
    return None, None


def _method_error(qualname: str, method: str, fn: Any) -> str | None:
    """Why ``fn`` cannot be the ``method`` of a cell, or ``None``."""
    if isinstance(fn, (staticmethod, classmethod)):
        kind = type(fn).__name__
        return (
            f"{qualname}.{method} is a {kind}: MindSpore calls {method} as a method of the cell, "
            f"with self first; remove @{kind} and write {method}(self, ...)"
        )
    if not callable(fn):
        return f"{qualname}.{method} must be a function defined in the class, got {safe_repr(fn)}"
    return None


def _setup(cls: KwCellMeta, *, defines_construct: bool) -> None:
    """Resolve ``cls``'s construct and bprop through the MRO, check them, and generate.

    Runs when the class statement runs, and again when ``cls.bprop`` is assigned later.
    """
    bprop_owner, bprop = _resolve(cls, "bprop")
    if bprop is None:
        setattr(cls, _INFO, None)
        return
    _BPROP_CODES.add(getattr(inspect.unwrap(bprop), "__code__", None) or _NO_CODE)
    type.__setattr__(cls, "bprop", _HiddenBprop(bprop))
    construct_owner, construct = _resolve(cls, "construct")
    if construct is None:
        # A base that defines only bprop: its subclasses bring construct (as for nn.Cell).
        setattr(cls, _INFO, None)
        return
    error = _method_error(cls.__qualname__, "construct", construct)
    if error is not None:
        raise KwCellDefinitionError(error)
    inherited = info_of(cls)
    if inherited is not None and inherited.user_bprop is bprop and inherited.user_construct is construct:
        return  # nothing new: the base's generated code serves this class too
    if construct_owner is cls and defines_construct:
        setattr(cls, _OWN + "construct", construct)
    blame = (
        bprop_owner.__qualname__ if bprop_owner is not cls and construct_owner is cls and bprop_owner else ""
    )
    info = _generate(cls, construct, bprop, blame)
    if info is None:
        # construct(self, *inputs) with bprop(self, *args): an nn.Cell as it stands.
        type.__setattr__(cls, "bprop", bprop)
        setattr(cls, _INFO, None)
        return
    assert bprop_owner is not None
    _, parent_bprop = _resolve(cls, "bprop", after=bprop_owner)
    if parent_bprop is not None:
        # super().bprop(...) in the graph version of bprop (see _source.rewrite_bprop).
        setattr(cls, f"_kwcell_super_{info.token}", parent_bprop)
    type.__setattr__(cls, "construct", info.dispatcher)  # not routed: see __setattr__
    # The user's functions under this class's token, so that a parent's core still runs
    # the parent's own code for super().construct(...) from a subclass.
    setattr(cls, f"_kwcell_construct_{info.token}", construct)
    setattr(cls, f"_kwcell_bprop_{info.token}", info.py_bprop or info.positional_bprop)
    # Instances get their cores when created; one made before ``cls.bprop`` was assigned
    # gets the new core on first use (an instance attribute then shadows this).
    type.__setattr__(cls, f"_kwcell_core_{info.token}", _LazyCore(f"_kwcell_core_{info.token}"))
    setattr(cls, _INFO, info)


class KwCellMeta(abc.ABCMeta):
    """Metaclass of :class:`kwcell.KwCell`.

    When a class statement defines or inherits (through the MRO, mixins included) both a
    ``bprop`` and a ``construct``, the two are checked against each other, ``bprop`` is hidden
    from MindSpore (which must not treat the visible cell as a custom-bprop cell), and a
    dispatcher ``construct`` with construct's exact signature is installed. It calls a hidden
    core cell whose positional ``construct``/``bprop`` MindSpore differentiates. Derived from
    ``abc.ABCMeta``, so that ``class Net(KwCell, abc.ABC)`` works as it does for ``nn.Cell``.
    """

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> KwCellMeta:
        if "bprop" in namespace:
            error = _method_error(namespace.get("__qualname__", name), "bprop", namespace["bprop"])
            if error is not None:
                raise KwCellDefinitionError(error)
        own_bprop = namespace.pop("bprop", None)
        if own_bprop is not None:
            namespace[_OWN + "bprop"] = own_bprop
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        _setup(cls, defines_construct="construct" in namespace)
        return cls

    def __setattr__(cls, name: str, value: Any) -> None:
        if name == "bprop" and not isinstance(value, _HiddenBprop):
            # Cls.bprop = f after the class statement: checked and generated as if defined
            # there (the visible class must still show MindSpore no bprop).
            error = _method_error(cls.__qualname__, "bprop", value)
            if error is not None:
                raise KwCellDefinitionError(error)
            type.__setattr__(cls, _OWN + "bprop", value)
            _setup(cls, defines_construct=False)
            return
        # Cls.construct = f, e.g. @jit on the class: the bprop keeps wrapping the new forward.
        info = info_of(cls) if name == "construct" else None
        if info is not None and route_class_construct(
            cls,
            value,
            info.dispatcher,
            info.token,
            info.user_construct,
            keyword_only(info.spec),
            _OWN + "construct",
        ):
            return
        super().__setattr__(name, value)

    if not TYPE_CHECKING:
        # Runtime only: a metaclass __call__ that type checkers see replaces the class's own
        # constructor for them (pyright then types ``Net()`` as this method's ``Any``).

        def __call__(cls, *args: Any, **kwargs: Any) -> Any:
            cell = super().__call__(*args, **kwargs)
            if info_of(cls) is not None:
                _warn_ungraded_parameters(cell)
            return cell


_NO_CODE = compile("", "<kwcell>", "exec")
