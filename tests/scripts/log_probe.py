"""Runs a cell forward and backward in PYNATIVE, GRAPH_MODE and under @ms.jit.

``python log_probe.py kwcell`` uses a KwCell, ``python log_probe.py plain`` the equivalent
hand-written nn.Cell; tests/test_debug.py compares what MindSpore logs for each.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops


class Plain(nn.Cell):
    def construct(self, x: Tensor, w: Any = 2.0) -> Any:
        if w is None:
            return ops.sin(x)
        return w * ops.sin(x)

    def bprop(self, x: Tensor, w: Any, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * dout, 0


# The plain run never imports kwcell, so that what importing kwcell logs is seen too.
if sys.argv[1] == "kwcell":
    from kwcell import KwCell

    class Kw(KwCell):
        def construct(self, x: Tensor, w: Any = 2.0) -> Any:
            if w is None:
                return ops.sin(x)
            return w * ops.sin(x)

        def bprop(self, x: Tensor, w: Any = 2.0, *, out: Tensor, dout: Tensor) -> Any:
            return {"x": w * ops.cos(x) * dout}


def main() -> None:
    net: nn.Cell = Kw() if sys.argv[1] == "kwcell" else Plain()
    assert ("kwcell" in sys.modules) == (sys.argv[1] == "kwcell")
    x = Tensor(np.array([0.5, 1.0], np.float32))

    @ms.jit
    def step(x: Tensor) -> Any:
        return net(x, 3.0)

    step_grad: Callable[..., Any] = ms.grad(step)
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        expected = 3.0 * np.cos(x.asnumpy())
        np.testing.assert_allclose(ms.grad(net)(x, 3.0).asnumpy(), expected, rtol=1e-6)
        np.testing.assert_allclose(step_grad(x).asnumpy(), expected, rtol=1e-6)
    print("probe ok")


if __name__ == "__main__":
    main()
