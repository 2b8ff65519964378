"""``kwcell.custom_bprop``: a custom backward for a plain function, with KwCell's rules.

For each decorated function kwcell generates, in one file:

- the ``construct`` of a ``KwCell`` subclass named after the function, with the function's
  exact signature, that calls the function. When a backward is registered
  (``@scaled.bprop``) it becomes that class's ``bprop``, taking no ``self``, so the backward
  is checked, generated and run by KwCell itself: the same rules, messages, timing and
  generated code as a ``KwCell``'s bprop;
- the public function, again with the function's exact signature, which calls the one
  instance of that class. A cell held in a closure is callable from a graph, so the function
  works in PYNATIVE, inside GRAPH_MODE cells, ``@ms.jit`` functions and outer graphs, and
  Python (or MindSpore's graph parser) binds keywords and fills defaults before the cell
  sees the call.
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar, cast, overload

from ._binder import defaults_of, signature_source
from ._codegen import Unit, compile_units
from ._errors import KwCellDefinitionError, KwCellWarning
from ._spec import CellSpec, Signature, call_text, safe_repr, signature_of
from ._templates import HEADER
from ._validate import RESERVED_PREFIX, check_construct

if TYPE_CHECKING:
    from mindspore import nn

__all__ = ["CustomBprop", "custom_bprop", "function_info"]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_R_co = TypeVar("_R_co", covariant=True)
_F = TypeVar("_F", bound=Callable[..., Any])


class CustomBprop(Protocol[_P, _R_co]):
    """A function decorated with :func:`kwcell.custom_bprop`.

    Calls are checked against the decorated function's own signature (names, order, kinds,
    types) and have its return type; ``.bprop`` registers the backward.
    """

    __name__: str
    __qualname__: str

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R_co: ...

    def bprop(self, backward: _F, /) -> _F:
        """Register ``backward`` as the function's custom backward; returns it unchanged."""
        ...


# The cell's construct and the public function: the function's exact signature, so that
# Python and MindSpore's graph parser bind keywords and fill defaults. ``{default_refs}``
# mention non-literal defaults, which makes them closure cells (where the parser finds them).
_UNIT = '''\
def construct({self_signature}):
    """kwcell: the cell behind {qualname} (kwcell.custom_bprop); calls {qualname} itself."""
{default_refs}    return _kwcell_fn({call})


def {name}({signature}):
    """kwcell: {qualname} (kwcell.custom_bprop); calls its cell, which carries the backward."""
{default_refs}    return _kwcell_cell({call})


def _kwcell_unregistered(*args, **kwargs):
    """kwcell: {qualname} has no backward yet (what the function calls until one is registered)."""
    raise _kwcell_error(_kwcell_message)


def _kwcell_unregistered_graph(*args, **kwargs):
    """kwcell: the same, as MindSpore's graph parser reads it (builtin exceptions only)."""
    raise TypeError(_kwcell_message)
'''


