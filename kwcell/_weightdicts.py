"""Weight dicts keyed by Parameters that bprop computes: one rule, from source.

A compiled graph's dict takes constant keys only. kwcell rewrites a weight key written as an
attribute of the cell (``{self.w: gw}``, ``grads[self.w] = gw``, ``self.internal_params[0]``)
to a string for graphs, but a key bprop computes from the Parameters cannot be rewritten: a
comprehension over them (``{p: g for p, g in zip(self.internal_params, grads)}``),
``dict(zip(self.internal_params, grads))``, or ``grads[p] = ...`` in a loop over them. PYNATIVE
takes such a dict; a graph fails with MindSpore's ``make_dict`` (or ``dict_setitem``)
evaluator error, "key only supports string, number, type, none, constant tensor and tuple, but
got ValueAny" (measured on MindSpore 2.10, for ``nn.Cell`` in PYNATIVE and ``KwCell``).

The same function gives the message when a class is created (a ``KwCellWarning``), in
``kwcell check`` (``KW010``, for plain ``nn.Cell`` bprops too), and as the error raised before
a graph compiles the gradient of an instance whose ``internal_params`` lists weights. Pure
Python, from the source's ``ast``: no MindSpore.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from ._selfstate import Source, function_def

__all__ = ["computed_key_notes", "computed_keys"]

# Cell methods that give Parameters: a loop or comprehension over their result keys by Parameter
_PARAMETER_CALLS = frozenset(
    {"trainable_params", "untrainable_params", "get_parameters", "parameters_and_names", "parameters_dict"}
)


# Builtins whose result iterates over what their arguments hold
_ITERATING = frozenset({"zip", "enumerate", "list", "tuple", "reversed", "sorted"})


def _gives_parameters(node: ast.AST, aliases: frozenset[str] = frozenset()) -> bool:
    """``node`` is a sequence of Parameters: ``<...>.internal_params``, a cell method listing
    them, a name bprop bound to one of those (``aliases``), a slice of one, or ``zip``,
    ``enumerate``... of one. (``self.internal_params[0]`` is one Parameter: not a sequence.)"""
    if isinstance(node, ast.Attribute):
        return node.attr == "internal_params"
    if isinstance(node, ast.Name):
        return node.id in aliases
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Slice) and _gives_parameters(node.value, aliases)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute):
            return node.func.attr in _PARAMETER_CALLS
        if isinstance(node.func, ast.Name) and node.func.id in _ITERATING:
            return any(_gives_parameters(a, aliases) for a in node.args)
    return False


def _aliases(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The names ``fn`` binds to sequences of Parameters (``ps = self.internal_params``, and
    names bound from those in turn)."""
    found: frozenset[str] = frozenset()
    while True:
        more = set(found)
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and _gives_parameters(node.value, found):
                more |= {n for t in node.targets for n in _names(t)}
        if more == found:
            return found
        found = frozenset(more)


def _names(target: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _computed_keys(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[int, str]]:
    """``(line in fn's source, form)`` for each dict ``fn`` keys by Parameters it computes."""
    found: list[tuple[int, str]] = []
    aliases = _aliases(fn)
    loop_names: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.For, ast.AsyncFor)) and _gives_parameters(node.iter, aliases):
            loop_names |= _names(node.target)
    for node in ast.walk(fn):
        if isinstance(node, ast.DictComp) and any(
            _gives_parameters(g.iter, aliases) for g in node.generators
        ):
            found.append((node.lineno, "a dict comprehension over the Parameters"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "dict"
            and any(_gives_parameters(a, aliases) for a in node.args)
        ):
            found.append((node.lineno, "dict(...) of the Parameters"))
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.slice, ast.Name)
            and node.slice.id in loop_names
        ):
            found.append(
                (
                    node.lineno,
                    f"an item assignment keyed by {node.slice.id}, a loop variable over the Parameters",
                )
            )
    return sorted(set(found))


def computed_keys(source: Source) -> list[tuple[int, str]]:
    """``(file line, form)`` for each dict the bprop in ``source`` keys by Parameters it
    computes (the module docstring's forms)."""
    fn = function_def(source)
    if fn is None:
        return []
    return [(source.first_line + line - 1, form) for line, form in _computed_keys(fn)]


def computed_key_notes(
    qualname: str, found: Iterable[tuple[int, str]], *, bprop_from: str = ""
) -> list[tuple[int, str]]:
    """``(file line, message)`` for each of :func:`computed_keys`' ``found``. ``bprop_from``:
    the class defining the bprop, when it is not ``qualname``."""
    bprop = f"{qualname}.bprop" + (f" (inherited from {bprop_from})" if bprop_from else "")
    return [
        (
            at,
            f"{bprop} keys its weight gradients by Parameters it computes (line {at}: {form}): "
            "that works in PYNATIVE only. A compiled graph (GRAPH_MODE, @ms.jit) cannot build a "
            "dict with such keys (MindSpore's \"key only supports string, number, type, none, "
            'constant tensor and tuple, but got ValueAny"). Write each weight as an attribute of '
            "the cell: in a dict display, {self.w1: g1, self.w2: g2}, or an item assignment, "
            "grads[self.w1] = g1 (kwcell rewrites those keys for graphs)",
        )
        for at, form in found
    ]
