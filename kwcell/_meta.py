"""``KwCellMeta``: inspect -> validate -> generate -> attach, once per class statement."""

from __future__ import annotations

import inspect
import itertools
import types
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mindspore import context, nn
from mindspore.common.api import _pynative_executor  # (mindspore.graph.api from 2.10 on)

from . import _runtime
from ._binder import binder_unit, defaults_of, signature_source
from ._codegen import Unit, compile_units
from ._errors import KwCellDefinitionError, KwCellWarning
from ._source import ZERO, rewrite_bprop
from ._spec import BpropSpec, CellSpec, Signature, call_text, signature_of
from ._templates import CORE, CORE_STATIC, DISPATCHER, FORWARD_BPROP, HEADER
from ._validate import validate

__all__ = ["KwCellInfo", "KwCellMeta", "info_of", "own_infos"]

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

    The core reaches its owner through ``_kwcell_owner`` (set with ``object.__setattr__`` so
    that neither cell becomes the other's child) and forwards the attributes MindSpore reads
    from a cell with a bprop.
    """

    _kwcell_owner: nn.Cell
    _init_flag: bool  # set by nn.Cell once its parameters are initialised

    def __call__(self, *args: Any) -> Any:
        # The PyNative forward with nothing to record: Cell.__call__ would call construct
        # directly too (the core has no hooks, shard, recompute, mixed precision or dynamic
        # shapes of its own); skipping its checks saves a few microseconds per call.
        if self._init_flag and not _pynative_executor.requires_grad() and context._get_mode() != GRAPH:
            return self.construct(*args)
        return super().__call__(*args)

    def _kwcell_owner_or_none(self) -> nn.Cell | None:
        return self.__dict__.get("_kwcell_owner")

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


def _is_classic(sig: Signature) -> bool:
    return sig.var_positional is not None and not sig.params and sig.var_keyword is None


def _label(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _bprop_unit(cls: type, spec: CellSpec, bprop: Callable[..., Any]) -> tuple[Unit | None, bool, str]:
    """The unit that makes the user's bprop a function of ``(self, *inputs, out, dout)``.

    Returns the unit (``None`` for the classic ``bprop(self, *args)``, used as it is), whether
    its returns were all normalised when the class was created, and a note for the header.
    """
    assert spec.bprop is not None
    if spec.bprop.classic:
        return None, False, "bprop: the classic bprop(self, *args), called positionally"
    rewritten = rewrite_bprop(bprop, spec)
    if rewritten is not None:
        code = bprop.__code__
        cells = dict(zip(code.co_freevars, bprop.__closure__ or (), strict=True))
        cells[ZERO] = types.CellType(_runtime.zero)
        unit = Unit("bprop", rewritten.source, bprop.__globals__, cells=cells)
        return unit, rewritten.static, f"bprop: rewritten from {rewritten.origin}"
    names = spec.names
    bsig = spec.bprop.signature
    keywords = "".join(f"{n}={n}, " for n in names if bsig.get(n) is not None or bsig.var_keyword)
    source = FORWARD_BPROP.format(
        self_args=", ".join(["self", *names]), qualname=cls.__qualname__, keywords=keywords
    )
    unit = Unit("bprop", source, bprop.__globals__, closure={"_kwcell_target": bprop})
    return unit, False, "bprop: forwards by keyword (no source to rewrite)"


def _generate(cls: type, construct: Callable[..., Any], bprop: Callable[..., Any]) -> KwCellInfo:
    bsig = signature_of(bprop)
    spec = CellSpec(
        module=cls.__module__,
        qualname=cls.__qualname__,
        construct=signature_of(construct),
        bprop=BpropSpec(bsig, _is_classic(bsig)),
    )
    validate(spec)
    label = _label(cls)
    qualname = cls.__qualname__
    names = spec.names
    args = ", ".join(names)
    module_globals = vars(inspect.getmodule(cls) or types.ModuleType(cls.__module__))

    token = next(_TOKENS)
    construct_args = call_text(spec.construct.params)
    bprop_unit, static, bprop_note = _bprop_unit(cls, spec, bprop)
    core_template = CORE_STATIC if static else CORE
    core_unit = Unit(
        "core",
        core_template.format(
            self_args=", ".join(["self", *names]),
            construct_args=construct_args,
            token=token,
            args_tuple="".join(f"{n}, " for n in names),
            names=names,
            where=f"{qualname}.bprop",
            weights_error=_weights_in_graph_message(f"{qualname}.bprop"),
            qualname=qualname,
        ),
        module_globals,
        closure={"_kwcell_normalize": _runtime.normalize, "_kwcell_in_graph": _runtime.in_graph},
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
    units = [u for u in (bprop_unit, core_unit, dispatcher_unit) if u is not None]
    units.append(
        binder_unit(spec.construct, qualname=f"{qualname}.construct", with_self=True, rendered=rendered)
    )
    mapping = f"construct({signature}) -> core({args}); {bprop_note}"
    fns = compile_units(
        kind="bprop",
        label=label,
        header=HEADER.format(label=label, kind="bprop", mapping=mapping),
        units=units,
        owner=cls,
        defer_write=True,  # written when the first instance is created (KwCell.__init__)
    )
    positional: Callable[..., Any] = bprop
    if bprop_unit is not None:
        (generated,) = fns["bprop"].values()  # the unit defines exactly one function
        generated.__qualname__ = f"{qualname}.bprop"
        positional = generated
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
    bind = fns["binder"]["bind"]
    bind.__qualname__ = f"{qualname}.construct"
    path = dispatcher.__code__.co_filename
    return KwCellInfo(
        spec=spec,
        user_construct=construct,
        user_bprop=bprop,
        positional_bprop=positional,
        core_cls=core_cls,
        dispatcher=dispatcher,
        bind=bind,
        files={"bprop": path},
        token=token,
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


class KwCellMeta(type):
    """Metaclass of :class:`kwcell.KwCell`.

    When a class statement defines (or inherits) a ``bprop``, the user's ``construct`` and
    ``bprop`` are checked against each other, ``bprop`` is removed from the class (MindSpore
    must not treat the visible cell as a custom-bprop cell), and a dispatcher ``construct``
    with construct's exact signature is installed. It calls a hidden core cell whose
    positional ``construct``/``bprop`` MindSpore differentiates.
    """

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> KwCellMeta:
        own_bprop = namespace.pop("bprop", None)
        own_construct = namespace.get("construct")
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        inherited = info_of(cls)
        bprop = own_bprop if own_bprop is not None else (inherited.user_bprop if inherited else None)
        if bprop is None:
            setattr(cls, _INFO, None)
            return cls
        if own_construct is not None:
            construct = own_construct
        elif inherited is not None:
            construct = inherited.user_construct
        else:
            construct = getattr(cls, "construct", None)
        if construct is None or construct is nn.Cell.construct:
            msg = f"{cls.__qualname__} defines bprop but no construct; define construct(self, ...)"
            raise KwCellDefinitionError(msg)
        if not callable(bprop) or not callable(construct):
            msg = f"{cls.__qualname__}.bprop and construct must be functions defined in the class"
            raise KwCellDefinitionError(msg)
        info = _generate(cls, construct, bprop)
        cls.construct = info.dispatcher  # type: ignore[attr-defined]
        # The user's functions under this class's token, so that a parent's core still runs
        # the parent's own code for super().construct(...) from a subclass.
        setattr(cls, f"_kwcell_construct_{info.token}", construct)
        setattr(cls, f"_kwcell_bprop_{info.token}", info.positional_bprop)
        setattr(cls, _INFO, info)
        return cls

    if not TYPE_CHECKING:
        # Runtime only: a metaclass __call__ that type checkers see replaces the class's own
        # constructor for them (pyright then types ``Net()`` as this method's ``Any``).

        def __call__(cls, *args: Any, **kwargs: Any) -> Any:
            cell = super().__call__(*args, **kwargs)
            if info_of(cls) is not None:
                _warn_ungraded_parameters(cell)
            return cell
