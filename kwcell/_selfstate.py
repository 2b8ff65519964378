"""State that ``construct`` stores on ``self`` and ``bprop`` reads back: one rule, from source.

``self.norm_x = x * rstd`` in construct, read as ``self.norm_x`` in bprop (MindSpeed's
``RMSNorm2D`` is written so), works in PYNATIVE only, on ``nn.Cell`` as on ``KwCell``: there
construct runs as Python before bprop. A compiled graph (GRAPH_MODE, ``@ms.jit``) compiles
bprop apart from construct, and construct's assignment never reaches the cell: MindSpore fails
with ``AttributeError`` (``... object has no attribute 'norm_x'``), or, when ``__init__`` gave
the attribute a value too, bprop reads that value: a Tensor gives a wrong gradient without an
error, ``None`` a ``TypeError`` (measured on MindSpore 2.10 for ``nn.Cell`` and ``KwCell``).
So a default set in ``__init__`` does not make the pattern right: it is reported too, saying
what the graph reads instead.

The same function gives the message when a class is created (a ``KwCellWarning``), in
``kwcell check`` (``KW009``, for plain ``nn.Cell`` bprops as well) and in the mypy plugin (a
note): each reads the functions' source its own way and passes the text here. Pure Python,
from the source's ``ast``: no MindSpore.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

__all__ = ["Source", "attribute_reads", "attribute_writes", "first_parameter", "function_def", "state_notes"]

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(frozen=True)
class Source:
    """A function's source text (a ``def`` block, its decorators included) and the file line
    its first line stands on."""

    text: str
    first_line: int


def function_def(source: Source) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The ``def`` statement in ``source``, or ``None`` (not parsable, not a function)."""
    try:
        tree = ast.parse(textwrap.dedent(source.text))
    except SyntaxError:
        return None
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def first_parameter(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The name of ``fn``'s first parameter (its ``self``), or ``None``."""
    params = [*fn.args.posonlyargs, *fn.args.args]
    return params[0].arg if params else None


def _own_nodes(body: Iterable[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of ``body``, not descending into nested functions, lambdas or classes."""
    stack: list[ast.AST] = [node for node in body if not isinstance(node, _SCOPES)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, _SCOPES))


def _targets(node: ast.expr) -> Iterator[ast.expr]:
    if isinstance(node, (ast.Tuple, ast.List)):
        for element in node.elts:
            yield from _targets(element)
    elif isinstance(node, ast.Starred):
        yield from _targets(node.value)
    else:
        yield node


def _self_attribute(node: ast.AST, self_name: str) -> str | None:
    """``name`` for ``<self>.name`` (directly on self, not ``self.a.b``)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name:
        return node.attr
    return None


def _named_by_call(node: ast.AST, function: str, self_name: str) -> str | None:
    """``name`` for ``setattr(<self>, "name", ...)`` / ``getattr(<self>, "name"...)``."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == function
        and len(node.args) >= 2
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == self_name
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[1].value
    return None


def attribute_writes(source: Source) -> dict[str, int]:
    """The attributes a method sets on its ``self`` (``self.a = ...``, ``self.a += ...``,
    ``self.a, b = ...``, ``setattr(self, "a", ...)``), each with the file line of its first
    assignment; nested functions and classes are not the method's."""
    fn = function_def(source)
    self_name = first_parameter(fn) if fn is not None else None
    if fn is None or self_name is None:
        return {}
    found: dict[str, int] = {}
    for node in _own_nodes(fn.body):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets for t in _targets(target)]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and (
            isinstance(node, ast.AugAssign) or node.value is not None
        ):
            targets = [node.target]
        names = [_self_attribute(t, self_name) for t in targets]
        names.append(_named_by_call(node, "setattr", self_name))
        for name in names:
            line = source.first_line + getattr(node, "lineno", 1) - 1
            if name is not None and (name not in found or line < found[name]):
                found[name] = line
    return found


def attribute_reads(source: Source) -> dict[str, int]:
    """The attributes a method reads from its ``self`` (``self.a``, ``getattr(self, "a")``),
    each with the file line of its first read (nested functions included: they read it too)."""
    fn = function_def(source)
    self_name = first_parameter(fn) if fn is not None else None
    if fn is None or self_name is None:
        return {}
    found: dict[str, int] = {}
    for node in ast.walk(ast.Module(body=fn.body, type_ignores=[])):
        name = (
            _self_attribute(node, self_name)
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)
            else _named_by_call(node, "getattr", self_name)
        )
        line = source.first_line + getattr(node, "lineno", 1) - 1
        if name is not None and (name not in found or line < found[name]):
            found[name] = line
    return found


def state_notes(
    qualname: str,
    construct_writes: Mapping[str, int],
    bprop_reads: Mapping[str, int],
    init_writes: Mapping[str, int] | None = None,
    *,
    construct_from: str = "",
    bprop_from: str = "",
) -> list[tuple[int, str]]:
    """``(bprop's line, message)`` for each attribute that construct sets on self and bprop
    reads, in bprop's order of reading. ``init_writes``: what ``__init__`` (of the class or a
    base) sets; an attribute it sets too is read with that value in a compiled graph.
    ``construct_from``/``bprop_from``: the class that defines the method, when it is not
    ``qualname`` (inherited)."""
    construct = f"{qualname}.construct" + (f" (inherited from {construct_from})" if construct_from else "")
    bprop = f"{qualname}.bprop" + (f" (inherited from {bprop_from})" if bprop_from else "")
    notes: list[tuple[int, str]] = []
    for name, read_line in sorted(bprop_reads.items(), key=lambda item: (item[1], item[0])):
        set_line = construct_writes.get(name)
        if set_line is None:
            continue
        head = (
            f"{bprop} reads self.{name} (line {read_line}), which {construct} sets "
            f"(line {set_line}): that works in PYNATIVE only. GRAPH_MODE and @ms.jit compile bprop apart "
            "from construct, and construct's assignment never reaches the cell, so "
        )
        init_line = (init_writes or {}).get(name)
        if init_line is None:
            effect = f"MindSpore fails with AttributeError (no attribute '{name}')"
        else:
            effect = (
                f"bprop reads the value __init__ gives it (line {init_line}), never construct's: a wrong "
                "gradient without an error (or an error, if that value cannot be computed with, such "
                "as None)"
            )
        fix = (
            f". Return it from construct as part of out (e.g. `return y, {name}`; bprop gets it as "
            f"out[1]), or recompute it in bprop from the inputs"
        )
        notes.append((read_line, head + effect + fix))
    return notes
