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
- ``KW009`` bprop reads an attribute that construct sets on ``self`` (``self.norm_x = ...``):
  that works in PYNATIVE only; a compiled graph fails with ``AttributeError``, or reads the
  value ``__init__`` gave the attribute. Reported for plain ``nn.Cell`` bprops too (at the
  line of bprop's read), and for ``KwCell`` classes at the ``class`` line (the class
  statement's ``KwCellWarning``).
- ``KW010`` bprop keys its weight gradients by Parameters it computes (a comprehension over
  ``self.internal_params``, ``dict(zip(...))``, ``grads[p] = ...`` in a loop over them): that
  works in PYNATIVE only; a compiled graph cannot build the dict. Write each weight as an
  attribute of the cell (``{self.w1: g1}``, ``grads[self.w1] = g1``). Reported like ``KW009``.

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
  plus ``out`` and ``dout`` (also for a KwCell whose bprop is MindSpore's positional form with
  names of its own, such as ``bprop(self, x, out, grad_output)``).
- ``KW105`` a call, in the checked files, of such a cell with keyword arguments or without a
  defaulted input (``self.act(x, scale=s)`` where ``__init__`` set ``self.act = Act()``, or a
  temporary ``Act()(x)``): bprop receives the inputs in call order, and a graph fails to
  compile the gradient of a call that leaves defaults out.

Other:

- ``KW901`` the module could not be imported (the line is where the error was raised: the
  innermost line in the checked files).

Only the cells defined in the files and modules given are reported (a module's imports run,
but their cells are not counted). Under a directory, files whose text never mentions
``bprop`` or ``KwCell`` are not imported; ``--exclude GLOB`` leaves out more (scripts that run
when imported).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import inspect
import os
import pkgutil
import re
import sys
import traceback
import types
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from mindspore import nn

from . import _decorate
from ._callsites import call_sites
from ._decorate import has_kwcell_behaviour
from ._errors import KwCellDefinitionError, KwCellWarning, definition_code
from ._files import may_have_cells, python_files
from ._functional import collecting, function_info
from ._lookup import BpropSlot
from ._meta import KwCellMeta
from ._source import computed_weight_keys, state_on_self, tuple_returns
from ._spec import BpropSpec, CellSpec, signature_of
from ._validate import check_returned_literal, expected_bprop, plain_problems

__all__ = ["MissingTargetError", "Problem", "Report", "check"]

_T = TypeVar("_T")


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
            found.append(Problem(_display(file), line, definition_code(message), message, label))

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
        problem_code = definition_code(message)
        found.append(Problem(_display(code.co_filename), code.co_firstlineno, problem_code, message, label))

    KwCellMeta.__new__ = staticmethod(lenient)  # type: ignore[method-assign]
    _decorate._setup = lenient_setup
    try:
        with collecting(function_problem):
            yield
    finally:
        type.__setattr__(KwCellMeta, "__new__", saved)
        _decorate._setup = saved_setup


def _is_package(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "__init__.py"))


def _resolve(path: str, start: str | None = None) -> tuple[str | None, str]:
    """``(sys.path entry, dotted name)`` of the ``.py`` file ``path`` under the checked
    directory ``start`` (default: the file's own): its real package, as Python imports it.

    Directories under ``start`` without an ``__init__.py`` are namespace packages when a
    package contains them (``mindone/comfyui/comfy/sd.py``, where only ``mindone`` has an
    ``__init__.py``, is ``mindone.comfyui.comfy.sd``). From ``start`` up, the walk goes on
    while a directory is a package, or a namespace directory right inside one, and stops at a
    ``sys.path`` entry. ``(None, stem)`` for a file in no package: it is loaded by path.
    """
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    stem = os.path.splitext(filename)[0]
    start = os.path.abspath(start) if start is not None else directory
    stops = {os.path.abspath(entry or os.curdir) for entry in sys.path}
    chain: list[str] = []
    top = 0  # how many directories of the chain the module's package spans
    while directory not in stops and os.path.basename(directory).isidentifier():
        inside = directory != start and directory.startswith(start + os.sep)
        parent = os.path.dirname(directory)
        if not inside and not _is_package(directory) and not _is_package(parent):
            break
        chain.append(os.path.basename(directory))
        if _is_package(directory):
            top = len(chain)
        if parent == directory:
            break
        directory = parent
    if top == 0:
        return None, stem
    root = os.path.abspath(os.path.join(os.path.dirname(path), *[os.pardir] * top))
    parts = list(reversed(chain[:top]))
    if filename != "__init__.py":
        parts.append(stem)
    return root, ".".join(parts)


