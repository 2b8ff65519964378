"""The benchmark figures of the README and the documentation, taken from BENCHMARKS.md.

BENCHMARKS.md, which ``bench/run_all.py`` and ``bench/scaling.py`` write, is the one source of
every figure. A page states a figure only inside a marked span::

    <!-- fig:compile.kw.floor -->**1.14x / 1.17x / 1.19x; bar <= 1.03x: missed**<!-- /fig -->

(with the multiplication sign, en dashes and the less-or-equal sign of the tables).

``python bench/figures.py`` rewrites the text of every span in README.md and docs/ from
BENCHMARKS.md (both benchmark scripts run it when they finish); ``--check`` only reports the
spans that differ (exit status 1). ``FIGURES`` below names each figure, where in BENCHMARKS.md
it is read and how it is shown: the digits as BENCHMARKS.md gives them, and "met" or "missed"
(in bold) where the benchmark has a bar. tests/test_site_figures.py runs the check, and fails
on a figure a page states outside a span.

Nothing here imports MindSpore or kwcell.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "BENCHMARKS.md"
SPAN = re.compile(r"(?<!`)<!-- fig:(?P<name>[\w.-]+) -->(?P<text>[^`]*?)<!-- /fig -->")  # never in code
TIMES, DASH = "\u00d7", "\u2013"
SIZES = (8, 32, 128)


class MissingFigure(LookupError):
    """BENCHMARKS.md has no row or sentence a figure is read from."""


@dataclass
class Benchmarks:
    """The tables and sentences of BENCHMARKS.md, read as bench/ writes them."""

    text: str

    def tables(self) -> Iterator[list[dict[str, str]]]:
        """Each Markdown table, as one dict per row keyed by the header's cells."""
        lines = self.text.splitlines()
        i = 0
        while i < len(lines):
            if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-:| ]+\|$", lines[i + 1]):
                header = _cells(lines[i])
                rows = []
                i += 2
                while i < len(lines) and lines[i].startswith("|"):
                    rows.append(dict(zip(header, _cells(lines[i]), strict=True)))
                    i += 1
                yield rows
            else:
                i += 1

    def row(self, first_column: str, key: str) -> dict[str, str]:
        """The row whose first cell is ``key``, in a table whose first header is ``first_column``."""
        for rows in self.tables():
            for row in rows:
                if next(iter(row)) == first_column and row[first_column] == key:
                    return row
        msg = f"BENCHMARKS.md has no row {key!r} (column {first_column!r})"
        raise MissingFigure(msg)

    def has_row(self, first_column: str, key: str) -> bool:
        try:
            self.row(first_column, key)
        except MissingFigure:
            return False
        return True

    def search(self, pattern: str) -> re.Match[str]:
        m = re.search(pattern, self.text)
        if m is None:
            msg = f"BENCHMARKS.md has no sentence matching {pattern!r}"
            raise MissingFigure(msg)
        return m


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _status(met: bool, text: str) -> str:
    return f"{text}: met" if met else f"**{text}: missed**"


def _bar(bar: str) -> str:
    """A bar as the pages show it: ``<= 1.05`` with the less-or-equal and multiplication signs."""
    bar = bar.replace("parity (", "").rstrip(")")
    bar = bar.replace("<=", "\u2264").replace(">=", "\u2265")
    return bar if bar.endswith(("ms", "us")) else bar + TIMES


# -- the main table: one row per measure, written by bench/run_all.py -------------------------


def main_ratio(measure: str, *, blocks: bool = True) -> Callable[[Benchmarks], str]:
    """A ratio row of the main table: the ratio, the range of its blocks (or the added
    milliseconds of a compile), the bar and whether it was met."""

    def figure(b: Benchmarks) -> str:
        row = b.row("measure", measure)
        value = row["value"].removesuffix(" x")
        extra = ""
        blocks_m = re.search(r"block ratios ([\d.]+)-([\d.]+)", row["detail"])
        plus = re.search(r"\((\+[\d.]+ ms)\)", row["detail"])
        if blocks and blocks_m:
            extra = f" (blocks {blocks_m.group(1)}{DASH}{blocks_m.group(2)})"
        elif plus:
            extra = f" ({plus.group(1)})"
        return _status(row["status"] == "met", f"{value}{TIMES}{extra}; bar {_bar(row['bar'])}")

    return figure


def binder(b: Benchmarks) -> str:
    row = b.row("measure", "generated binder speed-up over inspect bind+apply_defaults")
    ns = re.search(r"binder (\d+) ns, inspect (\d+) ns", row["detail"])
    if ns is None:
        raise MissingFigure("the binder row's detail")
    text = f"{row['value'].removesuffix(' x')}{TIMES} faster ({ns.group(1)} ns against {ns.group(2)} ns)"
    return _status(row["status"] == "met", f"{text}; bar {_bar(row['bar'])}")


