"""Raising a deferred definition error when the gradient is taken, in every mode.

A bprop in MindSpore's own form keeps MindSpore's timing: a problem ``nn.Cell`` reports only
at gradient time is raised then (``kwcell._errors.deferred`` builds the error for a mode).
PYNATIVE runs the generated bprop as Python, which raises it itself. A compiled graph
(GRAPH_MODE, ``@ms.jit``) can raise only builtin exception classes from its own code, so
its bprop calls a ``constexpr``, which MindSpore runs in Python while it compiles the
gradient, and whose exception reaches the caller as it was raised (measured on 2.10).
"""

from __future__ import annotations

from collections.abc import Callable

from mindspore.ops import constexpr

from ._errors import GRAPH, KwCellDefinitionError, deferred

__all__ = ["graph_raiser"]


def graph_raiser(error: KwCellDefinitionError) -> Callable[[], None]:
    """A ``constexpr`` for a graph's bprop that raises ``error`` as a compiled graph does."""

    @constexpr(check=False)
    def raise_deferred() -> None:
        raise deferred(error, GRAPH)

    return raise_deferred
