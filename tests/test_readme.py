"""The README as a newcomer reads it: the two commands at the top, the supported Pythons, and
every Python block, run as pasted; the README's blocks and the static-checking guide's are
checked by mypy with the kwcell plugin (tests/test_docs.py runs every docs block)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import kept_dir, link

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
STUBS = ROOT / "stubs" / "mindspore-stubs"
TYPING_GUIDE = (ROOT / "docs" / "guides" / "static-checking.md").read_text(encoding="utf-8")


def _readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", README, re.DOTALL)[:2]


def _python_blocks(text: str = README) -> list[str]:
    return re.findall(r"```python\n(.+?)\n```", text, re.DOTALL)


def test_readme_starts_with_example_and_test_commands() -> None:
    example, tests = _readme_commands()
    assert example.startswith("python3.11 -m venv .venv") and example.endswith("examples/blog_kwargs.py")
    assert tests.startswith("python3.11 -m venv .venv") and tests.endswith("-m pytest -n 2")


def test_ci_starts_with_exactly_the_readme_test_command_then_the_slow_tests() -> None:
    _, tests = _readme_commands()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line for line in ci if line and not line.startswith(("#", "set ", "cd ", "#!"))]
    assert commands[0] == tests
    assert ".venv/bin/python -m pytest -m slow --durations=10" in commands[1:]
    assert "set -euo pipefail" in ci


def test_supported_pythons_are_stated_first_and_match_the_metadata() -> None:
    """The top of the README names the Pythons that pyproject.toml declares."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'requires-python = ">=3.10,<3.13"' in pyproject
    classifiers = re.findall(r'"Programming Language :: Python :: (3\.\d+)"', pyproject)
    assert classifiers == ["3.10", "3.11", "3.12"]
    top = README.split("```", 1)[0]
    assert "Supported Pythons: **CPython 3.10, 3.11 and 3.12**" in top


def test_every_python_block_runs_as_pasted(tmp_path: Path) -> None:
    """Each block is a whole program: it runs alone in a fresh interpreter (blocks in parallel)."""
    blocks = _python_blocks()
    assert len(blocks) >= 1
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GLOG_v": "3"}
    runs = []
    for i, block in enumerate(blocks):
        script = tmp_path / f"readme_{i}.py"
        script.write_text(block + "\n", encoding="utf-8")
        runs.append(
            subprocess.Popen(
                [sys.executable, str(script)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=tmp_path,
            )
        )
    for block, run in zip(blocks, runs, strict=True):
        _, stderr = run.communicate(timeout=300)
        assert run.returncode == 0, f"README block failed:\n{block}\n{stderr[-2000:]}"


def test_python_blocks_type_check_with_the_plugin(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """mypy with the kwcell plugin on every block of the README and of the static-checking
    guide: the only errors are the ones the page shows, in a ``# error: ...`` comment on the
    line mypy flags or on a comment line of its own just above it. The stub link and mypy's
    cache are kept between runs (``kept_dir``)."""
    kept = kept_dir(request, "kwcell-mypy-readme", tmp_path)
    link(kept / "stubs" / "mindspore", STUBS)
    (tmp_path / "mypy.ini").write_text("[mypy]\nplugins = kwcell.mypy\n", encoding="utf-8")
    expected: set[str] = set()
    files = []
    for i, block in enumerate([*_python_blocks(), *_python_blocks(TYPING_GUIDE)]):
        script = tmp_path / f"block_{i}.py"
        script.write_text(block + "\n", encoding="utf-8")
        files.append(script.name)
        for n, line in enumerate(block.splitlines(), start=1):
            if line.lstrip().startswith("# error: "):  # a comment line: the error of the next line
                expected.add(f"{script.name}:{n + 1}: error: {line.split('# error: ', 1)[1]}")
            elif "  # error: " in line:
                expected.add(f"{script.name}:{n}: error: {line.split('  # error: ', 1)[1]}")
    assert expected, "the static-checking guide shows at least one error"
    result = subprocess.run(
        [
            *(sys.executable, "-m", "mypy", "--config-file", str(tmp_path / "mypy.ini")),
            *("--cache-dir", str(kept / "cache"), "--hide-error-context", "--no-pretty", *files),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(kept / "stubs"), "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    errors = {line for line in result.stdout.splitlines() if ": error: " in line}
    assert errors == expected, result.stdout + result.stderr


def test_migrate_guide_shows_what_the_command_prints(tmp_path: Path) -> None:
    """The "kwcell migrate" section of the adopting guide: its Python block, migrated with
    --diff, gives the diff shown, and without --diff the report shown; the rewritten file
    still runs."""
    guide = (ROOT / "docs" / "guides" / "adopting.md").read_text(encoding="utf-8")
    section = guide.split("## `kwcell migrate`", 1)[1].split("\n## ", 1)[0]
    (before,) = re.findall(r"```python\n(.+?\n)```", section, re.DOTALL)
    (diff,) = re.findall(r"```diff\n(.+?\n)```", section, re.DOTALL)
    (report,) = re.findall(r"```text\n(.+?\n)```", section, re.DOTALL)
    (tmp_path / "layers.py").write_text(before, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GLOG_v": "3"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
            check=False,
        )

    shown = run("-m", "kwcell", "migrate", "--diff", "layers.py")
    assert (shown.returncode, shown.stdout) == (0, diff), shown.stderr
    assert (tmp_path / "layers.py").read_text(encoding="utf-8") == before
    done = run("-m", "kwcell", "migrate", "layers.py")
    assert (done.returncode, done.stdout) == (0, report), done.stderr
    after = (tmp_path / "layers.py").read_text(encoding="utf-8")
    assert after.startswith(before.split("\n\n\n", 1)[0] + "\nfrom kwcell import KwCell\n")
    runs = [
        subprocess.Popen(
            [sys.executable, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        for args in (["-c", before], ["layers.py"])
    ]
    (out_before, _), (out_after, err_after) = (r.communicate(timeout=300) for r in runs)
    assert runs[1].returncode == 0, err_after
    assert out_after == out_before != ""  # the same gradient
