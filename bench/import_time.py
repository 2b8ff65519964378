"""Import time of kwcell beyond ``import mindspore`` (fresh subprocesses, median of 5).

kwcell imports its MindSpore-backed names lazily, so the figure includes first use of
``kwcell.KwCell`` and ``kwcell.grad``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench._timing import report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODE = (
    "import time; t0 = time.perf_counter(); import mindspore; t1 = time.perf_counter(); "
    "import kwcell; kwcell.KwCell; kwcell.grad; t2 = time.perf_counter(); print(t1 - t0, t2 - t1)"
)


def main() -> None:
    extra: list[float] = []
    base: list[float] = []
    env = {**os.environ, "PYTHONPATH": ROOT}
    for _ in range(5):
        out = subprocess.run(
            [sys.executable, "-c", CODE], capture_output=True, text=True, env=env, check=True
        )
        ms_t, kw_t = map(float, out.stdout.split()[-2:])
        base.append(ms_t)
        extra.append(kw_t)
    e = statistics.median(extra)
    report(
        "import kwcell beyond import mindspore",
        e * 1e3,
        "ms",
        "(no bar)",
        True,
        f"import mindspore itself {statistics.median(base):.2f} s",
    )


if __name__ == "__main__":
    main()
