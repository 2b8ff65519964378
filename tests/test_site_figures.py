"""Every benchmark figure in the README and the documentation is BENCHMARKS.md's.

BENCHMARKS.md (written by bench/run_all.py and bench/scaling.py) is the one source: a page
states a figure only in a marked span that ``python bench/figures.py`` rewrites from it. These
tests fail when a span differs from BENCHMARKS.md, when a page states a ratio or a time outside
a span, and when the benchmark scripts write something bench/figures.py cannot read back.
Offline and without MindSpore (bench/figures.py, bench/scaling.py's report functions and
bench/run_all.py's table are pure Python).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from bench import figures
from tests.doc_blocks import ROOT

# The benchmark scripts' report functions (imported by name: mypy --strict checks kwcell, tests
# and examples, not the benchmark scripts and their matplotlib).
run_all: Any = importlib.import_module("bench.run_all")
scaling: Any = importlib.import_module("bench.scaling")

BENCHMARKS = figures.Benchmarks((ROOT / "BENCHMARKS.md").read_text(encoding="utf-8"))
# A stated measurement: a ratio (1.05 and a multiplication sign, or 1.05x) or a time (4.1 ms,
# 27 us with a micro sign or a u, 87 ns).
FIGURE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:[\u00d7x](?![\w])|ms\b|\u00b5s\b|us\b|ns\b)")
FENCE = re.compile(r"^\s*(```|~~~)")


def _prose(path: Path) -> list[tuple[int, str]]:
    """The page's lines outside code blocks, with the marked spans and HTML comments removed."""
    lines, inside = [], False
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            line = figures.SPAN.sub("", line)
            lines.append((n, re.sub(r"<!--.*?-->", "", line)))
    return lines


def test_every_figure_in_the_readme_and_the_docs_is_the_one_benchmarks_md_gives() -> None:
    """What ``python bench/figures.py`` would rewrite: nothing (run it to fix a failure)."""
    stale = figures.stale(BENCHMARKS)
    assert not stale, "\n".join(stale) + "\n(run `python bench/figures.py` to rewrite them)"


