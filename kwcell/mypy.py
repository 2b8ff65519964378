"""The kwcell mypy plugin: the class-creation checks of bprop against construct, before the code runs.

Enable it with ``plugins = kwcell.mypy`` (``mypy.ini``) or ``plugins = ["kwcell.mypy"]``
(``[tool.mypy]`` in ``pyproject.toml``). For every class that behaves as a KwCell (it derives
from :class:`kwcell.KwCell`, or is decorated with ``@kwcell.keyword_bprop`` or derives from
such a class, however the decorator was imported) and defines ``construct`` or ``bprop``
itself, the plugin builds the same :class:`kwcell._spec.CellSpec` the runtime builds, from
mypy's view of the two methods, and runs the runtime's checks on it (``check_construct``, ``check_bprop``,
``decorated_bprop``, ``check_returned_literal`` from ``kwcell._validate``). So every message is the runtime
``KwCellDefinitionError`` message (an error) or ``KwCellWarning`` message (a note, for
MindSpore's own bprop forms, whose problems wait for the gradient), reported at the ``bprop``
line (a returned literal at its ``return``; a rule broken against an inherited method at the
method the subclass defines) with the error code ``kwcell-bprop``.

Defaults are compared statically: literals (numbers, strings, ``None``, ``True``/``False``,
tuples and lists of them, a negated number) and ``Final`` literal constants by value,
functions and classes by what they name. A default that cannot be evaluated statically (a
call, a variable that is not ``Final``) is never reported as different.

Classes read from mypy's cache (incremental runs, ``dmypy``) carry no parameter defaults or
bodies, so the plugin records what it read from each class's source in the class's
``metadata`` (which mypy caches) and reads bases from there: warm runs report what cold runs
report. A class with no record is read from its parameter names and kinds, its defaults
unknown (never reported as different).

This is the only kwcell module that imports mypy. It imports the pure modules
``kwcell._spec``/``kwcell._validate`` and never MindSpore (``kwcell/__init__`` imports
MindSpore-backed names lazily for that reason).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from mypy.errorcodes import ErrorCode
from mypy.nodes import (
    ARG_NAMED,
    ARG_NAMED_OPT,
    ARG_STAR,
    ARG_STAR2,
    MDEF,
    ArgKind,
    Argument,
    Block,
    CallExpr,
    ClassDef,
    ComplexExpr,
    Context,
    Decorator,
    DictExpr,
    DictionaryComprehension,
    Expression,
    FloatExpr,
    ForStmt,
    FuncDef,
    GeneratorExpr,
    IfStmt,
    IntExpr,
    ListComprehension,
    ListExpr,
    MatchStmt,
    MemberExpr,
    NameExpr,
    OpExpr,
    OverloadedFuncDef,
    RefExpr,
    ReturnStmt,
    StarExpr,
    Statement,
    StrExpr,
    SymbolTableNode,
    TryStmt,
    TupleExpr,
    TypeInfo,
    UnaryExpr,
    Var,
    WhileStmt,
    WithStmt,
)
from mypy.plugin import ClassDefContext, MethodContext, Plugin
from mypy.plugins.common import add_method_to_class
from mypy.server.trigger import make_trigger
from mypy.types import AnyType, LiteralType, NoneType, Type, TypeOfAny, UnionType

from ._errors import KwCellDefinitionError
from ._returns import DICT, NONE, SEQUENCE, UNKNOWN, VALUE, counted, ends_of
from ._selfstate import Source, attribute_reads, attribute_writes, state_notes
from ._spec import EMPTY, BpropSpec, CellSpec, Param, Signature
from ._validate import (
    CLASSIC_ARGS,
    check_bprop,
    check_construct,
    check_returned_literal,
    decorated_bprop,
    is_mindspore_form,
    jit_on_bprop,
    needs_rewrite,
    passes_through,
)
from ._weightdicts import computed_key_notes, computed_keys

__all__ = ["KWCELL_BPROP", "KwCellPlugin", "plugin"]

KWCELL_BPROP = ErrorCode("kwcell-bprop", "A KwCell's bprop does not fit its construct", "kwcell")

_KWCELL = "kwcell._cell.KwCell"
_DECORATOR = "kwcell._decorate.keyword_bprop"
#: ``TypeInfo.metadata`` key of a class decorated with ``@kwcell.keyword_bprop`` (cached by mypy)
_DECORATED = "kwcell_keyword_bprop"
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
        if isinstance(node, Var):
            if node.is_final and node.final_value is not None:
                return node.final_value
            # any other variable may hold any value when the class statement runs
            return _Opaque(source(expr))
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


def _own_functions(defn: ClassDef) -> dict[str, FuncDef]:
    """The ``construct``/``bprop`` defined in the class statement being analysed now.

    Only these FuncDefs are read for their parameters (``FuncDef.arguments``) and body: a
    class loaded from mypy's cache has neither, only names, kinds and types.
    """
    found: dict[str, FuncDef] = {}
    for stmt in defn.defs.body:
        node = stmt.func if isinstance(stmt, Decorator) else stmt
        if isinstance(node, FuncDef) and node.name in _METHODS and not node.is_static and not node.is_class:
            found[node.name] = node
            if isinstance(stmt, Decorator) and any(_is_jit(d) for d in stmt.original_decorators):
                _JITTED.add(id(node))
    return found


# The FuncDefs being analysed that are decorated with MindSpore's jit (FuncDef has __slots__
# and no weak references; the set is emptied after each class, see ``check_class``).
_JITTED: set[int] = set()


def _signature(fn: FuncDef, source: Callable[[Expression], str], *, has_self: bool = True) -> Signature:
    """``fn``'s signature as :func:`kwcell._spec.signature_of` reads it at runtime."""
    args = list(fn.arguments)
    self_name: str | None = None
    if has_self and args and args[0].kind.is_positional():
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
        default = EMPTY if arg.initializer is None else _static_value(arg.initializer, source)
        params.append(Param(name, _kind(arg.kind, arg.pos_only), default))
    return Signature(self_name, tuple(params), var_positional, var_keyword)


