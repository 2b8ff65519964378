"""GRAPH_MODE: steady-state step and compile time, KwCell vs the hand-written nn.Cell."""

from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import mindspore as ms
import numpy as np

import kwcell
from bench._timing import interleaved, report
from bench.cells import Hand, Kw


def main() -> None:
    ms.set_context(mode=ms.GRAPH_MODE)
    x = ms.Tensor(np.ones((2,), np.float32))
    w = ms.Tensor(np.full((2,), 2.0, np.float32))
    y = ms.Tensor(np.zeros((2,), np.float32))
    compile_k: list[float] = []
    compile_h: list[float] = []
    ms.value_and_grad(Hand(), grad_position=(0, 1, 2))(y, w, x)  # warm up MindSpore's compiler
    kinds = [(Kw, kwcell.value_and_grad, compile_k), (Hand, ms.value_and_grad, compile_h)]
    for i in range(6):  # a new cell and gradient object compiles afresh; alternate the order
        for make, grad, out in kinds if i % 2 else kinds[::-1]:
            fn = grad(make(), grad_position=(0, 1, 2))
            start = time.perf_counter()
            fn(x, w, y)
            out.append(time.perf_counter() - start)
    ck, ch = statistics.median(compile_k), statistics.median(compile_h)
    vg_kw = kwcell.value_and_grad(Kw(), grad_position=(0, 1, 2))
    vg_hand = ms.value_and_grad(Hand(), grad_position=(0, 1, 2))
    t_k, t_h = interleaved(lambda: vg_kw(x, w, y), lambda: vg_hand(x, w, y), rounds=25, inner=40)
    r = t_k / t_h
    report(
        "graph steady-state step ratio",
        r,
        "x",
        "<= 1.01",
        r <= 1.01,
        f"kwcell {t_k * 1e6:.0f} us, hand {t_h * 1e6:.0f} us",
    )
    r = ck / ch
    report("graph compile-time ratio", r, "x", "<= 1.10", r <= 1.10, f"kwcell {ck:.2f} s, hand {ch:.2f} s")


if __name__ == "__main__":
    main()