def plain_value(measure: str, unit: str) -> Callable[[Benchmarks], str]:
    def figure(b: Benchmarks) -> str:
        row = b.row("measure", measure)
        value = row["value"].removesuffix(f" {unit}")
        if row["bar"].startswith("("):  # "(no bar)"
            return f"{value} {unit}"
        return _status(row["status"] == "met", f"{value} {unit}; bar {_bar(row['bar'])}")

    return figure


# -- the scaling section, written by bench/scaling.py -----------------------------------------


def _scaling(b: Benchmarks, n: int, column: str) -> str:
    return b.row("cells", str(n))[column]


def _ratio_of(cell: str) -> str:
    """The first ratio in a cell of the scaling table (``167: 1.26x (1.24-1.32)``)."""
    m = re.search(r"([\d.]+)" + TIMES, cell)
    if m is None:
        raise MissingFigure(f"a ratio in {cell!r}")
    return m.group(1) + TIMES


def scaling_series(column: str) -> Callable[[Benchmarks], str]:
    """The ratios at 8 / 32 / 128 cells, from a column of the scaling table."""

    def figure(b: Benchmarks) -> str:
        return " / ".join(_ratio_of(_scaling(b, n, column)) for n in SIZES)

    return figure


def goal_series(goal: str, sizes: tuple[int, ...] = SIZES) -> Callable[[Benchmarks], str]:
    """The ratios of the goals rows of each size, with their bar and whether it was met
    (``goal`` has ``{n}`` where the row names the number of cells)."""

    def figure(b: Benchmarks) -> str:
        rows = [b.row("goal", goal.format(n=n)) for n in sizes]
        values = " / ".join(_ratio_of(r["measured (median, range)"]) for r in rows)
        bars = {r["bar"] for r in rows}
        missed = [n for n, r in zip(sizes, rows, strict=True) if r["status"] != "met"]
        bar = _bar(bars.pop()) if len(bars) == 1 else "as listed"
        if not missed or len(missed) == len(sizes):
            return _status(not missed, f"{values}; bar {bar}")
        at = ", ".join(str(n) for n in missed)
        return f"{values}; bar {bar}: **missed at {at} cells**, met at the others"

    return figure


def compile_once_vs_floor(b: Benchmarks) -> str:
    """compile_once against the hand-written keyword floor: the goals rows bench/scaling.py
    writes since this figure exists, or else the ratio of the two median compile times."""
    goal = "compile, {n} cells, KwCell with compile_once vs the hand-written keyword floor (CPU)"
    if all(b.has_row("goal", goal.format(n=n)) for n in SIZES):
        return " / ".join(
            _ratio_of(b.row("goal", goal.format(n=n))["measured (median, range)"]) for n in SIZES
        )
    floor = "hand-written keyword floor (ms: ratio)"
    once = "KwCell, compile_once (ms: ratio)"
    ratios = []
    for n in SIZES:
        ms_once = float(_scaling(b, n, once).strip("*").split(":", 1)[0])
        ms_floor = float(_scaling(b, n, floor).split(":", 1)[0])
        ratios.append(f"{ms_once / ms_floor:.2f}{TIMES}")
    return " / ".join(ratios) + " (ratios of the median times)"


def compile_once_goals(b: Benchmarks) -> str:
    goal = "issue 16: compile, {n} cells, KwCell with compile_once vs hand-written (CPU)"
    parts = []
    for n in (8, 128):
        row = b.row("goal", goal.format(n=n))
        parts.append(_status(row["status"] == "met", f"bar {_bar(row['bar'])} at {n} cells"))
    return ", ".join(parts)


def goal(name: str) -> Callable[[Benchmarks], str]:
    def figure(b: Benchmarks) -> str:
        row = b.row("goal", name)
        return _status(row["status"] == "met", f"{row['measured (median, range)']}; bar {_bar(row['bar'])}")

    return figure


def cell_creation(b: Benchmarks) -> str:
    m = b.search(
        r"Creating \(and dropping\) one cell costs (\d+) us hand-written and (\d+) us as a KwCell"
        r".*?Of the (\d+) us difference, (\d+) us is the hidden core"
    )
    hand, kw, diff, core = m.groups()
    return f"{hand} µs hand-written and {kw} µs as a KwCell; of the {diff} µs difference, {core} µs"


def analysis(label: str) -> Callable[[Benchmarks], str]:
    def figure(b: Benchmarks) -> str:
        return b.row("network of 32 cells", label)["vs hand-written"]

    return figure


