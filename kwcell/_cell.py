"""``KwCell``, the drop-in base class for ``mindspore.nn.Cell``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar

from mindspore import context, nn

from ._codegen import ensure_written
from ._meta import KwCellMeta, info_of, own_infos

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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._kwcell_attach_cores()

    def _kwcell_attach_cores(self) -> None:
        info = info_of(type(self))
        if info is not None:
            # One core per class of the MRO with generated code (usually just this class):
            # a parent's dispatcher, reached through super().construct(...), uses its own.
            for own in own_infos(type(self)):
                # MindSpore's graph compiler needs the generated code in a real file; no graph
                # can hold the cell before an instance exists.
                ensure_written(own.files["bprop"])
                core = own.core_cls()
                object.__setattr__(core, "_kwcell_owner", self)
                object.__setattr__(self, f"_kwcell_core_{own.token}", core)
            object.__setattr__(self, "_kwcell_core", self.__dict__[f"_kwcell_core_{info.token}"])

    def __getstate__(self) -> Any:
        # The cores are generated per class and process: pickle the cell without them and
        # attach new ones when it is loaded.
        base, state = _CELL_GETSTATE(self)
        return base, {k: v for k, v in state.items() if not k.startswith("_kwcell_core")}

    def __setstate__(self, state: Any) -> None:
        _CELL_SETSTATE(self, state)
        self._kwcell_attach_cores()

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
