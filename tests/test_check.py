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
    # where the import raised: in the package's registry, not at line 1 of broken.py
    f"{PKG}/_registry.py:10: KW901: cannot import tests.fixtures.checkpkg.broken: "
    "RuntimeError: checkpkg.broken fails on purpose: 'broken' is registered twice",
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
    f"{PLAIN}:53: KW007: ShortSolver.bprop: "
    + SHORT
    + "; "
    + FIX.format("ShortSolver", "bprop(self, a, b, c, d, e, f, g, h, *, out, dout)"),
]
# good.py: Scaled, PlainPositional, ZooStyle, PlainZooStyle; kw_bad.py: 5 bad + Fine;
# plain_bad.py: 5 (NoBprop is not a bprop cell); __init__.py and _registry.py mention no bprop
# and are not imported as modules of their own
SUMMARY = "kwcell check: 11 problems (15 cells checked in 3 modules)"


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
    assert report["modules_checked"] == 3
    assert report["files_skipped"] == 2
    lines = [f"{p['file']}:{p['line']}: {p['code']}: {p['message']}" for p in report["problems"]]
    assert lines == EXPECTED
    assert [p["class"] for p in report["problems"]] == [
        "tests.fixtures.checkpkg.broken",
        "tests.fixtures.checkpkg.kw_bad.UnknownName",
        "tests.fixtures.checkpkg.kw_bad.MissingDout",
        "tests.fixtures.checkpkg.kw_bad.WrongDefault",
        "tests.fixtures.checkpkg.kw_bad.KwShortSolver",
        "tests.fixtures.checkpkg.kw_bad.BadFlag",
        "tests.fixtures.checkpkg.plain_bad.Article",
        "tests.fixtures.checkpkg.plain_bad.KeywordOnly",
        "tests.fixtures.checkpkg.plain_bad.Renamed",
        "tests.fixtures.checkpkg.plain_bad.KeywordOnlyGradNames",
        "tests.fixtures.checkpkg.plain_bad.ShortSolver",
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
    sources = ("_check.py", "_errors.py", "_validate.py")
    emitted = {
        code
        for name in sources
        for code in re.findall(r'"(KW\d{3})"', (ROOT / "kwcell" / name).read_text(encoding="utf-8"))
    }
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
        "tests.fixtures.checklib.library.WrongDefault",
        "tests.fixtures.checklib.library.Clipped",
        "tests.fixtures.checklib.library.Standalone",
        "tests.fixtures.checklib.library.BadFlag",
        "tests.fixtures.checklib.models.Encoder",
    ]
    # library: the two bases, Gelu, the four bad models, AfterTheErrors; models: Encoder, SteepGelu
    assert report["summary"] == "kwcell check: 5 problems (10 cells checked in 3 modules)"


def test_a_model_module_is_checked_against_its_decorated_base_in_another_module() -> None:
    """Importing the model module runs the library's class statements too, as for a KwCell
    base; only the cells of the module asked for are reported and counted."""
    result = run(f"{LIB}/models.py")
    assert result.stdout.splitlines() == [
        ENCODER,  # and not the library's classes, which models.py imports
        "kwcell check: 1 problem (2 cells checked in 1 module)",
    ], result.stderr[-2000:]


