"""``kwcell check``'s KW105: calls that MindSpore's positional bprop would misread.

A plain ``nn.Cell`` whose bprop MindSpore calls positionally (``bprop(self, x, w, out,
dout)``) gets its inputs in call order: a keyword call (``self.act(x, w=w)``) reaches bprop
in the order the call wrote them, and a call that omits a defaulted input fails to compile in
GRAPH_MODE. This module reads the checked files' syntax trees (nothing is run) and finds such
calls of the classes :mod:`kwcell._check` found:

- ``self.NAME(...)`` in any method of a class whose ``__init__`` sets ``self.NAME = Cls(...)``;
- temporaries, ``Cls()(...)`` and ``Cls(...)(...)``, anywhere.

``Cls`` is resolved as Python would resolve it in that module: through the imported module's
globals, or, for a file that was not imported, through its own import statements into modules
that are.
"""

from __future__ import annotations

import ast
import os
import sys
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ._spec import KEYWORD_ONLY, format_params, signature_of
from ._validate import expected_bprop

__all__ = ["CallSite", "call_sites"]


@dataclass(frozen=True)
class CallSite:
    """One call to report: where, the message, and the caller's qualified name."""

    file: str
    line: int
    message: str
    label: str


def _module_of(path: str) -> types.ModuleType | None:
    """The imported module whose file is ``path``, if any."""
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and os.path.abspath(file) == path:
            return module
    return None


def _static_names(tree: ast.Module, package: str) -> dict[str, Any]:
    """What a file that was not imported binds at module level through its imports, as far
    as the modules it imports are imported already (nothing is imported here)."""
    names: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in sys.modules:
                    names[alias.asname] = sys.modules[alias.name]
                elif not alias.asname and alias.name.split(".")[0] in sys.modules:
                    top = alias.name.split(".")[0]
                    names[top] = sys.modules[top]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[: len(parts) - node.level + 1] if node.level > 1 else parts
                base = ".".join([*parts, *([node.module] if node.module else [])])
            module = sys.modules.get(base)
            if module is None:
                continue
            for alias in node.names:
                if alias.name != "*" and hasattr(module, alias.name):
                    names[alias.asname or alias.name] = getattr(module, alias.name)
    return names


def _resolve(expr: ast.expr, names: dict[str, Any]) -> Any:
    if isinstance(expr, ast.Name):
        return names.get(expr.id)
    if isinstance(expr, ast.Attribute):
        owner = _resolve(expr.value, names)
        return getattr(owner, expr.attr, None) if owner is not None else None
    return None


def _package(path: str) -> str:
    """The dotted package of ``path`` (through its ``__init__.py`` files)."""
    parts: list[str] = []
    directory = os.path.dirname(path)
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, name = os.path.split(directory)
        parts.insert(0, name)
    return ".".join(parts)


def _problem(call: ast.Call, cls: type, callee: str) -> str | None:
    """The message for ``call`` of an instance of ``cls`` (written ``callee``), or ``None``."""
    construct = signature_of(cls.construct)  # type: ignore[attr-defined]
    inputs = [p for p in construct.params if p.kind is not KEYWORD_ONLY]
    shown = f"construct({construct.self_name or 'self'}, {format_params(construct.params)})"
    fix = (
        f"pass every input of {cls.__qualname__}.{shown} by position, in order, or derive "
        f"{cls.__qualname__} from kwcell.KwCell with e.g. {expected_bprop(construct)}"
    )
    what = f"{callee} ({cls.__qualname__}, an nn.Cell whose bprop MindSpore calls by position)"
    keywords = [k.arg for k in call.keywords if k.arg is not None]
    if keywords or any(k.arg is None for k in call.keywords):
        named = ", ".join(f"'{k}'" for k in keywords) or "'**'"
        return (
            f"calls {what} with keyword argument(s) {named}: its bprop receives the inputs in call "
            f"order, not by name (a wrong gradient when that order differs), and a graph may refuse "
            f"the keywords; {fix}"
        )
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if len(call.args) < len(inputs):
        omitted = ", ".join(f"'{p.name}'" for p in inputs[len(call.args) :])
        return (
            f"calls {what} without {omitted}, leaving the default(s) to construct: GRAPH_MODE "
            f"then fails to compile the gradient (bprop takes {len(inputs)} inputs); {fix}"
        )
    return None


class _Finder(ast.NodeVisitor):
    def __init__(self, names: dict[str, Any], cells: set[type], file: str, module: str) -> None:
        self.names = names
        self.cells = cells
        self.file = file
        self.module = module
        self.found: list[CallSite] = []
        self._stack: list[str] = []

    def _cell(self, expr: ast.expr) -> type | None:
        value = _resolve(expr, self.names)
        return value if isinstance(value, type) and value in self.cells else None

    def _report(self, call: ast.Call, cls: type, callee: str) -> None:
        message = _problem(call, cls, callee)
        if message is not None:
            caller = ".".join(self._stack) or "<module>"
            label = f"{self.module}.{caller}" if self.module else caller
            self.found.append(CallSite(self.file, call.lineno, f"{caller} {message}", label))

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        attributes = dict(self._attributes(node))
        self._stack.append(node.name)
        for child in node.body:
            if attributes and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and child.args.args:
                self._self_calls(child, child.args.args[0].arg, attributes)
            self.visit(child)
        self._stack.pop()

    def _attributes(self, node: ast.ClassDef) -> Iterator[tuple[str, type]]:
        """``self.NAME = Cls(...)`` in ``__init__``, for the cells found."""
        for child in node.body:
            if not isinstance(child, ast.FunctionDef) or child.name != "__init__" or not child.args.args:
                continue
            self_name = child.args.args[0].arg
            for stmt in ast.walk(child):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else []
                value = stmt.value if isinstance(stmt, ast.Assign) else None
                if not isinstance(value, ast.Call):
                    continue
                cls = self._cell(value.func)
                for target in targets:
                    if (
                        cls is not None
                        and isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == self_name
                    ):
                        yield target.attr, cls

    def _self_calls(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef, self_name: str, attributes: dict[str, type]
    ) -> None:
        self._stack.append(fn.name)
        for node in ast.walk(fn):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == self_name
                and node.func.attr in attributes
            ):
                self._report(node, attributes[node.func.attr], f"{self_name}.{node.func.attr}")
        self._stack.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._stack.append(node.name)
        self.generic_visit(node)
        self._stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Call):  # Cls(...)(...): a temporary cell
            cls = self._cell(node.func.func)
            if cls is not None:
                self._report(node, cls, f"a temporary {ast.unparse(node.func)}")
        self.generic_visit(node)


def call_sites(files: Sequence[str], cells: Sequence[type]) -> list[CallSite]:
    """The calls in ``files`` (absolute paths) of the plain bprop cells ``cells`` that pass
    keywords or omit a defaulted input. A file is parsed only if its text names one of them."""
    if not cells:
        return []
    wanted = {c.__name__ for c in cells}
    found: list[CallSite] = []
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeError):
            continue
        if not any(name in text for name in wanted):
            continue
        try:
            tree = ast.parse(text, path)
        except SyntaxError:
            continue
        module = _module_of(path)
        names = dict(vars(module)) if module is not None else _static_names(tree, _package(path))
        name = module.__name__ if module is not None else ""
        finder = _Finder(names, set(cells), path, name)
        finder.visit(tree)
        found += finder.found
    return found
