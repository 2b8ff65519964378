"""Keyword arguments and a custom bprop: what ``nn.Cell`` does, measured, and what ``KwCell`` does.

Each row of the README's table is one way a MindSpore program passes keywords to a cell that
has a custom bprop. For every row, in PYNATIVE and in GRAPH_MODE, the gradient df/dx of
f = w * sin(x) (+ y) is computed with a plain ``nn.Cell`` and with a ``KwCell`` and compared
with its analytic value. The example prints each measurement, then the README's table built
from those measurements. Exits non-zero if any ``KwCell`` measurement is not right.

Run: ``python examples/blog_kwargs.py``
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("GLOG_v", "3")  # keep MindSpore's own log lines out of the table

import mindspore as ms
import numpy as np
import numpy.typing as npt
from mindspore import Tensor, nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _blog_cells import KwProduct, KwScaled, Outer, PlainProduct, PlainScaled, SwappedOuter

import kwcell

Array = npt.NDArray[np.float32]
X = np.array([0.5, 1.0, 2.0], np.float32)
W = np.array([3.0, -1.0, 2.0], np.float32)

MODES = {"PYNATIVE": ms.PYNATIVE_MODE, "GRAPH_MODE": ms.GRAPH_MODE}
HEADER = ("call", "`nn.Cell`, PYNATIVE", "`nn.Cell`, GRAPH_MODE", "`KwCell`, both modes")
RIGHT = "right"
WRONG = "**silently wrong gradient**"


@dataclass(frozen=True)
class Row:
    """One row of the table: how the call is made, and the analytic df/dx."""

    call: str  # the table's first column, as the README shows it
    gradient: Callable[[bool], Callable[[], Any]]  # KwCell or not -> a function computing df/dx
    expected: Array


def _in_function(net: nn.Cell) -> Callable[[Tensor, Tensor], Any]:
    """A loss-like function that calls ``net`` with keywords in another order than construct's."""

    def f(x: Tensor, w: Tensor) -> Any:
        return net(w=w, x=x)

    return f


def _top_level(cell: type[nn.Cell], *args: Tensor, **kwargs: Tensor) -> Callable[[], Any]:
    # A top-level keyword call needs kwcell.grad: MindSpore's GRAPH_MODE ms.grad takes *args only.
    grad = kwcell.grad if issubclass(cell, kwcell.KwCell) else ms.grad
    return lambda: grad(cell())(*args, **kwargs)


def rows() -> list[Row]:
    """The table's rows; cells and gradient functions are made when a row is measured."""
    x, w, w_scalar = Tensor(X), Tensor(W), Tensor(3.0, ms.float32)

    def product(kw: bool) -> type[nn.Cell]:
        return KwProduct if kw else PlainProduct

    def scaled(kw: bool) -> type[nn.Cell]:
        return KwScaled if kw else PlainScaled

    return [
        Row(
            "`net(w=w, x=x)` at top level, `construct(self, x, w)`",
            lambda kw: _top_level(product(kw), w=w, x=x),
            W * np.cos(X),
        ),
        Row(
            "the same call inside a function given to `ms.grad`",
            lambda kw: lambda: ms.grad(_in_function(product(kw)()))(x, w),
            W * np.cos(X),
        ),
        Row(
            "the same call in an outer cell's `construct`",
            lambda kw: lambda: ms.grad(SwappedOuter(product(kw)()))(x, w),
            W * np.cos(X),
        ),
        Row(
            "`net(x)` at top level, `construct(self, x, w=1.0, y=1.0)`",
            lambda kw: _top_level(scaled(kw), x),
            np.cos(X),
        ),
        Row(
            "an outer cell calls `self.inner(x, w=w)` (`y` omitted)",
            lambda kw: lambda: ms.grad(Outer(scaled(kw)()))(x, w_scalar),
            3.0 * np.cos(X),
        ),
    ]


def _message(err: Exception) -> str:
    first = next((line.strip() for line in str(err).splitlines() if line.strip()), type(err).__name__)
    # MindSpore prefixes some messages with the compiled function's generated name.
    return re.sub(r"^Function \S+, ", "", first).rstrip(".")


def measure(fn: Callable[[], Any], expected: Array) -> tuple[str, str]:
    """(the table's entry, a line showing the values) for one gradient computation."""
    try:
        got = fn().asnumpy()
    except Exception as err:  # noqa: BLE001 - the point is to show MindSpore's error
        message = _message(err)
        return f"error: `{message}`", f"ERROR {type(err).__name__}: {message}"
    ok = bool(np.allclose(got, expected, rtol=1e-5, atol=1e-6))
    return (RIGHT if ok else WRONG), f"{np.array2string(got, precision=4)} {'ok' if ok else 'WRONG'}"


def measure_table() -> list[tuple[str, ...]]:
    """Measure every row in both modes, print each measurement, and return the table's rows."""
    table = rows()
    entries: dict[tuple[int, str, bool], str] = {}
    print(f"{'row':<4} {'mode':<11} {'cell':<8} {'expected df/dx':<28} got")
    for mode_name, mode in MODES.items():
        ms.set_context(mode=mode)
        for i, row in enumerate(table, 1):
            for kw in (False, True):
                entry, shown = measure(row.gradient(kw), row.expected)
                entries[i, mode_name, kw] = entry
                want = np.array2string(row.expected, precision=4)
                print(f"{i:<4} {mode_name:<11} {'KwCell' if kw else 'nn.Cell':<8} {want:<28} {shown}")
    result: list[tuple[str, ...]] = [HEADER]
    for i, row in enumerate(table, 1):
        plain = entries[i, "PYNATIVE", False], entries[i, "GRAPH_MODE", False]
        pynative, graph = entries[i, "PYNATIVE", True], entries[i, "GRAPH_MODE", True]
        both = pynative if pynative == graph else f"PYNATIVE: {pynative}; GRAPH_MODE: {graph}"
        result.append((row.call, *plain, both))
    return result


def markdown(table: list[tuple[str, ...]]) -> str:
    lines = [f"| {' | '.join(table[0])} |", "|" + "---|" * len(table[0])]
    lines += [f"| {' | '.join(row)} |" for row in table[1:]]
    return "\n".join(lines)


def main() -> int:
    table = measure_table()
    print()
    print("The README's table, as measured here:")
    print()
    print(markdown(table))
    failures = sum(row[-1] != RIGHT for row in table[1:])
    print()
    print("every KwCell row is right in both modes" if not failures else f"{failures} KwCell rows FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
