"""Return rules checked when the class is created, from bprop's source (no MindSpore).

Two returns are certain mistakes whatever the values turn out to be:

- a generator expression (``return (g for g in grads)``): MindSpore cannot use one as
  gradients;
- a single value (``return dout * ops.cos(x)``) when construct's first parameter cannot be a
  Tensor (a non-Tensor default such as ``scale=2.0``, or an annotation such as ``float``): a
  bare return is the first parameter's gradient, and that input only takes a placeholder, so
  the gradient would be lost.

A return whose value is only known at run time (a variable, a call) is checked by
``kwcell._runtime.normalize`` when the gradient is taken.
"""

from __future__ import annotations

import ast
import typing
from typing import Any

from ._errors import KwCellDefinitionError
from ._spec import CellSpec, Param, safe_repr
from ._validate import mindspore_errors

__all__ = [
    "DICT",
    "NONE",
    "SEQUENCE",
    "UNKNOWN",
    "VALUE",
    "check_return",
    "counted",
    "element_kind",
    "ends_of",
    "not_a_tensor",
]

_NON_TENSOR_TYPES = (bool, int, float, complex, str, bytes, tuple, list, dict)
_NON_TENSOR_NAMES = {t.__name__ for t in _NON_TENSOR_TYPES}


def _annotation_name(annotation: Any) -> str | None:
    """The builtin non-Tensor type an annotation names (``float``, ``"int"``, ``tuple[int]``)."""
    if isinstance(annotation, str):
        name = annotation.strip().strip("\"'").split("[", 1)[0].strip()
        return name if name in _NON_TENSOR_NAMES else None
    origin = typing.get_origin(annotation) or annotation
    if isinstance(origin, type) and origin in _NON_TENSOR_TYPES:
        return origin.__name__
    return None


def not_a_tensor(param: Param) -> str | None:
    """Why ``param`` can never receive a Tensor (its default or annotation), or ``None``."""
    if param.has_default and isinstance(param.default, _NON_TENSOR_TYPES):
        return f"its default is {safe_repr(param.default)}"
    name = _annotation_name(param.annotation)
    if name is not None:
        return f"it is annotated '{name}'"
    return None


def _sequence_literal(node: ast.expr) -> bool:
    return isinstance(node, (ast.Tuple, ast.List, ast.ListComp, ast.GeneratorExp, ast.Starred))


def _int_constant(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _number_constant(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, complex)


def single_value(node: ast.expr) -> bool:
    """Whether ``node`` certainly evaluates to one value, never a tuple, list or dict.

    Arithmetic that sequences do not support (``-g``, ``a - b``, ``a / b``, ``a @ b``...),
    ``*`` unless one side may be a sequence repeated by an int, ``+`` when one side is
    itself a single value. Names, calls and subscripts are unknown (they may hold tuples).
    """
    if isinstance(node, ast.UnaryOp):
        return not isinstance(node.op, ast.Not)
    if not isinstance(node, ast.BinOp):
        return False
    left, right = node.left, node.right
    if _sequence_literal(left) or _sequence_literal(right):
        return False
    if isinstance(node.op, ast.Mult):
        return not (_int_constant(left) or _int_constant(right))
    if isinstance(node.op, ast.Add):
        return single_value(left) or single_value(right) or _number_constant(left) or _number_constant(right)
    return True


# What an element of a returned tuple or list literal is, as far as its source shows (the
# mypy plugin maps its own syntax tree onto the same kinds).
DICT = "dict"  # a dict display or comprehension
SEQUENCE = "sequence"  # a tuple or list literal
NONE = "none"  # the literal None
VALUE = "value"  # certainly one value: a number, or arithmetic (single_value)
UNKNOWN = "unknown"  # a name, a call, a subscript, a conditional...: known when it runs


def ends_of(names: typing.Sequence[str]) -> tuple[str, ...]:
    """bprop's names for ``out`` and ``dout``, from its parameter names (without ``self``):
    ``out`` and ``dout`` themselves, else the last two (MindSpore's positional form)."""
    if "out" in names and "dout" in names:
        return ("out", "dout")
    return tuple(names[-2:])


def element_kind(node: ast.expr, ends: typing.Container[str] = ()) -> str:
    """The kind of one element of a returned tuple or list literal (see :func:`counted`);
    ``ends`` are bprop's names for ``out`` and ``dout`` (never None, never a dict)."""
    if isinstance(node, ast.Name) and node.id in ends:
        return VALUE
    if isinstance(node, (ast.Dict, ast.DictComp)):
        return DICT
    if isinstance(node, (ast.Tuple, ast.List)):
        return SEQUENCE
    if isinstance(node, ast.Constant):
        return NONE if node.value is None else VALUE
    return VALUE if single_value(node) else UNKNOWN


def counted(kinds: typing.Sequence[str], inputs: int, weighted: bool = False) -> bool:
    """Whether a returned tuple literal whose elements are of ``kinds`` is certainly a tuple
    of input gradients (its count is checked, and it is made the full tuple, when the class is
    created), rather than possibly MindSpore's weight form ``(input_grads, {param: grad})``,
    which is told by the value when the gradient is taken.

    A dict element makes the weight form. So may an ``UNKNOWN`` second element of a pair (the
    dict in a variable, ``g = {self.w: gw}; return (dx,), g``): when the first is a tuple
    literal, when construct does not take exactly two inputs (the pair cannot be their
    gradients), or for a cell whose ``internal_params`` lists weights (``weighted``). A pair
    of unknowns for a two-input cell is read as their gradients; a dict there raises when
    the gradient is compiled (``_runtime.graph_fill``)."""
    if DICT in kinds:
        return False
    if len(kinds) == 2 and kinds[1] == UNKNOWN:
        return not (weighted or kinds[0] == SEQUENCE or inputs != 2)
    return True


def check_return(spec: CellSpec, value: ast.expr, where: str) -> None:
    """Raise :class:`KwCellDefinitionError` for a ``return`` that cannot give gradients.

    ``where`` names the bprop and the line: ``Net.bprop (line 12)``.
    """
    names = spec.names
    expected = ", ".join(names)
    if isinstance(value, ast.GeneratorExp):
        msg = (
            f"{where}: returns a generator, which MindSpore cannot use as gradients; return a "
            f"tuple with one gradient per {spec.input_word} ({expected}) (write tuple(...) "
            "around it), a dict keyed by parameter name, or a Tensor for the first parameter"
        )
        error = KwCellDefinitionError(msg)
        error._kwcell_mindspore = mindspore_errors("generator_return")
        raise error
    if not names or not single_value(value):
        return
    first = spec.construct.params[0]
    reason = not_a_tensor(first)
    if reason is None:
        return
    tensors = [p.name for p in spec.construct.params if not_a_tensor(p) is None]
    example = "{" + ", ".join(f'"{n}": ...' for n in tensors) + "}, " if tensors else ""
    msg = (
        f"{where}: returns a single value, which would be the gradient of the first "
        f"{spec.input_word} '{first.name}', but '{first.name}' cannot be a Tensor ({reason}), so "
        f"that gradient would be lost; return a dict keyed by parameter name, e.g. {example}or a "
        f"tuple with one entry per {spec.input_word} ({expected})"
    )
    error = KwCellDefinitionError(msg)
    # nn.Cell: PYNATIVE takes a bare value as the only gradient (too few unless construct
    # has one input); a compiled graph wants a tuple.
    kinds = ("single_return", "short_return") if len(names) > 1 else ("single_return",)
    error._kwcell_mindspore = mindspore_errors(*kinds, count=1, inputs=len(names), cell="")
    raise error
