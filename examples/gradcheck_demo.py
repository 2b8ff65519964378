"""The blog article's silent bprop bugs, caught by ``kwcell.gradcheck``, then fixed with ``KwCell``.

The article's cells are plain ``nn.Cell`` subclasses with a classic positional bprop. MindSpore
hands such a bprop the inputs of a keyword call in the wrong order, so it computes with the
wrong values and returns gradients in each other's place -- no error, just wrong numbers.
Measured on MindSpore 2.10 (CPU):

* ``net(w=a, x=x)`` on ``Product(x, w)``, keywords in another order (the README table's first
  row), is wrong in both modes. (In GRAPH_MODE ``mindspore.grad`` rejects the keyword call
  itself, the table's "error"; through ``kwcell.grad``, which gradcheck uses and which accepts
  keywords, the plain cell's bprop is silently wrong there too.)
* ``net(x, y=b, w=a)`` on ``Scaled(x, w=1.0, y=1.0)`` is right in PYNATIVE and wrong in
  GRAPH_MODE.

``gradcheck`` compares a bprop with finite differences in the *current* mode only, so the demo
runs both calls in both modes. The ``KwCell`` versions pass every check.

Run: ``python examples/gradcheck_demo.py``; exit status 0 when the plain cells' wrong gradients
are caught in both modes and every KwCell passes. The last line says so.
"""

from __future__ import annotations

import os
import sys
from typing import Any

os.environ.setdefault("GLOG_v", "3")  # keep MindSpore's own log lines out of the report

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

import kwcell
from kwcell import KwCell


class Product(nn.Cell):
    """The article's first cell: its bprop is right only for positional calls."""

    def construct(self, x: Any, w: Any) -> Any:
        return w * ops.sin(x)

    def bprop(self, x: Any, w: Any, out: Any, dout: Any) -> Any:
        return w * ops.cos(x) * dout, ops.sin(x) * dout


class Scaled(nn.Cell):
    """The article's second cell, with defaults in construct."""

    def construct(self, x: Any, w: Any = 1.0, y: Any = 1.0) -> Any:
        return w * ops.sin(x) + y * x

    def bprop(self, x: Any, w: Any, y: Any, out: Any, dout: Any) -> Any:
        return (w * ops.cos(x) + y) * dout, ops.sin(x) * dout, x * dout


class FixedProduct(KwCell):
    """``Product`` as a KwCell: bprop parameters are matched to construct's by name."""

    def construct(self, x: Any, w: Any) -> Any:
        return w * ops.sin(x)

    def bprop(self, x: Any, w: Any, *, out: Any, dout: Any) -> Any:
        return {"x": w * ops.cos(x) * dout, "w": ops.sin(x) * dout}


class FixedScaled(KwCell):
    """``Scaled`` as a KwCell."""

    def construct(self, x: Any, w: Any = 1.0, y: Any = 1.0) -> Any:
        return w * ops.sin(x) + y * x

    def bprop(self, x: Any, w: Any, y: Any, *, out: Any, dout: Any) -> Any:
        return {"x": (w * ops.cos(x) + y) * dout, "w": ops.sin(x) * dout, "y": x * dout}


MODES = {"PYNATIVE": ms.PYNATIVE_MODE, "GRAPH_MODE": ms.GRAPH_MODE}


def main() -> int:
    x = Tensor(np.array([0.5, 1.0, 2.0], np.float32))
    a = Tensor(np.array([2.0, 3.0, -1.0], np.float32))  # w
    b = Tensor(np.array([5.0, -7.0, 0.5], np.float32))  # y
    cases: list[tuple[str, type[nn.Cell], type[KwCell], tuple[Any, ...], dict[str, Any]]] = [
        ("net(w=a, x=x)", Product, FixedProduct, (), {"w": a, "x": x}),
        ("net(x, y=b, w=a)", Scaled, FixedScaled, (x,), {"y": b, "w": a}),
    ]
    caught_in: list[str] = []
    kwcell_ok = True
    for mode_name, mode in MODES.items():
        ms.set_context(mode=mode)
        for call, plain, fixed, args, kwargs in cases:
            print(f"== {mode_name}: plain nn.Cell {plain.__name__}, {call}")
            try:
                kwcell.gradcheck(plain(), *args, **kwargs)
            except kwcell.GradcheckError as err:
                caught_in.append(mode_name)
                print(f"wrong gradients, caught by gradcheck:\n{err}")
            except Exception as err:  # noqa: BLE001 - MindSpore rejecting the call is part of the story
                first = next((line for line in str(err).splitlines() if line.strip()), "")
                print(f"MindSpore rejects this call: {type(err).__name__}: {first.strip()[:100]}")
            else:
                print("gradcheck passed: MindSpore binds this call correctly in this mode")
            passed = kwcell.gradcheck(fixed(), *args, **kwargs)
            kwcell_ok = kwcell_ok and passed
            print(f"== {mode_name}: KwCell {fixed.__name__}, {call}: gradcheck -> {passed}\n")
    if sorted(set(caught_in)) != sorted(MODES) or not kwcell_ok:
        print(f"FAILED: wrong gradients caught in {sorted(set(caught_in))}; every KwCell passed: {kwcell_ok}")
        return 1
    print("OK: the plain cells' wrong gradients were caught in PYNATIVE and GRAPH_MODE; every KwCell passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
