"""Every example in examples/ runs and prints what the README says it prints."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def _run(name: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout


TABLE_HEADER = "| call | `nn.Cell`, PYNATIVE |"


def _markdown_table(text: str) -> list[list[str]]:
    """The Markdown table that starts with ``TABLE_HEADER`` in ``text``, as rows of cells."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(TABLE_HEADER))
    rows: list[list[str]] = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        if not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def test_blog_kwargs_measures_the_readme_table() -> None:
    """Every entry of the table in the README and the getting-started page is what the
    example measures on this machine."""
    out = _run("blog_kwargs.py")
    measured = _markdown_table(out)
    for page in ("README.md", "docs/getting-started.md"):
        shown = _markdown_table((ROOT / page).read_text(encoding="utf-8"))
        assert measured == shown, f"{page} table:\n{shown}\nmeasured by examples/blog_kwargs.py:\n{out}"
    by_call = {row[0]: row[1:] for row in measured[1:]}
    assert len(by_call) == 5
    assert all(kw == "right" for _, _, kw in by_call.values()), out
    # MindSpore's hazard, measured: a keyword call inside a function or an outer cell is
    # silently wrong in GRAPH_MODE too, not an error.
    wrong = "**silently wrong gradient**"
    assert by_call["the same call inside a function given to `ms.grad`"] == [wrong, wrong, "right"]
    assert by_call["the same call in an outer cell's `construct`"] == [wrong, wrong, "right"]
    assert "every KwCell row is right in both modes" in out


def test_gradcheck_demo_catches_the_plain_cells_in_both_modes() -> None:
    """The README's account of examples/gradcheck_demo.py: each mode's wrong call is caught."""
    lines = _run("gradcheck_demo.py").strip().splitlines()
    assert lines[-1] == (
        "OK: the plain cells' wrong gradients were caught in PYNATIVE and GRAPH_MODE; every KwCell passed"
    )
    caught = [prev for prev, line in itertools.pairwise(lines) if "caught by gradcheck" in line]
    assert caught == [
        "== PYNATIVE: plain nn.Cell Product, net(w=a, x=x)",
        "== GRAPH_MODE: plain nn.Cell Product, net(w=a, x=x)",
        "== GRAPH_MODE: plain nn.Cell Scaled, net(x, y=b, w=a)",
    ]


@pytest.mark.parametrize(
    "name",
    sorted(
        p.name
        for p in EXAMPLES.glob("*.py")
        if not p.name.startswith("_")
        and p.name not in ("blog_kwargs.py", "data_parallel.py", "gradcheck_demo.py")
    ),
)
def test_example_runs(name: str) -> None:
    """data_parallel.py needs msrun: tests/test_data_parallel.py launches it; the others have
    their own tests above."""
    assert _run(name).strip()