def _kind(kind: ArgKind, pos_only: bool) -> inspect._ParameterKind:
    if kind in (ARG_NAMED, ARG_NAMED_OPT):
        return inspect.Parameter.KEYWORD_ONLY
    if pos_only:
        return inspect.Parameter.POSITIONAL_ONLY
    return inspect.Parameter.POSITIONAL_OR_KEYWORD


def _cached_signature(fn: FuncDef, *, has_self: bool = True) -> Signature:
    """``fn``'s signature from names and kinds only (a class read from mypy's cache).

    Defaults are not in the cache: a parameter that has one gets an unknown default, which is
    never reported as a mismatch.
    """
    names, kinds = list(fn.arg_names), list(fn.arg_kinds)
    self_name: str | None = None
    if has_self and names and kinds[0].is_positional():
        self_name = names.pop(0)
        kinds.pop(0)
    params: list[Param] = []
    var_positional: str | None = None
    var_keyword: str | None = None
    for name, kind in zip(names, kinds, strict=True):
        name = name or "_"
        if kind == ARG_STAR:
            var_positional = name
        elif kind == ARG_STAR2:
            var_keyword = name
        else:
            default = _Opaque("...") if kind.is_optional() else EMPTY
            params.append(Param(name, _kind(kind, False), default))
    return Signature(self_name, tuple(params), var_positional, var_keyword)


# -- what the plugin keeps in mypy's cache (TypeInfo.metadata, JSON) -------------------------
#
# A class's own construct/bprop, read while its class statement is analysed: the signature
# with each default as the plugin evaluated it, and the shapes of bprop's literal returns. A
# subclass checked in a later (incremental or daemon) run reads its bases from here, so it gets
# the same errors as in a cold run.

_META = "kwcell"
_METHODS = ("construct", "bprop")