class FunctionInfo:
    """What kwcell keeps for one ``custom_bprop`` function (``scaled._kwcell_function``)."""

    def __init__(self, fn: types.FunctionType, spec: CellSpec, compile_once: bool) -> None:
        self.fn = fn
        self.spec = spec
        self.compile_once = compile_once
        #: The KwCell subclass and its one instance, once a backward is registered.
        self.cls: type[nn.Cell] | None = None
        self.cell: nn.Cell | None = None
        self.backward: Callable[..., Any] | None = None
        #: What the public function calls: a function that raises, then the cell.
        self.target = types.CellType()
        self.construct: types.FunctionType
        self.public: types.FunctionType
        self.unregistered: str = ""

    @property
    def qualname(self) -> str:
        return self.spec.qualname

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    def register(self, backward: Any) -> Any:
        """``@scaled.bprop``: check ``backward`` as KwCell checks a bprop, and generate."""
        if self.cls is not None:
            msg = (
                f"{self.qualname}.bprop: {self.qualname} already has a backward "
                f"({_where(self.backward)}); a function has one backward. To change it, edit "
                f"that one, or decorate a new function with @kwcell.custom_bprop"
            )
            raise KwCellDefinitionError(msg)
        if not isinstance(backward, types.FunctionType):
            msg = (
                f"{self.qualname}.bprop: expected a function (def) as the backward, got {safe_repr(backward)}"
            )
            raise KwCellDefinitionError(msg)
        collect = _COLLECTING[-1] if _COLLECTING else None
        label = f"{self.spec.module}.{self.qualname}"
        caught: list[warnings.WarningMessage] = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                cls = self._make_class(backward)
                self._warn_closed_over_parameters()
        except KwCellDefinitionError as exc:
            if collect is None:
                raise
            collect(label, backward.__code__, str(exc), False)
            return backward
        for warning in caught:
            if issubclass(warning.category, KwCellWarning):
                if collect is not None:
                    collect(label, backward.__code__, str(warning.message), True)
                else:
                    # at the user's @scaled.bprop line, as a class statement's warning is
                    warnings.warn(warning.message, warning.category, stacklevel=2)
            else:
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        cell = cls()
        self.cls, self.cell, self.backward = cls, cell, backward
        self.target.cell_contents = cell
        return backward

    def _warn_closed_over_parameters(self) -> None:
        """Warn when the function reads trainable Parameters it does not take as inputs (as a
        KwCell warns for parameters its bprop gives no gradient): they would never train."""
        found = _closed_over_parameters(self.fn)
        if found:
            q = self.qualname
            msg = (
                f"{q} uses trainable parameter(s) {', '.join(found)} without taking them as inputs: its "
                "backward gives them no gradient (MindSpore uses zeros), so they will not train. Pass "
                f"them to {q} as arguments (its backward can then return their gradients), or create "
                "them with requires_grad=False"
            )
            warnings.warn(msg, KwCellWarning, stacklevel=2)

    def _make_class(self, backward: types.FunctionType) -> type[nn.Cell]:
        from ._cell import KwCell
        from ._meta import KwCellMeta

        namespace: dict[str, Any] = {
            "__module__": self.fn.__module__,
            "__qualname__": self.qualname,
            "__doc__": f"kwcell: the cell behind {self.qualname} (kwcell.custom_bprop).",
            "_kwcell_function": True,
            "construct": self.construct,
            "bprop": backward,
        }
        options: dict[str, Any] = {}
        return cast("type[nn.Cell]", KwCellMeta(self.fn.__name__, (KwCell,), namespace, **options))


def _closed_over_parameters(fn: types.FunctionType) -> list[str]:
    """The trainable Parameters ``fn`` reads from its closure or its module's globals by name,
    and the cells with trainable parameters it reads, as ``name ('parameter name', ...)``."""
    from mindspore import Parameter, nn

    code = fn.__code__
    values: list[tuple[str, Any]] = []
    for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=True):
        try:
            values.append((name, cell.cell_contents))
        except ValueError:  # a closure variable not assigned yet
            continue
    values += [(name, fn.__globals__[name]) for name in code.co_names if name in fn.__globals__]
    found: list[str] = []
    for name, value in values:
        if isinstance(value, Parameter) and value.requires_grad:
            found.append(f"{name} ({value.name!r})")
        elif isinstance(value, nn.Cell) and (params := value.trainable_params()):
            found.append(f"{name} ({', '.join(repr(p.name) for p in params)})")
    return found


def _where(fn: Any) -> str:
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else safe_repr(fn)


_compile_once: bool | None = None


def _accepts_compile_once() -> bool:
    """Whether ``KwCell`` takes the ``compile_once`` class keyword (probed once)."""
    global _compile_once
    if _compile_once is None:
        from ._cell import KwCell
        from ._meta import KwCellMeta

        try:
            KwCellMeta("_KwCellCompileOnceProbe", (KwCell,), {"__module__": __name__}, compile_once=True)
        except TypeError as exc:
            if isinstance(exc, KwCellDefinitionError):
                raise
            _compile_once = False
        else:
            _compile_once = True
    return _compile_once


def _source_name(fn: types.FunctionType) -> str:
    """The name the public function has in its generated source (its own, when it can)."""
    name = fn.__name__
    if not name.isidentifier() or name.startswith(RESERVED_PREFIX) or name == "construct":
        return "function"
    return name


