"""Helpers the generated ``bprop`` calls at run time: every return form, one tuple.

They are parsed by MindSpore's graph compiler in GRAPH_MODE and under ``@ms.jit``, so they
use only constructs it accepts: ``isinstance`` on values whose type is known when compiling,
tuples built by concatenation, loops over constant ranges, recursion over nested tuples whose
structure is known when compiling, and ``raise`` under constant conditions.

What an input needs as its gradient entry is decided by the input itself:

- a Tensor: the gradient bprop gave, or ``zeros_like(input)``;
- a tuple or list (of Tensors, numbers...): one entry per element, each decided by the same
  rules (MindSpore gives such an input a tuple of gradients): a tuple for a tuple and a list
  for a list in a graph, a list in PyNative;
- a number made variable with ``ms.mutable`` inside a graph: differentiable, so the gradient
  bprop gave, or ``0``;
- anything else (Python numbers, bool, str, None, ``enum`` members, ``@ms.jit_class`` objects,
  constants): a placeholder, ``0``.
"""

from __future__ import annotations

import types
import warnings
from typing import Any

import mindspore.ops.functional as F
from mindspore import Parameter, Tensor, ops
from mindspore.common import dtype as mstype
from mindspore.ops import HyperMap, MultitypeFuncGraph, constexpr

from ._errors import (
    GRAPH,
    PYNATIVE,
    GradientCountError,
    GradientShapeError,
    KwCellWarning,
    contract_message,
)
from ._validate import mindspore_errors

__all__ = ["WeightKeys", "graph_fill", "graph_zero", "in_graph", "normalize", "normalize_pynative", "zero"]

#: For each weight a core takes: the names its gradient can be returned under (``#<i>`` and
#: every ``self.<path>``), its dtype, its shape and how messages name it (``self.b (Parameter
#: 'b')``; ``_cell._weight_keys`` builds them).
WeightKeys = tuple[tuple[tuple[str, ...], Any, tuple[int, ...], str], ...]

# One primitive instance for every zero kwcell generates. ``ops.zeros_like`` (a function) in
# a generated bprop breaks GRAPH_MODE compilation when the cell's construct calls
# ``ops.zeros_like`` too ("The func graph is empty ... zeros_like"); the primitive does not.
_ZEROS_LIKE = ops.ZerosLike()
_ZEROS = ops.Zeros()

# The zero placeholder of the bprop rewritten for the graph compiler (a literal return that
# leaves inputs out): the same values as :func:`zero` in a graph, dispatched on the input's
# type by MindSpore itself, as its own ``zeros_like`` is. Only the function registered for the
# type at hand is compiled, which makes each placeholder much cheaper to compile than a Python
# function with a branch per type.
graph_zero = MultitypeFuncGraph("kwcell_zero")
_zero_each = HyperMap(graph_zero)


def _graph_zero_tensor(x: Any) -> Any:
    return _ZEROS_LIKE(x)


def _graph_zero_tuple(x: Any) -> Any:
    return _zero_each(x)


def _graph_zero_list(x: Any) -> Any:
    return _zero_each(x)


def _graph_zero_placeholder(x: Any) -> Any:
    return 0


graph_zero.register("Tensor")(_graph_zero_tensor)
graph_zero.register("Tuple")(_graph_zero_tuple)
graph_zero.register("List")(_graph_zero_list)
for _type in ("Number", "Bool", "String", "None", "Function", "TypeType", "Slice", "Dictionary"):
    graph_zero.register(_type)(_graph_zero_placeholder)
# An ``@ms.jit_class`` instance is of type "Class" in a graph: a type MindSpore's typing module
# has (``TypeMsClassType``) but whose name ``register`` does not accept as a string.
_MS_TYPING: Any = mstype.typing  # type: ignore[attr-defined]
graph_zero.register(_MS_TYPING.TypeMsClassType())(_graph_zero_placeholder)
# Every other input is a placeholder too, 0, as for nn.Cell: an ``enum.Enum`` member (of type
# "External", a Python object the graph holds as it is, for which MindSpore has no type to
# register; its own ``zeros_like`` fails on it) or any other object a graph accepts as a
# constant input. The default is compiled into the graph; without one, MindSpore runs a call
# no registered type matches in Python at compile time, where ``MultitypeFuncGraph.__call__``
# cannot type the object ("cannot be converted to MindSpore type").
graph_zero.register_default_fn(_graph_zero_placeholder)


