"""The MindSpore stubs: current with the installed MindSpore, true to it, opt-in, and documented.

- ``stubs/mindspore-stubs`` is what ``stubs/generate.py`` makes from ``stubs/handwritten`` and
  the installed MindSpore (``--check``), and ``stubtest`` finds no difference from the runtime;
- the kwcell wheel ships no stubs (installing kwcell changes nothing for code that does not use
  it) and the stub distribution (``stubs/pyproject.toml``) ships all of them;
- The static-checking guide's coverage table is what ``stubs/coverage.py`` prints.

What the stubs report on user code is tested in tests/test_typing.py (ms_program.py: no false
error; ms_bugs.py: every seeded bug caught).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
STUBS = REPO / "stubs"


def _run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, check=False)


def test_committed_stubs_are_what_the_generator_makes() -> None:
    result = _run(sys.executable, str(STUBS / "generate.py"), "--check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_static_checking_guide_quotes_the_coverage_script() -> None:
    result = _run(sys.executable, str(STUBS / "coverage.py"))
    assert result.returncode == 0, result.stderr
    table = [line for line in result.stdout.splitlines() if line.startswith("|")]
    guide = (REPO / "docs" / "guides" / "static-checking.md").read_text(encoding="utf-8")
    assert len(table) > 2
    assert "\n".join(table) in guide, (
        "docs/guides/static-checking.md's stub coverage table differs from stubs/coverage.py:\n"
        + "\n".join(table)
    )


@pytest.mark.slow
def test_stubtest_finds_no_difference_from_the_runtime() -> None:
    result = subprocess.run(
        ["bash", str(STUBS / "run_stubtest.sh")],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHON": sys.executable},
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]


def _wheel(source: Path, out: Path) -> list[str]:
    result = _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source))
    assert result.returncode == 0, result.stderr
    (wheel,) = out.glob("*.whl")
    return zipfile.ZipFile(wheel).namelist()


@pytest.mark.slow
def test_kwcell_wheel_ships_no_stubs_and_the_stub_distribution_all(tmp_path: Path) -> None:
    kwcell_files = _wheel(REPO, tmp_path / "kwcell")
    assert "kwcell/py.typed" in kwcell_files
    assert "kwcell/_typing.pyi" in kwcell_files
    assert not [name for name in kwcell_files if name.startswith("mindspore")]
    stub_files = _wheel(STUBS, tmp_path / "stubs")
    expected = {
        "mindspore-stubs/" + str(p.relative_to(STUBS / "mindspore-stubs"))
        for p in (STUBS / "mindspore-stubs").rglob("*")
        if p.is_file()
    }
    assert expected <= set(stub_files)
