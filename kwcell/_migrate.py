"""``python -m kwcell migrate PATH...``: switch the ``nn.Cell`` base of every bprop cell to ``KwCell``.

A codemod on libcst's concrete syntax tree, so everything but the switched bases and the added
import stays byte for byte (formatting, comments, line endings). Pure: it reads source text and
imports neither MindSpore nor the code it rewrites. The command line is :mod:`kwcell._cli`.

What it switches, file by file:

- a *bprop cell* is a class that defines ``bprop`` in its body (``def bprop``, ``bprop = f``,
  also under ``if``/``try``), has it assigned (``Net.bprop = f``, ``self.bprop = f`` in a
  method), or inherits it from a class of the same file;
- a base names ``mindspore.nn.Cell`` however it was imported (``nn.Cell``, ``ms.nn.Cell``,
  ``mindspore.nn.Cell``, ``Cell``, ``from mindspore.nn import Cell as C``), in the module, in a
  function or in a class body (name resolution follows Python's scopes);
- a class naming ``nn.Cell`` is switched when it, or a class derived from it, is a bprop cell
  (a ``KwCell`` without bprop behaves as ``nn.Cell``, so switching a shared base is safe). A
  class that derives from a switched one, or from ``KwCell``, needs nothing. Derived classes
  are seen in the same file, and with :func:`migrate_paths` in the other files of the run
  (through their imports, absolute or relative, and the files' package paths).

What it does not switch, and reports with the fix: a class whose metaclass (its own
``metaclass=``, a base's or a subclass's in the same file) cannot be combined with KwCell's, or
whose cell base is a MindSpore class other than ``nn.Cell`` (``nn.Dense``); the fix is the
``@kwcell.keyword_bprop`` decorator, which keeps the class's bases and metaclass. Also a static
or class method bprop, which KwCell refuses at class creation, and a file where the name
``KwCell`` already means something else.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import inspect
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (
    Assignment,
    CodeRange,
    MetadataWrapper,
    PositionProvider,
    QualifiedNameProvider,
    QualifiedNameSource,
    Scope,
    ScopeProvider,
)

from ._spec import EMPTY, KEYWORD_ONLY, BpropSpec, CellSpec, Param, Signature
from ._validate import switch_problem

__all__ = ["FileMigration", "Note", "Want", "migrate_file", "migrate_paths", "migrate_source", "module_name"]

_CELL = frozenset({"mindspore.nn.Cell", "mindspore.nn.cell.Cell"})
_KWCELL = frozenset({"kwcell.KwCell", "kwcell._cell.KwCell"})
# metaclasses KwCellMeta derives from (abc.ABCMeta) or is: they combine with it
_KWCELLMETA = frozenset({"kwcell.KwCellMeta", "kwcell._meta.KwCellMeta"})
_COMPATIBLE_META = frozenset({"builtins.type", "abc.ABCMeta"}) | _KWCELLMETA
_NAME = "KwCell"
DECORATOR = "@kwcell.keyword_bprop"


@dataclass(frozen=True)
class Note:
    """One line of the report: ``line`` in the original file, ``name`` the class's qualified name."""

    line: int
    name: str
    message: str


@dataclass(frozen=True)
class Want:
    """Class ``name`` (line ``line``) needs KwCell and can get it only from ``base``, a class
    imported from another module (an absolute dotted name)."""

    line: int
    name: str
    base: str


@dataclass(frozen=True)
class FileMigration:
    """What :func:`migrate_source` did to one file."""

    before: str
    after: str
    encoding: str
    switched: tuple[Note, ...]  # one per class whose base was switched
    problems: tuple[Note, ...]  # classes left alone that needed switching, and why
    notes: tuple[Note, ...] = ()  # informational (an import that is no longer used)
    wants: tuple[Want, ...] = ()  # imported bases that must become KwCells in their own file
    defines: frozenset[str] = frozenset()  # absolute names of the module's classes (if known)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self, path: str) -> str:
        """The change as a unified diff, with ``path`` as both file names."""
        return "".join(
            difflib.unified_diff(
                self.before.splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                fromfile=path,
                tofile=path,
            )
        )


@dataclass(eq=False)
class _Class:
    node: cst.ClassDef
    qualname: str
    line: int
    cell_bases: list[cst.Arg] = field(default_factory=list)
    kw_base: bool = False  # a base is kwcell.KwCell itself
    file_bases: list[_Class] = field(default_factory=list)
    children: list[_Class] = field(default_factory=list)
    metaclass: str | None = None  # source of a metaclass= that KwCell's metaclass cannot join
    own_bprop: bool = False
    bprop_kind: str | None = None  # "staticmethod" or "classmethod": KwCell refuses such a bprop
    imported_bases: list[str] = field(default_factory=list)  # absolute names, other modules
    library_cell: str | None = None  # a base that is a MindSpore cell class other than nn.Cell
    defs: dict[str, cst.FunctionDef] = field(default_factory=dict)  # its own construct/bprop defs


