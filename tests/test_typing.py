"""Static checking of kwcell and MindSpore user code, in mypy and in basedpyright (pyright).

Each file in ``tests/typing_cases/`` marks the lines a checker must flag (attrs'
``test_mypy.yml`` / typeshed's ``test_cases`` style):

- ``# E: <fragment>``: both checkers report an error there; mypy's message contains the
  fragment (pyright words its messages differently, so any pyright error counts);
- ``# E[mypy]: <fragment>`` / ``# E[pyright]: <fragment>``: only that checker, with the
  fragment (the kwcell mypy plugin's rules);
- ``# N[mypy]: <fragment>`` / ``# N[pyright]: <fragment>``: a note (mypy) or information
  (pyright) with the fragment: ``reveal_type`` output, and the plugin's notes for what the
  class statement warns about.

Both directions are asserted: each marked error and note is reported, and no unmarked line
gets an error. One mypy run (``mypy --strict`` with the kwcell plugin, in process) and one basedpyright
run (its default rules, no plugin) cover every case file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest
from mypy import api

from tests.conftest import kept_dir

REPO = Path(__file__).resolve().parent.parent
CASES = Path(__file__).resolve().parent / "typing_cases"
STUBS = REPO / "stubs" / "mindspore-stubs"
CHECKERS = ("mypy", "pyright")
_MARK = re.compile(
    r"#\s*(?P<kind>[EN])(?:\[(?P<checker>mypy|pyright)\])?:\s*(?P<fragment>.+?)\s*(?=#\s*[EN][\[:]|$)"
)
_REPORT = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): (?P<severity>error|note): (?P<message>.*)$")


@dataclass(frozen=True)
class Report:
    severity: str  # "error", or "note"/"information" (reveal_type)
    message: str


Reports = dict[tuple[str, int], list[Report]]


def stub_root(directory: Path) -> Path:
    """A directory where the MindSpore stubs are importable as ``mindspore``.

    mypy finds ``<name>-stubs`` packages only in site-packages and pyright only in
    site-packages or its ``stubPath``; a checkout exposes them through a symlink.
    """
    root = directory / "stub-root"
    root.mkdir(exist_ok=True)
    link = root / "mindspore"
    if not link.exists():
        link.symlink_to(STUBS, target_is_directory=True)
    return root


def write_mypy_config(directory: Path) -> Path:
    """A user's mypy config: ``--strict`` with the kwcell plugin and the MindSpore stubs visible.

    kwcell and the stubs are checked here as an installed package would be: their own errors
    are not the user's.
    """
    config = directory / "mypy.ini"
    config.write_text(
        "[mypy]\n"
        "strict = True\n"
        "plugins = kwcell.mypy\n"
        f"mypy_path = {stub_root(directory)}{os.pathsep}{REPO}\n"
        "[mypy-kwcell.*]\nignore_errors = True\n"
        "[mypy-mindspore.*]\nignore_errors = True\n",
        encoding="utf-8",
    )
    return config


def write_pyright_config(directory: Path, files: list[Path]) -> Path:
    """basedpyright with its default rules; only the stub and kwcell locations are configured."""
    config = directory / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {
                "include": [str(f) for f in files],
                "stubPath": str(stub_root(directory)),
                "extraPaths": [str(REPO)],
                "pythonVersion": "3.11",
            }
        ),
        encoding="utf-8",
    )
    return config


def expected_marks(path: Path, checker: str, kind: str = "E") -> dict[int, list[str]]:
    """``line -> fragments`` of the errors (``kind`` "E") or notes ("N") ``checker`` must report."""
    marks: dict[int, list[str]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        for match in _MARK.finditer(line):
            if match["kind"] == kind and match["checker"] in (None, checker):
                fragment = match["fragment"] if match["checker"] or checker == "mypy" else ""
                marks.setdefault(number, []).append(fragment)
    return marks


def run_mypy(directory: Path, cache: Path, files: list[Path]) -> Reports:
    config = write_mypy_config(directory)
    stdout, stderr, status = api.run(
        ["--config-file", str(config), "--cache-dir", str(cache), "--no-error-summary", *map(str, files)]
    )
    assert status in (0, 1), f"mypy crashed (exit {status}):\n{stdout}\n{stderr}"
    found: Reports = defaultdict(list)
    for line in stdout.splitlines():
        match = _REPORT.match(line)
        assert match, f"unexpected mypy output line: {line!r}\n{stdout}\n{stderr}"
        found[(Path(match["path"]).name, int(match["line"]))].append(
            Report(match["severity"], match["message"])
        )
    return dict(found)


def run_pyright(directory: Path, files: list[Path]) -> Reports:
    config = write_pyright_config(directory, files)
    executable = Path(sys.executable).parent / "basedpyright"
    result = subprocess.run(
        [str(executable), "--outputjson", "-p", str(config), "--pythonpath", sys.executable],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode in (0, 1), f"basedpyright failed:\n{result.stdout}\n{result.stderr}"
    found: Reports = defaultdict(list)
    for diagnostic in json.loads(result.stdout)["generalDiagnostics"]:
        if diagnostic["severity"] in ("error", "information"):
            key = (Path(diagnostic["file"]).name, diagnostic["range"]["start"]["line"] + 1)
            found[key].append(Report(diagnostic["severity"], diagnostic["message"]))
    return dict(found)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> dict[str, Reports]:
    """Each checker's ``(case file name, line) -> reports`` from one run over every case file."""
    directory = tmp_path_factory.mktemp("typing")
    cache = kept_dir(request, "kwcell-mypy", directory / "cache")
    files = sorted(CASES.glob("*.py"))
    return {"mypy": run_mypy(directory, cache, files), "pyright": run_pyright(directory, files)}


