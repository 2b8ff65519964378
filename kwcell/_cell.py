"""``KwCell``, the drop-in base class for ``mindspore.nn.Cell``."""

from __future__ import annotations

import inspect
import types
import weakref
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar

from mindspore import Parameter, nn
from mindspore.common.hook_handle import HookHandle  # type: ignore[import-untyped,unused-ignore]

from ._codegen import ensure_written
from ._corecell import CORES as _CORES
from ._corecell import attach_core, core_of
from ._corecell import ref as _ref
from ._generate import written_face
from ._info import PASSTHROUGH, KwCellInfo, class_plan, plan, resolved
from ._lookup import (
    SEEN,
    BpropSlot,
    ConstructSlot,
    class_backward,
    class_forward,
    instance_backward,
    instance_forward,
    listing,
    remember,
    still_seen,
    super_key,
)
from ._meta import KwCellMeta
from ._mode import GRAPH as _GRAPH
from ._mode import KEY as _KEY
from ._mode import MODE as _MODE
from ._reuse import configure as _configure_reuse
from ._runtime import WeightKeys

__all__ = ["HasConstruct", "KwCell"]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_R_co = TypeVar("_R_co", covariant=True)


class HasConstruct(Protocol[_P, _R_co]):
    """A cell with a ``construct``: the self-type that gives ``KwCell.__call__`` its signature.

    ``net(...)`` is checked against ``type(net).construct`` (without ``self``): parameter
    names, order, kinds and types, and the call's type is construct's return type.
    """

    def construct(self, *args: _P.args, **kwargs: _P.kwargs) -> _R_co: ...


# Rebuilt when a cell is loaded: the core belongs to this process.
# The Parameters of internal_params, once each: the weighted dispatcher passes them to the core.
_WEIGHTS = "_kwcell_weights"
_PER_PROCESS = ("_kwcell_core", "_kwcell_construct_", "_kwcell_rbprop_", SEEN, _WEIGHTS)

# nn.Cell's pickling (the MindSpore stubs do not declare it).
_CELL_GETSTATE: Any = nn.Cell.__getstate__
_CELL_SETSTATE: Any = getattr(nn.Cell, "__setstate__")  # noqa: B009
_NO_HOOK: Any = None

# Cell.__call__ in GRAPH_MODE binds a keyword call with ``self._construct_sig.bind(...)``, then
# calls ``self._predict(*args, **kwargs)`` with the call bound, before anything is compiled; in
# PyNative it calls neither (MindSpore 2.10). Read from its code, not assumed: elsewhere a
# KwCell keeps a __call__ of its own that binds first.
_CELL_CALL_NAMES: tuple[str, ...] = getattr(getattr(nn.Cell.__call__, "__code__", None), "co_names", ())
GRAPH_HOOKS = (
    "_construct_sig" in _CELL_CALL_NAMES and "_predict" in _CELL_CALL_NAMES and hasattr(nn.Cell, "_predict")
)
_CELL_CONSTRUCT_SIG: Any = getattr(nn.Cell, "_construct_sig", None)
_SIGNATURES: weakref.WeakKeyDictionary[Any, inspect.Signature] = weakref.WeakKeyDictionary()


class _LazyCore:
    """``_kwcell_core``: an instance's core (kept outside its ``__dict__``), made on first use."""

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        core = _CORES.get(_ref(obj))  # core_of, inlined: the dispatcher reads it per call
        return core if core is not None else attach_core(obj)