_CLAUSES = (cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.MatchCase)


def _walk_suite(body: cst.BaseSuite) -> Iterator[cst.CSTNode]:
    """Statements that run in a class body (into if/try/with/for/while, not into defs)."""
    stack: list[cst.CSTNode] = list(body.body)
    while stack:
        node = stack.pop(0)
        yield node
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(node, cst.SimpleStatementLine):
            stack[:0] = node.body
        elif isinstance(node, cst.BaseCompoundStatement):
            inner: list[cst.CSTNode] = []
            for child in node.children:
                if isinstance(child, cst.If):  # elif
                    inner.append(child)
                elif isinstance(child, cst.BaseSuite):
                    inner += child.body
                elif isinstance(child, _CLAUSES):
                    inner += child.body.body
            stack[:0] = inner


def _binds_bprop(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Name):
        return target.value == "bprop"
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds_bprop(e.value) for e in target.elements)
    return False


def _method_kind(node: cst.CSTNode) -> str | None:
    """``staticmethod``/``classmethod`` if ``node`` (a def or an assignment) makes bprop one."""
    if isinstance(node, cst.FunctionDef):
        names = {get_full_name_for_node(d.decorator) for d in node.decorators}
    elif isinstance(node, (cst.Assign, cst.AnnAssign)) and isinstance(node.value, cst.Call):
        names = {get_full_name_for_node(node.value.func)}
    else:
        return None
    return next((kind for kind in ("staticmethod", "classmethod") if kind in names), None)


def _bprop_kind(body: cst.BaseSuite) -> str | None:
    for node in _walk_suite(body):
        is_def = isinstance(node, cst.FunctionDef) and node.name.value == "bprop"
        is_assign = isinstance(node, cst.Assign) and any(_binds_bprop(t.target) for t in node.targets)
        if is_def or is_assign:
            kind = _method_kind(node)
            if kind is not None:
                return kind
    return None


def _defines_bprop(body: cst.BaseSuite) -> bool:
    for node in _walk_suite(body):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value == "bprop":
            return True
        if isinstance(node, cst.Assign) and any(_binds_bprop(t.target) for t in node.targets):
            return True
        if isinstance(node, cst.AnnAssign) and node.value is not None and _binds_bprop(node.target):
            return True
        if isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.evaluated_alias or alias.evaluated_name
                if bound.split(".")[0] == "bprop":
                    return True
    return False