def _make(fn: Any, compile_once: bool) -> Any:
    if not isinstance(fn, types.FunctionType):
        msg = (
            f"kwcell.custom_bprop: expected a function (def), got {safe_repr(fn)}; for a cell, derive "
            "it from kwcell.KwCell and give it a bprop"
        )
        raise KwCellDefinitionError(msg)
    if function_info(fn) is not None:
        msg = f"kwcell.custom_bprop: {fn.__qualname__} is already a kwcell.custom_bprop function"
        raise KwCellDefinitionError(msg)
    sig = signature_of(fn, has_self=False)
    spec = CellSpec(
        module=fn.__module__,
        qualname=fn.__qualname__,
        construct=Signature("self", sig.params, sig.var_positional, sig.var_keyword),
        bprop=None,
        function=True,
    )
    try:
        check_construct(spec)  # the function's own rules (no *args, out/dout...), now
    except KwCellDefinitionError as exc:
        if not _COLLECTING:
            raise
        _COLLECTING[-1](f"{spec.module}.{spec.qualname}", fn.__code__, str(exc), False)
        fn.bprop = _ignore  # type: ignore[attr-defined]  # so that the module imports on
        return fn
    info = FunctionInfo(fn, spec, compile_once)
    label = f"{spec.module}.{spec.qualname}"
    name = _source_name(fn)
    self_signature, default_refs, closure = signature_source(spec.construct, with_self=True)
    signature, _, _ = signature_source(spec.construct, with_self=False)
    call = call_text(spec.construct.params)
    message = (
        f"{spec.qualname} has no backward yet: register one with @{info.name}.bprop "
        f"(kwcell.custom_bprop) before calling {spec.qualname}"
    )
    defaults = defaults_of(spec.construct)
    unit = Unit(
        "function",
        _UNIT.format(
            self_signature=self_signature,
            signature=signature,
            default_refs=default_refs,
            call=call,
            name=name,
            qualname=spec.qualname,
        ),
        fn.__globals__,
        closure={
            **closure,
            "_kwcell_fn": fn,
            "_kwcell_message": message,
            "_kwcell_error": KwCellDefinitionError,
        },
        cells={"_kwcell_cell": info.target},
        defaults={"construct": defaults, name: defaults},
    )
    mapping = f"{spec.qualname}({signature}) -> its cell -> {spec.qualname}; the backward as the cell's bprop"
    fns = compile_units(
        kind="function",
        label=label,
        header=HEADER.format(label=label, kind="custom_bprop", mapping=mapping),
        units=[unit],
        owner=info,
    )["function"]
    unregistered = fns["_kwcell_unregistered"]
    unregistered.__wrapped__ = fns["_kwcell_unregistered_graph"]  # type: ignore[attr-defined]
    info.target.cell_contents = unregistered
    info.unregistered = message
    construct = fns["construct"]
    construct.__qualname__ = f"{spec.qualname}.construct"
    construct.__annotations__ = dict(fn.__annotations__)
    public = fns[name]
    public.__name__ = fn.__name__
    public.__qualname__ = fn.__qualname__
    public.__doc__ = fn.__doc__
    public.__annotations__ = dict(fn.__annotations__)
    public.bprop = info.register  # type: ignore[attr-defined]
    public._kwcell_function = info  # type: ignore[attr-defined]
    info.construct, info.public = construct, public
    return public


def function_info(obj: object) -> FunctionInfo | None:
    """kwcell's record of a ``custom_bprop`` function (``None`` for anything else)."""
    info = getattr(obj, "_kwcell_function", None) if isinstance(obj, types.FunctionType) else None
    return info if isinstance(info, FunctionInfo) else None


