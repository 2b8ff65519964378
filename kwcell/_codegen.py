"""Compiling generated functions so that Python, ``inspect`` and MindSpore all see their source.

Each generated unit is written to a real file in a per-process directory (MindSpore logs an
ERROR for every function whose file does not exist) and registered in :mod:`linecache`.
The file is named like ``<kwcell generated bprop mod.Net>`` and is deleted, and its
``linecache`` entry dropped, when the class it belongs to is garbage-collected.

Generated functions get their helpers through a closure (MindSpore's graph parser resolves
globals through ``__module__`` but honours closures), so ``__module__`` stays the user's.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import itertools
import linecache
import math
import os
import shutil
import tempfile
import textwrap
import threading
import types
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AST_LOCK", "Unit", "compile_unit", "compile_units", "ensure_written", "literal_source"]

_lock = threading.Lock()
# CPython 3.11 builds Python AST objects with a recursion-depth counter that is not
# per-thread: two threads in ast.parse at once can fail with "SystemError: AST constructor
# recursion depth mismatch". kwcell's own parses (literal checks, bprop rewriting) take turns.
AST_LOCK = threading.RLock()
_directory: str | None = None
_counter = itertools.count(1)
_LITERAL_TYPES = (bool, int, float, complex, str, bytes, type(None))


def literal_source(value: Any) -> str | None:
    """``repr(value)`` if it is a plain literal that ``ast.literal_eval`` gives back equal.

    Anything else (NaN, infinities, Tensors, enums, objects whose ``repr`` is code) is passed
    to generated functions by reference instead.
    """
    if isinstance(value, tuple):
        parts = [literal_source(v) for v in value]
        if any(p is None for p in parts):
            return None
        return "(" + "".join(f"{p}, " for p in parts) + ")"
    if type(value) not in _LITERAL_TYPES:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, complex) and not (math.isfinite(value.real) and math.isfinite(value.imag)):
        return None
    try:
        text = repr(value)  # ValueError for an int longer than sys.get_int_max_str_digits()
        with AST_LOCK:
            back = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if type(back) is not type(value) or repr(back) != text:
        return None
    return text


def _generated_dir() -> str:
    global _directory
    with _lock:
        if _directory is None:
            _directory = tempfile.mkdtemp(prefix="kwcell-")
            atexit.register(shutil.rmtree, _directory, True)
        return _directory


def _filename(kind: str, label: str) -> str:
    base = f"<kwcell generated {kind} {label} #{next(_counter)}>"
    if os.name == "nt":  # '<' and '>' are not allowed in Windows file names
        base = base.replace("<", "(").replace(">", ")")
    return os.path.join(_generated_dir(), base)


# Generated sources not yet written to disk, by path (see ``compile_units(defer_write=...)``).
_unwritten: dict[str, str] = {}


def _write(path: str, source: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)


def ensure_written(path: str) -> None:
    """Write the generated file ``path`` if its writing was deferred (cheap when it is not)."""
    if path in _unwritten:
        with _lock:
            source = _unwritten.pop(path, None)
        if source is not None:
            _write(path, source)


def _release(path: str) -> None:
    linecache.cache.pop(path, None)
    _unwritten.pop(path, None)
    with contextlib.suppress(OSError):
        os.remove(path)


@dataclass(frozen=True)
class Unit:
    """One group of generated functions sharing a factory, its closure and its globals.

    ``closure`` values reach the functions as free variables; ``cells`` are existing closure
    cells (the user's own, so that late binding behaves as in the original function).
    ``defaults`` maps a function name to ``(__defaults__, __kwdefaults__)``, set after compiling
    so that default values are the user's objects, not re-evaluated copies.
    """

    name: str
    body: str
    globals_: dict[str, Any]
    closure: Mapping[str, Any] = field(default_factory=dict)
    cells: Mapping[str, types.CellType] = field(default_factory=dict)
    defaults: Mapping[str, tuple[tuple[Any, ...] | None, dict[str, Any] | None]] = field(default_factory=dict)


def compile_units(
    *,
    kind: str,
    label: str,
    header: str,
    units: list[Unit],
    owner: object | None = None,
    defer_write: bool = False,
) -> dict[str, dict[str, types.FunctionType]]:
    """Write ``units`` to one generated file, compile it once, and build their functions.

    Returns ``{unit name: {function name: function}}``. The file is released when ``owner``
    is garbage-collected. With ``defer_write`` the source is only registered in ``linecache``
    (enough for Python and ``inspect``) and the file, which only MindSpore's graph compiler
    needs, is written by :func:`ensure_written` (creating a file costs about 0.2 ms).
    """
    parts = [f"# {header}\n"]
    for unit in units:
        params = ", ".join([*unit.closure, *unit.cells])
        parts.append(f"\n\ndef _kwcell_{unit.name}({params}):\n{textwrap.indent(unit.body, '    ')}\n")
    source = "".join(parts)
    path = _filename(kind, label)
    if defer_write:
        _unwritten[path] = source
    else:
        _write(path, source)
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    if owner is not None:
        weakref.finalize(owner, _release, path)
    code = compile(source, path, "exec")
    factories = {c.co_name: c for c in code.co_consts if isinstance(c, types.CodeType)}
    result: dict[str, dict[str, types.FunctionType]] = {}
    for unit in units:
        cells: dict[str, types.CellType] = {k: types.CellType(v) for k, v in unit.closure.items()}
        cells.update(unit.cells)
        fns: dict[str, types.FunctionType] = {}
        for inner in factories[f"_kwcell_{unit.name}"].co_consts:
            if not isinstance(inner, types.CodeType):
                continue
            fn = types.FunctionType(
                inner, unit.globals_, inner.co_name, None, tuple(cells[n] for n in inner.co_freevars)
            )
            defaults = unit.defaults.get(inner.co_name)
            if defaults is not None:
                fn.__defaults__, fn.__kwdefaults__ = defaults
            fns[inner.co_name] = fn
        result[unit.name] = fns
    return result


def compile_unit(
    *,
    kind: str,
    label: str,
    header: str,
    body: str,
    closure: Mapping[str, Any],
    cells: Mapping[str, types.CellType] | None = None,
    globals_: dict[str, Any],
    defaults: Mapping[str, tuple[tuple[Any, ...] | None, dict[str, Any] | None]] | None = None,
    owner: object | None = None,
) -> dict[str, types.FunctionType]:
    """Compile the top-level ``def`` statements in ``body`` (one :class:`Unit`), by name."""
    unit = Unit("factory", body, globals_, closure, cells or {}, defaults or {})
    return compile_units(kind=kind, label=label, header=header, units=[unit], owner=owner)["factory"]