class _Collector(cst.CSTVisitor):
    """Finds the classes of a module, their bases and their bprops."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, PositionProvider)

    def __init__(self, module: str | None = None, is_package: bool = False) -> None:
        super().__init__()
        self._module = module
        self._package = module if is_package or module is None else module.rpartition(".")[0]
        self.classes: dict[cst.ClassDef, _Class] = {}
        # enclosing classes and functions; a function is paired with its class if it is a method
        self._stack: list[_Class | tuple[cst.FunctionDef, _Class | None]] = []
        self._self_params: dict[cst.Param, _Class] = {}  # first parameter of a method -> its class
        self._bprop_targets: list[cst.Attribute] = []  # X.bprop = ...
        self._star_modules: list[str] = []  # from M import *
        self._scopes: Mapping[cst.CSTNode, object] = {}
        self._positions: Mapping[cst.CSTNode, object] = {}

    def visit_Module(self, node: cst.Module) -> None:
        # kept for the questions asked after the visit (the wrapper clears self.metadata)
        self._scopes = self.metadata[ScopeProvider]
        self._positions = self.metadata[PositionProvider]

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar) and not node.relative and node.module is not None:
            self._star_modules.append(get_full_name_for_node(node.module) or "")

    def _from_star_import(self, expr: cst.BaseExpression) -> set[str]:
        """What a name nothing binds means if it came from ``from mindspore.nn import *``."""
        name = get_full_name_for_node(expr)
        return {f"{module}.{name}" for module in self._star_modules} if name else set()

    # -- names -----------------------------------------------------------------------------
    def _qualname(self, name: str) -> str:
        parts = [
            s.node.name.value if isinstance(s, _Class) else f"{s[0].name.value}.<locals>" for s in self._stack
        ]
        return ".".join([*parts, name])

    def qualified(self, node: cst.CSTNode) -> set[str]:
        """The qualified names a ``Name`` or ``a.b.c`` may have (while visiting); libcst gives a
        call the names of what it calls, which is not what the call returns."""
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return set()
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def scope(self, node: cst.CSTNode) -> Scope | None:
        scope = self._scopes.get(node)
        return scope if isinstance(scope, Scope) else None

    def assignments(self, node: cst.Name) -> list[Assignment]:
        """What ``node`` may be bound to, by Python's scope rules."""
        scope = self.scope(node)
        if scope is None or node.value not in scope:
            return []
        return [a for a in scope[node.value] if isinstance(a, Assignment)]

    def line(self, node: cst.CSTNode) -> int:
        position = self._positions[node]
        assert isinstance(position, CodeRange)
        return position.start.line

    def classes_named(self, expr: cst.BaseExpression) -> list[cst.ClassDef]:
        """The classes of this file that ``expr`` (``Name`` or ``Outer.Inner``) may mean."""
        if isinstance(expr, cst.Name):
            return [a.node for a in self.assignments(expr) if isinstance(a.node, cst.ClassDef)]
        if isinstance(expr, cst.Attribute):
            return [
                node
                for outer in self.classes_named(expr.value)
                for node in _walk_suite(outer.body)
                if isinstance(node, cst.ClassDef) and node.name.value == expr.attr.value
            ]
        return []

    def _derives_kwcellmeta(self, expr: cst.BaseExpression, seen: frozenset[cst.ClassDef]) -> bool:
        if self.qualified(expr) & _KWCELLMETA:
            return True
        defs = [d for d in self.classes_named(expr) if d not in seen]
        return any(self._derives_kwcellmeta(b.value, seen | {d}) for d in defs for b in d.bases)

    def _compatible_metaclass(self, expr: cst.BaseExpression) -> bool:
        names = self.qualified(expr)
        if names and names <= _COMPATIBLE_META:
            return True
        # a metaclass of this file derived from KwCellMeta
        defs = self.classes_named(expr)
        return bool(defs) and all(
            any(self._derives_kwcellmeta(b.value, frozenset({d})) for b in d.bases) for d in defs
        )

    # -- visiting --------------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        name = node.name.value
        info = _Class(node, self._qualname(name), self.line(node.name), own_bprop=_defines_bprop(node.body))
        info.bprop_kind = _bprop_kind(node.body)
        for stmt in _walk_suite(node.body):
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value in ("construct", "bprop"):
                info.defs[stmt.name.value] = stmt  # the last one wins, as in Python
        for arg in node.bases:
            if arg.star:  # *bases
                continue
            names = self.qualified(arg.value) or self._from_star_import(arg.value)
            if names & _CELL:
                info.cell_bases.append(arg)
            elif names & _KWCELL:
                info.kw_base = True
            elif not self.classes_named(arg.value):
                self._note_imported_base(info, arg.value)
        for arg in node.keywords:
            is_metaclass = arg.keyword is not None and arg.keyword.value == "metaclass"
            if is_metaclass and not self._compatible_metaclass(arg.value):
                info.metaclass = _code(arg.value)
        self.classes[node] = info
        self._stack.append(info)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._stack.pop()

    def _note_imported_base(self, info: _Class, expr: cst.BaseExpression) -> None:
        """A base imported from another module: a MindSpore cell class (which cannot be
        switched), or a class of the user's that may be an nn.Cell in its own file."""
        for q in self.get_metadata(QualifiedNameProvider, expr, set()):
            if q.source is not QualifiedNameSource.IMPORT or not isinstance(expr, (cst.Name, cst.Attribute)):
                continue
            name = self._absolute(q.name)
            if name is None:
                continue
            root = name.split(".")[0]
            if name.startswith("mindspore.nn."):
                info.library_cell = name
            elif root not in ("mindspore", "kwcell", "builtins") and root not in sys.stdlib_module_names:
                info.imported_bases.append(name)

    def _absolute(self, name: str) -> str | None:
        """``..base.Base`` relative to this module's package, or ``None`` if that is unknown."""
        level = len(name) - len(name.lstrip("."))
        if not level:
            return name
        if not self._package:
            return None
        parts = self._package.split(".")
        if level - 1 >= len(parts):
            return None
        return ".".join([*parts[: len(parts) - (level - 1)], name[level:]])

    def defines(self) -> frozenset[str]:
        if self._module is None:
            return frozenset()
        return frozenset(
            f"{self._module}.{c.qualname}" for c in self.classes.values() if "<locals>" not in c.qualname
        )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        owner = self._stack[-1] if self._stack else None
        static = any(get_full_name_for_node(d.decorator) == "staticmethod" for d in node.decorators)
        if isinstance(owner, _Class) and not static:
            params = [*node.params.posonly_params, *node.params.params]
            if params:
                self._self_params[params[0]] = owner
        self._stack.append((node, owner if isinstance(owner, _Class) else None))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._stack.pop()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._note_target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._note_target(node.target)

    def _note_target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._note_target(element.value)
        elif isinstance(target, cst.Attribute) and target.attr.value == "bprop":
            self._bprop_targets.append(target)

    def leave_Module(self, original_node: cst.Module) -> None:
        for info in self.classes.values():
            for arg in info.node.bases:
                for base in self.classes_named(arg.value):
                    if base is not info.node and base in self.classes:
                        info.file_bases.append(self.classes[base])
                        self.classes[base].children.append(info)
        # Net.bprop = f, self.bprop = f (in a method), cls.bprop = f: the class gets a bprop
        for target in self._bprop_targets:
            if not isinstance(target.value, cst.Name):
                continue
            for assignment in self.assignments(target.value):
                if isinstance(assignment.node, cst.ClassDef) and assignment.node in self.classes:
                    self.classes[assignment.node].own_bprop = True
                elif isinstance(assignment.node, cst.Param) and assignment.node in self._self_params:
                    self._self_params[assignment.node].own_bprop = True


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _ancestors(info: _Class, seen: set[int] | None = None) -> Iterator[_Class]:
    seen = set() if seen is None else seen
    for base in info.file_bases:
        if id(base) not in seen:
            seen.add(id(base))
            yield base
            yield from _ancestors(base, seen)


