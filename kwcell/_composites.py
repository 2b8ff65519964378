"""Which of MindSpore's Python composites a cell's construct and bprop both call.

MindSpore's graph compiler parses a Python composite (``ops.clip_by_value``, ``ops.softmax``,
``ops.zeros_like``: functions of MindSpore's package that it compiles as graphs) once, and a
construct and bprop that both call one share its graph. When the construct graph of the cell
that carries the bprop is used as parsed, MindSpore empties that shared graph with the forward,
and the gradient fails to compile ("The func graph is empty"); when the compiler generates the
construct graph for the call (a keyword argument, a default, ``*args``), it does not. Measured
on nn.Cell (MindSpore 2.10, CPU): positional calls fail, keyword calls work; user functions
shared the same way (with or without defaults) are fine.

So a KwCell whose construct and bprop reach a common composite gets a core whose construct takes
``*_kwcell_unused`` (``_templates.CORE``), and the compiler generates it for every call. Only
those: a generated construct graph breaks PIJit's autodiff (``jit(capture_mode="bytecode")``,
"shouldn't reach here" in kprim's BuildExtraParameters), so the others keep the plain one.

Found from the values the functions' code reads (globals, closure cells, ``self``'s methods),
following the user's own helper functions and methods a few calls deep.
"""

from __future__ import annotations

import dis
import types
from typing import Any

__all__ = ["share_a_composite"]

_DEPTH = 3
_CHAIN = ("LOAD_ATTR", "LOAD_METHOD")


def _from_mindspore(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or type(obj).__module__ or ""
    return module == "mindspore" or module.startswith("mindspore.")


def _composite(obj: Any) -> bool:
    """A Python function of MindSpore's package, or one of its multitype graphs."""
    if isinstance(obj, types.FunctionType):
        return _from_mindspore(obj)
    from mindspore.ops import MultitypeFuncGraph

    return isinstance(obj, MultitypeFuncGraph)


def _codes(code: types.CodeType) -> list[types.CodeType]:
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(_codes(const))
    return found


def _reached(fn: Any, owner: type | None, depth: int, seen: set[int], out: dict[int, Any]) -> None:
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None or id(code) in seen:
        return
    seen.add(id(code))
    module = getattr(fn, "__globals__", {})
    builtins_ = module.get("__builtins__", {})
    cells = dict(zip(code.co_freevars, getattr(fn, "__closure__", None) or (), strict=False))
    self_name = code.co_varnames[0] if code.co_argcount else None
    for each in _codes(code):
        current: Any = None
        chained = False
        for ins in dis.get_instructions(each):
            name = ins.argval
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and isinstance(name, str):
                current = module.get(name, builtins_.get(name) if isinstance(builtins_, dict) else None)
                chained = True
            elif ins.opname == "LOAD_DEREF" and name in cells:
                try:
                    current = cells[name].cell_contents
                except ValueError:
                    current = None
                chained = True
            elif ins.opname == "LOAD_FAST" and name == self_name and owner is not None and each is code:
                current = owner
                chained = True
            elif ins.opname in _CHAIN and chained and isinstance(name, str):
                current = getattr(current, name, None) if current is not None else None
            else:
                chained = False
                continue
            if current is None:
                continue
            if _composite(current):
                out[id(current)] = current
            elif depth > 0 and isinstance(getattr(current, "__func__", current), types.FunctionType):
                _reached(current, owner if current is not owner else None, depth - 1, seen, out)


def reached(fn: Any, owner: type | None) -> dict[int, Any]:
    """MindSpore composites ``fn`` calls, directly or through the user's helpers (by id)."""
    out: dict[int, Any] = {}
    _reached(fn, owner, _DEPTH, set(), out)
    return out


def share_a_composite(construct: Any, bprop: Any, owner: type | None) -> bool:
    """Whether ``construct`` and ``bprop`` (of the class ``owner``) both reach a composite."""
    return bool(reached(construct, owner).keys() & reached(bprop, owner).keys())
