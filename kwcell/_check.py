"""``python -m kwcell check PATH_OR_MODULE...``: find bprop hazards in a library's cells.

Imports the given modules (a ``.py`` file, a directory of them, or a dotted module name; a
package is checked with all its submodules), finds every class that behaves as a KwCell (a
``KwCell`` subclass, or a class decorated with ``@kwcell.keyword_bprop`` or derived from one,
in that module or another) and every plain ``nn.Cell`` subclass with a ``bprop`` defined
there, and prints one line per problem,
``file:line: code: message``, then a summary line. Exit status 1 when there is a problem,
0 otherwise, 2 for a target that is neither a path nor an importable module. ``--format json``
prints one JSON object instead. The command line itself is :mod:`kwcell._cli`; ``--help`` shows
the "Codes" section below, so it is written for users.

Codes
-----
KwCell definitions, of ``KwCell`` subclasses and of classes decorated with
``@kwcell.keyword_bprop`` and their subclasses (reported at the ``class`` line; the message is
the ``KwCellDefinitionError`` the class statement raised), and the same for
``kwcell.custom_bprop`` functions (reported at the ``@f.bprop`` line, or the function's own
line for its own problems):

- ``KW001`` bprop has a parameter that is not a parameter of construct.
- ``KW002`` a construct parameter is missing from bprop, which has no ``**kwargs``.
- ``KW003`` bprop lacks ``out`` or ``dout``.
- ``KW004`` a bprop default differs from construct's.
- ``KW005`` construct takes ``*args``/``**kwargs`` although the class has a bprop.
- ``KW006`` a construct parameter is named ``out``, ``dout``, ``self`` or a reserved name.
- ``KW007`` bprop returns a literal tuple/dict that does not fit construct's parameters
  (also reported, at the ``return``, for a plain ``nn.Cell`` whose literal tuple has fewer
  gradients than construct has inputs, which fails when the gradient is taken, or more, which
  MindSpore silently ignores).
- ``KW008`` any other ``KwCellDefinitionError``.

Plain ``nn.Cell`` subclasses with a bprop (hazards measured on MindSpore 2.10; each message
suggests the ``KwCell`` form):

- ``KW101`` construct has parameters with defaults: a call that omits them fails to compile
  in GRAPH_MODE, and calls passing them by keyword reach bprop in call order.
- ``KW102`` construct has keyword-only parameters: MindSpore passes bprop its inputs by
  position, so these are misbound or rejected.
- ``KW103`` bprop uses one of construct's names (or ``out``, ``dout``) at another position:
  bprop receives construct's inputs by position, so that name gets another input. (Other
  names, such as ``_`` or ``grad_output``, are MindSpore's positional form and fine.)
- ``KW104`` bprop takes a different number of positional parameters than construct's inputs
  plus ``out`` and ``dout``.

Other:

- ``KW901`` the module could not be imported (the line is where the error was raised).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import pkgutil
import re
import sys
import traceback
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from mindspore import nn

from . import _decorate
from ._decorate import has_kwcell_behaviour
from ._errors import KwCellDefinitionError, KwCellWarning
from ._functional import collecting, function_info
from ._lookup import BpropSlot
from ._meta import KwCellMeta
from ._source import tuple_returns
from ._spec import KEYWORD_ONLY, BpropSpec, CellSpec, format_params, signature_of
from ._validate import check_returned_literal, expected_bprop, position_conflicts

__all__ = ["MissingTargetError", "Problem", "check"]

_T = TypeVar("_T")

# First matching fragment of a KwCellDefinitionError message -> code.
_DEFINITION_CODES = (
    ("returns ", "KW007"),
    ("is not a parameter of", "KW001"),
    ("is missing from bprop", "KW002"),
    ("missing parameter 'out'", "KW003"),
    ("missing parameter 'dout'", "KW003"),
    ("has default", "KW004"),
    ("cannot be used with a bprop", "KW005"),
    ("clashes with bprop's", "KW006"),
    ("uses a name kwcell reserves", "KW006"),
)


class MissingTargetError(LookupError):
    """A target of :func:`check` is neither an existing path nor an importable module."""


@dataclass(frozen=True)
class Problem:
    """One line of the report."""

    file: str
    line: int
    code: str
    message: str
    cls: str

    def text(self) -> str:
        return f"{self.file}:{self.line}: {self.code}: {self.message}"

    def as_json(self) -> dict[str, str | int]:
        return {
            "file": self.file,
            "line": self.line,
            "code": self.code,
            "message": self.message,
            "class": self.cls,
        }


def _display(path: str) -> str:
    """``path`` relative to the working directory when it is under it."""
    rel = os.path.relpath(os.path.abspath(path))
    return path if rel.startswith(os.pardir) else rel


def _definition_code(message: str) -> str:
    for fragment, code in _DEFINITION_CODES:
        if fragment in message:
            return code
    return "KW008"


def _class_site(cls: type) -> tuple[str, int] | None:
    """The file and ``class`` line of ``cls`` (after its decorators), read from its source."""
    try:
        file = inspect.getsourcefile(cls)
        lines, start = inspect.getsourcelines(cls)
    except (OSError, TypeError):
        return None
    if file is None:
        return None
    offset = next((i for i, text in enumerate(lines) if _CLASS_LINE.match(text)), 0)
    return file, start + offset


_CLASS_LINE = re.compile(r"\s*class\s")
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _caller_site() -> tuple[str, int]:
    """Where the code outside kwcell that is running now stands (file, line)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
    return frame.f_code.co_filename, frame.f_lineno