FLOOR_COMPILE = "issue 16: compile, {n} cells, KwCell vs the hand-written keyword floor (CPU)"
PYNATIVE_FLOOR = "PYNATIVE forward + backward per call vs the hand-written keyword floor, {n} cells"
PYNATIVE_HAND = "issue 11: PYNATIVE forward + backward per call, {n} cells"

#: Every figure a page may state: name -> how it is read from BENCHMARKS.md and shown.
FIGURES: dict[str, Callable[[Benchmarks], str]] = {
    "pynative.fwdbwd.floor": main_ratio(
        "pynative fwd+bwd ratio vs the hand-written keyword floor (kwcell vs ms.value_and_grad)"
    ),
    "pynative.forward.kw.floor": main_ratio(
        "pynative forward with keywords ratio vs the hand-written keyword floor"
    ),
    "pynative.fwdbwd.hand": main_ratio("pynative fwd+bwd ratio (kwcell.value_and_grad vs ms.value_and_grad)"),
    "pynative.fwdbwd.prenormalised": main_ratio(
        "pynative fwd+bwd ratio with the pre-normalised copy instead of your bprop (comparison only)"
    ),
    "pynative.forward.kw.hand": main_ratio("pynative forward with keywords ratio"),
    "pynative.forward.positional.hand": main_ratio("pynative forward positional ratio"),
    "graph.step": main_ratio("graph steady-state step ratio"),
    "graph.compile.cell": main_ratio("graph compile-time ratio, the 3-op cell alone"),
    "graph.compile.dense": main_ratio("graph compile-time ratio, Dense -> activation cell -> Dense"),
    "binder": binder,
    "class-creation": plain_value("class creation with a bprop", "ms"),
    "import": plain_value("import kwcell beyond import mindspore", "ms"),
    "pynative.call.floor": goal_series(PYNATIVE_FLOOR, (1, *SIZES)),
    "pynative.call.hand": goal_series(PYNATIVE_HAND, (1, *SIZES)),
    "compile.kw.floor": goal_series(FLOOR_COMPILE),
    "compile.kw.hand": scaling_series("KwCell (ms: ratio)"),
    "compile.floor.hand": scaling_series("hand-written keyword floor (ms: ratio)"),
    "compile.once.hand": scaling_series("KwCell, compile_once (ms: ratio)"),
    "compile.once.floor": compile_once_vs_floor,
    "compile.once.goals": compile_once_goals,
    "construct.network": scaling_series("construction, CPU: ratio, hand / kwcell per network"),
    "construct.goal": goal("issue 11: constructing 20 networks x 16 custom cells (CPU)"),
    "cell-creation": cell_creation,
    "analysis.floor": analysis(
        "the same, keyword call: the least any design needs that binds keywords before a bprop cell"
    ),
    "analysis.kw": analysis("kwcell, keyword call"),
}


def pages() -> list[Path]:
    """The files that may state figures: the README and every page of the site."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def render(name: str, benchmarks: Benchmarks) -> str:
    if name not in FIGURES:
        msg = f"no figure named {name!r} in bench/figures.py"
        raise KeyError(msg)
    return FIGURES[name](benchmarks)


def rewrite(text: str, benchmarks: Benchmarks) -> str:
    return SPAN.sub(lambda m: f"<!-- fig:{m['name']} -->{render(m['name'], benchmarks)}<!-- /fig -->", text)


def stale(benchmarks: Benchmarks | None = None) -> list[str]:
    """``path:line: fig:NAME shows 'X', BENCHMARKS.md gives 'Y'`` for every span that differs."""
    benchmarks = benchmarks or Benchmarks(BENCHMARKS.read_text(encoding="utf-8"))
    found = []
    for path in pages():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for m in SPAN.finditer(line):
                want = render(m["name"], benchmarks)
                if m["text"] != want:
                    where = path.relative_to(ROOT).as_posix()
                    found.append(
                        f"{where}:{n}: fig:{m['name']} shows {m['text']!r}, BENCHMARKS.md gives {want!r}"
                    )
    return found


def update() -> list[Path]:
    """Rewrite every span from BENCHMARKS.md; the files changed."""
    benchmarks = Benchmarks(BENCHMARKS.read_text(encoding="utf-8"))
    changed = []
    for path in pages():
        old = path.read_text(encoding="utf-8")
        new = rewrite(old, benchmarks)
        if new != old:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def main(argv: list[str]) -> int:
    if "--check" in argv:
        problems = stale()
        print("\n".join(problems) or "every figure matches BENCHMARKS.md")
        return 1 if problems else 0
    changed = update()
    names = ", ".join(p.relative_to(ROOT).as_posix() for p in changed)
    print(
        f"figures rewritten from BENCHMARKS.md in {names}"
        if changed
        else "figures already match BENCHMARKS.md"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
