"""What kwcell generated for a class, and how to find it through the MRO."""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mindspore import nn

from ._spec import KEYWORD_ONLY, CellSpec

__all__ = ["INFO", "KwCellInfo", "info_of", "keyword_only", "own_infos"]

INFO = "_kwcell_info"


@dataclass(frozen=True)
class KwCellInfo:
    """What kwcell generated for one class: kept on the class as ``_kwcell_info``."""

    spec: CellSpec
    user_construct: Callable[..., Any]
    user_bprop: Callable[..., Any]
    positional_bprop: Callable[..., Any]
    #: What PYNATIVE calls as the bprop (the user's own function behind a normalizer); its
    #: ``__wrapped__`` is ``positional_bprop``, which the graph compiler parses.
    py_bprop: Callable[..., Any]
    core_cls: type[nn.Cell]
    dispatcher: types.FunctionType
    bind: types.FunctionType
    files: dict[str, str] = field(default_factory=dict)
    token: int = 0
    #: How bprop receives construct's inputs: ``_validate.CLASSIC_ARGS``, ``BY_POSITION`` or
    #: ``BY_NAME``.
    reading: str = ""


def own_infos(cls: type) -> list[KwCellInfo]:
    """The kwcell information of every class in ``cls``'s MRO that generated code, nearest first."""
    return [info for klass in cls.__mro__ if (info := klass.__dict__.get(INFO)) is not None]


def info_of(cls: type) -> KwCellInfo | None:
    """The kwcell information of ``cls`` or of the nearest base that has one."""
    for klass in cls.__mro__:
        info = klass.__dict__.get(INFO)
        if info is not None or INFO in klass.__dict__:
            return info
    return None


def keyword_only(spec: CellSpec) -> tuple[str, ...]:
    """construct's keyword-only parameters (the core passes them on by keyword)."""
    return tuple(p.name for p in spec.construct.params if p.kind is KEYWORD_ONLY)
