"""kwcell: keyword arguments that reach your custom MindSpore ``bprop``, in every mode."""

from __future__ import annotations

from ._cell import KwCell
from ._grad import grad, value_and_grad
from ._errors import GradcheckError, KwCellDefinitionError
from ._meta import KwCellMeta

__all__ = [
    "GradcheckError",
    "KwCell",
    "KwCellDefinitionError",
    "KwCellMeta",
    "grad",
    "value_and_grad",
]
__version__ = "0.1.0"
