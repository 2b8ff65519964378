"""The blog article's silent bprop bug, caught by ``kwcell.gradcheck``, then fixed with ``KwCell``.

The article's cell is a plain ``nn.Cell`` with defaults in ``construct`` and a classic bprop.
Called as ``net(x, y=b, w=a)``, MindSpore hands bprop its inputs in *call* order
``(x, b, a)``, so bprop computes with ``w`` and ``y`` swapped and returns their gradients in
each other's place -- no error, just wrong numbers. (The article saw it in PYNATIVE; on
MindSpore 2.10 CPU this particular call binds correctly in PYNATIVE and goes wrong in
GRAPH_MODE, so the demo checks both modes and requires the bug to be caught in at least one.)

Run: ``python examples/gradcheck_demo.py`` (exit status 0 when everything behaves as shown).
"""

from __future__ import annotations

import sys
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

import kwcell
from kwcell import KwCell


class ArticleNet(nn.Cell):
    """The article's cell: its bprop is right only for positional calls."""

    def construct(self, x: Any, w: Any = 1.0, y: Any = 1.0) -> Any:
        return w * ops.sin(x) + y * x

    def bprop(self, x: Any, w: Any, y: Any, out: Any, dout: Any) -> Any:
        return (w * ops.cos(x) + y) * dout, ops.sin(x) * dout, x * dout


class FixedNet(KwCell):
    """The same maths as a KwCell: bprop parameters are matched to construct's by name."""

    def construct(self, x: Any, w: Any = 1.0, y: Any = 1.0) -> Any:
        return w * ops.sin(x) + y * x

    def bprop(self, x: Any, w: Any, y: Any, *, out: Any, dout: Any) -> Any:
        return {"x": (w * ops.cos(x) + y) * dout, "w": ops.sin(x) * dout, "y": x * dout}


MODES = {"PYNATIVE": ms.PYNATIVE_MODE, "GRAPH_MODE": ms.GRAPH_MODE}


def main() -> int:
    x = Tensor(np.array([0.5, 1.0, 2.0], np.float32))
    a = Tensor(np.array([2.0, 3.0, -1.0], np.float32))  # w
    b = Tensor(np.array([5.0, -7.0, 0.5], np.float32))  # y
    caught = 0
    for name, mode in MODES.items():
        ms.set_context(mode=mode)
        print(f"== {name}: plain nn.Cell, called net(x, y=b, w=a)")
        try:
            kwcell.gradcheck(ArticleNet(), x, y=b, w=a)
        except kwcell.GradcheckError as err:
            caught += 1
            print(f"caught by gradcheck:\n{err}\n")
        else:
            print("gradcheck passed: this MindSpore version binds this call correctly in this mode\n")
        print(f"== {name}: KwCell, same call")
        print(f"gradcheck(FixedNet(), x, y=b, w=a) -> {kwcell.gradcheck(FixedNet(), x, y=b, w=a)}\n")
    if caught == 0:
        print("expected gradcheck to catch the plain cell's wrong gradients in at least one mode")
        return 1
    print(f"plain cell's wrong gradients caught in {caught} of {len(MODES)} modes; KwCell passed in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
