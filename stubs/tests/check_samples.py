"""Type-check the sample modules against the MindSpore stubs with ``mypy --strict``.

``sample_usage.py`` must produce no error; every line of ``sample_errors.py`` marked
``# E: <fragment>`` must produce an error whose message contains the fragment, and no other
line may produce one. Run as a script, or call :func:`check_samples` from a test.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from mypy import api

HERE = Path(__file__).resolve().parent
STUB_PACKAGE = HERE.parent / "mindspore-stubs"
CLEAN_SAMPLE = HERE / "sample_usage.py"
ERROR_SAMPLE = HERE / "sample_errors.py"

_MARKER = re.compile(r"#\s*E:\s*(?P<fragment>.+?)\s*$")
_ERROR_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): error: (?P<message>.*)$")


def expected_errors(path: Path) -> dict[int, str]:
    """Map line numbers of ``path`` to the fragment of their ``# E:`` marker."""
    expected: dict[int, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = _MARKER.search(line)
        if match is not None:
            expected[number] = match.group("fragment")
    return expected


def run_mypy(*paths: Path) -> dict[str, dict[int, list[str]]]:
    """Run ``mypy --strict`` on ``paths``; return error messages by file name and line."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # mypy finds a `mindspore-stubs` package only in site-packages; for a local run the
        # stubs are exposed under the import name `mindspore` through a symlink on mypy_path.
        (root / "mindspore").symlink_to(STUB_PACKAGE, target_is_directory=True)
        config = root / "mypy.ini"
        config.write_text(f"[mypy]\nmypy_path = {root}\ncache_dir = {root / 'cache'}\n", encoding="utf-8")
        stdout, stderr, status = api.run(
            [
                "--config-file",
                str(config),
                "--strict",
                "--no-pretty",
                "--no-error-summary",
                "--hide-error-context",
                *map(str, paths),
            ]
        )
    if status not in (0, 1) or stderr.strip():
        msg = f"mypy failed to run (exit status {status}):\n{stderr}{stdout}"
        raise RuntimeError(msg)
    errors: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for line in stdout.splitlines():
        match = _ERROR_LINE.match(line)
        if match is not None:
            errors[Path(match.group("path")).name][int(match.group("line"))].append(match.group("message"))
    return errors


def check_samples() -> None:
    """Raise ``AssertionError`` listing every way the mypy output differs from the samples."""
    errors = run_mypy(CLEAN_SAMPLE, ERROR_SAMPLE)
    problems: list[str] = []
    for line, messages in sorted(errors[CLEAN_SAMPLE.name].items()):
        problems.extend(f"{CLEAN_SAMPLE.name}:{line}: unexpected error: {m}" for m in messages)
    reported = errors[ERROR_SAMPLE.name]
    expected = expected_errors(ERROR_SAMPLE)
    for line, fragment in sorted(expected.items()):
        messages = reported.get(line, [])
        if not any(fragment in message for message in messages):
            got = "; ".join(messages) or "no error"
            problems.append(f"{ERROR_SAMPLE.name}:{line}: expected error containing {fragment!r}, got: {got}")
    for line, messages in sorted(reported.items()):
        if line not in expected:
            problems.extend(f"{ERROR_SAMPLE.name}:{line}: unexpected error: {m}" for m in messages)
    if problems:
        msg = "mypy output does not match the samples:\n" + "\n".join(problems)
        raise AssertionError(msg)


if __name__ == "__main__":
    try:
        check_samples()
    except AssertionError as error:
        sys.exit(str(error))
    print("check_samples: OK")