# An entry of a literal return the rewritten bprop cannot tell from its source (a variable, a
# call, a conditional): decided by its value while the graph is compiled, dispatched on the
# types of the entry and its input by MindSpore itself (only the matching function compiles).
# ``None`` becomes the input's zeros (``graph_zero``), as a literal ``None`` does; a dict is
# an error naming the bprop and the input (never a silent structure); anything else is the
# gradient as it is. ``(grad, input, where, name)``.
class _Fill(MultitypeFuncGraph):
    """A graph dispatches on the registered types; Python (JIT fallback running part of a
    bprop as Python) calls this, with the same results."""

    def __call__(self, grad: Any, x: Any, where: str, name: str) -> Any:
        if grad is None:
            return zero(x)
        if isinstance(grad, dict) and not isinstance(x, dict):
            _fill_dict(grad, x, where, name)
        return grad


graph_fill = _Fill("kwcell_fill")


def _fill_none(grad: Any, x: Any, where: str, name: str) -> Any:
    return graph_zero(x)


def _fill_dict(grad: Any, x: Any, where: str, name: str) -> Any:
    raise ValueError(
        where
        + " returned a dict as the gradient of '"
        + name
        + "'; return a tuple with one gradient per construct parameter, a dict keyed by "
        "parameter name, or MindSpore's weight form (input_grads, {parameter: grad}) with the "
        "input gradients as a tuple literal"
    )


def _fill_as_is(grad: Any, x: Any, where: str, name: str) -> Any:
    return grad


for _type in (
    "Tensor",
    "Tuple",
    "List",
    "Number",
    "Bool",
    "String",
    "None",
    "Function",
    "TypeType",
    "Slice",
    "Dictionary",
):
    graph_fill.register("None", _type, "String", "String")(_fill_none)
    graph_fill.register("Dictionary", _type, "String", "String")(_fill_dict)
graph_fill.register_default_fn(_fill_as_is)


def zero(x: Any) -> Any:
    """The gradient placeholder for an input.

    ``zeros_like`` for a Tensor, a tuple of placeholders for a tuple or list, ``0`` otherwise.
    """
    if isinstance(x, Tensor):
        return _ZEROS_LIKE(x)
    if isinstance(x, (tuple, list)):
        result: tuple[Any, ...] = ()
        for i in range(len(x)):
            result = result + (zero(x[i]),)  # noqa: RUF005 - graph-parsed
        return _sequence_grad(result, x)
    return 0


def _sequence_grad(result: tuple[Any, ...], x: Any) -> Any:
    """The gradient of a tuple or list input ``x``: in a graph, of ``x``'s own type.

    In PyNative always a list: PyNative reads a bprop result ``((g0, g1), gy)`` as
    MindSpore's weight form ``(input_grads, {parameter: grad})``; a list is not mistaken
    for it.
    """
    if in_graph() and isinstance(x, tuple):
        return result
    return list(result)


def _variable_scalar(x: Any) -> bool:
    """Whether ``x`` is a number made variable by ``ms.mutable`` inside a graph (differentiable).

    In PYNATIVE, MindSpore gives such inputs no gradient and passes them to bprop as plain
    numbers, so they only need a placeholder there.
    """
    if isinstance(x, (int, float)):
        return in_graph() and not F.isconstant(x)
    return False


def _fill(grad: Any, x: Any, name: str, where: str) -> Any:
    """The gradient entry for input ``x`` (parameter ``name``) from what bprop gave for it."""
    if x is None:
        # An input left out by ``used_bprop_inputs`` reaches bprop as None: its type is
        # unknown here, so what bprop gave is passed on as it is (None too: MindSpore then
        # fills zeros of the input's shape, as for nn.Cell).
        return grad if grad is not None or not in_graph() else zero(x)
    if grad is None:
        return zero(x)
    if isinstance(x, dict) and isinstance(grad, dict):
        # A dict input (``ms.mutable({...})``): MindSpore takes a dict of gradients for it,
        # as bprop gave it (nn.Cell passes it on the same way).
        return grad
    if isinstance(x, Tensor):
        return grad
    if isinstance(x, (tuple, list)):
        return _fill_sequence(grad, x, name, where)
    if _variable_scalar(x):
        return grad
    return 0


