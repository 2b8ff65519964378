"""Every example in examples/ runs and prints what the README says it prints."""

from __future__ import annotations

import itertools
import os
import re
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


def test_blog_kwargs_table() -> None:
    out = _run("blog_kwargs.py")
    rows = [line for line in out.splitlines() if re.match(r"^\d\. ", line)]
    assert len(rows) == 12, out
    kw_rows = [r for r in rows if " KwCell " in r]
    assert len(kw_rows) == 6 and all(r.endswith(" ok") for r in kw_rows), out
    plain = [r for r in rows if " nn.Cell " in r]
    # The article's failures, as measured: a silently wrong gradient in PyNative, errors in graph mode.
    assert any("PYNATIVE" in r and r.endswith("WRONG") for r in plain), out
    assert sum("GRAPH" in r and "ERROR" in r for r in plain) == 3, out
    assert "every KwCell row matches its analytic value" in out


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
