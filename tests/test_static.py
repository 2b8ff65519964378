"""The repository passes its own static checks: ``ruff check``, ``ruff format --check`` and
``mypy --strict kwcell tests examples`` with the MindSpore stubs visible.

Each runs as a subprocess from the repository root, as a developer or CI would run it; the
tool's output is the assertion message.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import kept_dir, link

REPO = Path(__file__).resolve().parent.parent
STUBS = REPO / "stubs" / "mindspore-stubs"


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, env=env, check=False
    )


def _explain(result: subprocess.CompletedProcess[str]) -> str:
    return f"{' '.join(map(str, result.args))} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"


def test_ruff_check() -> None:
    result = _run(["ruff", "check", "--no-cache", "."])
    assert result.returncode == 0, _explain(result)


def test_ruff_format() -> None:
    result = _run(["ruff", "format", "--check", "--no-cache", "."])
    assert result.returncode == 0, _explain(result)


def test_mypy_strict(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """``mypy --strict`` (the ``[tool.mypy]`` config) on kwcell, tests and examples.

    mypy recognises ``mindspore-stubs`` only inside site-packages; for the checkout, the
    stubs are exposed as ``mindspore`` through a symlink on ``MYPYPATH``. The symlink and
    mypy's cache are kept between runs (tests/conftest.py's ``kept_dir``).
    """
    kept = kept_dir(request, "kwcell-mypy-strict", tmp_path)
    link(kept / "path" / "mindspore", STUBS)
    env = {**os.environ, "MYPYPATH": str(kept / "path")}
    targets = [name for name in ("kwcell", "tests", "examples") if (REPO / name).is_dir()]
    if not targets:
        pytest.fail("nothing to check")
    result = _run(["mypy", "--strict", "--cache-dir", str(kept / "cache"), *targets], env=env)
    assert result.returncode == 0, _explain(result)