@overload
def custom_bprop(fn: Callable[_P, _R], /) -> CustomBprop[_P, _R]: ...
@overload
def custom_bprop(*, compile_once: bool = False) -> Callable[[Callable[_P, _R]], CustomBprop[_P, _R]]: ...
def custom_bprop(fn: Any = None, /, *, compile_once: bool = False) -> Any:
    """Give a function a custom backward, with the rules of a `KwCell`'s `bprop`.

    Register the backward with `@fn.bprop`. It names the function's parameters (any order,
    keyword-only, defaults that match, `**kwargs` for the rest), plus `out` and `dout`, and
    returns a tuple, a dict keyed by parameter name, or one Tensor, exactly as a `KwCell`'s
    bprop does. The decorated function accepts keywords and omitted defaults in PYNATIVE, in
    GRAPH_MODE cells, in `@ms.jit` functions and in outer graphs, and works with
    [`kwcell.grad`][kwcell._grad.grad]/`value_and_grad` (named positions),
    [`gradcheck`][kwcell.gradcheck] and [`explain`][kwcell.explain]. It keeps the function's
    name, signature, docstring and annotations.

    Args:
        fn: The function, when used as `@custom_bprop`.
        compile_once: Only `False` (the default) is accepted. A function has one cell, and
            MindSpore's cell reuse shares a graph between instances, not between the call
            sites of one instance (whose Python arguments differ): sharing it would give
            wrong gradients, so `compile_once=True` is refused until it is safe.

    Returns:
        The function, callable as before once a backward is registered, with a `bprop`
            method to register it (or, called with only `compile_once`, the decorator).

    Raises:
        KwCellDefinitionError: The function's own signature cannot have a backward (`*args`,
            a parameter named `out`), when it is decorated; a backward that breaks a rule,
            or a second backward, when it is registered (naming the function and the
            parameter); a call before a backward is registered. It is a `TypeError`.
        TypeError: `compile_once` is not a bool; `compile_once=True` (a
            `KwCellDefinitionError`).

    Example:
        ```python
        import numpy as np
        from mindspore import Tensor, ops

        import kwcell


        @kwcell.custom_bprop
        def scaled(x, w=1.0, *, y=0.0):
            return w * ops.sin(x) + y


        @scaled.bprop
        def _(x, w=1.0, *, y=0.0, out, dout):  # matched by name; no self
            return {"x": w * ops.cos(x) * dout}  # inputs left out get zeros


        x = Tensor(np.array([0.5, 1.0], np.float32))
        assert np.allclose(kwcell.grad(scaled)(x, y=1.0, w=3.0).asnumpy(), 3.0 * np.cos(x.asnumpy()))
        ```
    """
    if not isinstance(compile_once, bool):
        msg = f"kwcell.custom_bprop: compile_once must be True or False, got {safe_repr(compile_once)}"
        raise TypeError(msg)
    if compile_once:
        msg = (
            "kwcell.custom_bprop: compile_once=True is not supported: a custom_bprop function "
            "has one cell, and MindSpore's cell reuse shares a graph between instances of a "
            "class, not between the call sites of one function, whose Python arguments differ "
            "(the shared graph would give every call site one call's values). Remove "
            "compile_once=True; to share one graph between layers, write the layer as "
            "class Layer(KwCell, compile_once=True)"
        )
        raise KwCellDefinitionError(msg)
    if fn is None:

        def decorate(function: Any) -> Any:
            return _make(function, compile_once)

        return decorate
    return _make(fn, compile_once)


# -- kwcell check: problems reported instead of raised -------------------------------------

#: ``report(label, code, message, warning)``: the function's ``module.qualname``, the code
#: object of the function at fault (its file and first line, decorators included), the
#: ``KwCellDefinitionError`` or ``KwCellWarning`` message, and which of the two it is.
_Collector = Callable[[str, types.CodeType, str, bool], None]
_COLLECTING: list[_Collector] = []


def _ignore(backward: Any) -> Any:
    """The ``.bprop`` of a function refused under :func:`collecting` (nothing to check it against)."""
    return backward


@contextmanager
def collecting(report: _Collector) -> Iterator[None]:
    """Within the block, a function or backward refused (or warned about) is passed to
    ``report`` instead of raising; the function is left without a backward. ``kwcell check``
    imports modules this way, so that one broken function does not hide the rest."""
    _COLLECTING.append(report)
    try:
        yield
    finally:
        _COLLECTING.remove(report)
