"""The generated binder against inspect.Signature.bind + apply_defaults."""

from __future__ import annotations

import inspect
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench._timing import interleaved, report
from bench.cells import Kw
from kwcell._meta import info_of


def main() -> None:
    info = info_of(Kw)
    assert info is not None
    bind = info.bind
    sig = inspect.signature(info.user_construct)
    net = None

    def slow() -> object:
        ba = sig.bind(net, 1, y=2)
        ba.apply_defaults()
        return ba.args

    t_g, t_i = interleaved(lambda: bind(net, 1, y=2), slow, rounds=30, inner=2000)
    r = t_i / t_g
    report(
        "generated binder speed-up over inspect bind+apply_defaults",
        r,
        "x",
        ">= 30",
        r >= 30,
        f"binder {t_g * 1e9:.0f} ns, inspect {t_i * 1e9:.0f} ns",
    )


if __name__ == "__main__":
    main()