def _fill_sequence(grad: Any, x: Any, name: str, where: str) -> Any:
    """A tuple input's gradient: one entry per element, like MindSpore's own gradient of it."""
    if isinstance(grad, (tuple, list)):
        if len(grad) != len(x):
            raise ValueError(
                where
                + " returned "
                + str(len(grad))
                + " gradients for '"
                + name
                + "', a tuple input with "
                + str(len(x))
                + " elements; return a tuple with one entry per element (None for zeros)"
            )
        result: tuple[Any, ...] = ()
        for i in range(len(x)):
            result = result + (_fill(grad[i], x[i], name, where),)  # noqa: RUF005 - graph-parsed
        return _sequence_grad(result, x)
    if isinstance(grad, Tensor):
        raise ValueError(
            where
            + " returned a single Tensor for '"
            + name
            + "', a tuple input; return a tuple with one entry per element (None for zeros)"
        )
    return zero(x)  # a placeholder such as 0: placeholders for every element


def _from_sequence(
    grads: Any, inputs: tuple[Any, ...], names: tuple[str, ...], where: str, extras_ok: bool
) -> Any:
    if len(grads) != len(inputs):
        if extras_ok and len(grads) > len(inputs):
            _extra_gradients(where, len(grads), names)
        else:
            _wrong_count(where, len(grads), names, extras_ok, in_graph())
    result: tuple[Any, ...] = ()
    for i in range(len(inputs)):
        result = result + (_fill(grads[i], inputs[i], names[i], where),)  # noqa: RUF005 - graph-parsed
    return result


def _from_dict(
    grads: Any, inputs: tuple[Any, ...], names: tuple[str, ...], where: str, attr_keys: tuple[str, ...] = ()
) -> Any:
    for key in grads:
        if not _is_weight_key(key, attr_keys) and key not in names:
            raise ValueError(
                where + " returned a gradient for '" + str(key) + "', which is not a parameter "
                "of construct; expected names: (" + ", ".join(names) + ")"
            )
    result: tuple[Any, ...] = ()
    for i in range(len(inputs)):
        # a name left out is a None entry (an input left out by used_bprop_inputs, which
        # reaches bprop as None, then gets what nn.Cell's None gets)
        grad = grads[names[i]] if names[i] in grads else None  # noqa: SIM401 - graph-parsed
        result = result + (_fill(grad, inputs[i], names[i], where),)  # noqa: RUF005 - graph-parsed
    return result


def _may_be_tensor(x: Any) -> bool:
    """Whether a bare gradient can belong to input ``x``: a Tensor, a differentiable number,
    or None (an input left out by ``used_bprop_inputs``, whose type is unknown)."""
    return x is None or isinstance(x, Tensor) or _variable_scalar(x)


def _tensor_names(inputs: tuple[Any, ...], names: tuple[str, ...]) -> str:
    found = ""
    for i in range(len(inputs)):
        if isinstance(inputs[i], Tensor):
            found = found + ("" if found == "" else ", ") + "'" + names[i] + "': ..."
    return found


def _from_single(grads: Any, inputs: tuple[Any, ...], names: tuple[str, ...], where: str) -> Any:
    """A bare value: the gradient of the first input, zeros for the rest."""
    if len(inputs) == 0:
        raise ValueError(where + " returned a gradient, but construct takes no inputs; return ()")
    if not _may_be_tensor(inputs[0]):
        # Never a silent zero: the first input needs only a placeholder, so the Tensor bprop
        # computed would be thrown away.
        raise ValueError(
            where + " returned a single value, which would be the gradient of the first construct "
            "parameter '"
            + names[0]
            + "', but '"
            + names[0]
            + "' is not a Tensor, so that gradient would be lost; return a dict keyed by "
            "parameter name, e.g. {"
            + _tensor_names(inputs, names)
            + "}, or a tuple with one entry per construct parameter ("
            + ", ".join(names)
            + ")"
        )
    result: tuple[Any, ...] = (_fill(grads, inputs[0], names[0], where),)
    for i in range(1, len(inputs)):
        result = result + (zero(inputs[i]),)  # noqa: RUF005 - graph-parsed
    return result


def _inputs_part(
    grads: Any,
    inputs: tuple[Any, ...],
    names: tuple[str, ...],
    where: str,
    extras_ok: bool,
    attr_keys: tuple[str, ...] = (),
) -> Any:
    if isinstance(grads, (tuple, list)):
        return _from_sequence(grads, inputs, names, where, extras_ok)
    if isinstance(grads, dict):
        return _from_dict(grads, inputs, names, where, attr_keys)
    if grads is None:
        raise ValueError(
            where
            + " returned None; return one gradient per construct parameter ("
            + ", ".join(names)
            + "), a dict keyed by name, or a Tensor for the first one"
        )
    return _from_single(grads, inputs, names, where)


