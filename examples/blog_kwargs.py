"""The three failures of keyword arguments with a custom bprop, and kwcell's fix.

1. inputs passed by keyword in another order, 2. defaults omitted, 3. a keyword call from an
outer cell. For each case, in PYNATIVE and GRAPH_MODE, the gradient df/dx of f = w * sin(x) is
computed with a plain ``nn.Cell`` and with a ``KwCell`` and printed beside its analytic
value. Exits non-zero if any KwCell row disagrees with the analytic value.

Run: ``python examples/blog_kwargs.py``
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

os.environ.setdefault("GLOG_v", "3")  # keep MindSpore's own log lines out of the table

import mindspore as ms
import numpy as np
import numpy.typing as npt
from mindspore import Tensor, nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _blog_cells import KwProduct, KwScaled, Outer, PlainProduct, PlainScaled

import kwcell

X = np.array([0.5, 1.0, 2.0], np.float32)
W = 3.0
WV = np.array([3.0, -1.0, 2.0], np.float32)  # case 1: w has x's shape


def _cases(kw: bool) -> list[tuple[str, Callable[[], Any], npt.NDArray[np.float32]]]:
    """(case, how the gradient is computed, analytic df/dx) for the plain or the kwcell cells."""
    product = KwProduct() if kw else PlainProduct()
    cell: type[nn.Cell] = KwScaled if kw else PlainScaled
    net, outer = cell(), Outer(cell())
    x, w, wv = Tensor(X), Tensor(W, ms.float32), Tensor(WV)
    grad = kwcell.grad if kw else ms.grad
    return [
        ("1. net(w=w, x=x)", lambda: grad(product)(w=wv, x=x), WV * np.cos(X)),
        ("2. net(x): defaults", lambda: grad(net)(x), 1.0 * np.cos(X)),
        ("3. outer: inner(x, w=w)", lambda: ms.grad(outer)(x, w), W * np.cos(X)),
    ]


def _row(fn: Callable[[], Any], expected: npt.NDArray[np.float32]) -> tuple[str, bool]:
    try:
        got = fn().asnumpy()
    except Exception as err:  # noqa: BLE001 - the point is to show MindSpore's error
        first = next((line for line in str(err).splitlines() if line.strip()), type(err).__name__)
        return f"ERROR {type(err).__name__}: {first.strip()[:70]}", False
    ok = bool(np.allclose(got, expected, rtol=1e-5, atol=1e-6))
    return f"{np.array2string(got, precision=4)} {'ok' if ok else 'WRONG'}", ok


def main() -> int:
    failures = 0
    header = f"{'case':<26} {'mode':<9} {'cell':<8} {'expected df/dx':<28} got"
    print(header)
    print("-" * len(header))
    for mode_name, mode in (("PYNATIVE", ms.PYNATIVE_MODE), ("GRAPH", ms.GRAPH_MODE)):
        ms.set_context(mode=mode)
        for kw in (False, True):
            label = "KwCell" if kw else "nn.Cell"
            for case, fn, expected in _cases(kw):
                text, ok = _row(fn, expected)
                if label == "KwCell" and not ok:
                    failures += 1
                want = np.array2string(expected, precision=4)
                print(f"{case:<26} {mode_name:<9} {label:<8} {want:<28} {text}")
    print()
    print("every KwCell row matches its analytic value" if not failures else f"{failures} KwCell rows FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