def _descendants(info: _Class, seen: set[int] | None = None) -> Iterator[_Class]:
    seen = set() if seen is None else seen
    for child in info.children:
        if id(child) not in seen:
            seen.add(id(child))
            yield child
            yield from _descendants(child, seen)


def _has_bprop(info: _Class) -> bool:
    return info.own_bprop or any(a.own_bprop for a in _ancestors(info))


def _is_kwcell(info: _Class, switched: set[int]) -> bool:
    """Derives from KwCell already, or from a class switched in this run."""
    return any(c.kw_base or id(c) in switched for c in (info, *_ancestors(info)))


@dataclass(frozen=True)
class _Plan:
    switch: list[_Class]
    problems: list[Note]
    wants: list[Want]
    notes: list[Note] = field(default_factory=list)  # switched without a check, and why


def _keyword_decorated(info: _Class) -> bool:
    """Whether the class is decorated with ``kwcell.keyword_bprop`` (it has KwCell's behaviour)."""
    for decorator in info.node.decorators:
        expr = decorator.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        name = get_full_name_for_node(expr) or ""
        if name == "keyword_bprop" or name.endswith(".keyword_bprop"):
            return True
    return False


class _Source:
    """A default that is not a literal: equal to a default written the same way."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Source) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return self.text


def _default(expr: cst.BaseExpression | None) -> object:
    if expr is None:
        return EMPTY
    text = _code(expr)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _Source(text)


def _signature(fn: cst.FunctionDef) -> Signature:
    """``fn``'s signature as :mod:`kwcell._spec` reads a function's (its first parameter,
    ``self``, apart), from the source alone."""
    ps = fn.params
    items: list[tuple[Any, inspect._ParameterKind]] = [
        (p, inspect.Parameter.POSITIONAL_ONLY) for p in ps.posonly_params
    ]
    items += [(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in ps.params]
    self_name = items.pop(0)[0].name.value if items else None
    params = [Param(p.name.value, kind, _default(p.default)) for p, kind in items]
    params += [Param(p.name.value, KEYWORD_ONLY, _default(p.default)) for p in ps.kwonly_params]
    star = ps.star_arg.name.value if isinstance(ps.star_arg, cst.Param) else None
    star_kwarg = ps.star_kwarg.name.value if ps.star_kwarg is not None else None
    return Signature(self_name, tuple(params), star, star_kwarg)


_UNKNOWN = "unknown"


def _method(
    info: _Class, name: str, seen: set[int] | None = None
) -> tuple[cst.FunctionDef, _Class] | str | None:
    """The def of ``name`` that ``info``'s instances run and the class holding it (through the
    bases of this file, in order); ``_UNKNOWN`` when it comes from elsewhere (an assignment, a
    base of another module); ``None`` when no class of the file defines it."""
    seen = set() if seen is None else seen
    seen.add(id(info))
    if name in info.defs:
        return info.defs[name], info
    if name == "bprop" and info.own_bprop:
        return _UNKNOWN  # bprop = f, Net.bprop = f, an import in the class body
    for base in info.file_bases:
        if id(base) not in seen:
            found = _method(base, name, seen)
            if found is not None:
                return found
    return _UNKNOWN if info.imported_bases or info.library_cell else None


def _verdict(info: _Class, module: str | None) -> tuple[str, str] | str | None:
    """For a class with a bprop: ``(code, message)`` when it must stay an nn.Cell (the rule
    of :func:`kwcell._validate.switch_problem`), a reason when its construct and bprop cannot
    be read here, ``None`` when switching keeps its gradients."""
    bprop = _method(info, "bprop")
    construct = _method(info, "construct")
    if not isinstance(bprop, tuple):
        return "its bprop is not a def of this file's classes" if bprop is not None else None
    if not isinstance(construct, tuple):
        return "its construct is not a def of this file's classes"
    (bprop_def, bprop_owner), (construct_def, construct_owner) = bprop, construct
    bsig = _signature(bprop_def)
    classic = bsig.var_positional is not None and not bsig.params and bsig.var_keyword is None
    inherited = bprop_owner.qualname if bprop_owner is not info and construct_owner is info else ""
    spec = CellSpec(
        module or "", info.qualname, _signature(construct_def), BpropSpec(bsig, classic), inherited
    )
    return switch_problem(spec)


def _unsafe_message(code: str, message: str) -> str:
    if code == "KW103":
        return (
            f"left alone ({code}): nn.Cell passes bprop construct's inputs by position, KwCell by "
            f"name, so switching would change its gradient: {message}; rename bprop's parameters to what "
            "they receive (and their uses in its body), then run migrate again"
        )
    return (
        f"left alone ({code}): as a KwCell its class statement would raise: {message}; fix that "
        "(kwcell check shows it), then run migrate again"
    )


def _plan(classes: Sequence[_Class], needed: frozenset[str], module: str | None = None) -> _Plan:
    """Which classes to switch. ``needed`` holds the qualified names of this module's classes
    that classes of other modules derive from and need as KwCells."""

    def needs(info: _Class) -> bool:
        return _has_bprop(info) or info.qualname in needed

    def kwcell_already(info: _Class) -> bool:
        return any(c.kw_base or _keyword_decorated(c) for c in (info, *_ancestors(info)))

    # each bprop cell's construct and bprop against the class statement's rules
    unsafe: dict[int, tuple[str, str]] = {}
    unread: dict[int, str] = {}
    for info in classes:
        if not _has_bprop(info) or kwcell_already(info):
            continue
        verdict = _verdict(info, module)
        if isinstance(verdict, tuple):
            unsafe[id(info)] = verdict
        elif verdict is not None:
            unread[id(info)] = verdict

    switch: list[_Class] = []
    switched: set[int] = set()
    problems = [
        Note(c.line, c.qualname, _unsafe_message(*unsafe[id(c)]))
        for c in classes
        if id(c) in unsafe
        and any(a.cell_bases or a.imported_bases or a.library_cell for a in (c, *_ancestors(c)))
    ]
    notes: list[Note] = []
    for info in classes:  # source order: a base is defined before its subclasses
        if not info.cell_bases or any(_keyword_decorated(c) for c in (info, *_ancestors(info))):
            continue
        if info.kw_base or any(_is_kwcell(b, switched) for b in info.file_bases):
            continue
        if not any(needs(c) for c in (info, *_descendants(info))):
            continue
        if id(info) in unsafe:
            continue  # reported above
        blocker = next((c for c in _descendants(info) if id(c) in unsafe), None)
        if blocker is not None:
            message = (
                f"left alone: switching it would switch its subclass {blocker.qualname} (line "
                f"{blocker.line}), which must stay an nn.Cell ({unsafe[id(blocker)][0]})"
            )
            problems.append(Note(info.line, info.qualname, message))
            continue
        group = (info, *_ancestors(info), *_descendants(info))
        culprit = next((c for c in group if c.metaclass is not None), None)
        if culprit is not None:
            problems.append(Note(info.line, info.qualname, _metaclass_message(info, culprit)))
            continue
        culprit = next((c for c in group if c.bprop_kind is not None), None)
        if culprit is not None:
            problems.append(Note(info.line, info.qualname, _bprop_kind_message(info, culprit)))
            continue
        for cell in (info, *_descendants(info)):
            if id(cell) in unread:
                message = (
                    f"{cell.qualname} is switched without checking its bprop against its construct "
                    f"({unread.pop(id(cell))}); run kwcell check on the result"
                )
                notes.append(Note(cell.line, cell.qualname, message))
        switch.append(info)
        switched.add(id(info))

    # classes that need KwCell but name no nn.Cell here: through a MindSpore cell class (cannot
    # be switched), or through a class of another module (switched in its own file)
    wants: list[Want] = []
    for info in classes:
        if info.cell_bases or info.kw_base or any(c.cell_bases or c.kw_base for c in _ancestors(info)):
            continue
        if any(_keyword_decorated(c) for c in (info, *_ancestors(info))):
            continue
        if not any(needs(c) for c in (info, *_descendants(info))):
            continue
        if any(id(c) in unsafe for c in (info, *_descendants(info))):
            continue  # reported above; its base elsewhere must not be switched for it
        if info.library_cell is not None:
            message = (
                f"not switched: it derives from {info.library_cell}, a MindSpore class, not from "
                f"nn.Cell itself; decorate the class with {DECORATOR} instead"
            )
            problems.append(Note(info.line, info.qualname, message))
        wants += [Want(info.line, info.qualname, base) for base in info.imported_bases]
    problems.sort(key=lambda n: n.line)
    return _Plan(switch, problems, wants, sorted(notes, key=lambda n: n.line))


def _metaclass_message(info: _Class, culprit: _Class) -> str:
    if culprit is info:
        whose = f"metaclass={culprit.metaclass}"
    else:
        relation = "base" if culprit in list(_ancestors(info)) else "subclass"
        whose = (
            f"the metaclass={culprit.metaclass} of its {relation} {culprit.qualname}, line {culprit.line},"
        )
    return (
        f"not switched: {whose} cannot be combined with KwCell's metaclass; keep nn.Cell and "
        f"decorate the class with {DECORATOR} instead (KwCell's behaviour, bases and metaclass unchanged)"
    )


def _bprop_kind_message(info: _Class, culprit: _Class) -> str:
    kind = culprit.bprop_kind
    whose = "its bprop" if culprit is info else f"the bprop of {culprit.qualname} (line {culprit.line})"
    return (
        f"not switched: {whose} is a {kind}, which KwCell refuses: MindSpore calls bprop as a "
        f"method of the cell, with self first; remove @{kind}, write bprop(self, ...) and run "
        "migrate again"
    )


# -- the import ------------------------------------------------------------------------------
def _is_import_line(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def _kwcell_import(stmt: cst.CSTNode) -> cst.ImportFrom | None:
    """``stmt`` is ``from kwcell import ...`` (one statement on its line)."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    node = stmt.body[0]
    if not isinstance(node, cst.ImportFrom) or node.relative or node.module is None:
        return None
    return node if get_full_name_for_node(node.module) == "kwcell" else None


