"""PyNative: KwCell vs a hand-written positional nn.Cell with the same math and bprop, tiny tensors."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import mindspore as ms
import numpy as np

import kwcell
from bench._timing import report_ratio
from bench.cells import Hand, Kw


def main() -> None:
    # Synchronous op execution: PyNative otherwise queues ops to a backend thread, and on a
    # 2-core machine the timing of that hand-off swings medians by +-50%.
    ms.set_context(mode=ms.PYNATIVE_MODE, pynative_synchronize=True)
    x = ms.Tensor(np.ones((2,), np.float32))
    w = ms.Tensor(np.full((2,), 2.0, np.float32))
    y = ms.Tensor(np.zeros((2,), np.float32))
    hand, kw = Hand(), Kw()
    vg_hand = ms.value_and_grad(hand, grad_position=(0, 1, 2))
    vg_kw = kwcell.value_and_grad(kw, grad_position=(0, 1, 2))
    report_ratio(
        "pynative fwd+bwd ratio (kwcell.value_and_grad vs ms.value_and_grad)",
        lambda: vg_kw(x, w, y),
        lambda: vg_hand(x, w, y),
        bar=1.05,
        rounds=10,
    )
    report_ratio(
        "pynative forward with keywords ratio", lambda: kw(x, y=y, w=w), lambda: hand(x, w, y), bar=1.10
    )
    report_ratio("pynative forward positional ratio", lambda: kw(x, w, y), lambda: hand(x, w, y), bar=1.05)


if __name__ == "__main__":
    main()