def _error_line(exc: BaseException, trees: Sequence[str], filename: str | None) -> tuple[str, int]:
    """Where ``exc`` was raised: the innermost traceback entry in the checked tree (the files
    under ``trees``), else in ``filename``, else ``filename``'s first line."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return exc.filename, exc.lineno or 1
    frames = traceback.extract_tb(exc.__traceback__)
    for fs in reversed(frames):
        where = os.path.abspath(fs.filename)
        if any(where == tree or where.startswith(tree + os.sep) for tree in trees):
            return fs.filename, fs.lineno or 1
    for fs in reversed(frames):
        if filename is not None and os.path.abspath(fs.filename) == os.path.abspath(filename):
            return fs.filename, fs.lineno or 1
    return filename or (frames[-1].filename if frames else "?"), 1


class _Loader:
    """Imports the targets, each file as the module it is, and records what it asked for."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        self.modules: dict[str, types.ModuleType] = {}
        self.scope: set[str] = set()  # absolute paths of the files asked for
        self.trees: list[str] = []  # directories of the checked tree (for KW901's line)
        self.aliases: dict[str, str] = {}  # the unique name of a file loaded by path -> its stem
        self.skipped = 0
        self.unimported: set[str] = set()  # files of the targets left out by the prefilter

    def _failed(self, name: str, exc: BaseException, filename: str | None) -> None:
        file, line = _error_line(exc, self.trees, filename)
        message = f"cannot import {name}: {type(exc).__name__}: {exc}".splitlines()[0]
        code = definition_code(str(exc)) if isinstance(exc, KwCellDefinitionError) else "KW901"
        self.problems.append(Problem(_display(file), line, code, message, name))

    def _add(self, module: types.ModuleType) -> None:
        self.modules.setdefault(module.__name__, module)
        file = getattr(module, "__file__", None)
        if file:
            self.scope.add(os.path.abspath(file))

    def file(self, path: str, start: str | None = None) -> None:
        root, name = _resolve(path, start)
        if root is None:
            self._by_path(path, name)
            return
        if root not in sys.path:
            sys.path.insert(0, root)
        try:
            module = importlib.import_module(name)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a broken module is a finding, not the end of the check
            self._failed(name, exc, path)
            return
        found = getattr(module, "__file__", None)
        if found is None or not os.path.samefile(found, path):
            where = found or "a namespace package"
            message = (
                f"cannot import {name} from {_display(path)}: that name is already the module at "
                f"{_display(where)} (first on sys.path, or imported before); check one of them at a time"
            )
            self.problems.append(Problem(_display(path), 1, "KW901", message, name))
            return
        self._add(module)

    def _by_path(self, path: str, stem: str) -> None:
        """A file in no package, loaded from its path: under its own name only when that name
        imports nothing else (a ``string.py`` must not be the standard library's ``string``)."""
        directory = os.path.dirname(os.path.abspath(path))
        if directory not in sys.path:
            sys.path.append(directory)  # for its sibling imports, behind everything else
        name = stem
        try:
            other = importlib.util.find_spec(stem) if stem.isidentifier() else None
        except (ImportError, ValueError):
            other = None
        if (
            not stem.isidentifier()
            or stem in sys.modules
            or (other is not None and (other.origin is None or not os.path.samefile(other.origin, path)))
        ):
            name = f"_kwcell_checked_{len(self.aliases)}_{stem if stem.isidentifier() else 'module'}"
            self.aliases[name] = stem
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a broken module is a finding
            del sys.modules[name]
            self._failed(stem, exc, path)
            return
        self._add(module)

    def dotted(self, target: str) -> None:
        try:
            spec = importlib.util.find_spec(target.split(".")[0])
        except (ImportError, ValueError):
            spec = None
        if spec is not None:
            locations = list(spec.submodule_search_locations or [])
            self.trees += [os.path.abspath(p) for p in locations] or (
                [os.path.dirname(os.path.abspath(spec.origin))] if spec.origin else []
            )
        module = self._dotted(target)
        if module is not None:
            self._walk(target, module, set())

    def _walk(self, name: str, package: types.ModuleType, seen: set[str]) -> None:
        """Import every submodule of ``package``, depth first, and go into the subpackages that
        imported. Not ``pkgutil.walk_packages``: it imports each subpackage a second time to look
        inside, and lets every error but ``ImportError`` out, which ended the whole check at a
        subpackage that raises anything else (mindone.diffusers' lazy modules raise
        ``RuntimeError``), where ``_dotted`` has already reported it as KW901."""
        for info in pkgutil.iter_modules(getattr(package, "__path__", []), prefix=f"{name}."):
            module = self._dotted(info.name, sub=True)
            if module is None or not info.ispkg:
                continue
            paths = [p for p in getattr(module, "__path__", []) if p not in seen]
            seen.update(paths)
            if paths:
                self._walk(info.name, module, seen)

    def _dotted(self, name: str, *, sub: bool = False) -> types.ModuleType | None:
        try:
            module = importlib.import_module(name)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a broken module is a finding, not the end of the check
            missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
            if not sub and missing is not None and (name == missing or name.startswith(f"{missing}.")):
                msg = f"{name}: no such file, directory or module"
                raise MissingTargetError(msg) from None
            self._failed(name, exc, None)
            return None
        self._add(module)
        return module

    def load(self, targets: Sequence[str], excludes: Sequence[str]) -> None:
        files: list[tuple[str, str | None]] = []
        dotted: list[str] = []
        for target in targets:
            if not os.path.exists(target) and (os.sep in target or "/" in target or target.endswith(".py")):
                msg = f"{target}: no such file or directory"
                raise MissingTargetError(msg)
            if not os.path.exists(target):
                dotted.append(target)
                continue
            if os.path.isdir(target):
                self.trees.append(os.path.abspath(target))
                for file in python_files(target, excludes):
                    if may_have_cells(file):
                        files.append((file, target))
                    else:
                        self.skipped += 1
                        self.unimported.add(os.path.abspath(file))
            else:
                root, _ = _resolve(target)
                self.trees.append(root or os.path.dirname(os.path.abspath(target)))
                files.append((target, None))
        for file, start in files:
            self.file(file, start)
        for target in dotted:
            self.dotted(target)


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
    """The hazards of a plain ``nn.Cell`` with a bprop (the rules of :func:`plain_problems`)."""
    construct_fn = cls.construct  # type: ignore[attr-defined]
    bprop_fn = cls.bprop  # type: ignore[attr-defined]
    construct = signature_of(construct_fn)
    bprop = signature_of(bprop_fn)
    label = f"{cls.__module__}.{cls.__qualname__}"
    class_line = _class_line(cls)
    c_line = _line(construct_fn, class_line)
    b_line = _line(bprop_fn, class_line)
    spec = CellSpec(cls.__module__, cls.__qualname__, construct, BpropSpec(bprop, False))
    state = [
        Problem(file, line, "KW009", note, label) for line, note in state_on_self(cls, construct_fn, bprop_fn)
    ] + [Problem(file, line, "KW010", note, label) for line, note in computed_weight_keys(cls, bprop_fn)]
    if construct.var_positional or construct.var_keyword:
        return state  # bprop(self, *args) territory: nothing to match by name
    fix = (
        f"; derive {cls.__qualname__} from kwcell.KwCell, which matches bprop to construct by name, "
        f"e.g. {expected_bprop(construct)}"
    )
    found = state + [
        Problem(file, c_line if code in ("KW101", "KW102") else b_line, code, message + fix, label)
        for code, message in plain_problems(spec)
    ]
    if bprop.var_positional is not None and not bprop.params:
        return found
    found += _plain_return_problems(cls, bprop_fn, construct, file, fix)
    return found


