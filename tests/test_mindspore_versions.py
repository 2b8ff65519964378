"""The core tests on every older MindSpore that pyproject.toml declares: 2.7, 2.8 and 2.9.

The whole suite runs on 2.10 (the development virtualenv). For each older minor version this
creates a virtualenv with that MindSpore from the package registry (CI reaches PyPI), installs
kwcell into it without dependencies, checks with ``pip check`` that kwcell's declared range
admits that MindSpore, runs the core tests there, and measures what the version table of
docs/getting-started.md says differs (tests/scripts/version_probe.py; on 2.10 in the default
run). It needs the network and minutes, so it is marked slow: the default ``pytest`` run skips
it and ``.ci/run`` runs it as a separate step.
With ``KWCELL_CI_CACHE`` set (``.ci/run`` sets it), each virtualenv is kept in that directory
and reused while it still imports a MindSpore of the right series.

For 2.7 pip picks the newest 2.7.x that has a wheel for this Python (2.7.2 today, else an
older one): ``mindspore>=2.7,<2.8``.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.scripts import version_probe

ROOT = Path(__file__).resolve().parent.parent
CORE_TESTS = [
    "tests/test_matrix.py",
    "tests/test_returns.py",
    "tests/test_calls.py",
    "tests/test_definition.py",
    "tests/test_dropin.py",
    "tests/test_library_structures.py",
    "tests/test_weights.py",
]
# Each older minor version pyproject.toml declares, with the requirement pip installs for it.
OLDER = {
    "2.7": "mindspore>=2.7,<2.8",
    "2.8": "mindspore==2.8.0",
    "2.9": "mindspore==2.9.0",
}
NEWEST = "2.10"  # the development virtualenv's; the whole suite runs there
# The version table ("Supported versions").
README = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
PROBE = ROOT / "tests" / "scripts" / "version_probe.py"

# What tests/scripts/version_probe.py measures, per series: the start of each outcome, for
# nn.Cell and for KwCell. The version table says the same in its row for the series.
DEFAULTS = "defaults omitted, PYNATIVE"
SWITCH = "gradient function reused after switching to GRAPH_MODE"
BYTES = "non-UTF-8 bytes argument, backward"
MISSING_OUT = "error: PlainScaled.bprop() missing 2 required positional arguments: 'out' and 'dout'"
NO_TOP_CELL = "error: Failure info [Can not find top cell for backward"
NOT_UTF8 = "error: 'utf-8' codec can't decode byte 0xff"
EXPECTED = {
    "2.7": {DEFAULTS: (MISSING_OUT, "right"), SWITCH: (NO_TOP_CELL, NO_TOP_CELL), BYTES: ("right", "right")},
    "2.8": {DEFAULTS: ("right", "right"), SWITCH: (NO_TOP_CELL, NO_TOP_CELL), BYTES: ("right", "right")},
    "2.9": {DEFAULTS: ("right", "right"), SWITCH: (NO_TOP_CELL, NO_TOP_CELL), BYTES: ("right", "right")},
    "2.10": {DEFAULTS: ("right", "right"), SWITCH: ("right", "right"), BYTES: (NOT_UTF8, NOT_UTF8)},
}
# How the version table says each outcome start (a cell of the row holds it).
IN_README = {
    MISSING_OUT: (
        "error: `bprop() missing 2 required positional arguments: 'out' and 'dout'`; `KwCell`: right"
    ),
    NO_TOP_CELL: "error: `Can not find top cell for backward`",
    NOT_UTF8: "error: `'utf-8' codec can't decode byte 0xff`",
    "right": "right",
}


def _declared_range() -> tuple[str, str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'"mindspore>=([0-9.]+),<([0-9.]+);', text)
    assert match, "pyproject.toml must declare a range for mindspore"
    return match.group(1), match.group(2)


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def test_every_declared_minor_version_is_tested() -> None:
    """The versions this file installs are exactly the declared ones below the newest."""
    low, high = _declared_range()
    declared = [f"2.{m}" for m in range(_minor(low)[1], _minor(high)[1])]
    assert [*OLDER, NEWEST] == declared
    assert importlib.metadata.version("mindspore").startswith(NEWEST + ".")


def _check_outcomes(series: str, measured: dict[str, dict[str, str]]) -> None:
    """The measured outcomes are the expected ones, and the version table's row for the series says so."""
    for name, (plain, kw) in EXPECTED[series].items():
        assert measured[name]["nn.Cell"].startswith(plain), (series, name, measured[name])
        assert measured[name]["KwCell"].startswith(kw), (series, name, measured[name])
    row = re.search(rf"^\| {re.escape(series)}(?:\.\d+)? \|(.+)\|$", README, re.MULTILINE)
    assert row, f"docs/getting-started.md's version table has no row for MindSpore {series}"
    cells = [cell.strip() for cell in row.group(1).split("|")]
    assert len(cells) == len(EXPECTED[series]) + 1  # the last column says what kwcell does
    for cell, (plain, _) in zip(cells, EXPECTED[series].values(), strict=False):
        assert cell.startswith(IN_README[plain]), (series, cell)


def test_newest_mindspore_differs_as_readme_says() -> None:
    _check_outcomes(NEWEST, version_probe.measure())


def _mindspore_version(python: Path) -> str:
    check = subprocess.run(
        [str(python), "-c", "import mindspore; print(mindspore.__version__)"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=False,
    )
    return check.stdout.strip() if check.returncode == 0 else f"none ({check.stderr.strip()[-300:]})"


@pytest.mark.slow
@pytest.mark.parametrize("series", list(OLDER))
def test_core_tests_on_older_mindspore(series: str, tmp_path: Path) -> None:
    cache = os.environ.get("KWCELL_CI_CACHE")
    tag = f"mindspore-{series}-py{sys.version_info.major}.{sys.version_info.minor}"
    env_dir = (Path(cache) if cache else tmp_path) / tag
    python = env_dir / "bin" / "python"

    def run(*args: str, timeout: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False
        )

    if not python.exists() or not _mindspore_version(python).startswith(series + "."):
        shutil.rmtree(env_dir, ignore_errors=True)
        venv.create(env_dir, with_pip=True)
        install = run(
            "-m",
            "pip",
            "install",
            "-q",
            OLDER[series],
            "numpy<2",
            "typing-extensions",
            "pytest",
            timeout=900,
        )
        assert install.returncode == 0, install.stderr[-3000:]
    version = _mindspore_version(python)
    assert version.startswith(series + "."), version
    own = run("-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(ROOT), timeout=600)
    assert own.returncode == 0, own.stderr[-3000:]
    # kwcell's declared requirements admit this MindSpore (pip check names any that do not)
    check = run("-m", "pip", "check", timeout=300)
    assert check.returncode == 0, check.stdout[-3000:]
    result = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *CORE_TESTS],
        capture_output=True,
        text=True,
        timeout=1200,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert result.returncode == 0, f"MindSpore {version}:\n{result.stdout[-5000:]}"
    assert re.search(r"\d+ passed", result.stdout)
    probe = subprocess.run(
        [str(python), str(PROBE)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "GLOG_v": "3"},
        check=False,
    )
    assert probe.returncode == 0, probe.stderr[-3000:]
    report = json.loads(probe.stdout.strip().splitlines()[-1])
    assert report["mindspore"] == version
    _check_outcomes(series, report["outcomes"])
