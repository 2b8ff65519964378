"""pyproject.toml declares mindspore>=2.8: run the core matrix on the oldest declared version.

This creates a virtualenv with that MindSpore from the package registry (CI reaches PyPI),
installs kwcell into it without dependencies, and runs the core tests there.
"""

from __future__ import annotations

import os
import re
import subprocess
import venv
from pathlib import Path

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


def test_core_matrix_on_oldest_declared_mindspore(tmp_path: Path) -> None:
    version = _oldest_declared()
    env_dir = tmp_path / f"mindspore-{version}"
    venv.create(env_dir, with_pip=True)
    python = str(env_dir / "bin" / "python")

    def run(*args: str, timeout: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [python, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False
        )

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
    assert run("-m", "pip", "install", "-q", "--no-deps", str(ROOT), timeout=600).returncode == 0
    check = run("-c", "import mindspore; print(mindspore.__version__)", timeout=300)
    assert check.stdout.strip() == version, check.stderr[-2000:]
    result = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CORE_TESTS],
        capture_output=True,
        text=True,
        timeout=1200,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert result.returncode == 0, result.stdout[-5000:]
    assert re.search(r"\d+ passed", result.stdout)
