"""``KwCellCore``: the hidden cell that carries a KwCell's generated positional bprop."""

from __future__ import annotations

import sys
import types
from operator import itemgetter
from typing import Any

from mindspore import nn

from ._lookup import _CELL_GETATTR, _PARSER
from ._mode import GRAPH, KEY, MODE

try:  # MindSpore 2.10 moved it; the old module logs a deprecation warning when imported
    from mindspore.graph.api import _pynative_executor  # type: ignore[import-untyped,unused-ignore]
except ImportError:  # MindSpore 2.8, 2.9
    from mindspore.common.api import _pynative_executor
try:  # what Cell._call_custom_bprop runs the forward under
    from mindspore.graph.api import _no_grad  # type: ignore[import-untyped,unused-ignore]
except ImportError:  # pragma: no cover - MindSpore 2.8, 2.9
    try:
        from mindspore.common.api import _no_grad  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        _no_grad = None


__all__ = ["OWNER_LINK", "KwCellCore", "PinningBprop"]

_MISSING = object()
_GETATTRIBUTE: Any = object.__getattribute__
# What makes nn.Cell.__call__ take another path than a plain custom-bprop cell's, read from the
# instance's state as Cell.__init__ leaves it (all false there): grad and dynamic-shape
# settings, mixed precision, hooks (kept lazily), shard, recompute, saved-tensor hooks.
_EXTRAS = itemgetter(
    "requires_grad",
    "_dynamic_shape_inputs",
    "mixed_precision_type",
    "_lazy_forward_pre_hook",
    "_lazy_forward_hook",
    "_lazy_backward_pre_hook",
    "_lazy_backward_hook",
    "_shard_fn",
    "_recompute_cell",
    "_saved_tensors_pack_hook",
)


def _unattached(*args: Any) -> Any:
    """What a core answers before it has an owner (``nn.Cell.__init__`` asks for ``bprop``)."""
    msg = "kwcell: a core cell was called without its owner"
    raise RuntimeError(msg)


def _owner_link(cell: Any) -> nn.Cell:
    # (_kwcell_owner_or_none inlined: the core's construct and bprop read this per call)
    ref = cell.__dict__.get("_kwcell_owner_ref")
    owner: nn.Cell | None = ref() if ref is not None else None
    if owner is None:
        raise AttributeError("_kwcell_owner")
    return owner


#: ``_kwcell_owner`` of a cell that reaches its owner through the weak reference
#: ``_kwcell_owner_ref`` (a core, a compile-once class's shared cell).
OWNER_LINK: Any = property(_owner_link)


class KwCellCore(nn.Cell):
    """The hidden cell that carries a KwCell's generated positional construct and bprop.

    The core reaches its owner through ``_kwcell_owner`` (a weak reference, set with
    ``object.__setattr__`` so that neither cell becomes the other's child, and so that an owner
    and its core form no reference cycle: a dropped network is freed at once, not by the cyclic
    garbage collector) and forwards the attributes MindSpore reads from a cell with a bprop.
    """

    _init_flag: bool  # set by nn.Cell once its parameters are initialised
    has_bprop: bool  # set by nn.Cell.__init__

    _kwcell_owner = OWNER_LINK

    # Replaced by the class of the plan in use (see ``KwCell._kwcell_dispatcher``): a core is
    # given the class whose positional construct and bprop fit its owner's construct and bprop
    # as they are when MindSpore runs the owner. ``nn.Cell.__init__`` sees this bprop.
    def construct(self, *args: Any) -> Any:
        return _unattached()

    def bprop(self, *args: Any) -> Any:
        return _unattached()

    def __call__(self, *args: Any) -> Any:
        # PyNative: what Cell.__call__ ends up doing for a cell with a bprop and nothing else
        # (the core has no hooks, shard, recompute, mixed precision or dynamic shapes of its
        # own, checked below), without its chain of checks and helper calls.
        if self._init_flag and MODE[KEY] != GRAPH:
            if not _pynative_executor.requires_grad():
                return self.construct(*args)  # nothing to record: construct itself
            construct = type(self).construct
            if (
                _no_grad is not None
                and self.has_bprop
                and not (construct.__defaults__ or construct.__kwdefaults__)
            ):
                try:
                    extras = any(_EXTRAS(self.__dict__))
                except KeyError:  # a MindSpore whose cells keep other state
                    extras = True
                if not extras:
                    # Cell._call_custom_bprop: the forward without recording, then the bprop
                    # node with the call's inputs.
                    with _no_grad():
                        output = self.construct(*args)
                    return _pynative_executor.call_custom_bprop(self, output, *args)
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
        # costs about 50 us. Most owners have neither: that is proved first without
        # nn.Cell.__getattr__, which formats and raises an error that getattr then drops.
        ref = self.__dict__.get("_kwcell_owner_ref")
        owner = ref() if ref is not None else None
        if owner is None:
            raise AttributeError(name)
        state = owner.__dict__
        cls = type(owner)
        if (
            name not in state
            and cls.__getattr__ is _CELL_GETATTR
            and cls.__getattribute__ is _GETATTRIBUTE
            and not hasattr(cls, name)
            # where nn.Cell.__getattr__ looks: parameters, buffers, child cells
            and name not in state.get("_params", ())
            and name not in state.get("_buffers", ())
            and name not in state.get("_cells", ())
            and name not in state.get("_params_list", ())
        ):
            raise AttributeError(name)
        value = getattr(owner, name, _MISSING)
        if value is _MISSING:
            raise AttributeError(name)
        return value

    @property
    def used_bprop_inputs(self) -> Any:
        return self._kwcell_forwarded("used_bprop_inputs")


class PinningBprop:
    """A core class's ``bprop``: the generated function, read so that MindSpore's PyNative tape
    keeps the owner alive as long as it keeps the backward.

    MindSpore's PyNative executor reads ``cell.bprop`` when it records the forward call
    (``call_custom_bprop``) and keeps what it read until the backward has run
    (``tests/test_mindspore_contract.py``). The core holds its owner weakly (no cycle, see
    :class:`KwCellCore`), so a temporary cell created and called inside the differentiated
    function (``Ste()(x)``, as mindone's I-BERT does) was gone before its backward ran. Outside
    the graph parser, a read gives a copy of the function (a new function object with the same
    code: MindSpore reads its ``__code__``), bound to the core, that also holds the owner: the
    tape's reference keeps the owner alive exactly as long as the tape needs it, and nothing
    else keeps it. The graph parser (which parses the function and ``__wrapped__``) gets the
    plain bound method.
    """

    __slots__ = ("fn",)

    def __init__(self, fn: types.FunctionType) -> None:
        self.fn = fn

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self.fn
        held = obj.__dict__.get("_kwcell_owner_ref")
        cell = held() if held is not None else None
        if cell is None or sys._getframe(1).f_code.co_filename.endswith(_PARSER):
            return types.MethodType(self.fn, obj)
        fn = self.fn
        pinned = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
        pinned.__qualname__ = fn.__qualname__
        pinned._kwcell_pin = cell  # type: ignore[attr-defined]  # held by the tape with it
        return types.MethodType(pinned, obj)
