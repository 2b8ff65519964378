"""Run documentation code blocks, each as ``python FILE`` would, in one interpreter.

``python run_doc_blocks.py JOBS.json RESULTS.json``: JOBS is a list of
``{"file", "where", "raised": [[name, message], ...], "stdout": str | null}``. Each file runs as
``__main__`` from its own directory (which is also ``sys.path[0]``), in a fresh namespace, in
PYNATIVE mode with the default warning filters; MindSpore is imported once for all of them,
which is what keeps the docs' checks fast. RESULTS gets one ``{"where", "error"}`` per block
(``error`` is null when the block did what its page says). tests/test_docs.py also runs each
block in a fresh interpreter of its own (marked slow), so no block relies on another's state.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import runpy
import sys
import time
import traceback
import warnings
from typing import Any

import mindspore as ms

COUNTER = re.compile(r"#\d+>")
# per-class attribute names in generated code: _kwcell_core_3, _kwcell_bprop_12
TOKEN = re.compile(r"\b(_kwcell_[a-z]+)_\d+\b")


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _matches(expected: str, got: str) -> bool:
    """Equal, or for a message the page cuts short with a final "...", its beginning."""
    got = _collapse(got)
    if got.startswith("'") and expected.endswith(" ..."):  # a graph's error quotes the message
        got = got[1:].replace("' -", " -", 1)
    if expected.endswith(" ..."):
        return got.startswith(expected[:-4])
    return got == expected


def _names(cls: type) -> set[str]:
    return {c.__name__ for c in cls.__mro__}


def _normal(text: str, directory: str = "/path/to") -> str:
    """Output compared line by line without trailing spaces, the counters in kwcell's generated
    names (which depend on what ran before) and the block's own directory (shown as
    ``/path/to``)."""
    text = TOKEN.sub(r"\1_N", COUNTER.sub("#N>", text)).replace(directory + os.sep, "/path/to/")
    lines = [line.rstrip() for line in text.strip("\n").splitlines()]
    return "\n".join(lines)


def run(job: dict[str, Any]) -> str | None:
    """The reason the block did not do what the page says, or None."""
    path = job["file"]
    expected: list[tuple[str, str]] = [tuple(p) for p in job["raised"]]
    ms.set_context(mode=ms.PYNATIVE_MODE)
    out = io.StringIO()
    raised: BaseException | None = None
    cwd, path0 = os.getcwd(), sys.path[0]
    os.chdir(os.path.dirname(path))
    sys.path[0] = os.path.dirname(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(out):
                runpy.run_path(path, run_name="__main__")
        except Exception as exc:  # noqa: BLE001 - the block's own error, compared with the page below
            raised = exc
        finally:
            os.chdir(cwd)
            sys.path[0] = path0
    seen = [(w.category, str(w.message)) for w in caught]
    problems: list[str] = []
    want_errors = [(n, m) for n, m in expected if not n.endswith("Warning")]
    want_warnings = [(n, m) for n, m in expected if n.endswith("Warning")]
    if raised is not None:
        got = (type(raised).__name__, _collapse(str(raised)))
        ok = bool(want_errors) and want_errors[0][0] in _names(type(raised))
        ok = ok and _matches(want_errors[0][1], got[1])
        if not ok:
            tb = "".join(traceback.format_exception(raised))[-3000:]
            problems.append(f"raised {got[0]}: {got[1]}\nexpected: {want_errors or 'no error'}\n{tb}")
    elif want_errors:
        problems.append(f"raised nothing; expected {want_errors[0][0]}: {want_errors[0][1]}")
    for name, message in want_warnings:
        if not any(name in _names(c) and _matches(message, m) for c, m in seen):
            shown = [f"{c.__name__}: {m}" for c, m in seen]
            problems.append(f"did not warn {name}: {message}\nwarnings: {shown}")
    shown_kinds = {n for n, _ in want_warnings}
    for c, m in seen:
        if "KwCellWarning" in _names(c) and "KwCellWarning" not in shown_kinds:
            problems.append(f"warned KwCellWarning the page does not show: {m}")
    printed = _normal(out.getvalue(), os.path.dirname(path))
    if job["stdout"] is not None and raised is None and printed != _normal(job["stdout"]):
        problems.append(f"printed:\n{out.getvalue()}\nthe page shows:\n{job['stdout']}")
    return "\n".join(problems) or None


def main() -> None:
    jobs_file, results_file = sys.argv[1:]
    with open(jobs_file, encoding="utf-8") as f:
        jobs = json.load(f)
    results = []
    for job in jobs:
        start = time.perf_counter()
        error = run(job)
        results.append({"where": job["where"], "error": error, "seconds": time.perf_counter() - start})
    with open(results_file, "w", encoding="utf-8") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
