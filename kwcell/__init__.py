"""kwcell: keyword arguments that reach your custom MindSpore ``bprop``, in every mode.

Names that need MindSpore are imported on first use (PEP 562 ``__getattr__``), so that
``import kwcell.mypy`` -- the mypy plugin, which runs inside mypy -- and the pure modules
(``kwcell._spec``, ``kwcell._validate``) do not pay for importing MindSpore.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._errors import GradcheckError, KwCellDefinitionError, KwCellWarning

if TYPE_CHECKING:
    from ._cell import KwCell
    from ._decorate import keyword_bprop
    from ._explain import explain
    from ._functional import custom_bprop
    from ._gradcheck import gradcheck
    from ._meta import KwCellMeta
    from ._typing import grad, value_and_grad

__all__ = [
    "GradcheckError",
    "KwCell",
    "KwCellDefinitionError",
    "KwCellMeta",
    "KwCellWarning",
    "custom_bprop",
    "explain",
    "grad",
    "gradcheck",
    "keyword_bprop",
    "value_and_grad",
]
__version__ = "0.1.0"

# public name -> submodule that defines it (each of these imports MindSpore)
_LAZY = {
    "KwCell": "._cell",
    "KwCellMeta": "._meta",
    "custom_bprop": "._functional",
    "explain": "._explain",
    "grad": "._grad",
    "gradcheck": "._gradcheck",
    "keyword_bprop": "._decorate",
    "value_and_grad": "._grad",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