def _is_weight_key(key: Any, attr_keys: tuple[str, ...]) -> bool:
    """A dict key that names a weight: a Parameter (PYNATIVE), or in a graph the name a
    ``{self.w: gw}`` key was rewritten to (``"self.w"``: one of ``attr_keys``, or made in a bprop
    that ``super().bprop`` reached, which returns its dict as written) or a weight's index
    (``"#0"``). No construct parameter has such a name."""
    if isinstance(key, Parameter):
        return True
    return isinstance(key, str) and (key in attr_keys or key[:5] == "self." or key[:1] == "#")


def _weight_of(key: Any, weights: tuple[Any, ...], weight_keys: WeightKeys) -> int:
    """The index in ``weights`` of the weight a dict key names, or -1."""
    for i in range(len(weights)):
        if isinstance(key, str):
            if key in weight_keys[i][0]:
                return i
        elif key is weights[i]:
            return i
    return -1


def _key_text(key: Any) -> str:
    if isinstance(key, Parameter):
        return "Parameter '" + key.name + "'"
    return "'" + str(key) + "'"


def _weight_part(
    grads: Any,
    weights: tuple[Any, ...],
    weight_keys: WeightKeys,
    attr_keys: tuple[str, ...],
    where: str,
    every: bool,
) -> tuple[Any, ...]:
    """One gradient per weight (zeros for those ``grads`` leaves out) from a dict whose weight
    keys are Parameters (PYNATIVE) or the names ``{self.w: gw}`` was rewritten to (graphs).
    With ``every`` (the dict of ``(input_grads, {...})``), every key must name a weight."""
    for key in grads:
        if (every or _is_weight_key(key, attr_keys)) and _weight_of(key, weights, weight_keys) < 0:
            raise ValueError(
                where
                + " returned a gradient for "
                + _key_text(key)
                + ", which is not in self.internal_params; list every Parameter bprop gives "
                "a gradient to in self.internal_params"
            )
    result: tuple[Any, ...] = ()
    for i in range(len(weights)):
        grad = None
        for key in grads:
            if _weight_of(key, weights, weight_keys) == i:
                grad = grads[key]
        result = result + (_weight_grad(grad, weights[i], weight_keys[i], where),)  # noqa: RUF005 - graph-parsed
    return result


def _weight_grad(grad: Any, weight: Any, keys: Any, where: str) -> Any:
    """A weight's gradient in its Parameter's dtype (a cell run in fp16 computes its
    gradients in fp16, and a graph refuses to sum a Parameter's gradients of mixed dtypes) and
    shape (:func:`_to_weight_shape`); zeros of its shape when bprop gives none (built from the
    shape, not from the weight: a graph input read only by ``zeros_like`` is pruned, and
    MindSpore then fails). ``keys`` is the weight's entry of ``WeightKeys``."""
    if grad is None:
        return None if weight is None else _ZEROS(keys[2], keys[1])
    if isinstance(grad, Tensor):
        if grad.dtype != keys[1]:
            grad = F.cast(grad, keys[1])
        return _to_weight_shape(grad, keys[2], keys[3], where)
    return grad


_REDUCE_SUM = ops.ReduceSum(keep_dims=False)


def _to_weight_shape(grad: Any, shape: Any, label: str, where: str) -> Any:
    """A weight's gradient of a shape the weight broadcasts to (a bias gradient left as
    ``dout``), summed over the broadcast axes and reshaped to the weight's ``shape``, as
    MindSpore's broadcasting bprops reduce theirs (``binop_grad_common``); any other shape is
    an error naming the weight and both shapes. In PYNATIVE MindSpore sums such a gradient
    itself (dropping the weight's own axes of length 1: (4,) for a (4, 1) weight); a graph
    passes it on as it is, and fails later where it meets the weight's shape (MindSpore's
    AddN, the optimizer). kwcell gives the weight's shape in every mode. A shape unknown when
    compiling (dynamic) is passed on as it is."""
    got = F.shape(grad)
    if F.is_sequence_value_unknown(got):
        return grad
    axes = _sum_axes(got, shape, label, where)
    if axes:
        return F.reshape(_REDUCE_SUM(grad, axes), shape)
    return grad