def _sort_key(name: str) -> tuple[int, str]:
    """isort's (and ruff's) default order within an import: CONSTANTS, Classes, functions."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return kind, name


def _add_alias(node: cst.ImportFrom) -> cst.ImportFrom:
    assert not isinstance(node.names, cst.ImportStar)
    names = list(node.names)
    separator = next(
        (a.comma for a in names if isinstance(a.comma, cst.Comma)),
        cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
    )
    index = next(
        (i for i, a in enumerate(names) if _sort_key(a.evaluated_name) > _sort_key(_NAME)), len(names)
    )
    if index < len(names):
        names.insert(index, cst.ImportAlias(cst.Name(_NAME), comma=separator))
    else:
        last = names[-1]
        names[-1] = last.with_changes(comma=separator)
        names.append(cst.ImportAlias(cst.Name(_NAME), comma=last.comma))
    return node.with_changes(names=names)


@dataclass(frozen=True)
class _ImportPlan:
    name: str  # what to write for KwCell
    body: Sequence[cst.BaseStatement]  # the module body with the import added


def _import_plan(module: cst.Module, first_use: int, line_of: dict[int, int]) -> _ImportPlan:
    """Where ``KwCell`` comes from: an existing module-level import, or one added.

    ``first_use`` is the line of the first switched class; only statements before it count.
    """
    body = list(module.body)
    before = [(i, s) for i, s in enumerate(body) if line_of[id(s)] < first_use]
    for _, stmt in before:
        node = _kwcell_import(stmt)
        if node is None:
            continue
        if isinstance(node.names, cst.ImportStar):
            return _ImportPlan(_NAME, body)
        for alias in node.names:
            if alias.evaluated_name == _NAME:
                return _ImportPlan(alias.evaluated_alias or _NAME, body)
    for i, stmt in reversed(before):
        node = _kwcell_import(stmt)
        if node is not None:
            line = body[i]
            assert isinstance(line, cst.SimpleStatementLine)
            body[i] = line.with_changes(body=[_add_alias(node)])
            return _ImportPlan(_NAME, body)
    imports = [i for i, s in before if _is_import_line(s)]
    new = cst.parse_statement(f"from kwcell import {_NAME}\n", config=module.config_for_parsing)
    if imports:
        body.insert(imports[-1] + 1, new)
    elif body and _is_docstring(body[0]):
        body.insert(1, new.with_changes(leading_lines=[cst.EmptyLine()]))
    else:
        body.insert(0, new)
    return _ImportPlan(_NAME, body)


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


class _SwitchBases(cst.CSTTransformer):
    def __init__(self, args: set[cst.Arg], name: str) -> None:
        super().__init__()
        self._args = args
        self._name = name

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        if original_node in self._args:
            return updated_node.with_changes(value=cst.Name(self._name))
        return updated_node


def _imports_kwcell_as(node: cst.CSTNode, name: str) -> bool:
    """``node`` is ``from kwcell import KwCell`` binding ``name`` (or ``from kwcell import *``)."""
    if not isinstance(node, cst.ImportFrom) or node.relative or node.module is None:
        return False
    if get_full_name_for_node(node.module) not in ("kwcell", "kwcell._cell"):
        return False
    if isinstance(node.names, cst.ImportStar):
        return name == _NAME
    return any(a.evaluated_name == _NAME and (a.evaluated_alias or _NAME) == name for a in node.names)


def _name_conflict(collector: _Collector, args: Iterable[cst.Arg], name: str) -> int | None:
    """The line where ``name`` is bound to something other than kwcell's KwCell, if it is."""
    for arg in args:
        scope = collector.scope(arg.value)
        if scope is None or name not in scope:
            continue
        for assignment in scope[name]:
            if not isinstance(assignment, Assignment):
                continue
            node = assignment.node
            if not _imports_kwcell_as(node, name):
                named = node.name if isinstance(node, (cst.ClassDef, cst.FunctionDef)) else node
                return collector.line(named)
    return None


