"""Generating a KwCell's code: dispatcher, core, and the two faces of its bprop.

``generate`` checks a class's construct against its bprop (``_validate``), rewrites the bprop
for the graph compiler (``_source``), fills the templates (``_templates``) and compiles them
into one file (``_codegen``).
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import os
import sys
import threading
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mindspore import Tensor

from . import _runtime
from ._binder import binder_unit, defaults_of, signature_source
from ._codegen import Unit, compile_units
from ._composites import share_a_composite
from ._core import KwCellCore, PinningBprop
from ._deferred import graph_raiser
from ._errors import PYNATIVE, KwCellDefinitionError, KwCellWarning, deferred
from ._info import KwCellInfo
from ._reuse import shares_graphs
from ._source import (
    FILL,
    ZERO,
    computed_weight_keys,
    no_source_reason,
    parsable_source,
    rewrite_bprop,
    state_on_self,
    written_copy,
)
from ._spec import KEYWORD_ONLY, POSITIONAL_ONLY, BpropSpec, CellSpec, Signature, call_text, signature_of
from ._templates import (
    CORE,
    CORE_GRAPH_BPROP,
    DISPATCHER,
    GRAPH_BPROP,
    HEADER,
    PY_BPROP,
    PY_BPROP_DIRECT,
    RAISE_BPROP,
    RAISE_GRAPH_BPROP,
    ROUTE,
)
from ._validate import (
    BY_NAME,
    CLASSIC_ARGS,
    check_bprop,
    check_construct,
    decorated_bprop,
    generator_bprop,
    is_mindspore_form,
    jit_on_bprop,
    needs_rewrite,
    passes_through,
)

__all__ = ["generate"]

_TOKENS = itertools.count(1)


def _is_classic(sig: Signature) -> bool:
    return sig.var_positional is not None and not sig.params and sig.var_keyword is None


def _label(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _without_self(fn: Callable[..., Any]) -> Callable[..., Any]:
    """An instance's bprop (called without self, as on nn.Cell) in the shape of a method."""

    def call(_owner: Any, /, *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return call


def _user_call(spec: CellSpec, reading: str) -> str:
    """Source of the call of the user's own bprop from the generated PYNATIVE bprop."""
    assert spec.bprop is not None
    bsig = spec.bprop.signature
    in_order = (
        bsig.names == (*spec.names, "out", "dout")
        and bsig.var_keyword is None
        and all(p.kind is not KEYWORD_ONLY for p in bsig.params)
    )
    first = [] if spec.function else ["self"]  # a custom_bprop function's backward has no self
    if reading != BY_NAME or in_order:
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
    note: str
    #: What the graph version calls as ``self._kwcell_rbprop_<token>`` when it is not one of
    #: the units (the user's own ``bprop(self, *args)``, which needs no rewriting).
    rbprop: Callable[..., Any] | staticmethod[..., Any] | None = None
    #: The graph bprop as the core's (``_templates.CORE_GRAPH_BPROP``), when it normalises what
    #: ``rbprop`` returns.
    core_graph: Unit | None = None


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
    problem: KwCellDefinitionError | None,
    lenient: bool,
    token: int,
    *,
    bprop_self: bool = True,
    super_name: str | None = None,
    weights: int = 0,
) -> tuple[_Bprop, list[str]]:
    """Units for the PYNATIVE bprop (``py``) and its graph version (``graph``), and warnings.

    With ``weights`` (the number of Parameters an instance lists in ``internal_params``), both
    take those Parameters and their names after ``dout`` and always normalise (the weights'
    gradients come after the inputs').
    """
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
        "weight_inputs": _WEIGHT_INPUTS if weights else "",
        "weights": _weights_text(weights, (), py=True),
    }
    if problem is not None:
        # MindSpore's own form with a problem MindSpore reports only at gradient time: so
        # does kwcell (it warned when the class was created), with the exception class and
        # the wording MindSpore uses for the mistake in each mode, then kwcell's message.
        error = deferred(problem, PYNATIVE)
        py = _raise_unit("py", fmt, "_kwcell_error", str(error), {"_kwcell_error": type(error)})
        graph = Unit(
            "graph",
            RAISE_GRAPH_BPROP.format(**fmt),
            {"__name__": __name__, "__builtins__": __builtins__},
            closure={"_kwcell_raise": graph_raiser(problem)},
        )
        return _Bprop([py, graph], "bprop: raises its definition error when the gradient is taken"), []
    user_fn = bprop if bprop_self else _without_self(bprop)
    py = Unit(
        "py",
        PY_BPROP.format(**fmt, user_call=_user_call(spec, reading)),
        {"__name__": __name__, "__builtins__": __builtins__},
        closure={"_kwcell_user": user_fn, "_kwcell_normalize": _runtime.normalize_pynative},
    )
    fmt["weights"] = _weights_text(weights, ())
    no_rewrite = not needs_rewrite(spec, reading)
    rewritten = None
    if bprop_self and not _decorated(bprop):  # bprop(self, *args): only for its weight keys
        rewritten = rewrite_bprop(
            bprop, spec, reading, lenient=lenient, super_class=super_name, weighted=bool(weights)
        )
    if rewritten is not None:
        # The rewritten bprop returns ``{self.w: gw}`` as ``{"self.w": gw}`` (a graph's dict
        # keys cannot be Parameters): the normaliser reads those names as weights.
        fmt["weights"] = _weights_text(weights, rewritten.weight_keys)
    graph = Unit(
        "graph",
        GRAPH_BPROP.format(**fmt),
        {"__name__": __name__, "__builtins__": __builtins__},
        closure={"_kwcell_normalize": _runtime.normalize},
    )
    core_graph = _core_graph_bprop(fmt, weights, rewritten.weight_keys if rewritten is not None else ())
    if rewritten is None and no_rewrite and (reading == CLASSIC_ARGS or parsable_source(bprop)):
        # MindSpore's positional form in construct's order (or bprop(self, *args)) without
        # source kwcell can read (a lambda, a decorated bprop, a module rewritten by pytest):
        # the graph compiler parses the user's own function, as for nn.Cell; only its return
        # is normalised.
        note = "bprop: the user's own function in every mode, its return normalised"
        if getattr(bprop, "__wrapped_by_jit__", False) is True:
            # nn.Cell: graphs ignore @jit on bprop; PYNATIVE refuses it when the gradient is taken.
            problem = jit_on_bprop(cls.__qualname__)
            error = deferred(problem, PYNATIVE)
            py = _raise_unit("py", fmt, "_kwcell_error", str(error), {"_kwcell_error": type(error)})
            later = f"the gradient of {cls.__qualname__} will raise this error"
            warning = f"{problem} (MindSpore's bprop form: {later})"
            return _Bprop([py, graph], note, rbprop=bprop, core_graph=core_graph), [warning]
        return _Bprop([py, graph], note, rbprop=bprop, core_graph=core_graph), []
    if rewritten is None and not bprop_self:
        message = (
            f"{where}: a bprop assigned to an instance is called without self, so GRAPH_MODE and "
            "@ms.jit can compile it only in MindSpore's positional form, in construct's order: "
            f"bprop({', '.join([*names, 'out', 'dout'])})"
        )
        graph = _raise_unit("graph", fmt, "RuntimeError", message, {})
        return _Bprop([py, graph], "bprop: PYNATIVE only (an instance's bprop in kwcell's form)"), []
    if rewritten is None and _decorated(bprop):
        jit = getattr(bprop, "__wrapped_by_jit__", False) is True
        raise decorated_bprop(cls.__qualname__, jit=jit, function=spec.function)
    if rewritten is None:
        message = (
            f"{where}: GRAPH_MODE and @ms.jit compile bprop from its source text, and kwcell cannot "
            f"use this function's: {no_source_reason(bprop)}; or write bprop in MindSpore's "
            "positional form, in construct's order (which needs no rewriting), or take this "
            "gradient in PYNATIVE mode"
        )
        graph = _raise_unit("graph", fmt, "RuntimeError", message, {})
        return _Bprop([py, graph], "bprop: PYNATIVE only (no source for the graph compiler)"), []
    code = bprop.__code__
    cells = dict(zip(code.co_freevars, bprop.__closure__ or (), strict=True))
    cells[ZERO] = types.CellType(_runtime.graph_zero)  # the rewritten bprop runs in graphs only
    if FILL in rewritten.source:  # an entry decided by its value (_source._entry)
        cells[FILL] = types.CellType(_runtime.graph_fill)
    user = Unit("rewritten", rewritten.source, bprop.__globals__, cells=cells)
    note = f"bprop: the user's own in PYNATIVE; rewritten from {rewritten.origin} for the graph compiler"
    if rewritten.static and not weights:
        if not rewritten.changed and not rewritten.nested and not rewritten.has_super:
            # Every return is already MindSpore's full tuple: PYNATIVE calls the user's bprop
            # and passes its result on, as nn.Cell does.
            py = Unit(
                "py",
                PY_BPROP_DIRECT.format(**fmt, user_call=_user_call(spec, reading)),
                {"__name__": __name__, "__builtins__": __builtins__},
                closure={"_kwcell_user": user_fn},
            )
        return _Bprop([py, user], note), list(rewritten.notes)
    return _Bprop([py, user, graph], note, core_graph=core_graph), list(rewritten.notes)