@constexpr(check=False)
def _sum_axes(got: Any, want: Any, label: str, where: str) -> tuple[int, ...]:
    """The axes of a gradient of shape ``got`` to sum for a weight of shape ``want`` (``()``
    for the weight's own shape): the leading axes ``want`` lacks and those where ``want`` has
    1, when ``want`` broadcasts to ``got`` (MindSpore's own rule in PYNATIVE); else the error.
    A ``constexpr``: the shapes are known when the graph is compiled, and so is the error."""
    got, want = tuple(got), tuple(want)
    lead = len(got) - len(want)
    if lead < 0 or any(w not in (1, g) for w, g in zip(want, got[lead:], strict=True)):
        raise GradientShapeError(
            f"{where} returned a gradient of shape {got} for the weight {label}, of shape {want}: "
            "a weight's gradient has the weight's shape, or a shape the weight broadcasts to (its "
            f"broadcast axes are summed, as MindSpore sums them in PYNATIVE); return one of shape {want}"
        )
    return tuple(range(lead)) + tuple(lead + i for i, w in enumerate(want) if w == 1 and got[lead + i] != 1)


def check_python_value(grads: Any, names: tuple[str, ...], where: str) -> None:
    """PYNATIVE only: reject a return value no gradient can be made of, naming the class.

    (In a graph, MindSpore's compiler has already turned a generator into a list.)
    """
    if isinstance(grads, (types.GeneratorType, set, frozenset)) or hasattr(grads, "__next__"):
        kind = "a set" if isinstance(grads, (set, frozenset)) else "a generator or iterator"
        msg = (
            f"{where} returned {kind}; return a tuple with one gradient per construct parameter "
            f"({', '.join(names)}) (e.g. tuple(...) around it), a dict keyed by parameter name, "
            "or a Tensor for the first parameter"
        )
        raise TypeError(msg)


def normalize(
    grads: Any,
    inputs: tuple[Any, ...],
    names: tuple[str, ...],
    where: str,
    extras_ok: bool = False,
    weights: tuple[Any, ...] = (),
    weight_keys: WeightKeys = (),
    attr_keys: tuple[str, ...] = (),
) -> Any:
    """Turn any return form bprop may use into MindSpore's tuple, one entry per input.

    A tuple (``None`` entries become zeros), a dict keyed by parameter name, or a bare value
    (the first input's gradient). Weight gradients come in MindSpore's form
    ``(input_grads, {parameter: grad})`` or in a dict that also holds ``Parameter`` keys
    (``{"x": gx, self.w: gw}``); ``weights`` are the Parameters the cell lists in
    ``internal_params``, passed to the core after its inputs, and ``weight_keys`` the names
    each can be returned under in a graph (where ``{self.w: gw}`` was rewritten to
    ``{"self.w": gw}``; ``attr_keys`` are the names the rewrite made). The result then has one
    entry per weight after the inputs (zeros for those left out). Without weights, weight
    gradients are dropped, as MindSpore drops them for a cell without ``internal_params``.
    With ``extras_ok`` (a bprop in MindSpore's own positional form), gradients beyond the
    inputs are ignored, as MindSpore ignores them.
    """
    if not in_graph():
        check_python_value(grads, names, where)
    if isinstance(grads, tuple) and len(grads) == 2 and isinstance(grads[1], dict):
        result = _inputs_part(grads[0], inputs, names, where, extras_ok, attr_keys)
        if len(weights) == 0:
            return result
        return result + _weight_part(grads[1], weights, weight_keys, attr_keys, where, True)
    result = _inputs_part(grads, inputs, names, where, extras_ok, attr_keys)
    if len(weights) == 0:
        return result
    if isinstance(grads, dict):  # {"x": gx, self.w: gw}: its weight keys, if any
        return result + _weight_part(grads, weights, weight_keys, attr_keys, where, False)
    return result + _weight_part({}, weights, weight_keys, attr_keys, where, False)


_ABSENT = object()
# Inputs whose gradient entry depends on what bprop gave for their elements or keys.
_STRUCTURED = (tuple, list, dict)


