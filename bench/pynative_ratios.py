"""PyNative: KwCell vs hand-written cells with the same math and bprop, tiny tensors.

Two baselines: the hand-written positional ``nn.Cell`` (``Hand``, which cannot take keywords),
and the hand-written keyword floor (``HandFloor``: a cell with the user's signature calling the
positional bprop cell, the least any keyword-capable design needs, written without kwcell).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import mindspore as ms
import numpy as np

import kwcell
from bench._timing import report_ratio
from bench.cells import Hand, HandFloor, Kw
from kwcell._meta import info_of


class KwCopy(Kw):
    """Kw, with PyNative calling the positional copy compiled for graphs (see main)."""


_info = info_of(KwCopy)  # the subclass's own plan (its token names the bprop its core calls)
assert _info is not None
setattr(KwCopy, f"_kwcell_bprop_{_info.token}", _info.positional_bprop)


def main() -> None:
    # Synchronous op execution: PyNative otherwise queues ops to a backend thread, and on a
    # 2-core machine the timing of that hand-off swings medians by +-50%.
    ms.set_context(mode=ms.PYNATIVE_MODE, pynative_synchronize=True)
    x = ms.Tensor(np.ones((2,), np.float32))
    w = ms.Tensor(np.full((2,), 2.0, np.float32))
    y = ms.Tensor(np.zeros((2,), np.float32))
    hand, kw, floor = Hand(), Kw(), HandFloor()
    vg_hand = ms.value_and_grad(hand, grad_position=(0, 1, 2))
    vg_kw = kwcell.value_and_grad(kw, grad_position=(0, 1, 2))
    vg_floor = ms.value_and_grad(floor, grad_position=(0, 1, 2))
    report_ratio(
        "pynative fwd+bwd ratio vs the hand-written keyword floor (kwcell vs ms.value_and_grad)",
        lambda: vg_kw(x, w, y),
        lambda: vg_floor(x, w, y),
        bar=1.05,
        rounds=10,
    )
    report_ratio(
        "pynative forward with keywords ratio vs the hand-written keyword floor",
        lambda: kw(x, y=y, w=w),
        lambda: floor(x, y=y, w=w),
        bar=1.05,
    )
    report_ratio(
        "pynative fwd+bwd ratio (kwcell.value_and_grad vs ms.value_and_grad)",
        lambda: vg_kw(x, w, y),
        lambda: vg_hand(x, w, y),
        bar=1.05,
        rounds=10,
    )
    # The price of running the user's own bprop in PyNative (pdb, coverage and tracebacks see
    # its lines): the same cell, with PyNative running the positional copy kwcell compiles for
    # graphs instead (what kwcell did before it ran the user's function).
    kw_copy = KwCopy()
    vg_copy = kwcell.value_and_grad(kw_copy, grad_position=(0, 1, 2))
    report_ratio(
        "pynative fwd+bwd ratio with the pre-normalised copy instead of your bprop (comparison only)",
        lambda: vg_copy(x, w, y),
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
