"""``python -m kwcell check``: one ``file:line: code: message`` per problem, summary, exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = str(Path(__file__).resolve().parent.parent)
PKG = "tests/fixtures/checkpkg"
KW = "tests/fixtures/checkpkg/kw_bad.py"
PLAIN = "tests/fixtures/checkpkg/plain_bad.py"

FIX = "derive {0} from kwcell.KwCell, which matches bprop to construct by name, e.g. {1}"
EXPECTED = [
    f"{PKG}/broken.py:5: KW901: cannot import checkpkg.broken: "
    "RuntimeError: checkpkg.broken fails on purpose",
    f"{KW}:12: KW001: UnknownName.bprop: parameter 'z' is not a parameter of construct(self, x, y); "
    "expected e.g. bprop(self, x, y, *, out, dout)",
    f"{KW}:20: KW003: MissingDout.bprop: missing parameter 'dout'; "
    "expected e.g. bprop(self, x, *, out, dout) (MindSpore's bprop form: the gradient of MissingDout "
    "will raise this error)",
    f"{KW}:38: KW004: WrongDefault.bprop: parameter 'w' has default 2.0 but construct gives it default 1.0; "
    "bprop always receives the value construct got, so drop the default or make it match; "
    "expected e.g. bprop(self, x, w=1.0, *, out, dout)",
    f"{PLAIN}:13: KW101: Article.construct: parameter(s) 'w', 'y' have defaults and the cell has a bprop: "
    "a call that omits them fails to compile in GRAPH_MODE, and keyword calls reach bprop in call order; "
    + FIX.format("Article", "bprop(self, x, w=1.0, y=1.0, *, out, dout)"),
    f"{PLAIN}:21: KW102: KeywordOnly.construct: keyword-only parameter(s) 'scale' with a bprop: MindSpore "
    "passes bprop its inputs by position, so they are misbound or rejected; "
    + FIX.format("KeywordOnly", "bprop(self, x, *, scale, out, dout)"),
    f"{PLAIN}:32: KW103: Renamed.bprop(y, x, out, dout) receives construct's inputs by position, not by "
    "name: 'y' gets 'x', 'x' gets 'y'; " + FIX.format("Renamed", "bprop(self, x, y, *, out, dout)"),
    f"{PLAIN}:40: KW104: KeywordOnlyGradNames.bprop takes 2 positional parameter(s) (x, y) but MindSpore "
    "passes 4: the inputs of construct(self, x, y), then out, dout; "
    + FIX.format("KeywordOnlyGradNames", "bprop(self, x, y, *, out, dout)"),
]
# good.py: Scaled, PlainPositional, ZooStyle, PlainZooStyle; kw_bad.py: 3 bad + Fine;
# plain_bad.py: 4 (NoBprop is not a bprop cell)
SUMMARY = "kwcell check: 8 problems (12 cells checked in 4 modules)"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kwcell", "check", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def text_run() -> subprocess.CompletedProcess[str]:
    return run(PKG)


@pytest.fixture(scope="module")
def json_run() -> subprocess.CompletedProcess[str]:
    return run(PKG, "--format", "json")


def test_text_report_lines_and_exit_status(text_run: subprocess.CompletedProcess[str]) -> None:
    assert text_run.stdout.splitlines() == [*EXPECTED, SUMMARY], text_run.stderr[-2000:]
    assert text_run.returncode == 1


def test_json_report(json_run: subprocess.CompletedProcess[str]) -> None:
    assert json_run.returncode == 1
    report: dict[str, Any] = json.loads(json_run.stdout)
    assert report["summary"] == SUMMARY
    assert report["cells_checked"] == 12
    assert report["modules_checked"] == 4
    lines = [f"{p['file']}:{p['line']}: {p['code']}: {p['message']}" for p in report["problems"]]
    assert lines == EXPECTED
    assert [p["class"] for p in report["problems"]] == [
        "checkpkg.broken",
        "checkpkg.kw_bad.UnknownName",
        "checkpkg.kw_bad.MissingDout",
        "checkpkg.kw_bad.WrongDefault",
        "checkpkg.plain_bad.Article",
        "checkpkg.plain_bad.KeywordOnly",
        "checkpkg.plain_bad.Renamed",
        "checkpkg.plain_bad.KeywordOnlyGradNames",
    ]


def test_clean_module_by_dotted_name_exits_zero() -> None:
    result = run("tests.fixtures.checkpkg.good")
    assert result.stdout.splitlines() == ["kwcell check: no problems (4 cells checked in 1 module)"]
    assert result.returncode == 0


def test_missing_module_is_reported() -> None:
    result = run("tests.fixtures.checkpkg.nonexistent")
    assert result.stdout.splitlines() == [
        "tests.fixtures.checkpkg.nonexistent:1: KW901: cannot import tests.fixtures.checkpkg.nonexistent: "
        "ModuleNotFoundError: No module named 'tests.fixtures.checkpkg.nonexistent'",
        "kwcell check: 1 problem (0 cells checked in 0 modules)",
    ]
    assert result.returncode == 1