def test_no_page_states_a_figure_outside_a_marked_span() -> None:
    """A measured ratio or time written by hand would not follow the next benchmark run."""
    found = []
    for path in figures.pages():
        for n, line in _prose(path):
            for m in FIGURE.finditer(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {m.group(0)!r} in {line.strip()[:120]!r}")
    assert not found, "state these as <!-- fig:NAME --> spans (bench/figures.py):\n" + "\n".join(found)


def test_the_readme_states_both_ratios_for_plain_and_compile_once_kwcells() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    names = {m["name"] for m in figures.SPAN.finditer(readme)}
    assert {"compile.kw.floor", "compile.kw.hand", "compile.once.floor", "compile.once.hand"} <= names
    claim = next(line for line in readme.splitlines() if "fig:compile.once.hand" in line)
    assert "performance.md#compile-once-per-class" in claim, "the README links compile_once's warning"


@pytest.mark.parametrize("name", sorted(figures.FIGURES))
def test_every_figure_is_read_from_the_current_benchmarks_md(name: str) -> None:
    assert figures.render(name, BENCHMARKS)


# -- what the benchmark scripts write, bench/figures.py reads back ----------------------------


def _pair(kw: float, hand: float) -> dict[str, float]:
    return {"kw": kw, "hand": hand, "ratio": kw / hand, "lo": kw / hand - 0.02, "hi": kw / hand + 0.03}


def _compile(kw: float, hand: float) -> dict[str, dict[str, float]]:
    return {"wall": _pair(kw * 1.1, hand * 1.1), "cpu": _pair(kw, hand)}


def _scaling_results(slow: float) -> list[dict[str, Any]]:
    """What bench/scaling.py's workers return, with made-up times (``slow``: KwCell's ratio)."""
    results = []
    for n in scaling.SIZES:
        hand = 0.05 * n
        compiled = {
            "floor": _compile(hand * 1.1, hand),
            "kw": _compile(hand * slow, hand),
            "once": _compile(hand * 0.9, hand),
            "once_floor": _compile(hand * 0.5, hand),
            "once_floor_positional": _compile(hand * 0.45, hand),
            "kw_floor": _compile(hand * slow, hand * 1.1),
            "once_vs_floor": _compile(hand * 0.9, hand * 1.1),
        }
        results.append(
            {
                "n": n,
                "compile": compiled,
                "once_python": {
                    "total": 1.0,
                    "key": 0.002,
                    "dispatcher": 0.004,
                    "most_parses": 1,
                    "functions": 5,
                },
                "construct": _pair(0.0011, 0.001),
                "graph_call": _pair(1.0, 1.0),
                "graph_call_once": _pair(0.99, 1.0),
                "pynative_call": _pair(1.02, 1.0),
                "pynative_call_floor": _pair(1.01, 1.0),
            }
        )
    return results


def _analysis() -> dict[str, Any]:
    a: dict[str, Any] = {
        key: {"wall": 0.4 + i / 100, "cpu": 0.4 + i / 100}
        for i, (key, _) in enumerate(scaling._ANALYSIS_ROWS)
    }
    a["construct_20x16"] = _pair(1.05, 1.0)
    a["instance"] = {"hand": 20.0, "kw": 26.0, "core": 5.0}
    return a


def _main_table() -> str:
    rows = [
        (
            name,
            1.02,
            "x",
            "<= 1.05",
            True,
            "kwcell 1.0 us, hand 1.0 us; block ratios 0.990-1.030 over 7 blocks",
        )
        for name in (
            "pynative fwd+bwd ratio vs the hand-written keyword floor (kwcell vs ms.value_and_grad)",
            "pynative forward with keywords ratio vs the hand-written keyword floor",
            "pynative fwd+bwd ratio (kwcell.value_and_grad vs ms.value_and_grad)",
            "pynative fwd+bwd ratio with the pre-normalised copy instead of your bprop (comparison only)",
            "pynative forward with keywords ratio",
            "pynative forward positional ratio",
            "graph steady-state step ratio",
        )
    ]
    rows += [
        (name, 1.2, "x", "<= 1.05", False, "kwcell 24.5 ms, hand 20.4 ms CPU (+4.1 ms)")
        for name in (
            "graph compile-time ratio, the 3-op cell alone",
            "graph compile-time ratio, Dense -> activation cell -> Dense",
        )
    ]
    rows += [
        (
            "generated binder speed-up over inspect bind+apply_defaults",
            50.0,
            "x",
            ">= 30",
            True,
            "binder 90 ns, inspect 4500 ns",
        ),
        ("class creation with a bprop", 0.8, "ms", "< 1 ms", True, "CPU 0.8 ms"),
        (
            "import kwcell beyond import mindspore",
            14.0,
            "ms",
            "(no bar)",
            True,
            "import mindspore itself 0.9 s",
        ),
    ]
    keys = ("name", "value", "unit", "bar", "met", "detail")
    header = "| measure | value | bar | status | detail |\n|---|---|---|---|---|\n"
    table: str = run_all.table_rows([dict(zip(keys, row, strict=True)) for row in rows])
    return header + table


@pytest.mark.parametrize("slow", [1.02, 1.3])
def test_what_the_benchmark_scripts_write_is_what_figures_reads(slow: float) -> None:
    """BENCHMARKS.md as bench/run_all.py and bench/scaling.py write it (from made-up
    measurements): every figure reads, the spans follow a new run, and a bar's status with it."""
    section = scaling.section(_scaling_results(slow), _analysis(), "test machine", 60.0, plotted=False)
    text = f"# Benchmarks\n\n{_main_table()}\n\n{section}\n"
    new = figures.Benchmarks(text)
    for name in figures.FIGURES:
        assert figures.render(name, new), name
    kw = figures.render("compile.kw.floor", new)
    assert ("missed" in kw) == (slow > 1.03)
    assert "ratios of the median times" not in figures.render("compile.once.floor", new)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rewritten = figures.rewrite(readme, new)
    assert f"<!-- fig:compile.kw.floor -->{kw}<!-- /fig -->" in rewritten
    assert figures.rewrite(rewritten, new) == rewritten
