"""The command line, ``python -m kwcell`` (also installed as ``kwcell``).

Parsing arguments, ``--help`` and a missing target need no MindSpore: :mod:`kwcell._check`,
which imports it, is loaded only to run a check. The list of codes shown by ``--help`` is the
"Codes" section of that module's docstring (one text for both), read without importing it.
``migrate`` (:mod:`kwcell._migrate`) never imports MindSpore; it needs libcst, an optional
dependency (``pip install 'kwcell[migrate]'``).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator, Sequence
from importlib import resources
from typing import NoReturn

__all__ = ["main"]

USAGE_ERROR = 2  # argparse's exit status for a bad command line; a missing target is one

_DESCRIPTION = """\
Tools for MindSpore cells with a custom bprop: find the cells whose bprop MindSpore would
call with the wrong values, and KwCell classes whose definition fails."""

_CHECK_DESCRIPTION = """\
Import the given modules and report bprop hazards in their cells: KwCell classes (and
classes decorated with @kwcell.keyword_bprop) whose definition fails, and plain nn.Cell
classes whose bprop MindSpore would call with the wrong values. A target is a .py file, a
directory (every .py file under it) or a dotted module name (a package is checked with all
its submodules).

Prints one line per problem, FILE:LINE: CODE: MESSAGE, then a summary line.
Exit status: 0 no problems, 1 problems found, 2 bad command line (e.g. a target that does
not exist)."""

_MIGRATE_DESCRIPTION = """\
Switch the nn.Cell base of every bprop cell to KwCell, in place: a class that defines or
inherits a bprop (def bprop, bprop = ..., Net.bprop = ...) and names mindspore.nn.Cell as a
base, however it was imported (nn.Cell, ms.nn.Cell, Cell, an alias). A shared base is switched
when a class derived from it has a bprop, in the same file or in another of the files given.
Adds 'from kwcell import KwCell' after the file's imports; everything else stays as it was,
comments and formatting included. Nothing is imported or run: MindSpore is not needed. A
target is a .py file or a directory (every .py file under it).

