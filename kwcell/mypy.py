"""The kwcell mypy plugin: the bprop/construct rules, reported before the code runs.

Enable it with ``plugins = kwcell.mypy`` (``mypy.ini``) or ``plugins = ["kwcell.mypy"]``
(``[tool.mypy]`` in ``pyproject.toml``). For every class that derives from
:class:`kwcell.KwCell` and defines ``construct`` or ``bprop`` itself, the plugin builds the
same :class:`kwcell._spec.CellSpec` the metaclass builds at runtime, from mypy's view of the
two methods, and runs the runtime validator on it. So every message is the runtime
``KwCellDefinitionError`` message, reported at the ``bprop`` line (or the line of the method
the subclass defines, for a rule broken against an inherited method) with the error code
``kwcell-bprop``.

Defaults are compared statically: literals (numbers, strings, ``None``, ``True``/``False``,
tuples and lists of them, a negated number) and names of ``Final`` literal constants by
value, other names by what they refer to. A default that cannot be evaluated statically
(e.g. a call) is never reported.

This is the only kwcell module that imports mypy. It imports the pure modules
``kwcell._spec``/``kwcell._validate`` and never MindSpore (``kwcell/__init__`` imports
MindSpore-backed names lazily for that reason).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from mypy.errorcodes import ErrorCode
from mypy.nodes import (
    ARG_NAMED,
    ARG_NAMED_OPT,
    ARG_STAR,
    ARG_STAR2,
    ComplexExpr,
    Context,
    Decorator,
    Expression,
    FloatExpr,
    FuncDef,
    IntExpr,
    ListExpr,
    MemberExpr,
    NameExpr,
    StrExpr,
    TupleExpr,
    TypeInfo,
    UnaryExpr,
    Var,
)
from mypy.plugin import ClassDefContext, Plugin

from ._errors import KwCellDefinitionError
from ._spec import EMPTY, BpropSpec, CellSpec, Param, Signature
from ._validate import validate

__all__ = ["KWCELL_BPROP", "KwCellPlugin", "plugin"]

KWCELL_BPROP = ErrorCode("kwcell-bprop", "A KwCell's bprop does not fit its construct", "kwcell")

_KWCELL = "kwcell._cell.KwCell"
_CELL_BASES = frozenset({"mindspore.nn.Cell", "mindspore.nn.cell.Cell"})


class _Reference:
    """A default that names something (``DEFAULT``, ``mod.SCALE``): equal iff it names the same thing.

    Its ``repr`` is the source text, so messages read like the source.
    """

    def __init__(self, key: str, text: str) -> None:
        self.key = key
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reference) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return self.text


class _Opaque:
    """A default mypy cannot evaluate (a call, an operator, ...): never compared, shown as written."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _static_value(expr: Expression, source: Callable[[Expression], str]) -> Any:
    """The value of a default expression, a :class:`_Reference`, or an :class:`_Opaque`."""
    if isinstance(expr, (IntExpr, FloatExpr, StrExpr, ComplexExpr)):
        return expr.value
    if isinstance(expr, UnaryExpr) and expr.op in ("-", "+"):
        inner = _static_value(expr.expr, source)
        if isinstance(inner, (int, float, complex)) and not isinstance(inner, bool):
            return -inner if expr.op == "-" else inner
    elif isinstance(expr, (TupleExpr, ListExpr)):
        items = [_static_value(e, source) for e in expr.items]
        if not any(isinstance(i, (_Opaque, _Reference)) for i in items):
            return tuple(items) if isinstance(expr, TupleExpr) else items
    elif isinstance(expr, (NameExpr, MemberExpr)):
        fullname = expr.fullname
        if fullname in _BUILTIN_CONSTANTS:
            return _BUILTIN_CONSTANTS[fullname]
        node = expr.node
        if isinstance(node, Var) and node.is_final and node.final_value is not None:
            return node.final_value
        if fullname:
            return _Reference(fullname, source(expr))
    return _Opaque(source(expr))


_BUILTIN_CONSTANTS: dict[str, Any] = {"builtins.None": None, "builtins.True": True, "builtins.False": False}


def _source_reader(lines: list[str]) -> Callable[[Expression], str]:
    """Source text of an expression in a module whose lines are ``lines`` (``...`` if unknown)."""

    def source(expr: Expression) -> str:
        end_line, end_column = expr.end_line, expr.end_column
        if expr.line < 1 or end_line is None or end_column is None or end_line > len(lines):
            return "..."
        if expr.line == end_line:
            return lines[expr.line - 1][expr.column : end_column]
        parts = [lines[expr.line - 1][expr.column :], *lines[expr.line : end_line - 1]]
        parts.append(lines[end_line - 1][:end_column])
        return " ".join(part.strip() for part in parts)

    return source


def _function(info: TypeInfo, name: str) -> FuncDef | None:
    """``info``'s own ``name`` method as a FuncDef (decorators such as ``@ms.jit`` looked through)."""
    sym = info.names.get(name)
    node = sym.node if sym is not None else None
    if isinstance(node, Decorator):
        node = node.func
    if isinstance(node, FuncDef) and not node.is_static and not node.is_class:
        return node
    return None


