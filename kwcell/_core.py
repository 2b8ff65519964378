"""``KwCellCore``: the hidden cell that carries a KwCell's generated positional bprop."""

from __future__ import annotations

from typing import Any

from mindspore import context, nn

try:  # MindSpore 2.10 moved it; the old module logs a deprecation warning when imported
    from mindspore.graph.api import _pynative_executor  # type: ignore[import-untyped,unused-ignore]
except ImportError:  # MindSpore 2.8, 2.9
    from mindspore.common.api import _pynative_executor


__all__ = ["KwCellCore"]

GRAPH = context.GRAPH_MODE
_MISSING = object()


def _unattached(*args: Any) -> Any:
    """What a core answers before it has an owner (``nn.Cell.__init__`` asks for ``bprop``)."""
    msg = "kwcell: a core cell was called without its owner"
    raise RuntimeError(msg)


class KwCellCore(nn.Cell):
    """The hidden cell that carries a KwCell's generated positional construct and bprop.

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

    # Replaced by the class of the plan in use (see ``KwCell._kwcell_dispatcher``): a core is
    # given the class whose positional construct and bprop fit its owner's construct and bprop
    # as they are when MindSpore runs the owner. ``nn.Cell.__init__`` sees this bprop.
    def construct(self, *args: Any) -> Any:
        return _unattached()

    def bprop(self, *args: Any) -> Any:
        return _unattached()

    def __call__(self, *args: Any) -> Any:
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
