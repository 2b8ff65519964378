"""Time to create a KwCell class with a bprop (wall and CPU time, median of batches)."""

from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench._timing import report
from kwcell import KwCell


def make() -> type:
    class Net(KwCell):
        def construct(self, x, w=1.0, *, y=0.0):  # type: ignore[no-untyped-def]
            return w * x + y

        def bprop(self, x, w, *, y, out, dout):  # type: ignore[no-untyped-def]
            return {"x": w * dout}

    return Net


def main() -> None:
    for _ in range(50):
        make()
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(20):
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(50):
            make()
        wall.append((time.perf_counter() - w0) / 50)
        cpu.append((time.process_time() - c0) / 50)
    t = statistics.median(wall)
    report(
        "class creation with a bprop",
        t * 1e3,
        "ms",
        "< 1 ms",
        t < 1e-3,
        f"CPU {statistics.median(cpu) * 1e3:.2f} ms",
    )


if __name__ == "__main__":
    main()