def _unused_imports(collector: _Collector, args: Iterable[cst.Arg]) -> list[Note]:
    """Imports whose every use was a base this run replaced."""
    roots: dict[cst.Name, cst.Arg] = {}
    for arg in args:
        root = arg.value
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name):
            roots[root] = arg
    notes: list[Note] = []
    seen: set[int] = set()
    for root in roots:
        for assignment in collector.assignments(root):
            if id(assignment) in seen or not isinstance(assignment.node, (cst.Import, cst.ImportFrom)):
                continue
            seen.add(id(assignment))
            if all(ref.node in roots for ref in assignment.references):
                message = (
                    f"{assignment.name!r} is no longer used (its uses were the bases switched to "
                    "KwCell); remove the import"
                )
                notes.append(Note(collector.line(assignment.node), assignment.name, message))
    return sorted(notes, key=lambda n: n.line)


def migrate_source(
    source: str | bytes, module: str | None = None, *, is_package: bool = False, needed: Iterable[str] = ()
) -> FileMigration:
    """Switch the bprop cells of one module's source; raises ``SyntaxError`` if it is not Python.

    ``module`` is the module's dotted name, if known (it resolves relative imports and names
    the classes that other modules need); ``needed`` holds absolute names of classes that
    classes of other modules derive from and need as KwCells (see :func:`migrate_paths`).
    """
    try:
        tree = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        msg = f"cannot parse: {exc.message.removeprefix('parser error: ')}"
        raise SyntaxError(msg, (None, exc.raw_line, exc.raw_column + 1, None)) from None
    wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
    collector = _Collector(module, is_package)
    wrapper.visit(collector)
    prefix = f"{module}." if module else None
    local = frozenset(n.removeprefix(prefix) for n in needed if prefix and n.startswith(prefix))
    plan = _plan(list(collector.classes.values()), local, module)
    problems = list(plan.problems)
    unchanged = FileMigration(
        tree.code, tree.code, tree.encoding, (), tuple(problems), (), tuple(plan.wants), collector.defines()
    )
    if not plan.switch:
        return unchanged

    line_of = {id(s): collector.line(s) for s in tree.body}
    imports = _import_plan(tree, min(c.line for c in plan.switch), line_of)
    args = {arg for c in plan.switch for arg in c.cell_bases}
    conflict = _name_conflict(collector, args, imports.name)
    if conflict is not None:
        for info in plan.switch:
            message = (
                f"not switched: the name {imports.name!r} already means something else in this file "
                f"(line {conflict}); rename that, or switch the base by hand to kwcell.KwCell"
            )
            problems.append(Note(info.line, info.qualname, message))
        problems.sort(key=lambda n: n.line)
        return dataclasses.replace(unchanged, problems=tuple(problems))

    switched = tuple(
        Note(c.line, c.qualname, f"{' and '.join(_code(a.value) for a in c.cell_bases)} -> {imports.name}")
        for c in plan.switch
    )
    notes = sorted([*_unused_imports(collector, args), *plan.notes], key=lambda n: n.line)
    new = tree.with_changes(body=imports.body).visit(_SwitchBases(args, imports.name))
    return dataclasses.replace(unchanged, after=new.code, switched=switched, notes=tuple(notes))