def normalize_pynative(
    grads: Any,
    inputs: tuple[Any, ...],
    names: tuple[str, ...],
    where: str,
    extras_ok: bool = False,
    weights: tuple[Any, ...] = (),
    weight_keys: WeightKeys = (),
    attr_keys: tuple[str, ...] = (),
) -> Any:
    """:func:`normalize` for PYNATIVE, where it runs after every call of the user's bprop.

    The usual forms, a dict keyed by parameter names or a tuple with one entry per input, are
    turned into MindSpore's tuple here in one pass when every input is a Tensor, ``None`` or a
    plain value (a number, a string...), with :func:`normalize`'s entries: a Tensor's gradient,
    or ``zeros_like`` of it for ``None`` or a name left out; ``0`` for a plain value; for an
    input that is ``None``, what bprop gave (``None`` for a name left out). Anything else (tuple,
    list or dict inputs, an instance with weights, extra entries, mistakes) goes to :func:`normalize`,
    so what comes back and every message are :func:`normalize`'s. Never parsed by the graph
    compiler (the PYNATIVE bprop is not, see ``_templates.PY_BPROP``).
    """
    kind = type(grads) if not weights else None
    if kind is dict:
        result = []
        named = 0
        for name, x in zip(names, inputs, strict=False):
            grad = grads.get(name, _ABSENT)
            if grad is not _ABSENT:
                named += 1
            if isinstance(x, Tensor):
                result.append(_ZEROS_LIKE(x) if grad is None or grad is _ABSENT else grad)
            elif x is None:  # left out by used_bprop_inputs: what bprop gave, None for none
                result.append(None if grad is _ABSENT else grad)
            elif isinstance(x, _STRUCTURED):
                break
            else:
                result.append(0)
        else:
            if named == len(grads):  # no other keys (unknown names, Parameters: normalize's)
                return tuple(result)
    elif kind is tuple and len(grads) == len(inputs) and not (len(grads) == 2 and isinstance(grads[1], dict)):
        result = []
        for grad, x in zip(grads, inputs, strict=False):
            if isinstance(x, Tensor):
                result.append(_ZEROS_LIKE(x) if grad is None else grad)
            elif x is None:
                result.append(grad)
            elif isinstance(x, _STRUCTURED):
                break
            else:
                result.append(0)
        else:
            return tuple(result)
    return normalize(grads, inputs, names, where, extras_ok, weights, weight_keys, attr_keys)


def _probe() -> int:
    return 0


@constexpr(check=False)
def _wrong_count(where: str, count: int, names: tuple[str, ...], mindspore_form: bool, graph: bool) -> None:
    """Raise what a bprop returning ``count`` gradients for ``names`` raises (a count known
    only when it runs: ``(g,) * n``, a variable). A ``constexpr``: in a graph it raises while
    the gradient is compiled, as MindSpore does, and the error can be kwcell's class (a graph
    raises only builtin ones). Always a ``RuntimeError`` and a ``ValueError``
    (``_errors.GradientCountError``); for MindSpore's own bprop forms the message starts with
    what MindSpore says in that mode, as for a literal return (``_validate.MINDSPORE_ERRORS``)."""
    inputs = len(names)
    message = (
        f"{where} returned {count} gradients, expected {inputs}, one per construct parameter in "
        f"this order: ({', '.join(names)}); return a dict keyed by parameter name to give only "
        "some of them"
    )
    if mindspore_form and count < inputs:
        kind = "empty_return" if count == 0 else "short_return"
        cell = where.rpartition(".bprop")[0].rpartition(".")[2]
        said = mindspore_errors(kind, count=count, inputs=inputs, cell=cell)[GRAPH if graph else PYNATIVE]
        message = contract_message(said.text, message)
    raise GradientCountError(message)


@constexpr(check=False)
def _extra_gradients(where: str, count: int, names: tuple[str, ...]) -> None:
    """Warn that a bprop in MindSpore's own form returned ``count`` gradients for fewer inputs
    (a count known only when it runs): MindSpore ignores the extra ones, and so does kwcell,
    never silently. The class statement warns the same for a literal return
    (``_validate.check_returned_literal``). A ``constexpr``: in a graph it warns while the
    gradient is compiled."""
    extra = count - len(names)
    message = (
        f"{where} returned {count} gradients for {len(names)} input(s) ({', '.join(names)}); "
        f"MindSpore ignores the last {extra}, and so does kwcell. For weight gradients set "
        "self.internal_params and return (input_grads, {param: grad})"
    )
    warnings.warn(message, KwCellWarning, stacklevel=2)


@constexpr(check=False)
def _is_none(value: Any) -> bool:
    return value is None


def in_graph() -> bool:
    """True while MindSpore compiles a graph (GRAPH_MODE, ``@ms.jit``), False in PyNative.

    MindSpore's own trick (``mindspore.graph.api._run_in_jit``): a Python function handed to
    a ``constexpr`` arrives as ``None`` in a graph.
    """
    return _is_none(_probe)