def _encode_value(value: Any) -> list[Any]:
    if isinstance(value, _Reference):
        return ["ref", value.key, value.text]
    if isinstance(value, _Opaque):
        return ["opaque", value.text]
    if isinstance(value, (tuple, list)):
        return ["tuple" if isinstance(value, tuple) else "list", [_encode_value(v) for v in value]]
    if isinstance(value, (float, complex)):  # repr keeps nan, inf and -0.0
        return [type(value).__name__, repr(value)]
    return ["literal", repr(value)]  # None, bool, int, str: ast.literal_eval gives them back


def _decode_value(data: list[Any]) -> Any:
    tag = data[0]
    if tag == "ref":
        return _Reference(data[1], data[2])
    if tag == "opaque":
        return _Opaque(data[1])
    if tag in ("tuple", "list"):
        items = [_decode_value(v) for v in data[1]]
        return tuple(items) if tag == "tuple" else items
    if tag == "float":
        return float(data[1])
    if tag == "complex":
        return complex(data[1])
    return ast.literal_eval(data[1])


def _encode_signature(sig: Signature) -> dict[str, Any]:
    return {
        "self": sig.self_name,
        "params": [
            [p.name, p.kind.name, None if not p.has_default else _encode_value(p.default)] for p in sig.params
        ],
        "star": sig.var_positional,
        "star2": sig.var_keyword,
    }


def _decode_signature(data: dict[str, Any]) -> Signature:
    params = tuple(
        Param(name, getattr(inspect.Parameter, kind), EMPTY if default is None else _decode_value(default))
        for name, kind, default in data["params"]
    )
    return Signature(data["self"], params, data["star"], data["star2"])


def _return_shapes(fn: FuncDef) -> list[list[Any]]:
    """``[line, "dict", [keys]]`` / ``[line, "tuple", [kinds]]`` for each literal ``return`` of ``fn``.

    The same literals kwcell checks when the class statement runs (kwcell/_source.py): a dict
    whose keys are all strings, a tuple or list without ``*``, with the kind of each element
    (``_returns.element_kind``'s, which ``_returns.counted`` reads).
    """
    shapes: list[list[Any]] = []
    ends = ends_of([a.variable.name for a in fn.arguments])  # out and dout come last (self first)
    for ret in _returns(fn.body.body):
        value = ret.expr
        if isinstance(value, DictExpr) and all(isinstance(k, StrExpr) for k, _ in value.items):
            shapes.append([ret.line, "dict", [k.value for k, _ in value.items if isinstance(k, StrExpr)]])
        elif isinstance(value, (TupleExpr, ListExpr)) and not any(
            isinstance(e, StarExpr) for e in value.items
        ):
            shapes.append([ret.line, "tuple", [_element_kind(e, ends) for e in value.items]])
    return shapes


_CONSTANT_NAMES = ("builtins.True", "builtins.False", "builtins.Ellipsis")
_SEQUENCE_LITERALS = (TupleExpr, ListExpr, ListComprehension, GeneratorExpr, StarExpr)


def _element_kind(expr: Expression, ends: tuple[str, ...]) -> str:
    """``_returns.element_kind`` on mypy's syntax tree."""
    if isinstance(expr, NameExpr):
        if expr.fullname == "builtins.None" or expr.name == "None":
            return NONE
        if expr.fullname in _CONSTANT_NAMES or expr.name in ends:
            return VALUE
        return UNKNOWN
    if isinstance(expr, (DictExpr, DictionaryComprehension)):
        return DICT
    if isinstance(expr, (TupleExpr, ListExpr)):
        return SEQUENCE
    if isinstance(expr, (IntExpr, FloatExpr, ComplexExpr, StrExpr)):
        return VALUE
    return VALUE if _single_value(expr) else UNKNOWN


def _single_value(expr: Expression) -> bool:
    """``_returns.single_value`` on mypy's syntax tree."""
    if isinstance(expr, UnaryExpr):
        return expr.op != "not"
    if not isinstance(expr, OpExpr) or expr.op in ("and", "or"):
        return False
    left, right = expr.left, expr.right
    if isinstance(left, _SEQUENCE_LITERALS) or isinstance(right, _SEQUENCE_LITERALS):
        return False
    if expr.op == "*":
        return not (isinstance(left, IntExpr) or isinstance(right, IntExpr))
    if expr.op == "+":
        numbers = (IntExpr, FloatExpr, ComplexExpr)
        return (
            _single_value(left)
            or _single_value(right)
            or isinstance(left, numbers)
            or isinstance(right, numbers)
        )
    return True