@contextlib.contextmanager
def _collect_definition_errors(found: list[Problem]) -> Iterator[None]:
    """Record a KwCell's ``KwCellDefinitionError`` instead of stopping the import.

    Both ways a class gets KwCell's checks are followed: a ``KwCell`` class statement
    (``KwCellMeta.__new__``) and a class decorated with ``@kwcell.keyword_bprop`` or derived
    from one (``kwcell._decorate._setup``). The failing class is left without its bprop (a
    plain cell) so that the rest of the module still imports and is checked.
    """

    def define(run: Callable[[], _T], label: str, where: Callable[[], tuple[str, int]]) -> _T | None:
        """``run()``, the class's definition checks; ``None`` when it raised. Its error, and the
        warnings of MindSpore's own bprop forms (which only warn at class creation, their
        gradient raises), are reported at ``where()``."""

        def report(message: str) -> None:
            file, line = where()
            found.append(Problem(_display(file), line, _definition_code(message), message, label))

        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", KwCellWarning)
                result = run()
        except KwCellDefinitionError as exc:
            report(str(exc))
            return None
        for warning in caught:
            if issubclass(warning.category, KwCellWarning):
                report(str(warning.message))
            else:
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        return result

    saved = KwCellMeta.__dict__["__new__"]
    original = KwCellMeta.__new__

    def lenient(
        mcls: type[KwCellMeta], name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kw: Any
    ) -> KwCellMeta:
        if namespace.get("_kwcell_function"):
            # the cell behind a kwcell.custom_bprop function: reported by function_problem
            return original(mcls, name, bases, namespace, **kw)
        frame = sys._getframe(1)  # the frame running the class statement
        label = f"{namespace.get('__module__', '?')}.{namespace.get('__qualname__', name)}"
        cls = define(
            lambda: original(mcls, name, bases, namespace, **kw),
            label,
            lambda: (frame.f_code.co_filename, frame.f_lineno),
        )
        if cls is None:
            namespace["bprop"] = BpropSlot(None)  # a cell without a bprop of its own
            try:
                cls = type.__new__(mcls, name, bases, namespace, **kw)
            except KwCellDefinitionError:  # compile_once=... (reported already) raises again
                kw.pop("compile_once", None)
                cls = type.__new__(mcls, name, bases, namespace, **kw)
        return cls

    saved_setup = _decorate.__dict__["_setup"]

    def lenient_setup(klass: type, compile_once: bool | None) -> None:
        # run by @kwcell.keyword_bprop on its class and by a subclass's class statement
        site = _caller_site()
        label = f"{klass.__module__}.{klass.__qualname__}"

        def setup() -> bool:
            saved_setup(klass, compile_once)
            return True

        if define(setup, label, lambda: _class_site(klass) or site) is None:
            # without a bprop of its own, and set up as far as it goes (reported already)
            type.__setattr__(klass, "bprop", BpropSlot(None, klass))
            with contextlib.suppress(KwCellDefinitionError), warnings.catch_warnings():
                warnings.simplefilter("ignore", KwCellWarning)
                saved_setup(klass, compile_once)

    def function_problem(label: str, code: types.CodeType, message: str, warning: bool) -> None:
        # at the function's first line: the @scaled.bprop (or @kwcell.custom_bprop) line
        problem_code = _definition_code(message)
        found.append(Problem(_display(code.co_filename), code.co_firstlineno, problem_code, message, label))

    KwCellMeta.__new__ = staticmethod(lenient)  # type: ignore[method-assign]
    _decorate._setup = lenient_setup
    try:
        with collecting(function_problem):
            yield
    finally:
        type.__setattr__(KwCellMeta, "__new__", saved)
        _decorate._setup = saved_setup