def _core_graph_bprop(fmt: dict[str, Any], weights: int, attr_keys: tuple[str, ...]) -> Unit:
    """``_templates.CORE_GRAPH_BPROP`` for the core's inputs (construct's, then its weights,
    which it hands to the normaliser as the core's bprop in ``CORE`` does)."""
    names = [f"_kwcell_w{i}" for i in range(weights)]
    held = f"({''.join(f'{w}, ' for w in names)}), self._kwcell_weight_keys, {attr_keys!r}"
    return Unit(
        "coregraph",
        CORE_GRAPH_BPROP.format(
            **{**fmt, "weights": held if weights else _weights_text(0, attr_keys)},
            weight_params="".join(f", {w}" for w in names),
        ),
        {"__name__": __name__, "__builtins__": __builtins__},
        closure={"_kwcell_normalize": _runtime.normalize},
    )


_WEIGHT_INPUTS = ", _kwcell_weights, _kwcell_weight_keys"

# MindSpore's graph optimizer does not finish (measured: MindSpore 2.10, CPU) on the gradient of
# a recomputed cell that passes Parameters to a bprop cell; a weighted dispatcher refuses it
# instead (when MindSpore compiles it, before the gradient is taken).
_REFUSE = """    if self._has_config_recompute and _kwcell_in_graph():
        raise RuntimeError({message!r})
"""


