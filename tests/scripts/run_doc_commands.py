"""Run documentation ``$ kwcell ...`` commands in one interpreter, as the installed command.

``python run_doc_commands.py JOBS.json RESULTS.json``: JOBS is a list of ``[directory, argv]``;
RESULTS gets what each printed (stdout, then stderr). Each command runs from its directory
as ``kwcell`` (the name ``--help`` shows), and the modules it imported from there are
forgotten afterwards, so that the next command imports its own files. MindSpore is imported
once for all of them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys

from kwcell._cli import main as kwcell_main


def run(directory: str, argv: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    cwd, path = os.getcwd(), list(sys.path)
    before = set(sys.modules)
    os.chdir(directory)
    sys.argv[0] = "kwcell"
    try:
        # --help, --version and usage errors exit, as on the command line
        exits = contextlib.suppress(SystemExit)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), exits:
            kwcell_main(argv)
    finally:
        os.chdir(cwd)
        sys.path[:] = path
        for name in set(sys.modules) - before:
            if (getattr(sys.modules[name], "__file__", None) or "").startswith(directory):
                del sys.modules[name]
    return out.getvalue() + err.getvalue()


def main() -> None:
    jobs_file, results_file = sys.argv[1:]
    with open(jobs_file, encoding="utf-8") as f:
        jobs = json.load(f)
    with open(results_file, "w", encoding="utf-8") as f:
        json.dump([run(directory, argv) for directory, argv in jobs], f)


if __name__ == "__main__":
    main()