def _plain_return_problems(cls: type, bprop_fn: Any, construct: Any, file: str, fix: str) -> list[Problem]:
    """KW007 for a plain cell: the count rule of literal returns, as for a KwCell in MindSpore's
    own form (too few gradients fail at gradient time, extra ones are silently ignored)."""
    bprop = signature_of(bprop_fn)
    spec = CellSpec(cls.__module__, cls.__qualname__, construct, BpropSpec(bprop, False))
    label = f"{cls.__module__}.{cls.__qualname__}"
    found: list[Problem] = []
    for line, count in tuple_returns(bprop_fn, spec):
        try:
            note = check_returned_literal(spec, line, count=count, lenient=True)
        except KwCellDefinitionError as exc:
            note = str(exc)
        if note is not None:
            found.append(Problem(file, line, "KW007", note + fix, label))
    return found


@dataclass(frozen=True)
class Report:
    """What :func:`check` found: the problems, the bprop cells checked, the modules imported,
    and the files of a directory left unimported by the prefilter (no bprop in their text)."""

    problems: list[Problem]
    cells: int
    modules: int
    skipped: int = 0


def _without_repeated_line(problem: Problem) -> Problem:
    """``Net.bprop (line 53): ...`` reported at line 53 says the line once."""
    repeated = f" (line {problem.line})"
    if repeated in problem.message:
        return dataclasses.replace(problem, message=problem.message.replace(repeated, "", 1))
    return problem