def module_name(path: str) -> tuple[str, bool]:
    """The dotted module name of a file, found through its packages' ``__init__.py``, and
    whether it is a package's ``__init__.py``."""
    directory, filename = os.path.split(os.path.abspath(path))
    is_package = filename == "__init__.py"
    parts = [] if is_package else [os.path.splitext(filename)[0]]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
    return ".".join(parts), is_package


def migrate_file(path: str, needed: Iterable[str] = ()) -> FileMigration:
    """:func:`migrate_source` on a file's bytes (its encoding and line endings are kept)."""
    module, is_package = module_name(path)
    with open(path, "rb") as f:
        return migrate_source(f.read(), module or None, is_package=is_package, needed=needed)


Outcome = FileMigration | SyntaxError | UnicodeError | LookupError


def _untouched(data: bytes) -> FileMigration | None:
    """A file that never mentions bprop has no bprop cell: nothing to parse, unless a class
    of another file derives from one of its classes (:func:`migrate_paths` parses it then)."""
    if b"bprop" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeError:
        return None  # a coding: cookie, or not text: the parser says which
    return FileMigration(text, text, "utf-8", (), ())


def _modules_of(paths: Sequence[str]) -> dict[str, str]:
    """Dotted module name -> path, for the files of the run."""
    found: dict[str, str] = {}
    for path in paths:
        name, _ = module_name(path)
        if name:
            found.setdefault(name, path)
    return found


