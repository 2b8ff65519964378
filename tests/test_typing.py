"""Static checking of kwcell user code: typed call sites and the ``kwcell.mypy`` plugin.

Each file in ``tests/typing_cases/`` marks every line mypy must flag with ``# E: <fragment>``
(attrs' ``test_mypy.yml`` / typeshed's ``test_cases`` style). Both directions are asserted: each
marked line is reported with its fragment, and no unmarked line is reported at all. One
in-process mypy run (``mypy.api.run``) covers all case files.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path

import pytest
from mypy import api

REPO = Path(__file__).resolve().parent.parent
CASES = Path(__file__).resolve().parent / "typing_cases"
STUBS = REPO / "stubs" / "mindspore-stubs"
_MARK = re.compile(r"#\s*E:\s*(?P<fragment>.+?)\s*$")
_REPORT = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): (?P<severity>error|note): (?P<message>.*)$")

Reports = dict[tuple[str, int], list[str]]


def write_mypy_config(directory: Path) -> Path:
    """A user's mypy config: ``--strict`` with the kwcell plugin and the MindSpore stubs visible.

    mypy finds ``<name>-stubs`` packages only in site-packages, so a local run exposes
    ``stubs/mindspore-stubs`` as ``mindspore`` through a symlink. kwcell and the stubs are
    checked here as an installed package would be: their own errors are not the user's.
    """
    stub_root = directory / "stub-root"
    stub_root.mkdir(exist_ok=True)
    link = stub_root / "mindspore"
    if not link.exists():
        link.symlink_to(STUBS, target_is_directory=True)
    config = directory / "mypy.ini"
    config.write_text(
        "[mypy]\n"
        "strict = True\n"
        "plugins = kwcell.mypy\n"
        f"mypy_path = {stub_root}{os.pathsep}{REPO}\n"
        "[mypy-kwcell.*]\nignore_errors = True\n"
        "[mypy-mindspore.*]\nignore_errors = True\n",
        encoding="utf-8",
    )
    return config


def expected_marks(path: Path) -> dict[int, str]:
    marks: dict[int, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = _MARK.search(line)
        if match:
            marks[number] = match["fragment"]
    return marks


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Reports:
    """``(case file name, line) -> messages`` from one mypy run over every case file."""
    directory = tmp_path_factory.mktemp("mypy")
    config = write_mypy_config(directory)
    cache = request.config.cache.mkdir("kwcell-mypy") if request.config.cache else directory / "cache"
    files = sorted(str(p) for p in CASES.glob("*.py"))
    stdout, stderr, status = api.run(
        ["--config-file", str(config), "--cache-dir", str(cache), "--no-error-summary", *files]
    )
    assert status in (0, 1), f"mypy crashed (exit {status}):\n{stdout}\n{stderr}"
    found: Reports = defaultdict(list)
    for line in stdout.splitlines():
        match = _REPORT.match(line)
        assert match, f"unexpected mypy output line: {line!r}\n{stdout}\n{stderr}"
        found[(Path(match["path"]).name, int(match["line"]))].append(match["message"])
    return dict(found)


def _lines_of(reports: Reports, name: str) -> dict[int, list[str]]:
    return {line: messages for (file, line), messages in reports.items() if file == name}


def test_clean_module_passes_strict_mypy_with_the_plugin(reports: Reports) -> None:
    assert _lines_of(reports, "clean.py") == {}


@pytest.mark.parametrize("name", ["calls.py", "bprop_rules.py"])
def test_every_marked_line_is_flagged_with_its_message(reports: Reports, name: str) -> None:
    found = _lines_of(reports, name)
    marks = expected_marks(CASES / name)
    assert marks, f"{name} has no '# E:' marks"
    missing = {
        line: fragment
        for line, fragment in marks.items()
        if not any(fragment in message for message in found.get(line, []))
    }
    assert not missing, f"{name}: expected messages not reported: {missing}\nreported: {found}"


@pytest.mark.parametrize("name", ["calls.py", "bprop_rules.py"])
def test_no_unmarked_line_is_flagged(reports: Reports, name: str) -> None:
    found = _lines_of(reports, name)
    marks = expected_marks(CASES / name)
    unexpected = {line: messages for line, messages in found.items() if line not in marks}
    assert not unexpected, f"{name}: unexpected mypy reports: {unexpected}"


def test_plugin_errors_carry_their_own_error_code(reports: Reports) -> None:
    plugin_lines = [
        message for (file, _), messages in reports.items() if file == "bprop_rules.py" for message in messages
    ]
    assert plugin_lines
    assert all(message.endswith("[kwcell-bprop]") for message in plugin_lines if "override" not in message)


def test_plugin_does_not_import_mindspore() -> None:
    """The plugin runs inside mypy: importing it must not import MindSpore (seconds per run)."""
    import subprocess
    import sys

    code = "import sys, kwcell.mypy; print('mindspore' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
