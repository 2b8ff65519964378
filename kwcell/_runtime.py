"""Helpers the generated ``bprop`` calls at run time.

They are parsed by MindSpore's graph compiler in GRAPH_MODE and under ``@ms.jit``, so they
use only constructs it accepts: ``isinstance`` on values whose type is known when compiling,
tuples built by concatenation, loops over constant ranges, and ``raise`` under constant
conditions.
"""

from __future__ import annotations

from typing import Any

from mindspore import Parameter, Tensor, ops
from mindspore.ops import constexpr

__all__ = ["in_graph", "normalize", "zero"]


def zero(x: Any) -> Any:
    """The gradient placeholder for an input: ``zeros_like`` for a Tensor, ``0`` otherwise."""
    if isinstance(x, Tensor):
        return ops.zeros_like(x)
    return 0


def _fill(grad: Any, x: Any) -> Any:
    if x is None and grad is not None:
        # An input left out by ``used_bprop_inputs`` reaches bprop as None: its type is
        # unknown here, so the gradient bprop gave is passed on as it is.
        return grad
    if not isinstance(x, Tensor):
        return 0
    if grad is None:
        return ops.zeros_like(x)
    return grad


def _from_sequence(
    grads: Any, inputs: tuple[Any, ...], names: tuple[str, ...], where: str, extras_ok: bool
) -> Any:
    if len(grads) != len(inputs) and not (extras_ok and len(grads) > len(inputs)):
        raise ValueError(
            where
            + " returned "
            + str(len(grads))
            + " gradients, expected "
            + str(len(inputs))
            + ", one per construct parameter in this order: ("
            + ", ".join(names)
            + "); return a dict keyed by parameter name to give only some of them"
        )
    result: tuple[Any, ...] = ()
    for i in range(len(inputs)):
        result = result + (_fill(grads[i], inputs[i]),)  # noqa: RUF005 - graph-parsed
    return result


def _from_dict(grads: Any, inputs: tuple[Any, ...], names: tuple[str, ...], where: str) -> Any:
    for key in grads:
        if key not in names:
            raise ValueError(
                where + " returned a gradient for '" + str(key) + "', which is not a parameter "
                "of construct; expected names: (" + ", ".join(names) + ")"
            )
    result: tuple[Any, ...] = ()
    for i in range(len(inputs)):
        if names[i] in grads:
            result = result + (_fill(grads[names[i]], inputs[i]),)  # noqa: RUF005 - graph-parsed
        else:
            result = result + (zero(inputs[i]),)  # noqa: RUF005 - graph-parsed
    return result


def _inputs_part(
    grads: Any, inputs: tuple[Any, ...], names: tuple[str, ...], where: str, extras_ok: bool
) -> Any:
    if isinstance(grads, (tuple, list)):
        return _from_sequence(grads, inputs, names, where, extras_ok)
    if isinstance(grads, dict):
        return _from_dict(grads, inputs, names, where)
    if grads is None:
        raise ValueError(
            where
            + " returned None; return one gradient per construct parameter ("
            + ", ".join(names)
            + "), a dict keyed by name, or a Tensor for the first one"
        )
    result: tuple[Any, ...] = (_fill(grads, inputs[0]),)
    for i in range(1, len(inputs)):
        result = result + (zero(inputs[i]),)  # noqa: RUF005 - graph-parsed
    return result


def _has_parameter_keys(grads: Any) -> bool:
    if not isinstance(grads, dict):
        return False
    for key in grads:  # noqa: SIM110 - graph-parsed: a plain loop
        if isinstance(key, Parameter):
            return True
    return False


def split_parameter_keys(grads: dict[Any, Any]) -> tuple[dict[str, Any], dict[Any, Any]]:
    """Split a PyNative dict return into input gradients (str keys) and weight gradients."""
    by_name = {k: v for k, v in grads.items() if not isinstance(k, Parameter)}
    weights = {k: v for k, v in grads.items() if isinstance(k, Parameter)}
    return by_name, weights


def normalize(
    grads: Any, inputs: tuple[Any, ...], names: tuple[str, ...], where: str, extras_ok: bool = False
) -> Any:
    """Turn any return form SPEC 2.3 allows into MindSpore's tuple, one entry per input.

    ``(input_grads, {parameter: grad})``, MindSpore's PyNative weight form, keeps its weights;
    a dict that also holds ``Parameter`` keys (``{"x": gx, self.w: gw}``) is split into
    that form. Weight gradients reach MindSpore only for cells with ``internal_params``.
    With ``extras_ok`` (a bprop in MindSpore's own positional form), gradients beyond the
    inputs are ignored, as MindSpore ignores them.
    """
    if isinstance(grads, tuple) and len(grads) == 2 and isinstance(grads[1], dict):
        return (_inputs_part(grads[0], inputs, names, where, extras_ok), grads[1])
    if _has_parameter_keys(grads):
        by_name, weights = split_parameter_keys(grads)
        return (_from_dict(by_name, inputs, names, where), weights)
    return _inputs_part(grads, inputs, names, where, extras_ok)


def _probe() -> int:
    return 0


@constexpr(check=False)
def _is_none(value: Any) -> bool:
    return value is None


def in_graph() -> bool:
    """True while MindSpore compiles a graph (GRAPH_MODE, ``@ms.jit``), False in PyNative.

    MindSpore's own trick (``mindspore.graph.api._run_in_jit``): a Python function handed to
    a ``constexpr`` arrives as ``None`` in a graph.
    """
    return _is_none(_probe)
