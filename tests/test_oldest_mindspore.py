"""pyproject.toml declares mindspore>=2.8: run the core matrix on the oldest declared version.

This creates a virtualenv with that MindSpore from the package registry (CI reaches PyPI),
installs kwcell into it without dependencies, and runs the core tests there. It needs the
network and minutes, so it is marked slow: the default ``pytest`` run skips it and ``.ci/run``
runs it as a separate step. With ``KWCELL_CI_CACHE`` set (``.ci/run`` sets it), the virtualenv
is kept in that directory and reused while it still imports the right MindSpore.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE_TESTS = [
    "tests/test_matrix.py",
    "tests/test_returns.py",
    "tests/test_calls.py",
    "tests/test_definition.py",
    "tests/test_dropin.py",
]


def _oldest_declared() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'"mindspore>=([0-9.]+),', text)
    assert match, "pyproject.toml must declare a lower bound for mindspore"
    version = match.group(1)
    return version if version.count(".") == 2 else version + ".0"


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
def test_core_matrix_on_oldest_declared_mindspore(tmp_path: Path) -> None:
    version = _oldest_declared()
    cache = os.environ.get("KWCELL_CI_CACHE")
    tag = f"mindspore-{version}-py{sys.version_info.major}.{sys.version_info.minor}"
    env_dir = (Path(cache) if cache else tmp_path) / tag
    python = env_dir / "bin" / "python"

    def run(*args: str, timeout: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False
        )

    if not python.exists() or _mindspore_version(python) != version:
        shutil.rmtree(env_dir, ignore_errors=True)
        venv.create(env_dir, with_pip=True)
        install = run(
            "-m",
            "pip",
            "install",
            "-q",
            f"mindspore=={version}",
            "numpy<2",
            "typing-extensions",
            "pytest",
            timeout=900,
        )
        assert install.returncode == 0, install.stderr[-3000:]
    own = run("-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(ROOT), timeout=600)
    assert own.returncode == 0, own.stderr[-3000:]
    assert _mindspore_version(python) == version
    result = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *CORE_TESTS],
        capture_output=True,
        text=True,
        timeout=1200,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert result.returncode == 0, result.stdout[-5000:]
    assert re.search(r"\d+ passed", result.stdout)
