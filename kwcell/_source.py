"""Rewriting the user's ``bprop`` into a positional function, from its own source.

MindSpore's graph compiler cannot call a function with keyword arguments inside a bprop, so
the user's ``bprop(self, x, w=1.0, *, out, dout)`` becomes ``bprop(self, x, w, y, out, dout)``:
the same body, globals and closure, with parameters in ``construct``'s order. Returns of dict
and tuple literals are checked here, when the class is created, and dict literals become
tuples (MindSpore cannot build a dict in a bprop under PyNative ``@ms.jit``).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ._codegen import AST_LOCK
from ._errors import KwCellDefinitionError
from ._spec import CellSpec

__all__ = ["RewrittenBprop", "rewrite_bprop"]


@dataclass(frozen=True)
class RewrittenBprop:
    """Source of the positional bprop, and where the user's original lives."""

    source: str
    origin: str


def _returns(node: ast.AST) -> Iterator[ast.Return]:
    """Return statements of ``node``'s own body (not of nested functions or classes)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Return):
            yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _returns(child)


def _rewrite_return(spec: CellSpec, ret: ast.Return, first_line: int) -> None:
    names = spec.names
    value = ret.value
    expected = ", ".join(names)
    lineno = first_line + ret.lineno - 1
    where = f"{spec.qualname}.bprop (line {lineno})"
    if isinstance(value, ast.Dict) and all(
        isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys
    ):
        by_name: dict[str, ast.expr] = {}
        for k, v in zip(value.keys, value.values, strict=True):
            assert isinstance(k, ast.Constant) and isinstance(k.value, str)
            if k.value not in names:
                msg = (
                    f"{where}: returns a gradient for '{k.value}', which is not a parameter of "
                    f"construct; expected names: ({expected})"
                )
                raise KwCellDefinitionError(msg)
            by_name[k.value] = v
        items: list[ast.expr] = [by_name.get(n, ast.Constant(None)) for n in names]
        ret.value = ast.copy_location(ast.Tuple(items, ast.Load()), value)
    elif isinstance(value, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in value.elts):
        weights_form = len(value.elts) == 2 and isinstance(value.elts[1], ast.Dict) and len(names) != 2
        if len(value.elts) != len(names) and not weights_form:
            msg = (
                f"{where}: returns {len(value.elts)} gradients, expected {len(names)}, one per "
                f"construct parameter in this order: ({expected}); return a dict keyed by "
                "parameter name to give only some of them"
            )
            raise KwCellDefinitionError(msg)


def rewrite_bprop(fn: Callable[..., Any], spec: CellSpec) -> RewrittenBprop | None:
    """Rewrite ``fn`` (the user's named-parameter bprop) to positional form.

    Returns ``None`` when ``fn`` has no source to rewrite (defined in a REPL or by ``exec``);
    the caller then forwards by keyword, which works in PyNative only.
    """
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    origin = f"{inspect.getsourcefile(fn) or '?'}:{first_line}"
    with AST_LOCK:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        return None
    if fdef.decorator_list:
        msg = (
            f"{spec.qualname}.bprop: decorators on bprop are not supported (kwcell rewrites bprop "
            "into positional form from its source); move the decorated logic into a helper"
        )
        raise KwCellDefinitionError(msg)
    bsig = spec.bprop.signature if spec.bprop else None
    assert bsig is not None and bsig.self_name is not None
    # Inputs bprop does not name reach it only through **kwargs: their positional names are
    # mangled so that they cannot shadow a global the body uses.
    unnamed = [n for n in spec.names if bsig.get(n) is None]
    local = {n: f"_kwcell_in_{n}" if n in unnamed else n for n in spec.names}
    positional = [bsig.self_name, *local.values(), "out", "dout"]
    fdef.args = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(n) for n in positional],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )
    fdef.returns = None
    prologue: list[ast.stmt] = []
    if bsig.var_keyword is not None:
        keys: list[ast.expr | None] = [ast.Constant(n) for n in unnamed]
        values: list[ast.expr] = [ast.Name(local[n], ast.Load()) for n in unnamed]
        prologue.append(
            ast.Assign([ast.Name(bsig.var_keyword, ast.Store())], ast.Dict(keys, values), lineno=0)
        )
    for ret in _returns(fdef):
        _rewrite_return(spec, ret, first_line)
    fdef.body = prologue + fdef.body
    ast.fix_missing_locations(fdef)
    return RewrittenBprop(ast.unparse(fdef), origin)
