"""``KwCellMeta``: inspect -> validate -> generate -> attach, once per class statement."""

from __future__ import annotations

import inspect
import types
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mindspore import nn

from . import _runtime
from ._binder import defaults_of, make_binder, signature_source
from ._codegen import compile_unit
from ._errors import KwCellDefinitionError, KwCellWarning
from ._source import rewrite_bprop
from ._spec import KEYWORD_ONLY, BpropSpec, CellSpec, Signature, signature_of
from ._templates import CORE, DISPATCHER, FORWARD_BPROP, HEADER
from ._validate import validate

__all__ = ["KwCellInfo", "KwCellMeta", "info_of"]

_INFO = "_kwcell_info"


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

    @property
    def used_bprop_inputs(self) -> Any:
        owner: Any = self._kwcell_owner_or_none()  # a user attribute, not declared on nn.Cell
        if owner is None or "used_bprop_inputs" not in dir(owner):
            raise AttributeError("used_bprop_inputs")
        return owner.used_bprop_inputs

    @property
    def internal_params(self) -> Any:
        owner: Any = self._kwcell_owner_or_none()  # a user attribute, not declared on nn.Cell
        if owner is None or "internal_params" not in dir(owner):
            raise AttributeError("internal_params")
        return owner.internal_params

    @property
    def _kwcell_weighted(self) -> bool:
        """Whether the owner asks for weight gradients (read as a constant by the graph parser)."""
        owner = self._kwcell_owner_or_none()
        return owner is not None and bool(getattr(owner, "internal_params", None))


def _is_classic(sig: Signature) -> bool:
    return sig.var_positional is not None and not sig.params and sig.var_keyword is None


def _label(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _user_bprop_positional(
    cls: type, spec: CellSpec, bprop: Callable[..., Any], files: dict[str, str]
) -> Callable[..., Any]:
    """The user's bprop as a function of ``(self, *inputs, out, dout)`` in construct's order."""
    assert spec.bprop is not None
    if spec.bprop.classic:
        return bprop
    label = _label(cls)
    rewritten = rewrite_bprop(bprop, spec)
    if rewritten is not None:
        code = bprop.__code__
        cells = dict(zip(code.co_freevars, bprop.__closure__ or (), strict=True))
        mapping = f"Rewritten from {rewritten.origin} with parameters in construct's order"
        fns = compile_unit(
            kind="bprop",
            label=label,
            header=HEADER.format(label=label, kind="bprop", mapping=mapping),
            body=rewritten.source,
            closure={},
            cells=cells,
            globals_=bprop.__globals__,
            owner=cls,
        )
        fn = fns[bprop.__name__]
    else:
        names = spec.names
        bsig = spec.bprop.signature
        keywords = "".join(f"{n}={n}, " for n in names if bsig.get(n) is not None or bsig.var_keyword)
        source = FORWARD_BPROP.format(
            self_args=", ".join(["self", *names]), qualname=cls.__qualname__, keywords=keywords
        )
        fn = compile_unit(
            kind="bprop",
            label=label,
            header=HEADER.format(label=label, kind="bprop", mapping="Forwards by keyword"),
            body=source,
            closure={"_kwcell_target": bprop},
            globals_=bprop.__globals__,
            owner=cls,
        )["bprop"]
    files["bprop"] = fn.__code__.co_filename
    fn.__qualname__ = f"{cls.__qualname__}.bprop"
    return fn


def _generate(cls: type, construct: Callable[..., Any], bprop: Callable[..., Any]) -> KwCellInfo:
    spec = CellSpec(
        module=cls.__module__,
        qualname=cls.__qualname__,
        construct=signature_of(construct),
        bprop=None,
    )
    bsig = signature_of(bprop)
    spec = CellSpec(spec.module, spec.qualname, spec.construct, BpropSpec(bsig, _is_classic(bsig)))
    validate(spec)
    label = _label(cls)
    files: dict[str, str] = {}
    names = spec.names
    args = ", ".join(names)
    positional = _user_bprop_positional(cls, spec, bprop, files)
    module_globals = vars(inspect.getmodule(cls) or types.ModuleType(cls.__module__))

    core_fns = compile_unit(
        kind="core",
        label=label,
        header=HEADER.format(label=label, kind="core", mapping=f"Inputs in order: ({args})"),
        body=CORE.format(
            self_args=", ".join(["self", *names]),
            args=args,
            construct_args=", ".join(
                p.name if p.kind is not KEYWORD_ONLY else f"{p.name}={p.name}" for p in spec.construct.params
            ),
            args_tuple="".join(f"{n}, " for n in names),
            names=names,
            where=f"{cls.__qualname__}.bprop",
            weights_error=_weights_in_graph_message(f"{cls.__qualname__}.bprop"),
            qualname=cls.__qualname__,
        ),
        closure={"_kwcell_normalize": _runtime.normalize, "_kwcell_in_graph": _runtime.in_graph},
        globals_=module_globals,
        owner=cls,
    )
    files["core"] = core_fns["construct"].__code__.co_filename
    core_cls = type(
        "_KwCellCore",
        (_KwCellCore,),
        {
            "construct": core_fns["construct"],
            "bprop": core_fns["bprop"],
            "__module__": __name__,
            "__qualname__": "_KwCellCore",
            "_kwcell_label": label,
        },
    )

    signature, default_refs, closure = signature_source(spec.construct, with_self=True)
    dispatcher = compile_unit(
        kind="dispatcher",
        label=label,
        header=HEADER.format(
            label=label, kind="dispatcher", mapping=f"construct({signature}) -> core({args})"
        ),
        body=DISPATCHER.format(
            signature=signature, default_refs=default_refs, args=args, qualname=cls.__qualname__
        ),
        closure=closure,
        globals_=module_globals,
        defaults={"construct": defaults_of(spec.construct)},
        owner=cls,
    )["construct"]
    files["dispatcher"] = dispatcher.__code__.co_filename
    dispatcher.__qualname__ = f"{cls.__qualname__}.construct"
    bind = make_binder(
        spec.construct, label=label, qualname=f"{cls.__qualname__}.construct", owner=cls, with_self=True
    )
    return KwCellInfo(
        spec=spec,
        user_construct=construct,
        user_bprop=bprop,
        positional_bprop=positional,
        core_cls=core_cls,
        dispatcher=dispatcher,
        bind=bind,
        files=files,
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
        cls._kwcell_construct = construct  # type: ignore[attr-defined]
        cls._kwcell_bprop = info.positional_bprop  # type: ignore[attr-defined]
        setattr(cls, _INFO, info)
        return cls

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        cell = super().__call__(*args, **kwargs)
        if info_of(cls) is not None:
            _warn_ungraded_parameters(cell)
        return cell