def check(targets: Sequence[str], excludes: Sequence[str] = ()) -> Report:
    """Import ``targets`` and check the cells defined in them (not those of the modules they
    import). Files under a directory target that match an ``excludes`` glob, or whose text
    never mentions bprop or KwCell, are not imported."""
    problems: list[Problem] = []
    loader = _Loader(problems)
    with _collect_definition_errors(problems):
        loader.load(targets, excludes)

    def in_scope(problem: Problem) -> bool:
        return problem.code == "KW901" or os.path.abspath(problem.file) in loader.scope

    problems[:] = [p for p in problems if in_scope(p)]
    checked = {p.cls for p in problems if p.code != "KW901"}  # KwCells whose definition failed
    plain: list[type] = []
    for module in loader.modules.values():
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
                plain.append(cls)
                problems.extend(_plain_problems(cls, file))
    for site in call_sites(
        sorted(loader.scope | loader.unimported), _callees(plain, loader.modules.values())
    ):
        problems.append(Problem(_display(site.file), site.line, "KW105", site.message, site.label))
    renamed = [_without_repeated_line(_renamed(p, loader.aliases)) for p in problems]
    renamed.sort(key=lambda p: (p.file, p.line, p.code))
    return Report(renamed, len(checked), len(loader.modules), loader.skipped)


def _is_plain_bprop_cell(value: Any) -> bool:
    return (
        isinstance(value, type)
        and issubclass(value, nn.Cell)
        and not has_kwcell_behaviour(value)
        and callable(getattr(value, "bprop", None))
        and callable(getattr(value, "construct", None))
    )


def _callees(plain: list[type], modules: Iterable[types.ModuleType]) -> list[type]:
    """The plain bprop cells the checked modules can call: their own, the ones they import,
    and those of the modules they import (``from . import layers``; ``layers.Ste``)."""
    found = dict.fromkeys(plain)
    for module in modules:
        for value in list(vars(module).values()):
            inner = list(vars(value).values()) if isinstance(value, types.ModuleType) else [value]
            found.update(dict.fromkeys(v for v in inner if _is_plain_bprop_cell(v)))
    return list(found)


def _renamed(problem: Problem, aliases: dict[str, str]) -> Problem:
    """A file loaded by path under a unique name is reported under its own stem."""
    for unique, stem in aliases.items():
        if problem.cls == unique or problem.cls.startswith(f"{unique}."):
            return dataclasses.replace(problem, cls=stem + problem.cls[len(unique) :])
    return problem