CASE_FILES = sorted(p.name for p in CASES.glob("*.py"))
CLEAN_FILES = [
    name for name in CASE_FILES if not any(expected_marks(CASES / name, c, k) for c in CHECKERS for k in "EN")
]
MARKED_FILES = [name for name in CASE_FILES if name not in CLEAN_FILES]


def _lines_of(reports: Reports, name: str) -> dict[int, list[Report]]:
    return {line: found for (file, line), found in reports.items() if file == name}


def _errors(lines: dict[int, list[Report]]) -> dict[int, list[str]]:
    errors = {line: [r.message for r in found if r.severity == "error"] for line, found in lines.items()}
    return {line: messages for line, messages in errors.items() if messages}


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("name", CLEAN_FILES)
def test_clean_module_has_no_error(reports: dict[str, Reports], checker: str, name: str) -> None:
    found = _errors(_lines_of(reports[checker], name))
    assert found == {}, f"{checker} on {name}: {found}"


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("name", MARKED_FILES)
def test_every_marked_line_is_flagged(reports: dict[str, Reports], checker: str, name: str) -> None:
    found = _lines_of(reports[checker], name)
    marks = expected_marks(CASES / name, checker)
    missing = {
        line: fragments
        for line, fragments in marks.items()
        for fragment in fragments
        if not any(fragment in r.message and (fragment or r.severity == "error") for r in found.get(line, []))
    }
    assert not missing, f"{checker} on {name}: expected reports missing: {missing}\nreported: {found}"


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("name", MARKED_FILES)
def test_no_unmarked_line_is_flagged(reports: dict[str, Reports], checker: str, name: str) -> None:
    found = _errors(_lines_of(reports[checker], name))
    marks = expected_marks(CASES / name, checker)
    unexpected = {line: errors for line, errors in found.items() if line not in marks}
    assert not unexpected, f"{checker} on {name}: unexpected reports: {unexpected}"


def test_plugin_errors_carry_their_own_error_code(reports: dict[str, Reports]) -> None:
    plugin_lines = [
        r.message
        for (file, _), found in reports["mypy"].items()
        if file == "bprop_rules.py"
        for r in found
        if r.severity == "error"
    ]
    assert plugin_lines
    assert all(message.endswith("[kwcell-bprop]") for message in plugin_lines if "override" not in message)


def test_plugin_does_not_import_mindspore() -> None:
    """The plugin runs inside mypy: importing it must not import MindSpore (seconds per run)."""
    code = "import sys, kwcell.mypy; print('mindspore' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("name", MARKED_FILES)
def test_every_marked_note_is_reported(reports: dict[str, Reports], checker: str, name: str) -> None:
    found = _lines_of(reports[checker], name)
    marks = expected_marks(CASES / name, checker, "N")
    missing = {
        line: fragments
        for line, fragments in marks.items()
        for fragment in fragments
        if not any(fragment in r.message and r.severity != "error" for r in found.get(line, []))
    }
    assert not missing, f"{checker} on {name}: expected notes missing: {missing}\nreported: {found}"