def _returns(body: list[Statement]) -> Iterator[ReturnStmt]:
    """Return statements of a function body (not of nested functions or classes)."""
    for stmt in body:
        if isinstance(stmt, ReturnStmt):
            yield stmt
        elif isinstance(stmt, (FuncDef, Decorator, ClassDef, OverloadedFuncDef)):
            continue
        else:
            for block in _blocks(stmt):
                yield from _returns(block.body)


def _blocks(stmt: Statement) -> list[Block]:
    if isinstance(stmt, Block):
        return [stmt]
    if isinstance(stmt, IfStmt):
        return [*stmt.body, *([stmt.else_body] if stmt.else_body else [])]
    if isinstance(stmt, (WhileStmt, ForStmt)):
        return [stmt.body, *([stmt.else_body] if stmt.else_body else [])]
    if isinstance(stmt, TryStmt):
        others = [b for b in (stmt.else_body, stmt.finally_body) if b is not None]
        return [stmt.body, *stmt.handlers, *others]
    if isinstance(stmt, WithStmt):
        return [stmt.body]
    if isinstance(stmt, MatchStmt):
        return list(stmt.bodies)
    return []


def _function_source(fn: FuncDef, lines: list[str]) -> Source | None:
    """``fn``'s text in its module's ``lines``, as :mod:`kwcell._selfstate` reads it."""
    if not lines or fn.end_line is None or fn.line < 1:
        return None
    return Source("\n".join(lines[fn.line - 1 : fn.end_line]), fn.line)


def _own_init(defn: ClassDef) -> FuncDef | None:
    for stmt in defn.defs.body:
        node = stmt.func if isinstance(stmt, Decorator) else stmt
        if isinstance(node, FuncDef) and node.name == "__init__":
            return node
    return None


def _record(
    info: TypeInfo, own: dict[str, FuncDef], source: Callable[[Expression], str], lines: list[str]
) -> None:
    data: dict[str, Any] = {}
    for name, fn in own.items():
        data[name] = {"signature": _encode_signature(_signature(fn, source))}
        text = _function_source(fn, lines)
        if name == "bprop":
            data[name]["returns"] = _return_shapes(fn)
            data[name]["decorated"] = fn.is_decorated
            data[name]["jit"] = id(fn) in _JITTED
            data[name]["reads"] = attribute_reads(text) if text is not None else {}
            data[name]["computed_keys"] = computed_keys(text) if text is not None else []
        else:
            data[name]["writes"] = attribute_writes(text) if text is not None else {}
    init = _own_init(info.defn)
    text = _function_source(init, lines) if init is not None else None
    if text is not None:
        data["__init__"] = {"writes": attribute_writes(text)}
    info.metadata[_META] = data


def _state(
    info: TypeInfo, construct_owner: TypeInfo, bprop_owner: TypeInfo, qualname: str
) -> list[tuple[int, str]]:
    """The runtime's :func:`kwcell._selfstate.state_notes`, from what the plugin recorded of
    construct's writes, bprop's reads and the ``__init__`` of each recorded class of the MRO
    (a class the plugin never recorded, such as a plain mixin, is not read)."""
    writes = construct_owner.metadata.get(_META, {}).get("construct", {}).get("writes", {})
    reads = bprop_owner.metadata.get(_META, {}).get("bprop", {}).get("reads", {})
    if not writes.keys() & reads.keys():
        return []
    init_writes: dict[str, int] = {}
    for base in info.mro:
        for name, line in base.metadata.get(_META, {}).get("__init__", {}).get("writes", {}).items():
            init_writes.setdefault(name, line)
    return state_notes(
        qualname,
        writes,
        reads,
        init_writes,
        construct_from="" if construct_owner is info else _qualname(construct_owner),
        bprop_from="" if bprop_owner is info else _qualname(bprop_owner),
    )