def _recompute_message(qualname: str) -> str:
    return (
        f"{qualname}: a recomputed cell (recompute() on it or on a cell holding it) whose "
        "internal_params lists Parameters cannot be compiled into a graph (GRAPH_MODE, @ms.jit): "
        "MindSpore's graph compiler does not finish on the gradient of such a cell. Run it in "
        "PYNATIVE mode, leave it out of recompute(), or empty its internal_params (its bprop then "
        "gives no weight gradients, as on nn.Cell)"
    )


def _weights_text(weights: int, attr_keys: tuple[str, ...], *, py: bool = False) -> str:
    """The weight arguments of a generated bprop's ``normalize`` call.

    PYNATIVE hands bprop copies of its inputs: the PYNATIVE bprop (a method of the owner)
    matches the Parameter keys bprop returns against the owner's own Parameters.
    """
    if not weights:
        return f"(), (), {attr_keys!r}"
    held = "self._kwcell_weights" if py else "_kwcell_weights"
    return f"{held}, _kwcell_weight_keys, {attr_keys!r}"


def _decorated(bprop: Callable[..., Any]) -> bool:
    return inspect.unwrap(bprop) is not bprop


def generate(
    cls: type,
    construct: Callable[..., Any],
    bprop: Callable[..., Any],
    inherited_bprop: str,
    *,
    construct_self: bool = True,
    bprop_self: bool = True,
    super_name: str | None = None,
    warn: bool = True,
    weights: int = 0,
) -> KwCellInfo | None:
    """Check and generate; ``None`` for a cell kwcell leaves to MindSpore as it is.

    ``construct_self``/``bprop_self`` are false for functions assigned to an instance (which
    MindSpore calls without self); ``super_name`` names the class whose ``__dict__`` holds
    ``bprop`` (``super().bprop`` inside it continues the MRO after that class). The cell behind
    a ``kwcell.custom_bprop`` function has a bprop (the function's backward) without self.
    ``weights`` is the number of Parameters an instance lists in ``internal_params``: they
    reach the core as extra inputs (see ``_templates.CORE``).
    """
    function = bool(getattr(cls, "_kwcell_function", False))
    bsig = signature_of(bprop, has_self=bprop_self and not function)
    if not function:
        bsig = _with_self(bsig, bprop_self)
    spec = CellSpec(
        module=cls.__module__,
        qualname=cls.__qualname__,
        construct=_with_self(signature_of(construct, has_self=construct_self), construct_self),
        bprop=BpropSpec(bsig, _is_classic(bsig)),
        inherited_bprop=inherited_bprop,
        function=function,
    )
    check_construct(spec)
    # construct storing state on self for bprop: PYNATIVE only, whatever the bprop's form
    state = state_on_self(cls, construct, bprop) if construct_self and bprop_self and not function else []
    # a weight dict keyed by Parameters bprop computes: PYNATIVE only, whatever the bprop's form
    state += computed_weight_keys(cls, bprop) if bprop_self and not function else []
    if passes_through(spec):
        if warn:
            for _, note in state:
                warnings.warn(note, KwCellWarning, stacklevel=_user_stacklevel())
        return None
    token = next(_TOKENS)
    # MindSpore's own forms keep MindSpore's timing: a problem nn.Cell reports only when the
    # gradient is taken is a warning now and an error then, so that one broken cell does not
    # make its whole module fail to import. kwcell's own forms fail here.
    lenient = is_mindspore_form(bsig)
    reading = CLASSIC_ARGS
    extra = {"bprop_self": bprop_self, "super_name": super_name, "weights": weights}
    try:
        reading = check_bprop(spec)
        if inspect.isgeneratorfunction(inspect.unwrap(bprop)):
            raise generator_bprop(cls.__qualname__)
        bprop_parts, notes = _bprop_units(cls, spec, bprop, reading, None, lenient, token, **extra)  # type: ignore[arg-type]
    except KwCellDefinitionError as exc:
        if not lenient or exc._kwcell_at_definition:
            raise
        bprop_parts, notes = _bprop_units(cls, spec, bprop, reading, exc, lenient, token, **extra)  # type: ignore[arg-type]
        notes = [f"{exc} (MindSpore's bprop form: the gradient of {cls.__qualname__} will raise this error)"]
    if warn:
        for note in [*notes, *(message for _, message in state)]:
            warnings.warn(note, KwCellWarning, stacklevel=_user_stacklevel())
    label = _label(cls)
    qualname = cls.__qualname__
    names = spec.names
    args = ", ".join(names)
    module_globals = vars(inspect.getmodule(cls) or types.ModuleType(cls.__module__))
    construct_args = call_text(spec.construct.params)
    weight_names = [f"_kwcell_w{i}" for i in range(weights)]
    shares = share_a_composite(construct, bprop, cls if construct_self and bprop_self else None)
    core_unit = Unit(
        "core",
        CORE.format(
            rest=", *_kwcell_unused" if shares else "",
            self_args=", ".join(["self", *names]),
            construct_args=construct_args,
            token=token,
            args_tuple="".join(f"{n}, " for n in names),
            qualname=qualname,
            weight_params="".join(f", {w}" for w in weight_names),
            weight_args=f", ({''.join(f'{w}, ' for w in weight_names)}), self._kwcell_weight_keys"
            if weights
            else "",
        ),
        module_globals,
    )
    rendered = signature_source(spec.construct, with_self=True)
    signature, default_refs, closure = rendered
    core_args = args + (", *self._kwcell_weights" if weights else "")
    routes = shares_graphs(cls) and bool(names)
    if weights:
        closure = {**closure, "_kwcell_in_graph": _runtime.in_graph}
    if routes:
        closure = {**closure, "_kwcell_Tensor": Tensor}
    dispatcher_unit = Unit(
        "dispatcher",
        DISPATCHER.format(
            signature=signature,
            default_refs=default_refs,
            args=core_args,
            token=token,
            qualname=qualname,
            refuse=_REFUSE.format(message=_recompute_message(qualname)) if weights else "",
            route=ROUTE.format(
                all_tensors=" and ".join(f"isinstance({n}, _kwcell_Tensor)" for n in names), args=core_args
            )
            if routes
            else "",
        ),
        module_globals,
        closure=closure,
        defaults={"construct": defaults_of(spec.construct)},
    )
    units = [core_unit, dispatcher_unit, *bprop_parts.units]
    if bprop_parts.core_graph is not None:
        units.append(bprop_parts.core_graph)
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
        defer_write=True,  # written when the core is first used
    )
    (py_bprop,) = fns["py"].values()
    (graph_bprop,) = fns["graph" if "graph" in fns else "rewritten"].values()
    rbprop: Any = None
    # GRAPH_BPROP calls the rewritten bprop, or the user's own one.
    if "graph" in fns and "rewritten" in fns:
        (rbprop,) = fns["rewritten"].values()
        rbprop.__qualname__ = f"{qualname}.bprop"
    elif bprop_parts.rbprop is not None:
        rbprop = bprop_parts.rbprop
    for fn in (py_bprop, graph_bprop):
        fn.__qualname__ = f"{qualname}.bprop"
    # MindSpore's graph parser unwraps what it parses: GRAPH_MODE and @ms.jit compile the
    # positional graph version, PYNATIVE calls the user's own bprop through ``py``.
    py_bprop.__wrapped__ = graph_bprop  # type: ignore[attr-defined]
    core_bprop: Any = fns["core"]["bprop"]
    if bprop_parts.core_graph is not None:
        core_bprop.__wrapped__ = fns["coregraph"]["bprop"]
        core_bprop.__wrapped__.__qualname__ = f"{qualname}.bprop"
    # Named after the user's class (``ScaledCore``), as torch names a Function's backward
    # class after it: tracebacks and reprs say whose core it is.
    core_cls = type(
        f"{cls.__name__}Core",
        (KwCellCore,),
        {
            "construct": fns["core"]["construct"],
            "bprop": PinningBprop(core_bprop),
            "__module__": __name__,
            "__qualname__": f"{qualname}Core",
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
    files = {"bprop": path}
    return KwCellInfo(
        spec=spec,
        user_construct=construct,
        user_bprop=bprop,
        positional_bprop=graph_bprop,
        core_cls=core_cls,
        rbprop=rbprop,
        dispatcher=dispatcher,
        bind=bind,
        files=files,
        token=token,
        py_bprop=py_bprop,
        reading=reading,
        routes=routes,
    )


# On a bprop function: {super key of the class holding it: its written copy (None: no source)}.
# Kept on the function, not in a dictionary keyed weakly by it: a copy shares the function's
# closure cells (``__class__`` among them), which would keep the key alive.
_WRITTEN = "_kwcell_written"
_written_lock = threading.Lock()


def written_face(bprop: Any, holder: type | None, super_class: str | None) -> types.FunctionType | None:
    """The bprop ``bprop`` (of the class ``holder``, whose ``super().bprop`` reader is
    ``super_class``) as the graph compiler calls it from another bprop (``super().bprop(...)``,
    ``self.bprop(...)``): a copy as written (``_source.written_copy``), taking the same arguments
    and returning what it returns, as in PYNATIVE. ``None`` when it has no source to copy (the
    compiler then parses the function itself)."""
    if not isinstance(bprop, types.FunctionType) or inspect.unwrap(bprop) is not bprop:
        return None  # not a plain function, or a decorated bprop
    fn = bprop
    with _written_lock:
        per_holder: dict[str | None, types.FunctionType | None] = fn.__dict__.setdefault(_WRITTEN, {})
        if super_class in per_holder:
            return per_holder[super_class]
        source = written_copy(fn, super_class)
        face: types.FunctionType | None = None
        if source is not None:
            code = fn.__code__
            cells = dict(zip(code.co_freevars, fn.__closure__ or (), strict=True))
            label = f"{fn.__module__}.{fn.__qualname__}"
            unit = Unit(
                "written",
                source,
                fn.__globals__,
                cells=cells,
                defaults={fn.__name__: (fn.__defaults__, fn.__kwdefaults__)},
            )
            fns = compile_units(
                kind="bprop as written",
                label=label,
                header=HEADER.format(
                    label=label, kind="bprop as written", mapping="what super().bprop reaches in graphs"
                ),
                units=[unit],
                owner=holder,
            )
            (face,) = fns["written"].values()
            face.__qualname__ = fn.__qualname__
        per_holder[super_class] = face
        return face


def _with_self(sig: Signature, has_self: bool) -> Signature:
    """A function called without self (assigned to an instance) checked as a method would be."""
    if has_self:
        return sig
    return dataclasses.replace(sig, self_name="self")


def _user_stacklevel() -> int:
    """The stack level of the first frame outside kwcell (the user's class statement or assignment)."""
    frame = sys._getframe(1)
    level = 1
    here = os.path.dirname(__file__)
    while frame is not None and os.path.dirname(frame.f_code.co_filename) == here:
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level
