"""Generating a KwCell's code: dispatcher, core, and the two faces of its bprop.

``generate`` checks a class's construct against its bprop (``_validate``), rewrites the bprop
for the graph compiler (``_source``), fills the templates (``_templates``) and compiles them
into one file (``_codegen``).
"""

from __future__ import annotations

import inspect
import itertools
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import _runtime
from ._binder import binder_unit, defaults_of, signature_source
from ._codegen import Unit, compile_units
from ._core import KwCellCore
from ._errors import KwCellDefinitionError, KwCellWarning
from ._info import KwCellInfo
from ._source import ZERO, rewrite_bprop
from ._spec import POSITIONAL_ONLY, BpropSpec, CellSpec, Signature, call_text, signature_of
from ._templates import CORE, CORE_STATIC, DISPATCHER, GRAPH_BPROP, HEADER, PY_BPROP, RAISE_BPROP
from ._validate import (
    BY_NAME,
    CLASSIC_ARGS,
    check_bprop,
    check_construct,
    decorated_bprop,
    is_mindspore_form,
    passes_through,
)

__all__ = ["generate"]

_TOKENS = itertools.count(1)


def _is_classic(sig: Signature) -> bool:
    return sig.var_positional is not None and not sig.params and sig.var_keyword is None


def _label(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _user_call(spec: CellSpec, reading: str) -> str:
    """Source of the call of the user's own bprop from the generated PYNATIVE bprop."""
    assert spec.bprop is not None
    bsig = spec.bprop.signature
    first = [] if spec.function else ["self"]  # a custom_bprop function's backward has no self
    if reading != BY_NAME:
        return ", ".join([*first, *spec.names, "out", "dout"])
    parts = first
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
    rbprop: Callable[..., Any] | staticmethod[..., Any] | None = None


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
        rbprop = staticmethod(bprop) if spec.function else bprop
        return _Bprop([py, graph], False, note, rbprop=rbprop), []
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


def generate(
    cls: type, construct: Callable[..., Any], bprop: Callable[..., Any], inherited_bprop: str
) -> KwCellInfo | None:
    """Check and generate; ``None`` for a cell kwcell leaves to MindSpore as it is."""
    # The cell behind a kwcell.custom_bprop function: its bprop is the function's backward,
    # which takes no self.
    function = bool(getattr(cls, "_kwcell_function", False))
    bsig = signature_of(bprop, has_self=not function)
    spec = CellSpec(
        module=cls.__module__,
        qualname=cls.__qualname__,
        construct=signature_of(construct),
        bprop=BpropSpec(bsig, _is_classic(bsig)),
        inherited_bprop=inherited_bprop,
        function=function,
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
            raise decorated_bprop(cls.__qualname__, function=function)
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
    extra: dict[str, Callable[..., Any] | staticmethod[..., Any]] = {}
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
        (KwCellCore,),
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