def _module_name(path: str) -> tuple[str, str]:
    """``(sys.path entry, dotted name)`` for the ``.py`` file ``path``, honouring packages."""
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    parts = [] if filename == "__init__.py" else [os.path.splitext(filename)[0]]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
    return directory, ".".join(parts)


def _files(directory: str) -> list[str]:
    found: list[str] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__")))
        found += [os.path.join(root, f) for f in sorted(files) if f.endswith(".py")]
    return found


def _error_line(exc: BaseException, filename: str | None) -> tuple[str, int]:
    """The deepest traceback entry in ``filename`` (or the deepest one at all)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if isinstance(exc, SyntaxError) and exc.filename:
        return exc.filename, exc.lineno or 1
    for fs in reversed(frames):
        if filename is None or os.path.abspath(fs.filename) == os.path.abspath(filename):
            return fs.filename, fs.lineno or 1
    return filename or (frames[-1].filename if frames else "?"), 1


def _import(name: str, filename: str | None, problems: list[Problem]) -> types.ModuleType | None:
    try:
        return importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - a broken module is a finding, not the end of the check
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
        if filename is None and missing is not None and (name == missing or name.startswith(f"{missing}.")):
            msg = f"{name}: no such file, directory or module"
            raise MissingTargetError(msg) from None
        file, line = _error_line(exc, filename)
        message = f"cannot import {name}: {type(exc).__name__}: {exc}".splitlines()[0]
        code = _definition_code(str(exc)) if isinstance(exc, KwCellDefinitionError) else "KW901"
        problems.append(Problem(_display(file), line, code, message, name))
        return None


def _load(targets: Sequence[str], problems: list[Problem]) -> list[types.ModuleType]:
    modules: list[types.ModuleType] = []
    for target in targets:
        if not os.path.exists(target) and (os.sep in target or "/" in target or target.endswith(".py")):
            msg = f"{target}: no such file or directory"
            raise MissingTargetError(msg)
        if os.path.exists(target):
            files = _files(target) if os.path.isdir(target) else [target]
            for file in files:
                root, name = _module_name(file)
                if root not in sys.path:
                    sys.path.insert(0, root)
                module = _import(name, file, problems)
                if module is not None:
                    modules.append(module)
            continue
        module = _import(target, None, problems)
        if module is None:
            continue
        modules.append(module)
        for sub in pkgutil.walk_packages(getattr(module, "__path__", []), prefix=f"{target}."):
            submodule = _import(sub.name, None, problems)
            if submodule is not None:
                modules.append(submodule)
    unique: dict[str, types.ModuleType] = {m.__name__: m for m in modules}
    return list(unique.values())


def _classes(namespace: dict[str, Any], module: str, seen: set[int]) -> Iterator[type]:
    for value in namespace.values():
        if isinstance(value, type) and value.__module__ == module and id(value) not in seen:
            seen.add(id(value))
            yield value
            yield from _classes(dict(vars(value)), module, seen)


def _line(fn: Any, fallback: int) -> int:
    code = getattr(fn, "__code__", None)
    return code.co_firstlineno if code is not None else fallback


def _class_line(cls: type) -> int:
    try:
        return inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        return 1


def _plain_problems(cls: type, file: str) -> list[Problem]:
    """The hazards of a plain ``nn.Cell`` with a bprop."""
    construct_fn = cls.construct  # type: ignore[attr-defined]
    bprop_fn = cls.bprop  # type: ignore[attr-defined]
    construct = signature_of(construct_fn)
    bprop = signature_of(bprop_fn)
    label = f"{cls.__module__}.{cls.__qualname__}"
    name = cls.__qualname__
    class_line = _class_line(cls)
    c_line = _line(construct_fn, class_line)
    b_line = _line(bprop_fn, class_line)
    if construct.var_positional or construct.var_keyword:
        return []  # bprop(self, *args) territory: nothing to match by name
    fix = (
        f"; derive {name} from kwcell.KwCell, which matches bprop to construct by name, "
        f"e.g. {expected_bprop(construct)}"
    )
    where = f"construct(self, {format_params(construct.params)})"
    found: list[Problem] = []
    defaults = [p.name for p in construct.params if p.has_default and p.kind is not KEYWORD_ONLY]
    if defaults:
        names = ", ".join(f"'{n}'" for n in defaults)
        message = (
            f"{name}.construct: parameter(s) {names} have defaults and the cell has a bprop: a call "
            "that omits them fails to compile in GRAPH_MODE, and keyword calls reach bprop in call order"
        )
        found.append(Problem(file, c_line, "KW101", message + fix, label))
    keyword_only = [p.name for p in construct.params if p.kind is KEYWORD_ONLY]
    if keyword_only:
        names = ", ".join(f"'{n}'" for n in keyword_only)
        message = (
            f"{name}.construct: keyword-only parameter(s) {names} with a bprop: MindSpore passes "
            "bprop its inputs by position, so they are misbound or rejected"
        )
        found.append(Problem(file, c_line, "KW102", message + fix, label))
    if bprop.var_positional is not None and not bprop.params:
        return found  # classic bprop(self, *args): receives whatever MindSpore passes
    expected = [*construct.names, "out", "dout"]
    positional = [p.name for p in bprop.params if p.kind is not KEYWORD_ONLY]
    if len(positional) != len(expected) and bprop.var_positional is None:
        message = (
            f"{name}.bprop takes {len(positional)} positional parameter(s) "
            f"({', '.join(positional)}) but MindSpore passes {len(expected)}: the inputs of {where}, "
            "then out, dout"
        )
        found.append(Problem(file, b_line, "KW104", message + fix, label))
    elif conflicts := position_conflicts(construct.names, positional):
        pairs = ", ".join(f"'{b}' gets {e if e in ('out', 'dout') else repr(e)}" for b, e in conflicts)
        message = (
            f"{name}.bprop({', '.join(positional)}) receives construct's inputs by position, not by "
            f"name: {pairs}"
        )
        found.append(Problem(file, b_line, "KW103", message + fix, label))
    found += _plain_return_problems(cls, bprop_fn, construct, file, fix)
    return found


def _plain_return_problems(cls: type, bprop_fn: Any, construct: Any, file: str, fix: str) -> list[Problem]:
    """KW007 for a plain cell: the count rule of literal returns, as for a KwCell in MindSpore's
    own form (too few gradients fail at gradient time, extra ones are silently ignored)."""
    bprop = signature_of(bprop_fn)
    spec = CellSpec(cls.__module__, cls.__qualname__, construct, BpropSpec(bprop, False))
    label = f"{cls.__module__}.{cls.__qualname__}"
    found: list[Problem] = []
    for line, count in tuple_returns(bprop_fn):
        try:
            note = check_returned_literal(spec, line, count=count, lenient=True)
        except KwCellDefinitionError as exc:
            note = str(exc)
        if note is not None:
            found.append(Problem(file, line, "KW007", note + fix, label))
    return found


def check(targets: Sequence[str]) -> tuple[list[Problem], int, int]:
    """Import ``targets`` and check their cells: ``(problems, cells checked, modules imported)``."""
    problems: list[Problem] = []
    with _collect_definition_errors(problems):
        modules = _load(targets, problems)
    checked = {p.cls for p in problems if p.code != "KW901"}  # KwCells whose definition failed
    for module in modules:
        for value in list(vars(module).values()):
            found = function_info(value)
            if found is not None and found.fn.__module__ == module.__name__:
                checked.add(f"{found.spec.module}.{found.spec.qualname}")  # a custom_bprop function
        for cls in _classes(dict(vars(module)), module.__name__, set()):
            label = f"{cls.__module__}.{cls.__qualname__}"
            if not issubclass(cls, nn.Cell) or label in checked:
                continue
            file = _display(inspect.getsourcefile(cls) or getattr(module, "__file__", None) or "?")
            if has_kwcell_behaviour(cls):
                checked.add(label)  # its class statement passed the definition checks
            elif callable(getattr(cls, "bprop", None)) and callable(getattr(cls, "construct", None)):
                checked.add(label)
                problems.extend(_plain_problems(cls, file))
    problems.sort(key=lambda p: (p.file, p.line, p.code))
    return problems, len(checked), len(modules)
