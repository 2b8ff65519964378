"""``python -m kwcell check``: one ``file:line: code: message`` per problem, summary, exit status."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = "tests/fixtures/checkpkg"
KW = "tests/fixtures/checkpkg/kw_bad.py"
PLAIN = "tests/fixtures/checkpkg/plain_bad.py"

SHORT = (
    "returns 7 gradients, expected 8, one per construct parameter in this order: (a, b, c, d, e, f, g, h); "
    "return a dict keyed by parameter name to give only some of them"
)
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
    f"{KW}:46: KW007: KwShortSolver.bprop (line 55): " + SHORT + " (MindSpore's bprop form: the gradient "
    "of KwShortSolver will raise this error)",
    # once, and the import goes on, though the class keyword fails again when the class is made
    # without its bprop
    f"{KW}:58: KW008: BadFlag: compile_once must be True or False, got 'yes'; "
    "write class BadFlag(KwCell, compile_once=True)",
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
    # the same count rule as for KwShortSolver, on a plain nn.Cell
    f"{PLAIN}:53: KW007: ShortSolver.bprop (line 53): "
    + SHORT
    + "; "
    + FIX.format("ShortSolver", "bprop(self, a, b, c, d, e, f, g, h, *, out, dout)"),
]
# good.py: Scaled, PlainPositional, ZooStyle, PlainZooStyle; kw_bad.py: 5 bad + Fine;
# plain_bad.py: 5 (NoBprop is not a bprop cell)
SUMMARY = "kwcell check: 11 problems (15 cells checked in 4 modules)"


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
    assert report["cells_checked"] == 15
    assert report["modules_checked"] == 4
    lines = [f"{p['file']}:{p['line']}: {p['code']}: {p['message']}" for p in report["problems"]]
    assert lines == EXPECTED
    assert [p["class"] for p in report["problems"]] == [
        "checkpkg.broken",
        "checkpkg.kw_bad.UnknownName",
        "checkpkg.kw_bad.MissingDout",
        "checkpkg.kw_bad.WrongDefault",
        "checkpkg.kw_bad.KwShortSolver",
        "checkpkg.kw_bad.BadFlag",
        "checkpkg.plain_bad.Article",
        "checkpkg.plain_bad.KeywordOnly",
        "checkpkg.plain_bad.Renamed",
        "checkpkg.plain_bad.KeywordOnlyGradNames",
        "checkpkg.plain_bad.ShortSolver",
    ]


def test_clean_module_by_dotted_name_exits_zero() -> None:
    result = run("tests.fixtures.checkpkg.good")
    assert result.stdout.splitlines() == ["kwcell check: no problems (4 cells checked in 1 module)"]
    assert result.returncode == 0


def test_missing_module_is_a_usage_error() -> None:
    result = run("tests.fixtures.checkpkg.nonexistent")
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1] == (
        "python -m kwcell check: error: tests.fixtures.checkpkg.nonexistent: "
        "no such file, directory or module"
    )
    assert result.returncode == 2


@pytest.mark.parametrize("target", ["nosuchdir/", "nosuchfile.py", "tests/fixtures/nosuchdir"])
def test_missing_path_is_a_usage_error(target: str) -> None:
    """Caught before anything is imported, with argparse's exit status for a bad command line."""
    result = run(PKG, target)
    assert result.stdout == ""
    assert result.stderr == f"python -m kwcell check: error: {target}: no such file or directory\n"
    assert result.returncode == 2


def test_help_stands_alone() -> None:
    """--help explains the command, its exit statuses and every code in plain text."""
    result = run("--help")
    assert result.returncode == 0
    assert result.stderr == ""  # MindSpore is not even imported
    help_text = result.stdout
    assert "SPEC" not in help_text and "``" not in help_text and "../" not in help_text
    assert "Exit status: 0 no problems, 1 problems found, 2 bad command line" in help_text
    documented = re.findall(r"^- (KW\d{3}) ", help_text, re.MULTILINE)
    emitted = set(re.findall(r'"(KW\d{3})"', (ROOT / "kwcell" / "_check.py").read_text(encoding="utf-8")))
    assert {"KW001", "KW101", "KW901"} <= emitted
    assert sorted(documented) == sorted(emitted), "every code the check reports is explained"


# A library whose bases are decorated with @kwcell.keyword_bprop (one with a metaclass of its
# own, one through an alias, one with the compile_once= form): its classes get the KwCell
# codes and messages, and no plain-cell code (Gelu's construct defaults are fine for a KwCell)
LIB = "tests/fixtures/checklib"
LIBRARY = f"{LIB}/library.py"
DECORATED = [
    f"{LIBRARY}:53: KW004: WrongDefault.bprop: parameter 'alpha' has default 2.0 but construct gives it "
    "default 1.0; bprop always receives the value construct got, so drop the default or make it match; "
    "expected e.g. bprop(self, x, alpha=1.0, *, out, dout)",
    # the class line, though the library's metaclass runs the class statement
    f"{LIBRARY}:61: KW001: Clipped.bprop: parameter 'limit' is not a parameter of "
    "construct(self, x, bound=1.0); expected e.g. bprop(self, x, bound=1.0, *, out, dout)",
    # the class line, not the decorator's
    f"{LIBRARY}:70: KW002: Standalone.bprop: construct parameter 'w' is missing from bprop; name it, or "
    "add '**kwargs' to receive the inputs bprop does not name; expected e.g. bprop(self, x, w=1.0, *, out, "
    "dout) (MindSpore's bprop form: the gradient of Standalone will raise this error)",
    f"{LIBRARY}:88: KW008: BadFlag: compile_once must be True or False, got 'yes'; "
    "write @keyword_bprop(compile_once=True) on class BadFlag",
]
ENCODER = (
    f"{LIB}/models.py:12: KW002: Encoder.bprop: construct parameter 'mask' is missing from bprop; name it, "
    "or add '**kwargs' to receive the inputs bprop does not name; expected e.g. "
    "bprop(self, x, mask=None, scale=1.0, *, out, dout)"
)


def test_decorated_classes_and_their_subclasses_are_checked_as_kwcells() -> None:
    result = run(LIB, "--format", "json")
    assert result.returncode == 1, result.stderr[-2000:]
    report: dict[str, Any] = json.loads(result.stdout)
    lines = [f"{p['file']}:{p['line']}: {p['code']}: {p['message']}" for p in report["problems"]]
    assert lines == [*DECORATED, ENCODER]
    assert [p["class"] for p in report["problems"]] == [
        "checklib.library.WrongDefault",
        "checklib.library.Clipped",
        "checklib.library.Standalone",
        "checklib.library.BadFlag",
        "checklib.models.Encoder",
    ]
    # library: the two bases, Gelu, the four bad models, AfterTheErrors; models: Encoder, SteepGelu
    assert report["summary"] == "kwcell check: 5 problems (10 cells checked in 3 modules)"


def test_a_model_module_is_checked_against_its_decorated_base_in_another_module() -> None:
    """Importing the model module runs the library's class statements too, as for a KwCell base."""
    result = run(f"{LIB}/models.py")
    assert result.stdout.splitlines() == [
        *DECORATED,
        ENCODER,
        "kwcell check: 5 problems (6 cells checked in 1 module)",
    ], result.stderr[-2000:]
