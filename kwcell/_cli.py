"""The command line, ``python -m kwcell`` (also installed as ``kwcell``).

Parsing arguments, ``--help`` and a missing target need no MindSpore: :mod:`kwcell._check`,
which imports it, is loaded only to run a check. The list of codes shown by ``--help`` is the
"Codes" section of that module's docstring (one text for both), read without importing it.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
from collections.abc import Sequence
from importlib import resources
from typing import NoReturn

__all__ = ["main"]

USAGE_ERROR = 2  # argparse's exit status for a bad command line; a missing target is one

_DESCRIPTION = """\
Tools for MindSpore cells with a custom bprop: find the cells whose bprop MindSpore would
call with the wrong values, and KwCell classes whose definition fails."""

_CHECK_DESCRIPTION = """\
Import the given modules and report bprop hazards in their cells: KwCell classes whose
definition fails, and plain nn.Cell classes whose bprop MindSpore would call with the wrong
values. A target is a .py file, a directory (every .py file under it) or a dotted module
name (a package is checked with all its submodules).

Prints one line per problem, FILE:LINE: CODE: MESSAGE, then a summary line.
Exit status: 0 no problems, 1 problems found, 2 bad command line (e.g. a target that does
not exist)."""


def _codes_help() -> str:
    """The "Codes" section of :mod:`kwcell._check`'s docstring, as plain text."""
    source = resources.files("kwcell").joinpath("_check.py").read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source)) or ""
    codes = doc.split("Codes\n-----\n", 1)[-1]
    return "codes:\n" + re.sub(r"``([^`]+)``", r"\1", codes).strip()


def _version() -> str:
    """kwcell's version, read without importing the package's MindSpore parts."""
    from . import __version__

    return __version__


def _looks_like_path(target: str) -> bool:
    return (
        "/" in target
        or os.sep in target
        or target.endswith(".py")
        or not all(part.isidentifier() for part in target.split("."))
    )


def _usage_error(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    parser.exit(USAGE_ERROR, f"{parser.prog}: error: {message}\n")


def _parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    # "kwcell check" when run as the installed command, "python -m kwcell check" otherwise
    prog = "kwcell" if os.path.basename(sys.argv[0]) == "kwcell" else "python -m kwcell"
    parser = argparse.ArgumentParser(
        prog=prog,
        description=_DESCRIPTION,
        epilog=f"Run '{prog} check --help' for what the check reports and the meaning of each code.",
    )
    parser.add_argument("--version", action="version", version=f"kwcell {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    check = commands.add_parser(
        "check",
        help="report bprop hazards in the cells of files, directories or modules",
        description=_CHECK_DESCRIPTION,
        epilog=_codes_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("targets", nargs="+", metavar="PATH_OR_MODULE", help="file, directory or module")
    check.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: text)"
    )
    return parser, check


def _summary(problems: int, checked: int, modules: int) -> str:
    def plural(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    what = plural(problems, "problem") if problems else "no problems"
    return f"kwcell check: {what} ({plural(checked, 'cell')} checked in {plural(modules, 'module')})"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m kwcell`` and the ``kwcell`` command; returns the exit status."""
    parser, check_parser = _parser()
    args = parser.parse_args(argv)
    for target in args.targets:
        if _looks_like_path(target) and not os.path.exists(target):
            _usage_error(check_parser, f"{target}: no such file or directory")

    from ._check import MissingTargetError, check  # imports MindSpore

    try:
        problems, checked, modules = check(args.targets)
    except MissingTargetError as exc:
        _usage_error(check_parser, str(exc))
    summary = _summary(len(problems), checked, modules)
    if args.format == "json":
        report = {
            "problems": [p.as_json() for p in problems],
            "cells_checked": checked,
            "modules_checked": modules,
            "summary": summary,
        }
        print(json.dumps(report, indent=2))
    else:
        for p in problems:
            print(p.text())
        print(summary)
    return 1 if problems else 0