def _signature(fn: FuncDef, source: Callable[[Expression], str]) -> Signature:
    """``fn``'s signature as :func:`kwcell._spec.signature_of` reads it at runtime."""
    args = list(fn.arguments)
    self_name: str | None = None
    if args and args[0].kind.is_positional():
        self_name = args.pop(0).variable.name
    params: list[Param] = []
    var_positional: str | None = None
    var_keyword: str | None = None
    for arg in args:
        name = arg.variable.name
        if arg.kind == ARG_STAR:
            var_positional = name
            continue
        if arg.kind == ARG_STAR2:
            var_keyword = name
            continue
        kind: inspect._ParameterKind
        if arg.kind in (ARG_NAMED, ARG_NAMED_OPT):
            kind = inspect.Parameter.KEYWORD_ONLY
        elif arg.pos_only:
            kind = inspect.Parameter.POSITIONAL_ONLY
        else:
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        default = EMPTY if arg.initializer is None else _static_value(arg.initializer, source)
        params.append(Param(name, kind, default))
    return Signature(self_name, tuple(params), var_positional, var_keyword)


def _settle_opaque_defaults(bprop: Signature, construct: Signature) -> Signature:
    """A bprop default that cannot be compared with construct's becomes construct's (never reported)."""
    params: list[Param] = []
    for p in bprop.params:
        cp = construct.get(p.name)
        if (
            p.has_default
            and cp is not None
            and cp.has_default
            and (isinstance(p.default, _Opaque) or isinstance(cp.default, _Opaque))
        ):
            p = Param(p.name, p.kind, cp.default)
        params.append(p)
    return Signature(bprop.self_name, tuple(params), bprop.var_positional, bprop.var_keyword)


def _is_classic(sig: Signature) -> bool:
    return sig.var_positional is not None and not sig.params and sig.var_keyword is None


def _defining(info: TypeInfo, name: str) -> TypeInfo | None:
    """The class in ``info``'s MRO whose ``name`` the runtime uses (``None``: nn.Cell's or none)."""
    for base in info.mro:
        if name in base.names:
            if base.fullname in _CELL_BASES or base.fullname == "builtins.object":
                return None
            return base
    return None


def _qualname(info: TypeInfo) -> str:
    prefix = info.module_name + "."
    name = info.fullname[len(prefix) :] if info.fullname.startswith(prefix) else info.name
    # classes defined inside functions get an "@<line>" suffix in mypy's fullname
    return ".".join(part.split("@")[0] for part in name.split("."))


def check_class(
    info: TypeInfo, report: Callable[[str, Context], None], sources: Callable[[str], list[str]]
) -> None:
    """Check one KwCell subclass the way ``KwCellMeta`` does when its class statement runs.

    ``sources(module)`` gives a module's source lines (for quoting default expressions).
    """
    if "construct" not in info.names and "bprop" not in info.names:
        return  # nothing new: the class that defined the methods was checked
    bprop_owner = _defining(info, "bprop")
    if bprop_owner is None:
        return  # no bprop: a plain nn.Cell, nothing to check
    own_fn = _function(info, "bprop") or _function(info, "construct")
    where: Context = own_fn if own_fn is not None else info.defn
    qualname = _qualname(info)
    construct_owner = _defining(info, "construct")
    if construct_owner is None:
        return  # a base that defines only bprop: its subclasses bring construct
    bprop_fn = _function(bprop_owner, "bprop")
    construct_fn = _function(construct_owner, "construct")
    if bprop_fn is None or construct_fn is None:
        return  # assigned or wrapped in ways mypy cannot see through: the runtime checks it
    construct = _signature(construct_fn, _source_reader(sources(construct_owner.module_name)))
    bprop = _signature(bprop_fn, _source_reader(sources(bprop_owner.module_name)))
    bprop = _settle_opaque_defaults(bprop, construct)
    inherited = bprop_owner.name if bprop_owner is not info and construct_owner is info else ""
    spec = CellSpec(info.module_name, qualname, construct, BpropSpec(bprop, _is_classic(bprop)), inherited)
    try:
        validate(spec)
    except KwCellDefinitionError as exc:
        report(str(exc), where)


class KwCellPlugin(Plugin):
    """Checks every ``KwCell`` subclass's ``bprop`` against its ``construct``."""

    def get_base_class_hook(self, fullname: str) -> Callable[[ClassDefContext], None] | None:
        if fullname == _KWCELL:
            return _on_class
        sym = self.lookup_fully_qualified(fullname)
        if (
            sym is not None
            and isinstance(sym.node, TypeInfo)
            and any(base.fullname == _KWCELL for base in sym.node.mro)
        ):
            return _on_class
        return None


def _on_class(ctx: ClassDefContext) -> None:
    def report(msg: str, where: Context) -> None:
        ctx.api.fail(msg, where, code=KWCELL_BPROP)

    def sources(module: str) -> list[str]:
        if module not in _SOURCES:
            tree = ctx.api.modules.get(module)
            try:
                with open(tree.path, encoding="utf-8") as f:  # type: ignore[union-attr]
                    _SOURCES[module] = f.read().splitlines()
            except (OSError, AttributeError, UnicodeDecodeError):
                _SOURCES[module] = []
        return _SOURCES[module]

    check_class(ctx.cls.info, report, sources)


_SOURCES: dict[str, list[str]] = {}


def plugin(version: str) -> type[Plugin]:
    """Entry point named by ``plugins = kwcell.mypy``."""
    return KwCellPlugin