Prints one line per switched class, FILE:LINE: CLASS: nn.Cell -> KwCell; one per class it
could not switch, with the fix (a metaclass that cannot be combined with KwCell's, or a base
that is a MindSpore class such as nn.Dense: decorate the class with @kwcell.keyword_bprop
instead; a static bprop, which KwCell refuses); notes (an import left unused, a bprop cell
whose base comes from a file not given); then a summary line. With --diff, prints the change
as a unified diff on stdout, writes nothing, and sends the rest to stderr.
Exit status: 0 every bprop cell found was switched (with --diff: would be), 1 a class could
not be switched or a file could not be parsed, 2 bad command line (e.g. a target that does not
exist) or libcst is not installed."""

_MIGRATE_EPILOG = """\
A base from another module that has a metaclass of its own is not seen: if a rewritten module
fails to import with "metaclass conflict", put that class's nn.Cell base back and decorate it
with @kwcell.keyword_bprop. Run your import sorter afterwards if it has an opinion on where
the new import goes."""


_EXCLUDE_HELP = (
    "skip the files and directories under a directory target that match GLOB (their path, "
    "their path from the target, or their name); repeatable"
)


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


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
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
    check.add_argument("--exclude", action="append", default=[], metavar="GLOB", help=_EXCLUDE_HELP)
    migrate = commands.add_parser(
        "migrate",
        help="switch the nn.Cell base of bprop cells to KwCell, keeping formatting and comments",
        description=_MIGRATE_DESCRIPTION,
        epilog=_MIGRATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    migrate.add_argument("paths", nargs="+", metavar="PATH", help=".py file or directory")
    migrate.add_argument("--diff", action="store_true", help="print the change as a diff; write nothing")
    migrate.add_argument("--exclude", action="append", default=[], metavar="GLOB", help=_EXCLUDE_HELP)
    return parser, {"check": check, "migrate": migrate}


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def _summary(problems: int, checked: int, modules: int) -> str:
    what = _plural(problems, "problem") if problems else "no problems"
    cells = f"{_plural(checked, 'cell')} checked" if checked else "0 bprop cells found"
    return f"kwcell check: {what} ({cells} in {_plural(modules, 'module')})"


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send what the checked modules print (Python's print, loggers bound to sys.stdout, and C
    code writing to file descriptor 1) to stderr, so that stdout carries only the report."""
    sys.stdout.flush()
    saved_fd = os.dup(1)
    saved = sys.stdout
    try:
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        sys.stdout = saved
        os.dup2(saved_fd, 1)
        os.close(saved_fd)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m kwcell`` and the ``kwcell`` command; returns the exit status."""
    parser, commands = _parser()
    args = parser.parse_args(argv)
    if args.command == "migrate":
        return _migrate(commands["migrate"], args.paths, diff=args.diff, excludes=args.exclude)
    check_parser = commands["check"]
    for target in args.targets:
        if _looks_like_path(target) and not os.path.exists(target):
            _usage_error(check_parser, f"{target}: no such file or directory")

    with _stdout_to_stderr():
        from ._check import MissingTargetError, check  # imports MindSpore

        missing: str | None = None
        try:
            found = check(args.targets, args.exclude)
        except MissingTargetError as exc:
            missing = str(exc)
    if missing is not None:
        _usage_error(check_parser, missing)
    problems = found.problems
    summary = _summary(len(problems), found.cells, found.modules)
    if args.format == "json":
        report = {
            "problems": [p.as_json() for p in problems],
            "cells_checked": found.cells,
            "modules_checked": found.modules,
            "files_skipped": found.skipped,
            "summary": summary,
        }
        print(json.dumps(report, indent=2))
    else:
        for p in problems:
            print(p.text())
        print(summary)
    return 1 if problems else 0


def _python_files(paths: Sequence[str], excludes: Sequence[str]) -> list[str]:
    from ._files import python_files

    found: list[str] = []
    for path in paths:
        found += python_files(path, excludes) if os.path.isdir(path) else [path]
    return list(dict.fromkeys(found))


def _migrate(
    parser: argparse.ArgumentParser, paths: Sequence[str], *, diff: bool, excludes: Sequence[str] = ()
) -> int:
    """``migrate``: rewrite (or, with ``diff``, show) each file; the report goes to stdout, or
    to stderr when stdout carries the diff."""
    for path in paths:
        if not os.path.exists(path):
            _usage_error(parser, f"{path}: no such file or directory")
    try:
        import libcst  # noqa: F401
    except ImportError:
        parser.exit(
            USAGE_ERROR,
            f"{parser.prog}: error: this command needs libcst, which is not installed; "
            "install it with: pip install 'kwcell[migrate]'\n",
        )
    from ._migrate import migrate_paths

    report = sys.stderr if diff else sys.stdout
    switched = problems = changed = 0
    files = _python_files(paths, excludes)
    for path, result in migrate_paths(files):
        if isinstance(result, SyntaxError):
            problems += 1
            print(f"{path}:{result.lineno or 1}: {result.msg}", file=report)
            continue
        if isinstance(result, (UnicodeError, LookupError)):  # undecodable, or an unknown coding: cookie
            problems += 1
            print(f"{path}:1: cannot read: {result}", file=report)
            continue
        if result.changed:
            changed += 1
            if diff:
                sys.stdout.write(result.diff(path))
            else:
                with open(path, "wb") as f:
                    f.write(result.after.encode(result.encoding))
        lines = [(n.line, f"{n.name}: {n.message}") for n in result.switched]
        lines += [(n.line, f"{n.name}: {n.message}") for n in result.problems]
        lines += [(n.line, f"note: {n.message}") for n in result.notes]
        for line, text in sorted(lines, key=lambda item: item[0]):
            print(f"{path}:{line}: {text}", file=report)
        switched += len(result.switched)
        problems += len(result.problems)
    verb = "would switch" if diff else "switched"
    summary = f"kwcell migrate: {verb} {_plural(switched, 'class', 'classes')} in {_plural(changed, 'file')}"
    if problems:
        summary += f", {_plural(problems, 'problem')}"
    summary += f" ({_plural(len(files), 'file')} read{'; nothing written' if diff else ''})"
    print(summary, file=report)
    return 1 if problems else 0