class _Method:
    """A ``construct`` or ``bprop`` as the plugin knows it, from source or from the cache."""

    def __init__(
        self,
        signature: Signature,
        returns: list[list[Any]] | None,
        decorated: bool = False,
        jit: bool = False,
    ) -> None:
        self.signature = signature
        self.returns = returns or []
        self.decorated = decorated
        #: decorated with MindSpore's ``jit`` (``@jit``, ``@ms.jit``, ``@mindspore.jit(...)``)
        self.jit = jit


def _method(owner: TypeInfo, name: str) -> _Method | None:
    """``owner``'s own ``name`` method (``None`` if it is not a plain function mypy can see)."""
    recorded = owner.metadata.get(_META, {}).get(name)
    if recorded is not None:
        signature = _decode_signature(recorded["signature"])
        return _Method(
            signature, recorded.get("returns"), recorded.get("decorated", False), recorded.get("jit", False)
        )
    sym = owner.names.get(name)
    node = sym.node if sym is not None else None
    decorated = isinstance(node, Decorator)
    jit = isinstance(node, Decorator) and any(_is_jit(d) for d in node.original_decorators)
    if isinstance(node, Decorator):
        node = node.func
    if isinstance(node, FuncDef) and not node.is_static and not node.is_class:
        return _Method(_cached_signature(node), None, decorated, jit)
    return None


def _literal_notes(
    spec: CellSpec,
    returns: Iterable[Sequence[Any]],
    lenient: bool,
    at: list[Context],
    notes: list[tuple[str, Context]],
    place: Callable[[int], Context],
) -> None:
    """Check bprop's literal returns as the class statement does (``check_returned_literal``):
    notes go to ``notes``; ``at[0]`` is where the return being checked is, for an error."""
    for line, form, shape in returns:
        at[0] = place(line)
        if form == "dict":
            note = check_returned_literal(spec, line, keys=shape, lenient=lenient)
        elif counted(shape, len(spec.names)):
            note = check_returned_literal(spec, line, count=len(shape), lenient=lenient)
        else:
            continue  # possibly MindSpore's weight form: told by the value when it runs
        if note is not None:
            notes.append((note, at[0]))


def _deferred_note(exc: Exception, qualname: str, where: Context) -> tuple[str, Context]:
    """A problem of MindSpore's own bprop form: a note now, as the class statement warns."""
    return (f"{exc} (MindSpore's bprop form: the gradient of {qualname} will raise this error)", where)


