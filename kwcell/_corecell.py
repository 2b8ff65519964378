"""Building the hidden core cells cheaply: one ``nn.Cell.__init__`` per core class, not per instance.

``nn.Cell.__init__`` sets about 70 attributes one ``__setattr__`` at a time (about 50 us); every
KwCell instance needs one core per class with generated code. A core's state right after
``__init__`` is always the same, so the first core of each class is built normally and its
``__dict__`` kept as a template; later cores get the C++ base initialised and a copy of the
template, with fresh empty containers (``_params``, ``_cells``, ...) and their own creation
time. The copy is used only when the template holds nothing but plain values and empty
containers, as ``nn.Cell.__init__`` leaves them in MindSpore 2.8-2.10; otherwise every core
is built with ``nn.Cell.__init__``.
"""

from __future__ import annotations

import importlib
import threading
import time
import weakref
from collections import OrderedDict
from typing import Any

from mindspore import nn

from ._codegen import ensure_written
from ._info import info_of, own_infos

try:  # the C++ base class of nn.Cell (untyped: the stubs do not describe MindSpore's internals)
    Cell_: Any = importlib.import_module("mindspore._c_expression").Cell_
except (ImportError, AttributeError):  # pragma: no cover - then every core gets nn.Cell.__init__
    Cell_ = None
_Cell: Any = nn.Cell

__all__ = ["attach_cores", "new_core"]

_PLAIN = (type(None), bool, int, float, str)
_CONTAINERS = (dict, OrderedDict, set, list)
_lock = threading.Lock()
_Template = tuple[str, dict[str, Any], tuple[tuple[str, type], ...]]
# core class -> (C++ tag, template __dict__, its containers), or None when it cannot be used.
_templates: weakref.WeakKeyDictionary[type, _Template | None] = weakref.WeakKeyDictionary()


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


def new_core(core_cls: type[nn.Cell]) -> nn.Cell:
    """A new instance of ``core_cls`` (a core class without ``__init__`` of its own)."""
    try:
        found = _templates[core_cls]
    except KeyError:
        core = core_cls()
        with _lock:
            _templates.setdefault(core_cls, _template(core))
        return core
    if found is None:
        return core_cls()
    tag, state, containers = found
    core = core_cls.__new__(core_cls)
    Cell_.__init__(core, tag)
    fresh = state.copy()
    for name, kind in containers:
        fresh[name] = kind()
    fresh["_create_time"] = time.time_ns()
    core.__dict__.update(fresh)
    _Cell.total_instance_count += 1  # nn.Cell.__del__ counts it down
    return core


# KwCell class -> ((generated file, core class, attribute name) per class of its MRO with
# generated code, nearest first); () for a class without generated code.
_Plan = tuple[tuple[str, type[nn.Cell], str], ...]
# Kept with the class's kwcell information it was made from: assigning ``Net.bprop`` later
# generates new code, and the plan is made again.
_plans: weakref.WeakKeyDictionary[type, tuple[object, _Plan]] = weakref.WeakKeyDictionary()


def _plan(cls: type) -> _Plan:
    info = info_of(cls)
    cached = _plans.get(cls)
    if cached is not None and cached[0] is info:
        return cached[1]
    plan: _Plan = ()
    if info is not None:
        plan = tuple((i.files["bprop"], i.core_cls, f"_kwcell_core_{i.token}") for i in own_infos(cls))
    _plans[cls] = (info, plan)
    return plan


def attach_cores(cell: nn.Cell) -> None:
    """Give a new KwCell instance its cores: one per class of its MRO with generated code
    (usually just its own class; a parent's dispatcher, reached through
    ``super().construct(...)``, uses the parent's). The nearest is also ``_kwcell_core``.
    """
    plan = _plan(type(cell))
    if not plan:
        return
    for path, core_cls, name in plan:
        # MindSpore's graph compiler needs the generated code in a real file; no graph can
        # hold the cell before an instance exists.
        ensure_written(path)
        core = new_core(core_cls)
        object.__setattr__(core, "_kwcell_owner_ref", weakref.ref(cell))
        object.__setattr__(cell, name, core)
    object.__setattr__(cell, "_kwcell_core", cell.__dict__[plan[0][2]])
