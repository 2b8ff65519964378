"""``KwCell``, the drop-in base class for ``mindspore.nn.Cell``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar

from mindspore import context, nn

from ._corecell import attach_cores
from ._meta import KwCellMeta, info_of, keyword_only
from ._override import ASSIGNED, construct_attr, route_instance_construct
from ._reuse import configure as _configure_reuse

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


# Attributes rebuilt when a cell is loaded: the cores and an instance's routed forward.
_PER_PROCESS = ("_kwcell_core", "_kwcell_construct_")

# nn.Cell's pickling (the MindSpore stubs do not declare it).
_CELL_GETSTATE: Any = nn.Cell.__getstate__
_CELL_SETSTATE: Any = getattr(nn.Cell, "__setstate__")  # noqa: B009


class KwCell(nn.Cell, metaclass=KwCellMeta):
    """A ``mindspore.nn.Cell`` whose ``bprop`` receives its inputs by name, in every mode.

    Write ``construct`` as usual and ``bprop`` with any of construct's parameters, plus
    ``out`` and ``dout`` anywhere (positional or keyword-only); return a tuple, a dict keyed
    by parameter name, or a single Tensor. A ``KwCell`` without ``bprop`` is an ``nn.Cell``.
    """

    #: The hidden cell that carries the generated positional bprop (only with a bprop).
    _kwcell_core: nn.Cell

    def __init_subclass__(cls, *, compile_once: bool | None = None, **kwargs: Any) -> None:
        # class Act(KwCell, compile_once=True): one graph for the instances of a compile
        # whose graphs would be identical (kwcell/_reuse.py); inherited, False turns it off.
        super().__init_subclass__(**kwargs)
        _configure_reuse(cls, compile_once)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._kwcell_attach_cores()

    def _kwcell_attach_cores(self) -> None:
        attach_cores(self)

    def __setattr__(self, name: str, value: Any) -> None:
        # net.construct = f (or jit(net.construct)) replaces the forward the bprop wraps, as on
        # nn.Cell; the instance keeps its dispatcher, which calls the core.
        if name == "construct" and (info := info_of(type(self))) is not None:
            kwonly = keyword_only(info.spec)
            if route_instance_construct(self, value, info.dispatcher, info.token, kwonly):
                return
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name == "construct" and (info := info_of(type(self))) is not None:
            attr = construct_attr(info.token)
            if attr in self.__dict__:
                del self.__dict__[attr]
                self.__dict__.pop(ASSIGNED, None)
                return
        super().__delattr__(name)

    def __getstate__(self) -> Any:
        # The cores are generated per class and process: pickle the cell without them and
        # attach new ones when it is loaded.
        # A replaced construct is kept as assigned, and routed again when loaded.
        base, state = _CELL_GETSTATE(self)
        return base, {k: v for k, v in state.items() if not k.startswith(_PER_PROCESS)}

    def __setstate__(self, state: Any) -> None:
        _CELL_SETSTATE(self, state)
        self._kwcell_attach_cores()
        assigned = self.__dict__.pop(ASSIGNED, None)
        if assigned is not None:
            self.__setattr__("construct", assigned)

    if TYPE_CHECKING:
        # Static view: a call takes construct's signature and returns construct's type.
        def __call__(self: HasConstruct[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R: ...

    else:

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            _prebind(self, args, kwargs)
            return super().__call__(*args, **kwargs)


def _prebind(cell: KwCell, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """In GRAPH_MODE, bind the call with Python's own binding before MindSpore compiles.

    A bad call then raises Python's own ``TypeError`` naming the cell's class. (In PyNative,
    Python binds the call against the generated dispatcher, with the same message.)
    """
    if context._get_mode() == context.GRAPH_MODE:
        info = info_of(type(cell))
        if info is not None:
            info.bind(cell, *args, **kwargs)