def _is_jit(expr: Any) -> bool:
    """Whether a decorator expression is MindSpore's ``jit`` (``jit``, ``ms.jit``, ``jit(...)``)."""
    if isinstance(expr, CallExpr):
        expr = expr.callee
    if isinstance(expr, NameExpr | MemberExpr):
        return expr.name == "jit"
    return False


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
    info: TypeInfo,
    own: dict[str, FuncDef],
    report: Callable[[str, Context, bool], None],
    lines: list[str],
) -> None:
    """Check one KwCell subclass the way ``KwCellMeta`` does when its class statement runs.

    ``report(message, where, warning)`` gets each ``KwCellDefinitionError`` (``warning`` false)
    and each ``KwCellWarning`` (true) the class statement would raise or warn.
    ``own`` are the class's own ``construct``/``bprop`` as parsed now; every other class of
    the MRO is read from what the plugin recorded (or, failing that, from names and kinds).
    ``lines`` are the source lines of the class's module (for quoting default expressions).
    """
    _record(info, own, _source_reader(lines), lines)
    if not own:
        return  # nothing new: the class that defined the methods was checked
    bprop_owner = _defining(info, "bprop")
    if bprop_owner is None:
        return  # no bprop: a plain nn.Cell, nothing to check
    where: Context = own.get("bprop") or own.get("construct") or info.defn
    qualname = _qualname(info)
    construct_owner = _defining(info, "construct")
    if construct_owner is None:
        return  # a base that defines only bprop: its subclasses bring construct
    bprop = _method(bprop_owner, "bprop")
    construct = _method(construct_owner, "construct")
    if bprop is None or construct is None:
        return  # assigned or wrapped in ways mypy cannot see through: the runtime checks it
    bsig = _settle_opaque_defaults(bprop.signature, construct.signature)
    inherited = bprop_owner.name if bprop_owner is not info and construct_owner is info else ""
    spec = CellSpec(
        info.module_name, qualname, construct.signature, BpropSpec(bsig, _is_classic(bsig)), inherited
    )
    # As KwCellMeta does: construct's own problems are errors; MindSpore's own bprop forms
    # keep MindSpore's timing (a problem nn.Cell reports only when the gradient is taken is a
    # warning at class creation), kwcell's forms fail at class creation.
    try:
        check_construct(spec)
    except KwCellDefinitionError as exc:
        report(str(exc), where, False)
        return
    # state construct stores on self for bprop (KW009), reported after the other notes
    found = bprop_owner.metadata.get(_META, {}).get("bprop", {}).get("computed_keys", [])
    bprop_from = "" if bprop_owner is info else _qualname(bprop_owner)
    state = [
        (note, Context(line=line) if bprop_owner is info else where)
        for line, note in [
            *_state(info, construct_owner, bprop_owner, qualname),
            *computed_key_notes(qualname, [(int(f[0]), str(f[1])) for f in found], bprop_from=bprop_from),
        ]
    ]
    if passes_through(spec):
        for note, place in state:  # otherwise left to MindSpore exactly as an nn.Cell
            report(note, place, True)
        return
    lenient = is_mindspore_form(bsig)
    notes: list[tuple[str, Context]] = []
    at = [where]  # where the check stands (the return being read), for an error
    try:
        reading = check_bprop(spec)
        if bprop.decorated and needs_rewrite(spec, reading):  # as the class statement
            raise decorated_bprop(qualname, jit=bprop.jit)
        if bprop.jit and reading != CLASSIC_ARGS:
            notes.append(_deferred_note(jit_on_bprop(qualname), qualname, where))
        if reading != CLASSIC_ARGS:
            # an own bprop's return is reported where it is; an inherited one's at the method
            # this class defines
            defined_here = bprop_owner is info
            _literal_notes(
                spec,
                bprop.returns,
                lenient,
                at,
                notes,
                lambda line: Context(line=line) if defined_here else where,
            )
    except KwCellDefinitionError as exc:
        if not lenient or exc._kwcell_at_definition:
            report(str(exc), at[0], False)
            return
        notes = [_deferred_note(exc, qualname, where)]
    for note, place in [*notes, *state]:
        report(note, place, True)


# -- kwcell.custom_bprop functions ---------------------------------------------------------
#
# ``@scaled.bprop`` is a call of ``CustomBprop.bprop``: a method hook sees it with the decorated
# backward (the ``Decorator`` node is the call's context) and ``scaled``, whose own
# ``Decorator`` node holds the function. The spec is the one kwcell.custom_bprop builds.

_FUNCTION_BPROP = "kwcell._functional.CustomBprop.bprop"


def _registration(ctx: MethodContext) -> tuple[FuncDef, FuncDef, int, Context] | None:
    """``(function, backward, other decorators on the backward, where)`` of a registration."""
    context = ctx.context
    target: MemberExpr | None = None
    if isinstance(context, Decorator):
        backward = context.func
        others = len(context.decorators) - 1
        for d in context.decorators:
            if isinstance(d, MemberExpr) and d.name == "bprop":
                target = d
    elif isinstance(context, CallExpr) and isinstance(context.callee, MemberExpr):
        target = context.callee  # scaled.bprop(backward)
        arg = ctx.args[0][0] if ctx.args and ctx.args[0] else None
        node = arg.node if isinstance(arg, NameExpr) else None
        if isinstance(node, Decorator):
            backward, others = node.func, len(node.decorators)
        elif isinstance(node, FuncDef):
            backward, others = node, 0
        else:
            return None
    else:
        return None
    owner = target.expr.node if target is not None and isinstance(target.expr, RefExpr) else None
    if not isinstance(owner, Decorator):
        return None  # not a decorated def that mypy can see: the runtime checks it
    return owner.func, backward, others, context


