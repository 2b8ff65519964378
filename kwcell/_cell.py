"""``KwCell``, the drop-in base class for ``mindspore.nn.Cell``."""

from __future__ import annotations

from typing import Any

from mindspore import context, nn

from ._meta import KwCellMeta, info_of

__all__ = ["KwCell"]


class KwCell(nn.Cell, metaclass=KwCellMeta):
    """A ``mindspore.nn.Cell`` whose ``bprop`` receives its inputs by name, in every mode.

    Write ``construct`` as usual and ``bprop`` with any of construct's parameters, plus
    ``out`` and ``dout`` anywhere (positional or keyword-only); return a tuple, a dict keyed
    by parameter name, or a single Tensor. A ``KwCell`` without ``bprop`` is an ``nn.Cell``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        info = info_of(type(self))
        if info is not None:
            core = info.core_cls()
            object.__setattr__(core, "_kwcell_owner", self)
            object.__setattr__(self, "_kwcell_core", core)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs and context._get_mode() == context.GRAPH_MODE:
            info = info_of(type(self))
            if info is not None:
                # Python's own binding, with Python's own TypeError naming this class,
                # before MindSpore starts compiling.
                info.bind(self, *args, **kwargs)
        return super().__call__(*args, **kwargs)
