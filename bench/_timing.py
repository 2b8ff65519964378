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