# -- a library tree in the shapes real libraries have (tests/fixtures/adopt/README.md) -------
ADOPT = "tests/fixtures/adopt"
MINDLIB = f"{ADOPT}/mindlib"
QUANT_FIX = (
    "pass every input of QuantAct.construct(self, x, scale=1.0) by position, in order, or derive "
    "QuantAct from kwcell.KwCell with e.g. bprop(self, x, scale=1.0, *, out, dout)"
)
STE_FIX = (
    "pass every input of Ste.construct(self, x, limit=1.0) by position, in order, or derive Ste from "
    "kwcell.KwCell with e.g. bprop(self, x, limit=1.0, *, out, dout)"
)
POSITIONAL = "an nn.Cell whose bprop MindSpore calls by position"
KEYWORD = (
    "its bprop receives the inputs in call order, not by name (a wrong gradient when that order "
    "differs), and a graph may refuse the keywords"
)
MODELS = [
    f"{MINDLIB}/models.py:21: KW105: Block.construct calls self.act (QuantAct, {POSITIONAL}) with keyword "
    f"argument(s) 'scale': {KEYWORD}; {QUANT_FIX}",
    f"{MINDLIB}/models.py:23: KW105: Block.construct calls self.clip (Ste, {POSITIONAL}) without 'limit', "
    "leaving the default(s) to construct: GRAPH_MODE then fails to compile the gradient (bprop takes 2 "
    f"inputs); {STE_FIX}",
    f"{MINDLIB}/models.py:27: KW105: ste calls a temporary Ste() (Ste, {POSITIONAL}) with keyword "
    f"argument(s) 'limit': {KEYWORD}; {STE_FIX}",
    f"{MINDLIB}/models.py:33: KW101: Scaled.construct: parameter(s) 'w' have defaults and the cell has a "
    "bprop: a call that omits them fails to compile in GRAPH_MODE, and keyword calls reach bprop in call "
    "order; " + FIX.format("Scaled", "bprop(self, x, w=1.0, *, out, dout)"),
    # one gradient, said once, at its own line
    f"{MINDLIB}/models.py:37: KW007: Scaled.bprop: returns 1 gradient, expected 2, one per construct "
    "parameter in this order: (x, w); return a dict keyed by parameter name to give only some of them; "
    + FIX.format("Scaled", "bprop(self, x, w=1.0, *, out, dout)"),
    # construct's first parameter as written
    f"{MINDLIB}/models.py:44: KW104: Gate.bprop takes 3 positional parameter(s) (x, out, dout) but "
    "MindSpore passes 4: the inputs of construct(ctx, x, w), then out, dout; "
    + FIX.format("Gate", "bprop(self, x, w, *, out, dout)"),
    f"{MINDLIB}/models.py:45: KW007: Gate.bprop: returns 1 gradient, expected 2, one per construct "
    "parameter in this order: (x, w); return a dict keyed by parameter name to give only some of them; "
    + FIX.format("Gate", "bprop(self, x, w, *, out, dout)"),
]
# MindSpore's grad_output is dout: the count is what is wrong, as on nn.Cell (KW104), not a name
SCALE = (
    f"{MINDLIB}/kwcells.py:10: KW104: Scale.bprop: takes 3 positional parameter(s) (x, out, grad_output) "
    "but MindSpore passes 4: the inputs of construct(self, x, scale), then out, dout; expected e.g. "
    "bprop(self, x, scale, *, out, dout) (MindSpore's bprop form: the gradient of Scale will raise this "
    "error)"
)
LAYERS = [
    f"{MINDLIB}/layers.py:17: KW101: QuantAct.construct: parameter(s) 'scale' have defaults and the cell has "
    "a bprop: a call that omits them fails to compile in GRAPH_MODE, and keyword calls reach bprop in call "
    "order; " + FIX.format("QuantAct", "bprop(self, x, scale=1.0, *, out, dout)"),
    f"{MINDLIB}/layers.py:25: KW101: Ste.construct: parameter(s) 'limit' have defaults and the cell has a "
    "bprop: a call that omits them fails to compile in GRAPH_MODE, and keyword calls reach bprop in call "
    "order; " + FIX.format("Ste", "bprop(self, x, limit=1.0, *, out, dout)"),
]
# string.py is itself, not the standard library's string
STRING = (
    f"{ADOPT}/string.py:11: KW101: Padding.construct: parameter(s) 'pad' have defaults and the cell has a "
    "bprop: a call that omits them fails to compile in GRAPH_MODE, and keyword calls reach bprop in call "
    "order; " + FIX.format("Padding", "bprop(self, x, pad=0.0, *, out, dout)")
)


def test_a_library_tree_json_report_is_json_though_the_library_prints() -> None:
    """The tree has no __init__.py; its package prints at import (print and a write to fd 1);
    a namespace directory inside the package uses relative imports; a file is named string.py;
    tools/ holds scripts that run when imported (one skipped by the prefilter, one excluded)."""
    result = run(ADOPT, "--exclude", "tools/grad*", "--format", "json")
    report: dict[str, Any] = json.loads(result.stdout)  # the library's output went to stderr
    assert "mindlib: registering models" in result.stderr
    assert "mindlib: native backend loaded" in result.stderr
    assert "was run" not in result.stderr  # neither script ran
    lines = [f"{p['file']}:{p['line']}: {p['code']}: {p['message']}" for p in report["problems"]]
    assert lines == [SCALE, *LAYERS, *MODELS, STRING]
    assert {p["class"] for p in report["problems"]} >= {"string.Padding", "mindlib.layers.Ste"}
    # Scale, QuantAct, Ste, Scaled, Gate, Padding and comfy/ops.py's Doubler (a relative import
    # in a namespace directory, no KW901)
    assert report["summary"] == "kwcell check: 11 problems (7 cells checked in 5 modules)"
    # tools/convert.py, mindlib/__init__.py and comfy/util.py mention no bprop
    assert report["files_skipped"] == 3
    assert result.returncode == 1


def test_a_script_named_on_the_command_line_is_imported_and_its_exit_reported() -> None:
    result = run(f"{ADOPT}/tools/convert.py")
    assert result.stdout.splitlines() == [
        f"{ADOPT}/tools/convert.py:3: KW901: cannot import convert: SystemExit: tools/convert.py was run",
        "kwcell check: 1 problem (0 bprop cells found in 0 modules)",
    ]


