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
