"""The README's first two commands are the ones a newcomer pastes; CI runs the second."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text, re.DOTALL)[:2]


def test_readme_starts_with_example_and_test_commands() -> None:
    example, tests = _readme_commands()
    assert example.startswith("python3.11 -m venv .venv") and example.endswith("examples/blog_kwargs.py")
    assert tests.startswith("python3.11 -m venv .venv") and tests.endswith("-m pytest")


def test_ci_runs_exactly_the_readme_test_command() -> None:
    _, tests = _readme_commands()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == tests


def _complete_python_blocks() -> list[str]:
    """README Python blocks that are whole programs (they start with an import)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.+?)\n```", text, re.DOTALL)
    return [b for b in blocks if b.startswith(("import ", "from "))]


def test_readme_python_examples_run(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    blocks = _complete_python_blocks()
    assert len(blocks) >= 2
    for i, block in enumerate(blocks):
        script = tmp_path / f"readme_{i}.py"
        script.write_text(block + "\n", encoding="utf-8")
        run = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=300,
            check=False,
        )
        assert run.returncode == 0, f"README block {i} failed:\n{block}\n{run.stderr[-2000:]}"