def test_a_module_reports_its_own_cells_and_the_calls_of_imported_ones() -> None:
    """models.py imports layers.py's cells: their KW101 is layers.py's, the calls are models.py's."""
    result = run(f"{MINDLIB}/models.py")
    assert result.stdout.splitlines() == [*MODELS, "kwcell check: 7 problems (2 cells checked in 1 module)"]


def test_a_file_without_cells_says_none_were_found(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("SCALE = 2\n", encoding="utf-8")
    result = run(str(tmp_path / "plain.py"))
    assert result.stdout.splitlines() == ["kwcell check: no problems (0 bprop cells found in 1 module)"]
    assert result.returncode == 0


def test_the_kwcell_class_statement_warns_the_same_count_message() -> None:
    """The rule is the class statement's: the import-time warning after migration says the same."""
    import warnings

    from kwcell import KwCellWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from tests.fixtures.adopt.mindlib import kwcells  # noqa: F401

    messages = [str(w.message) for w in caught if issubclass(w.category, KwCellWarning)]
    assert messages == [SCALE.split(": KW104: ", 1)[1]]


STATE_MODULE = """\
from mindspore import nn, ops

from kwcell import KwCell


class PlainNorm(nn.Cell):
    def construct(self, x):
        self.norm_x = x * ops.rsqrt((x * x).mean(-1, keep_dims=True) + 1e-6)
        return self.norm_x

    def bprop(self, x, out, dout):
        return (dout * self.norm_x,)


class KwNorm(KwCell):
    def __init__(self):
        super().__init__()
        self.norm_x = None

    def construct(self, x):
        self.norm_x = x * ops.rsqrt((x * x).mean(-1, keep_dims=True) + 1e-6)
        return self.norm_x

    def bprop(self, x, out, dout):
        return (dout * self.norm_x,)
"""


def test_state_stored_on_self_for_bprop_is_kw009(tmp_path: Path) -> None:
    """A plain cell at bprop's read (its line said once), a KwCell at its class line (the class
    statement's warning, as it is)."""
    path = tmp_path / "norms.py"
    path.write_text(STATE_MODULE, encoding="utf-8")
    result = run(str(path))
    tail = (
        "that works in PYNATIVE only. GRAPH_MODE and @ms.jit compile bprop apart from construct, and "
        "construct's assignment never reaches the cell, so "
    )
    fix = (
        ". Return it from construct as part of out (e.g. `return y, norm_x`; bprop gets it as out[1]), or "
        "recompute it in bprop from the inputs"
    )
    assert result.stdout.splitlines() == [
        f"{path}:12: KW009: PlainNorm.bprop reads self.norm_x, which PlainNorm.construct sets (line 8): "
        + tail
        + "MindSpore fails with AttributeError (no attribute 'norm_x')"
        + fix,
        f"{path}:15: KW009: KwNorm.bprop reads self.norm_x (line 25), which KwNorm.construct sets (line 21): "
        + tail
        + "bprop reads the value __init__ gives it (line 18), never construct's: a wrong gradient without an "
        "error (or an error, if that value cannot be computed with, such as None)" + fix,
        "kwcell check: 2 problems (2 cells checked in 1 module)",
    ], result.stderr[-2000:]
    assert result.returncode == 1


# -- a subpackage that raises something other than ImportError (tests/fixtures/lazylib) ------


def test_subpackage_raising_runtime_error_is_reported_and_the_walk_goes_on() -> None:
    """mindone 0.5.0 checked by its dotted name, where ``mindone.diffusers.loaders.peft`` cannot
    import: diffusers' lazy module turns that into a RuntimeError, which ended the check with a
    traceback (pkgutil.walk_packages re-imported the package and let the error out). In process:
    the default run checks it."""
    from kwcell._check import check

    lazy = "tests/fixtures/lazylib"
    report = check(["tests.fixtures.lazylib"])
    found = [(p.file, p.line, p.code, p.message) for p in report.problems]
    assert found == [
        (
            f"{lazy}/loaders/__init__.py",
            17,  # the raise in the lazy module's __getattr__
            "KW901",
            "cannot import tests.fixtures.lazylib.models: RuntimeError: Failed to import "
            "tests.fixtures.lazylib.loaders.peft because of the following error (look up to see its "
            "traceback):",
        ),
        (
            f"{lazy}/loaders/peft.py",
            3,
            "KW901",
            "cannot import tests.fixtures.lazylib.loaders.peft: ModuleNotFoundError: No module named "
            "'_kwcell_fixture_optional_dependency'",
        ),
        (
            f"{lazy}/quant.py",
            11,
            "KW101",
            "Quant.construct: parameter(s) 'scale' have defaults and the cell has a bprop: a call that "
            "omits them fails to compile in GRAPH_MODE, and keyword calls reach bprop in call order; "
            + FIX.format("Quant", "bprop(self, x, scale=1.0, *, out, dout)"),
        ),
    ]
    # Quant only (models/unet.py's Floor is in the package that failed); the package, loaders, quant
    assert (report.cells, report.modules) == (1, 3)