class KwCell(nn.Cell, metaclass=KwCellMeta):
    """A `mindspore.nn.Cell` whose `bprop` receives its inputs by name, in every mode.

    Write `construct` as usual and `bprop` with construct's parameters in any order, plus
    `out` and `dout` anywhere (positional or keyword-only), `**kwargs` for the inputs it does
    not name, or MindSpore's own forms; return a tuple, a dict keyed by parameter name, or a
    bare Tensor (what is left out gets zeros). Keyword calls and omitted defaults reach bprop
    with the right values in PYNATIVE, GRAPH_MODE, outer cells' graphs and `@ms.jit`. A
    `KwCell` without `bprop` is an `nn.Cell`.

    Class keywords:
        compile_once: `class Act(KwCell, compile_once=True)` shares one graph between the
            instances whose graphs would be identical (inherited by subclasses).

    Raises:
        KwCellDefinitionError: When the class statement runs (or `Net.bprop`/`Net.construct`
            is assigned) and construct and bprop do not fit together.

    Example:
        ```python
        import mindspore as ms
        import numpy as np
        from mindspore import Tensor, nn, ops

        from kwcell import KwCell


        class Scaled(KwCell):
            def construct(self, x, w=1.0, y=1.0):
                return w * ops.sin(x) + y

            def bprop(self, x, w=1.0, y=1.0, *, out, dout):  # any order; matched by name
                return {"x": w * ops.cos(x) * dout}  # w and y get zeros


        class Outer(nn.Cell):
            def __init__(self):
                super().__init__()
                self.inner = Scaled()

            def construct(self, x):
                return self.inner(x, w=3.0)  # y left to its default


        ms.set_context(mode=ms.GRAPH_MODE)
        x = Tensor(np.array([0.5, 1.0], np.float32))
        assert np.allclose(ms.grad(Outer())(x).asnumpy(), 3.0 * np.cos(x.asnumpy()))
        ```
    """

    #: The hidden cell that carries the generated positional bprop (made on first use).
    _kwcell_core: Any = _LazyCore()
    # the instance's own core, whatever _kwcell_core is (a compile_once class's dispatcher
    # sends calls with Python values here: _templates.ROUTE)
    _kwcell_own_core: Any = _LazyCore()

    if not TYPE_CHECKING:
        construct = ConstructSlot(None)
        bprop = BpropSlot(None)

    def __init_subclass__(cls, *, compile_once: bool | None = None, **kwargs: Any) -> None:
        # class Act(KwCell, compile_once=True): one graph for the instances of a compile
        # whose graphs would be identical (kwcell/_reuse.py); inherited, False turns it off.
        super().__init_subclass__(**kwargs)
        _configure_reuse(cls, compile_once)

    # No __init__ of its own: the core is made when MindSpore first runs the cell (see
    # _kwcell_dispatcher), so building a network costs what building nn.Cells costs.

    # -- what MindSpore runs, found now (see kwcell._lookup) --------------------------------

    def _kwcell_plan(self) -> Any:
        """This instance's plan now: a KwCellInfo, PASSTHROUGH, or None (no bprop)."""
        return self._kwcell_found()[0]

    def _kwcell_found(self) -> tuple[Any, Any, bool, Any, bool]:
        """(plan, construct, called with self, bprop, called with self), looked up now."""
        state = self.__dict__
        cls = type(self)
        if "construct" not in state and "bprop" not in state:
            # The usual case, on the call path: the class's own functions, no instance ones.
            construct = class_forward(cls)[1]
            bprop = class_backward(cls)[1]
            return class_plan(cls, construct, bprop), construct, True, bprop, True
        construct, construct_self = instance_forward(self)
        bprop, bprop_self = instance_backward(self)
        if construct is None or bprop is None:
            return None, construct, construct_self, bprop, bprop_self
        found = plan(cls, construct, bprop, construct_self=construct_self, bprop_self=bprop_self)
        return found, construct, construct_self, bprop, bprop_self

    def _kwcell_running_info(self) -> KwCellInfo | None:
        seen = still_seen(self)  # what MindSpore ran last, while that holds (kwcell._lookup)
        if seen is not None:
            info: KwCellInfo | None = seen.info
            return info
        found = self._kwcell_found()[0]
        return None if found is None or found is PASSTHROUGH else found

    def _kwcell_dispatcher(self) -> Any:
        """What MindSpore runs as this cell's construct: the dispatcher, or ``None`` (the
        user's construct, as on nn.Cell, for a cell without a bprop)."""
        # (MindSpore's reads answer from what the instance ran last while that still holds,
        # see kwcell._lookup; this is the lookup they fall back on, which records it.)
        state = self.__dict__
        listed = listing(self)
        info, construct, construct_self, bprop, bprop_self = self._kwcell_found()
        snapshot = tuple(listed) if listed else ()
        if info is None or info is PASSTHROUGH:
            if construct_self and bprop_self:  # no bprop (an nn.Cell as it is): remembered too
                remember(self, construct, bprop, None, info is PASSTHROUGH, None, snapshot)
            return None
        weights = _weights_of(self, snapshot, info)
        if weights:
            info = plan(
                type(self),
                construct,
                bprop,
                construct_self=construct_self,
                bprop_self=bprop_self,
                weights=len(weights),
            )
        ensure_written(info.files["bprop"])  # the graph compiler reads generated code from a file
        core = core_of(self)
        if core is None:  # made now, not while MindSpore compiles the dispatcher
            core = attach_core(self)
        if type(core) is not info.core_cls:
            core.__class__ = info.core_cls
        if weights:
            state[_WEIGHTS] = weights
            core.__dict__["_kwcell_weight_keys"] = _weight_keys(self, weights, snapshot)
        else:
            state.pop(_WEIGHTS, None)  # none listed now
        if not construct_self:  # an assigned forward, called as it is (as on nn.Cell)
            self.__dict__[f"_kwcell_construct_{info.token}"] = construct
        if not bprop_self and info.rbprop is bprop:
            self.__dict__[f"_kwcell_rbprop_{info.token}"] = bprop
        if construct_self and bprop_self:
            remember(self, construct, bprop, info, False, core, snapshot)
        return types.MethodType(info.dispatcher, self)

    def _kwcell_passes_through(self) -> bool:
        return self._kwcell_plan() is PASSTHROUGH

    def _kwcell_face_of(self, bprop: Any, holder: type | None) -> Any:
        """``bprop`` (of the class ``holder``; reached by ``super()`` or ``self.bprop`` in another
        bprop) as the graph compiler calls it: kwcell's copy as written, bound to this cell
        (``None``: the compiler parses ``bprop`` itself)."""
        face = written_face(bprop, holder, super_key(holder) if holder is not None else None)
        if face is not None:
            return types.MethodType(face, self)
        # No source to copy (a lambda, exec, a decorated bprop): the normalised positional
        # version, whose graph form is the user's function or raises kwcell's clear error.
        construct, construct_self = instance_forward(self)
        if construct is None:
            return None
        found = plan(type(self), construct, bprop, construct_self=construct_self, warn=False)
        return None if found is PASSTHROUGH else types.MethodType(found.py_bprop, self)

    @staticmethod
    def _kwcell_instance_changed(cell: Any, name: str) -> None:
        """``cell.construct = f`` / ``cell.bprop = f``: checked now, as at class creation."""
        cell._kwcell_plan()

    def register_forward_hook(self, hook_fn: Any, *args: Any, **kwargs: Any) -> Any:
        # nn.Cell ignores forward hooks on a cell with a bprop (a dummy handle); so does a
        # KwCell, whose visible cell only looks as if it had none.
        if self._kwcell_plan() is not None:
            return HookHandle()
        return super().register_forward_hook(hook_fn, *args, **kwargs)

    # -- pickling ---------------------------------------------------------------------------

    def __getstate__(self) -> Any:
        # The core belongs to this process: pickle the cell without it (a new one is made on
        # first use after loading).
        base, state = _CELL_GETSTATE(self)
        return base, {k: v for k, v in state.items() if not k.startswith(_PER_PROCESS)}

    def __setstate__(self, state: Any) -> None:
        _CELL_SETSTATE(self, state)
        if resolved(type(self)) is not None:
            attach_core(self)

    # -- calls ------------------------------------------------------------------------------

    if TYPE_CHECKING:
        # Static view: a call takes construct's signature and returns construct's type.
        def __call__(self: HasConstruct[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R: ...

    elif not GRAPH_HOOKS:
        # A MindSpore whose Cell.__call__ has no GRAPH_MODE hooks to bind in (see _predict).
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            if _MODE[_KEY] == _GRAPH:
                _prebind(self, args, kwargs)
            return super().__call__(*args, **kwargs)

    else:
        # No __call__ of its own: a PyNative call is Cell.__call__ itself (one Python call less
        # on every call of every cell). In GRAPH_MODE, where kwcell binds a call with Python's
        # own binding before MindSpore compiles it, Cell.__call__ binds a keyword call with
        # ``_construct_sig.bind`` and then calls ``_predict`` with the call, bound: both bind
        # first here, and only GRAPH_MODE calls them.

        def _predict(self, *args: Any, **kwargs: Any) -> Any:
            _prebind(self, args, kwargs)
            return super()._predict(*args, **kwargs)

    if not TYPE_CHECKING:

        @property
        def _construct_sig(self) -> Any:
            # What Cell.__call__ (GRAPH_MODE keyword calls) and Cell._call_custom_bprop bind
            # calls with: the signature of the construct MindSpore runs now. nn.Cell keeps the
            # first it found in the instance; a construct changed since then binds as it is.
            return ConstructSignature(self)


def _weights_of(cell: nn.Cell, listed: tuple[Any, ...], info: KwCellInfo) -> tuple[Parameter, ...]:
    """The Parameters ``internal_params`` lists, once each (a Parameter listed twice would get
    its gradient twice)."""
    weights: list[Parameter] = []
    for i, p in enumerate(listed):
        if not isinstance(p, Parameter):
            msg = (
                f"{type(cell).__qualname__}.internal_params[{i}] is a {type(p).__name__}; "
                "internal_params lists the Parameters the bprop of "
                f"{info.spec.qualname} gives gradients to"
            )
            raise TypeError(msg)
        if not any(p is w for w in weights):
            weights.append(p)
    return tuple(weights)


def _weight_keys(cell: nn.Cell, weights: tuple[Parameter, ...], listed: tuple[Any, ...] = ()) -> WeightKeys:
    """For each weight, the names a graph's bprop can return its gradient under (its index
    ``#<i>``, every ``self.<path>`` that reaches it: ``{self.dense.weight: g}`` is rewritten
    to ``{"self.dense.weight": g}``, and ``self.internal_params[<k>]`` for each place ``k``,
    from the end too, where ``internal_params`` (``listed``) holds it), its dtype (a graph
    sees the weight as the cell's mixed precision casts it), its shape (the zeros of a
    gradient bprop leaves out, the sum of a broadcast one) and how messages name it: its
    first path and its Parameter's name."""
    paths: list[list[str]] = [[f"#{i}"] for i in range(len(weights))]  # by index
    for prefix, sub in cell.cells_and_names():
        params: dict[str, Any] = getattr(sub, "_params", {})  # nn.Cell's own Parameters by name
        for name, p in params.items():
            for i, w in enumerate(weights):
                if p is w:
                    paths[i].append("self." + (f"{prefix}.{name}" if prefix else name))
    for k, p in enumerate(listed):
        for i, w in enumerate(weights):
            if p is w:
                paths[i].extend((f"self.internal_params[{k}]", f"self.internal_params[{k - len(listed)}]"))
    return tuple(
        (tuple(p), w.dtype, tuple(w.shape), _weight_label(p, w)) for p, w in zip(paths, weights, strict=True)
    )


def _weight_label(paths: list[str], weight: Parameter) -> str:
    """``self.b (Parameter 'b')``: its first path (an attribute before an entry of
    ``internal_params``) and its Parameter's name."""
    named = f"Parameter '{weight.name}'"
    return f"{paths[1]} ({named})" if len(paths) > 1 else named


def _prebind(cell: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """In GRAPH_MODE, bind the call with Python's own binding before MindSpore compiles.

    A bad call then raises Python's own ``TypeError`` naming the cell's class. (In PyNative,
    Python binds the call against the generated dispatcher, with the same message.)
    """
    if _MODE[_KEY] == _GRAPH:
        info = cell._kwcell_running_info()
        if info is not None:
            info.bind(cell, *args, **kwargs)


class ConstructSignature:
    """A KwCell's ``_construct_sig``: the signature of the construct MindSpore runs now (its
    plan's dispatcher, which has construct's exact signature; for a cell kwcell leaves as it
    is, nn.Cell's own), whose ``bind`` binds with Python's own binding first in GRAPH_MODE."""

    __slots__ = ("_cell", "_info")

    def __init__(self, cell: Any) -> None:
        self._cell = cell
        self._info = cell._kwcell_running_info()

    def _signature(self) -> Any:
        info = self._info
        if info is None:
            return _CELL_CONSTRUCT_SIG.fget(self._cell) if _CELL_CONSTRUCT_SIG is not None else None
        found = _SIGNATURES.get(info.dispatcher)
        if found is None:
            found = inspect.signature(types.MethodType(info.dispatcher, self._cell))
            _SIGNATURES[info.dispatcher] = found  # the same for every instance of the plan
        return found

    def bind(self, *args: Any, **kwargs: Any) -> inspect.BoundArguments:
        if self._info is not None and _MODE[_KEY] == _GRAPH:
            self._info.bind(self._cell, *args, **kwargs)
        bound: inspect.BoundArguments = self._signature().bind(*args, **kwargs)
        return bound

    def __getattr__(self, name: str) -> Any:  # parameters, replace, ...: the signature's
        return getattr(self._signature(), name)


def _register_with_mindspore_rewrite() -> None:
    """``mindspore.rewrite`` re-creates every base class of a network between it and
    ``nn.Cell`` from its source; KwCell is a base as ``nn.Cell`` is (its source belongs to kwcell
    and uses relative imports), so the rewrite stops at it."""
    try:
        from mindspore.rewrite.parsers.class_def_parser import (  # type: ignore[import-untyped,unused-ignore]
            ClassDefParser,
        )
    except ImportError:  # pragma: no cover - a MindSpore without mindspore.rewrite
        return
    finals = getattr(ClassDefParser, "final_networks", None)
    if isinstance(finals, list) and KwCell not in finals:
        finals.append(KwCell)


_register_with_mindspore_rewrite()
