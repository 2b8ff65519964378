"""GRAPH_MODE: steady-state step and compile time, KwCell vs the hand-written nn.Cell."""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import mindspore as ms
import numpy as np

import kwcell
from bench._timing import report, report_ratio
from bench.cells import Hand, HandMLP, Kw, KwMLP


def compile_times(
    kw: Callable[[], Any], hand: Callable[[], Any], args: tuple[Any, ...], rounds: int = 12
) -> tuple[float, float]:
    """Median CPU seconds of the first call of a fresh cell's gradient (a compile), for each.

    Both are compiled once first (MindSpore's compiler and kwcell's generated code warm up),
    then alternately, in alternating order. Process CPU time, not wall time: other processes
    on a shared machine stretch wall time by several times, not the compile's own work.
    """
    kinds: list[tuple[Callable[[], Any], list[float]]] = [(kw, []), (hand, [])]
    for make, _ in kinds:
        make()(*args)
    for i in range(rounds):
        for make, out in kinds if i % 2 else kinds[::-1]:
            fn = make()
            start = time.process_time()
            fn(*args)
            out.append(time.process_time() - start)
    return statistics.median(kinds[0][1]), statistics.median(kinds[1][1])


def _weights_grad(net: Any) -> Any:
    return ms.value_and_grad(net, None, net.trainable_params())


def main() -> None:
    ms.set_context(mode=ms.GRAPH_MODE)
    x = ms.Tensor(np.ones((2,), np.float32))
    w = ms.Tensor(np.full((2,), 2.0, np.float32))
    y = ms.Tensor(np.zeros((2,), np.float32))
    vg_kw = kwcell.value_and_grad(Kw(), grad_position=(0, 1, 2))
    vg_hand = ms.value_and_grad(Hand(), grad_position=(0, 1, 2))
    report_ratio(
        "graph steady-state step ratio", lambda: vg_kw(x, w, y), lambda: vg_hand(x, w, y), bar=1.01, inner=40
    )
    ck, ch = compile_times(
        lambda: kwcell.value_and_grad(Kw(), grad_position=(0, 1, 2)),
        lambda: ms.value_and_grad(Hand(), grad_position=(0, 1, 2)),
        (x, w, y),
    )
    r = ck / ch
    report(
        "graph compile-time ratio, the 3-op cell alone",
        r,
        "x",
        "<= 1.05",
        r <= 1.05,
        f"kwcell {ck * 1e3:.1f} ms, hand {ch * 1e3:.1f} ms CPU (+{(ck - ch) * 1e3:.1f} ms)",
    )
    batch = ms.Tensor(np.ones((8, 16), np.float32))
    ck, ch = compile_times(lambda: _weights_grad(KwMLP()), lambda: _weights_grad(HandMLP()), (batch,))
    r = ck / ch
    report(
        "graph compile-time ratio, Dense -> activation cell -> Dense",
        r,
        "x",
        "<= 1.05",
        r <= 1.05,
        f"kwcell {ck * 1e3:.1f} ms, hand {ch * 1e3:.1f} ms CPU (+{(ck - ch) * 1e3:.1f} ms)",
    )


if __name__ == "__main__":
    main()
