"""Building the hidden core cells cheaply: one ``nn.Cell.__init__`` in all, not one per instance.

``nn.Cell.__init__`` sets about 70 attributes one ``__setattr__`` at a time (about 50 us); every
KwCell instance with a bprop needs a core. A core's state right after ``__init__`` is always the
same, so the first core is built normally and its ``__dict__`` kept as a template; later cores
get the C++ base initialised and a copy of the template, with fresh empty containers
(``_params``, ``_cells``, ...) and their own creation time. The copy is used only when the
template holds nothing but plain values and empty containers, as ``nn.Cell.__init__`` leaves
them in MindSpore 2.7-2.10; otherwise every core is built with ``nn.Cell.__init__``.
"""

from __future__ import annotations

import importlib
import threading
import time
import weakref
from collections import OrderedDict
from typing import Any

from mindspore import nn

from ._core import KwCellCore
from ._lookup import SEEN

try:  # the C++ base class of nn.Cell (untyped: the stubs do not describe MindSpore's internals)
    Cell_: Any = importlib.import_module("mindspore._c_expression").Cell_
except (ImportError, AttributeError):  # pragma: no cover - then every core gets nn.Cell.__init__
    Cell_ = None
_Cell: Any = nn.Cell

__all__ = ["CORES", "attach_core", "core_of", "new_core", "ref"]

_PLAIN = (type(None), bool, int, float, str)
_CONTAINERS = (dict, OrderedDict, set, list)
_lock = threading.Lock()
_Template = tuple[str, dict[str, Any], tuple[tuple[str, type], ...]]
_template_of: list[_Template | None] = []  # [] until the first core is built


def _template(core: Any) -> _Template | None:
    """The state of a freshly initialised core, if it can be copied safely."""
    if Cell_ is None:
        return None
    state = dict(core.__dict__)
    containers: list[tuple[str, type]] = []
    for name, value in state.items():
        if type(value) in _CONTAINERS:
            if value:
                return None
            containers.append((name, type(value)))
        elif type(value) not in _PLAIN:
            return None
    return core._cell_tag, state, tuple(containers)


def new_core() -> nn.Cell:
    """A new, unattached core."""
    if not _template_of:
        core = KwCellCore()
        with _lock:
            if not _template_of:
                _template_of.append(_template(core))
        return core
    found = _template_of[0]
    if found is None:
        return KwCellCore()
    tag, state, containers = found
    core = KwCellCore.__new__(KwCellCore)
    Cell_.__init__(core, tag)
    fresh = state.copy()
    for name, kind in containers:
        fresh[name] = kind()
    fresh["_create_time"] = time.time_ns()
    core.__dict__.update(fresh)
    _Cell.total_instance_count += 1  # nn.Cell.__del__ counts it down
    return core


# owner -> its core. Not in the owner's ``__dict__``: code that copies a cell's state attribute
# by attribute (``mindspore.rewrite``, a user's clone) would make the core a child cell of the
# copy, still pointing at the original owner. Keyed by a weak reference to the owner whose
# callback drops the entry (a WeakKeyDictionary, without its Python-level ``get``: the
# dispatcher reads the core on every call, as ``CORES.get(ref(owner))``).
CORES: dict[weakref.ref[Any], nn.Cell] = {}
ref = weakref.ref


def _drop(key: weakref.ref[Any]) -> None:
    CORES.pop(key, None)


def core_of(cell: Any) -> nn.Cell | None:
    return CORES.get(ref(cell))


def attach_core(cell: nn.Cell) -> nn.Cell:
    """Give a KwCell instance its core (a weak reference back, so no cycle and no child cell).

    What the instance ran last names its old core, if it had one: it is forgotten.
    """
    core = new_core()
    object.__setattr__(core, "_kwcell_owner_ref", weakref.ref(cell))
    cell.__dict__.pop(SEEN, None)
    CORES[ref(cell, _drop)] = core
    return core