def migrate_paths(paths: Sequence[str]) -> list[tuple[str, Outcome]]:
    """:func:`migrate_file` on each file, seeing across them: a bprop cell whose base is
    imported from another of the files gets that base switched there. Files that cannot be
    read or parsed give the exception instead. Writes nothing.

    A file whose text never mentions ``bprop`` is parsed only when a class of another file
    needs one of its classes as a base (libcst's name resolution is most of the cost)."""
    results: dict[str, Outcome] = {}
    parsed: dict[str, frozenset[str]] = {}  # path -> the needed names it was migrated with
    deferred: dict[str, bytes] = {}  # not parsed yet: no bprop in the text
    modules = _modules_of(paths)

    def run(path: str, needed: frozenset[str], data: bytes | None = None) -> None:
        try:
            if data is None:
                results[path] = migrate_file(path, needed)
            else:
                module, is_package = module_name(path)
                results[path] = migrate_source(data, module or None, is_package=is_package, needed=needed)
        except (SyntaxError, UnicodeError, LookupError) as exc:
            results[path] = exc
        parsed[path] = needed

    for path in paths:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            results[path] = UnicodeError(str(exc))
            continue
        untouched = _untouched(data)
        if untouched is None:
            run(path, frozenset(), data)
        else:
            results[path] = untouched
            deferred[path] = data

    needed: set[str] = set()
    while True:
        done = [r for r in results.values() if isinstance(r, FileMigration)]
        wants = {w.base for r in done for w in r.wants}
        # parse the files that define (or may define) a wanted base
        for base in sorted(wants):
            parts = base.split(".")
            for i in range(len(parts) - 1, 0, -1):
                found = modules.get(".".join(parts[:i]))
                if found is not None and found in deferred:
                    run(found, frozenset(needed), deferred.pop(found))
        done = [r for r in results.values() if isinstance(r, FileMigration)]
        defined = frozenset().union(*(r.defines for r in done))
        wanted = {w.base for r in done for w in r.wants if w.base in defined}
        if wanted <= needed:
            break
        needed |= wanted
        for path, before in list(parsed.items()):
            module, _ = module_name(path)
            mine = frozenset(n for n in needed if module and n.startswith(f"{module}."))
            if mine != frozenset(n for n in before if module and n.startswith(f"{module}.")):
                run(path, frozenset(needed))
    out: list[tuple[str, Outcome]] = []
    for path in paths:
        result = results[path]
        if isinstance(result, FileMigration):
            notes = [*result.notes, *(_outside(w) for w in result.wants if w.base not in defined)]
            result = dataclasses.replace(result, notes=tuple(sorted(notes, key=lambda n: n.line)))
        out.append((path, result))
    return out


def _outside(want: Want) -> Note:
    message = (
        f"{want.name} (or a subclass) has a bprop and derives from {want.base}, which is not in "
        "the files given: if that is an nn.Cell, give its file to migrate as well, or decorate "
        f"{want.name} with {DECORATOR}"
    )
    return Note(want.line, want.name, message)