def _function_signature(fn: FuncDef, source: Callable[[Expression], str]) -> Signature:
    if fn.arguments or not fn.arg_names:
        return _signature(fn, source, has_self=False)
    return _cached_signature(fn, has_self=False)  # read from mypy's cache: defaults unknown


def check_function(
    forward: FuncDef,
    backward: FuncDef,
    others: int,
    where: Context,
    report: Callable[[str, Context, bool], None],
    lines: list[str],
) -> None:
    """Check one ``@scaled.bprop`` registration the way ``kwcell.custom_bprop`` does at runtime.

    ``report`` is as for :func:`check_class`. The function's own problems (``*args``,
    ``out``...) are reported at the function, the backward's at the registration.
    """
    source = _source_reader(lines)
    fsig = _function_signature(forward, source)
    construct = Signature("self", fsig.params, fsig.var_positional, fsig.var_keyword)
    module, _, _ = forward.fullname.rpartition(".")
    qualname = forward.name
    try:
        check_construct(CellSpec(module, qualname, construct, None, function=True))
    except KwCellDefinitionError as exc:
        report(str(exc), forward, False)
        return
    bsig = _settle_opaque_defaults(_signature(backward, source, has_self=False), construct)
    spec = CellSpec(module, qualname, construct, BpropSpec(bsig, _is_classic(bsig)), function=True)
    lenient = is_mindspore_form(bsig)
    notes: list[tuple[str, Context]] = []
    at = [where]  # where the check stands (the return being read), for an error
    try:
        if check_bprop(spec) != CLASSIC_ARGS:
            if others:
                raise decorated_bprop(qualname, function=True)
            _literal_notes(
                spec, _return_shapes(backward), lenient, at, notes, lambda line: Context(line=line)
            )
    except KwCellDefinitionError as exc:
        if not lenient or exc._kwcell_at_definition:
            report(str(exc), at[0], False)
            return
        notes = [_deferred_note(exc, qualname, where)]
    for note, place in notes:
        report(note, place, True)


def _on_function_bprop(ctx: MethodContext) -> Type:
    found = _registration(ctx)
    if found is None:
        return ctx.default_return_type

    def report(msg: str, where: Context, warning: bool) -> None:
        if warning:
            ctx.api.msg.note(msg, where, code=KWCELL_BPROP)
        else:
            ctx.api.fail(msg, where, code=KWCELL_BPROP)

    forward, backward, others, where = found
    tree = getattr(ctx.api, "tree", None)  # the module being checked (mypy's TypeChecker)
    same_file = tree is not None and forward.fullname.rpartition(".")[0] == tree.fullname
    check_function(forward, backward, others, where, report, _module_lines(ctx.api.path) if same_file else [])
    return ctx.default_return_type


def _gives_kwcell_behaviour(info: TypeInfo) -> bool:
    """``KwCell`` itself, or a class decorated with ``@kwcell.keyword_bprop``."""
    return info.fullname == _KWCELL or _DECORATED in info.metadata


def _has_kwcell_behaviour(info: TypeInfo) -> bool:
    """Whether a class behaves as a KwCell, as the runtime decides it
    (``kwcell._decorate.has_kwcell_behaviour``): a ``KwCell`` subclass, or a class decorated
    with ``@kwcell.keyword_bprop`` or derived from one."""
    return any(_gives_kwcell_behaviour(base) for base in info.mro)


class KwCellPlugin(Plugin):
    """Checks the ``bprop`` against the ``construct`` of every class that behaves as a KwCell
    (a ``KwCell`` subclass, a class decorated with ``@kwcell.keyword_bprop`` or derived from
    one), and every ``kwcell.custom_bprop`` function's backward against the function."""

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        return _on_function_bprop if fullname == _FUNCTION_BPROP else None

    def get_class_decorator_hook(self, fullname: str) -> Callable[[ClassDefContext], None] | None:
        return _on_decorated_class if fullname == _DECORATOR else None

    def get_base_class_hook(self, fullname: str) -> Callable[[ClassDefContext], None] | None:
        if fullname == _KWCELL:
            return _on_class
        sym = self.lookup_fully_qualified(fullname)
        if sym is not None and isinstance(sym.node, TypeInfo) and _has_kwcell_behaviour(sym.node):
            return _on_class
        return None


