"""kwcell: keyword arguments that reach your custom MindSpore ``bprop``, in every mode."""

from __future__ import annotations

from ._cell import KwCell
from ._errors import GradcheckError, KwCellDefinitionError
from ._meta import KwCellMeta

__all__ = ["GradcheckError", "KwCell", "KwCellDefinitionError", "KwCellMeta"]
__version__ = "0.1.0"
