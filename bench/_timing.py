"""Interleaved, median timing in one process, and the one-line figure format run_all.py reads."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable

__all__ = ["interleaved", "report"]


def interleaved(
    a: Callable[[], object], b: Callable[[], object], *, rounds: int = 30, inner: int = 50
) -> tuple[float, float]:
    """Median seconds per call of ``a`` and ``b``, alternating them (and their order) by round."""
    for _ in range(inner):
        a()
        b()
    ta: list[float] = []
    tb: list[float] = []
    for r in range(rounds):
        # Alternate which goes first, so that neither always follows the other.
        for fn, out in ((a, ta), (b, tb)) if r % 2 else ((b, tb), (a, ta)):
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            out.append((time.perf_counter() - start) / inner)
    return statistics.median(ta), statistics.median(tb)


def report(name: str, value: float, unit: str, bar: str, met: bool, detail: str = "") -> None:
    """Print a human line and a JSON line (``FIGURE {...}``) for run_all.py."""
    status = "met" if met else "MISSED"
    print(f"{name}: {value:.4g} {unit} (bar {bar}: {status}) {detail}".rstrip())
    print(
        "FIGURE "
        + json.dumps({"name": name, "value": value, "unit": unit, "bar": bar, "met": met, "detail": detail})
    )


def report_ratio(
    name: str,
    a: Callable[[], object],
    b: Callable[[], object],
    *,
    bar: float,
    blocks: int = 7,
    rounds: int = 30,
    inner: int = 20,
) -> None:
    """Report the ratio a/b: the median over ``blocks`` independent interleaved measurements.

    The detail gives both times and the lowest and highest block ratio, so the noise of the
    machine is visible next to the figure.
    """
    ratios: list[float] = []
    times: list[tuple[float, float]] = []
    for _ in range(blocks):
        ta, tb = interleaved(a, b, rounds=rounds, inner=inner)
        ratios.append(ta / tb)
        times.append((ta, tb))
    r = statistics.median(ratios)
    ta = statistics.median(t[0] for t in times)
    tb = statistics.median(t[1] for t in times)
    detail = (
        f"kwcell {ta * 1e6:.1f} us, hand {tb * 1e6:.1f} us; "
        f"block ratios {min(ratios):.3f}-{max(ratios):.3f} over {blocks} blocks"
    )
    report(name, r, "x", f"<= {bar:.2f}", r <= bar, detail)