def _on_decorated_class(ctx: ClassDefContext) -> None:
    """``@kwcell.keyword_bprop`` on a class: from now on it behaves as a KwCell (its subclasses
    are checked through the base class hook), and it is checked as one now, unless a base
    already gives it that behaviour (then the base class hook checks it, as the runtime's
    decorator changes nothing)."""
    info = ctx.cls.info
    if any(_gives_kwcell_behaviour(base) for base in info.mro[1:]):
        return
    info.metadata[_DECORATED] = {}
    if "__init_subclass__" not in info.names:
        _add_init_subclass(ctx)
    _on_class(ctx)


def _add_init_subclass(ctx: ClassDefContext) -> None:
    """``__init_subclass__(cls, *, compile_once: bool | None = None, **kwargs: Any) -> None``,
    as on ``KwCell``: the decorator's hook takes ``class Sub(Base, compile_once=True)`` too.
    (A class with an ``__init_subclass__`` of its own keeps it as it is written.)"""
    api = ctx.api
    flag = UnionType([api.named_type("builtins.bool"), NoneType()])
    rest = AnyType(TypeOfAny.explicit)
    args = [
        Argument(Var("compile_once", flag), flag, NameExpr("None"), ARG_NAMED_OPT),
        Argument(Var("kwargs", rest), rest, None, ARG_STAR2),
    ]
    add_method_to_class(api, ctx.cls, "__init_subclass__", args, NoneType(), is_classmethod=True)


def _on_class(ctx: ClassDefContext) -> None:
    def report(msg: str, where: Context, warning: bool) -> None:
        if warning:
            ctx.api.msg.note(msg, where, code=KWCELL_BPROP)
        else:
            ctx.api.fail(msg, where, code=KWCELL_BPROP)

    info = ctx.cls.info
    module = ctx.api.modules.get(info.module_name)
    lines = _module_lines(module.path) if module is not None else []
    try:
        check_class(info, _own_functions(ctx.cls), report, lines)
    finally:
        _JITTED.clear()
    _stamp(ctx, info)


def _module_lines(module_path: str) -> list[str]:
    """The lines of the file at ``module_path`` (``[]`` if unreadable), re-read when it changes."""
    try:
        stat = os.stat(module_path)
        key = (module_path, stat.st_mtime_ns, stat.st_size)
        if key not in _SOURCES:
            with open(module_path, encoding="utf-8") as f:
                _SOURCES[key] = f.read().splitlines()
        return _SOURCES[key]
    except (OSError, UnicodeDecodeError):
        return []


_SOURCES: dict[tuple[str, int, int], list[str]] = {}
_STAMP = "__kwcell_record__"


def _stamp(ctx: ClassDefContext, info: TypeInfo) -> None:
    """Make a change of the record visible to ``dmypy``, and re-check subclasses when a base's changes.

    mypy's daemon re-checks a class when the types of what it depends on change; a changed
    default value changes no type. So each class gets a hidden attribute whose literal type is
    a digest of its record, and depends on that attribute of each base.
    """
    record = json.dumps(info.metadata.get(_META, {}), sort_keys=True)
    digest = hashlib.sha256(record.encode("utf-8")).hexdigest()[:16]
    var = Var(_STAMP, LiteralType(digest, ctx.api.named_type("builtins.str")))
    var.info = info
    var._fullname = f"{info.fullname}.{_STAMP}"
    var.is_classvar = True
    info.names[_STAMP] = SymbolTableNode(MDEF, var, plugin_generated=True)
    for base in info.mro[1:]:
        if _META in base.metadata:
            ctx.api.add_plugin_dependency(make_trigger(f"{base.fullname}.{_STAMP}"))


def plugin(version: str) -> type[Plugin]:
    """Entry point named by ``plugins = kwcell.mypy``."""
    return KwCellPlugin
