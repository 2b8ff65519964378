from typing import TypeVar

from mindspore.common.dtype import Type
from mindspore.nn import Cell

_CellT = TypeVar("_CellT", bound=Cell)

def auto_mixed_precision(network: _CellT, amp_level: str = "O0", dtype: Type = ...) -> _CellT: ...
