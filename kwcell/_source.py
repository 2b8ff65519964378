"""Rewriting the user's ``bprop`` into a positional function, from its own source.

MindSpore's graph compiler cannot call a function with keyword arguments inside a bprop, so
the user's ``bprop(self, x, w=1.0, *, out, dout)`` becomes ``bprop(self, x, w, y, out, dout)``:
the same body, globals and closure, with parameters in ``construct``'s order. Returns of dict
and tuple literals are checked here, when the class is created, and dict literals become
tuples (MindSpore cannot build a dict in a bprop under PyNative ``@ms.jit``).
"""

from __future__ import annotations

import ast
import builtins
import copy
import dis
import functools
import inspect
import io
import linecache
import re
import sys
import textwrap
import tokenize
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ._codegen import AST_LOCK
from ._lookup import super_reader
from ._returns import SEQUENCE, VALUE, check_return, counted, element_kind, ends_of
from ._selfstate import Source, attribute_reads, attribute_writes, first_parameter, function_def, state_notes
from ._spec import CellSpec
from ._validate import BY_POSITION, check_returned_literal, decorated_bprop
from ._weightdicts import computed_key_notes, computed_keys

__all__ = [
    "RewrittenBprop",
    "calls_super_bprop",
    "function_source",
    "no_source_reason",
    "parsable_source",
    "rewrite_bprop",
    "stale_source",
    "state_on_self",
    "written_copy",
]


ZERO = "_kwcell_zero"  # closure name of kwcell._runtime.graph_zero in the rewritten bprop
FILL = "_kwcell_fill"  # closure name of kwcell._runtime.graph_fill in the rewritten bprop


@dataclass(frozen=True)
class RewrittenBprop:
    """Source of the positional bprop, and where the user's original lives.

    ``static`` is true when every return was turned into a tuple with one entry per input
    when the class was created, so nothing is left to normalise at run time (the generated
    core then calls bprop directly, which compiles as fast as a hand-written bprop).
    """

    source: str
    origin: str
    static: bool
    #: Problems MindSpore itself would pass over silently (extra gradients it ignores), to be
    #: reported as warnings.
    notes: tuple[str, ...] = ()
    #: Whether some return had to be rewritten (``None`` entries, dicts, a short tuple...).
    changed: bool = False
    #: Whether the body calls ``super().bprop`` (rewritten to name the defining class).
    has_super: bool = False
    #: Whether some returned tuple holds a container literal (a tuple input's gradients, a dict).
    nested: bool = False
    #: The names that dict keys naming the cell's attributes (``{self.w: gw}``) were rewritten
    #: to (``"self.w"``): a graph's dict keys cannot be Parameters.
    weight_keys: tuple[str, ...] = ()


_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _returns(node: ast.AST) -> Iterator[ast.Return]:
    """Return statements of ``node``'s own body (not of nested functions or classes).

    Only statement lists are walked: a ``return`` is a statement, and expressions (where a
    lambda could hide) cannot contain one.
    """
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        for child in getattr(node, field, ()):
            if isinstance(child, ast.Return):
                yield child
            elif not isinstance(child, _NESTED_SCOPES):
                yield from _returns(child)


def _alias(name: str) -> str:
    return f"_kwcell_in_{name}"


class _Text:
    """The dedented source of one function, addressed by AST positions (UTF-8 columns)."""

    def __init__(self, source: str) -> None:
        self.data = source.encode("utf-8")
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col: int) -> int:
        return self.starts[lineno - 1] + col

    def span(self, node: ast.expr | ast.stmt) -> tuple[int, int]:
        end_lineno, end_col = node.end_lineno, node.end_col_offset
        assert end_lineno is not None and end_col is not None
        return self.offset(node.lineno, node.col_offset), self.offset(end_lineno, end_col)

    def segment(self, node: ast.expr | ast.stmt) -> str:
        a, b = self.span(node)
        return self.data[a:b].decode("utf-8")


def _has_none_entry(node: ast.expr) -> bool:
    """Whether ``node`` is a tuple/list literal with a ``None`` entry, at any depth."""
    if not isinstance(node, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in node.elts):
        return False
    return any((isinstance(e, ast.Constant) and e.value is None) or _has_none_entry(e) for e in node.elts)


@dataclass(frozen=True)
class _Entries:
    """How one bprop's returned entries are written: which names certainly hold neither
    ``None`` nor a dict (``sure``), and the bprop's name for messages (``where``)."""

    text: _Text
    sure: frozenset[str]
    where: str
    ends: tuple[str, ...]  # bprop's names for out and dout (the count rule's sure names)


def _entry(node: ast.expr, input_text: str, name: str, how: _Entries) -> str:
    """The source of one gradient entry for the input named by ``input_text``.

    ``None`` becomes that input's zeros; a tuple or list literal (the gradient of a tuple
    input) is rewritten element by element, so ``(None, g)`` gives zeros for element 0. An
    entry that may hold ``None`` or a dict when it runs (a variable, a call, a conditional)
    is decided by its value while the graph is compiled (``_runtime.graph_fill``: zeros for
    ``None``, a clear error for a dict); arithmetic, numbers and names that only ever hold
    those are written as they are.
    """
    if isinstance(node, ast.Constant) and node.value is None:
        return f"{ZERO}({input_text})"
    if _has_none_entry(node):
        assert isinstance(node, (ast.Tuple, ast.List))
        parts = [_entry(e, f"{input_text}[{i}]", name, how) for i, e in enumerate(node.elts)]
        if isinstance(node, ast.List):
            return "[" + ", ".join(parts) + "]"
        return f"({parts[0]},)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"
    segment = how.text.segment(node)
    if _certain(node, how.sure):
        return segment
    return f"{FILL}({segment}, {input_text}, {how.where!r}, {name!r})"


def _certain(node: ast.expr, sure: frozenset[str]) -> bool:
    """Whether ``node`` certainly holds neither ``None`` nor a dict when it runs."""
    if isinstance(node, ast.Name):
        return node.id in sure
    return element_kind(node) in (VALUE, SEQUENCE)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _sure_names(fdef: ast.FunctionDef, always: tuple[str, ...]) -> frozenset[str]:
    """The names of ``fdef`` whose every binding is arithmetic or a number (or ``always``,
    bprop's ``out`` and ``dout``): they never hold ``None`` or a dict. Any other binding (a
    call, a parameter, a loop target, unpacking, a nested scope...) makes a name unsure."""
    ok: dict[str, bool] = {}

    def bind(name: str, sure: bool) -> None:
        ok[name] = ok.get(name, True) and sure

    args = fdef.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            bind(arg.arg, arg.arg in always)
    for node in ast.walk(fdef):
        if node is fdef:
            continue
        if isinstance(node, ast.Assign):
            for target in node.targets:
                sure = isinstance(target, ast.Name) and element_kind(node.value) == VALUE
                for found in ast.walk(target):
                    if isinstance(found, ast.Name):
                        bind(found.id, sure)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            bind(node.target.id, node.value is not None and element_kind(node.value) == VALUE)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            bind(node.target.id, True)  # the result of an arithmetic operator
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bind(node.id, False)  # loop and comprehension targets, with ... as, :=, del
        elif isinstance(node, _SCOPES) and not isinstance(node, ast.Lambda):
            bind(node.name, False)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bind((alias.asname or alias.name).split(".")[0], False)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bind(name, False)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name, False)
    return frozenset(name for name, sure in ok.items() if sure)


def _return_text(
    spec: CellSpec,
    ret: ast.Return,
    how: _Entries,
    first_line: int,
    notes: list[str] | None,
    weighted: bool,
) -> str | None:
    """Check a ``return`` whose value is a literal and give the full tuple that replaces it.

    ``None`` when the value is not a literal kwcell can normalise now (it is then normalised
    at run time, by its value): a name, a call, or a literal that may be MindSpore's weight
    form (``_returns.counted``).
    """
    names = spec.names
    value = ret.value
    line = first_line + ret.lineno - 1
    zero = {n: f"{ZERO}({_alias(n)})" for n in names}
    if isinstance(value, ast.Dict) and all(
        isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys
    ):
        keys = [k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        check_returned_literal(spec, line, keys=keys)
        by_name = {key: _entry(v, _alias(key), key, how) for key, v in zip(keys, value.values, strict=True)}
        items = [by_name.get(n, zero[n]) for n in names]
    elif isinstance(value, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in value.elts):
        if not counted([element_kind(e, how.ends) for e in value.elts], len(names), weighted):
            # Possibly MindSpore's weight form, ``(input_grads, {parameter: grad})``, with the
            # dict written out or held in a variable: normalised by its value when it runs.
            return None
        note = check_returned_literal(spec, line, count=len(value.elts), lenient=notes is not None)
        if note is not None and notes is not None:
            notes.append(note)
        elts = value.elts[: len(names)]
        items = [_entry(e, _alias(n), n, how) for n, e in zip(names, elts, strict=True)]
    else:
        return None
    return f"({items[0]},)" if len(items) == 1 else "(" + ", ".join(items) + ")"


def _ends_in_return(body: list[ast.stmt]) -> bool:
    """Whether control cannot fall off the end of ``body`` (which would return None)."""
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return bool(last.orelse) and _ends_in_return(last.body) and _ends_in_return(last.orelse)
    return False


def _block(lines: list[str], start: int) -> list[str] | None:
    """The lines of the ``def`` (with its decorators) starting at index ``start``.

    The block ends before the first line that is indented no deeper than the ``def`` and is
    not blank or a comment. Cheaper than ``inspect.getsourcelines`` (no tokenizer); a block cut
    short inside a multi-line string fails to parse and falls back to ``inspect``.
    """
    if start >= len(lines):
        return None
    first = lines[start]
    indent = len(first) - len(first.lstrip())
    end = start + 1
    body_started = False
    while end < len(lines):
        line = lines[end]
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            if len(line) - len(line.lstrip()) <= indent:
                if body_started or not line.lstrip().startswith(("def ", "@")):
                    break
            else:
                body_started = True
        end += 1
    return lines[start:end]


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Whether two code objects were compiled from the same text (line numbers aside)."""
    if (a.co_code, a.co_names, a.co_varnames, a.co_freevars) != (
        b.co_code,
        b.co_names,
        b.co_varnames,
        b.co_freevars,
    ):
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts, strict=True):
        if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
            if not _same_code(x, y):
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True


def _index(code: types.CodeType, found: dict[tuple[str, int], types.CodeType]) -> None:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.setdefault((const.co_name, const.co_firstlineno), const)
            _index(const, found)


@functools.lru_cache(maxsize=32)
def _file_functions(filename: str, text: str) -> dict[tuple[str, int], types.CodeType]:
    """Every function compiled from ``text``, by name and first line (one compile per file)."""
    try:
        with AST_LOCK:
            module = compile(text, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return {}
    found: dict[tuple[str, int], types.CodeType] = {}
    _index(module, found)
    return found


def _matches_code(fn: Callable[..., Any], lines: list[str]) -> bool:
    """Whether ``lines`` (the text of ``fn``'s file as ``linecache`` has it) is the text
    ``fn`` was compiled from.

    The file may have been edited since the module was imported (notebooks, autoreload):
    then its text describes another function, which must not be compiled in its place. The
    whole text is compiled as the module was (imports and ``from __future__`` change the
    bytecode) and the function at ``fn``'s first line is compared with ``fn.__code__``.
    """
    code = fn.__code__
    found = _file_functions(code.co_filename, "".join(lines)).get((code.co_name, code.co_firstlineno))
    return found is not None and _same_code(found, code)


def _function_tree(fn: Callable[..., Any]) -> tuple[str, ast.Module, str, int] | None:
    """``fn``'s dedented source, parsed, its file name and first line.

    ``None`` when there is no source, or when the source no longer matches ``fn``'s code.
    """
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    filename = code.co_filename
    lines = linecache.getlines(filename, fn.__globals__)
    block = _block(lines, code.co_firstlineno - 1) if lines else None
    found: tuple[str, ast.Module, str, int] | None = None
    if block is not None:
        source = textwrap.dedent("".join(block))
        try:
            with AST_LOCK:
                found = source, ast.parse(source), filename, code.co_firstlineno
        except SyntaxError:
            found = None
    if found is None:
        try:
            lines_found, first_line = inspect.getsourcelines(fn)
            source = textwrap.dedent("".join(lines_found))
            with AST_LOCK:
                found = source, ast.parse(source), inspect.getsourcefile(fn) or filename, first_line
        except (OSError, TypeError, SyntaxError):
            return None
    if not _matches_code(fn, linecache.getlines(filename, fn.__globals__)) and not _rewritten_by_pytest(fn):
        return None
    return found


def _rewritten_by_pytest(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``'s module was loaded through pytest's assertion rewriting, whose bytecode
    differs from its (unchanged) source: the source is then the function's own text."""
    module = sys.modules.get(getattr(fn, "__module__", "") or "")
    loader = getattr(module, "__loader__", None)
    return type(loader).__name__ == "AssertionRewritingHook"


def no_source_reason(fn: Callable[..., Any]) -> str:
    """Why kwcell (and MindSpore's graph compiler) cannot use ``fn``'s source text."""
    fn = inspect.unwrap(fn)
    try:
        lines, _ = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return (
            "it was made by exec or in a REPL, or comes from a module without its .py file. Define "
            "the class in a .py file"
        )
    if stale_source(fn):
        return "its file was edited after import. Reload the module after editing it"
    source = textwrap.dedent("".join(lines))
    try:
        with AST_LOCK:
            ast.parse(source)
    except SyntaxError:
        return (
            "its text does not parse once dedented: a line inside it starts at column 0 (a "
            "continuation line or a multi-line string), which MindSpore's graph compiler cannot "
            "read either. Indent that line with the function"
        )
    return "it is a lambda or is not a def statement. Write bprop as a def in the class"


def parsable_source(fn: Callable[..., Any]) -> bool:
    """Whether MindSpore's graph compiler can read ``fn``'s own source as it is: the file
    exists (not exec or a REPL) and was not edited after import."""
    fn = inspect.unwrap(fn)
    try:
        inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return False
    return not stale_source(fn)


def stale_source(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``'s file holds text other than what ``fn`` was compiled from (edited after
    import): MindSpore's graph compiler, which reads the file, would compile the wrong code."""
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None or code.co_name == "<lambda>":
        return False
    lines = linecache.getlines(code.co_filename, getattr(fn, "__globals__", None))
    if not lines or _rewritten_by_pytest(fn):
        return False
    return not _matches_code(fn, lines)


def function_source(fn: Callable[..., Any]) -> Source | None:
    """``fn``'s own source (dedented) and the file line it starts on, for the rules read from
    source (:mod:`kwcell._selfstate`); ``None`` without a source that still matches ``fn``."""
    found = _function_tree(inspect.unwrap(fn)) if callable(fn) else None
    if found is None or not isinstance(found[1].body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return Source(found[0], found[3])


def state_on_self(
    cls: type, construct: Callable[..., Any], bprop: Callable[..., Any]
) -> list[tuple[int, str]]:
    """The :func:`kwcell._selfstate.state_notes` of ``cls``: attributes its ``construct``
    sets on self and its ``bprop`` reads, with what an ``__init__`` of the class or of a base
    sets too (MindSpore's and kwcell's own ``__init__`` aside). ``[]`` without source."""
    construct_source = function_source(construct)
    writes = attribute_writes(construct_source) if construct_source is not None else {}
    bprop_source = function_source(bprop) if writes else None
    reads = attribute_reads(bprop_source) if bprop_source is not None else {}
    if not writes.keys() & reads.keys():
        return []
    init_writes: dict[str, int] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        module = getattr(init, "__module__", None) or ""
        if not isinstance(init, types.FunctionType) or module.split(".")[0] in ("mindspore", "kwcell"):
            continue
        init_source = function_source(init)
        for name, line in (attribute_writes(init_source) if init_source is not None else {}).items():
            init_writes.setdefault(name, line)  # the most derived __init__ that sets it
    return state_notes(
        cls.__qualname__,
        writes,
        reads,
        init_writes,
        construct_from=_defined_elsewhere(cls, construct),
        bprop_from=_defined_elsewhere(cls, bprop),
    )


def computed_weight_keys(cls: type, bprop: Callable[..., Any]) -> list[tuple[int, str]]:
    """The :func:`kwcell._weightdicts.computed_key_notes` of ``cls``'s ``bprop``: dicts it keys
    by Parameters it computes (PYNATIVE only). ``[]`` without source."""
    return computed_key_notes(
        cls.__qualname__, computed_key_lines(bprop), bprop_from=_defined_elsewhere(cls, bprop)
    )


def computed_key_lines(bprop: Callable[..., Any]) -> tuple[tuple[int, str], ...]:
    """:func:`kwcell._weightdicts.computed_keys` of ``bprop``'s source (``()`` without one)."""
    source = function_source(bprop)
    return tuple(computed_keys(source)) if source is not None else ()


def _parsed(fn: Callable[..., Any]) -> tuple[Source, ast.FunctionDef | ast.AsyncFunctionDef, str] | None:
    """``fn``'s source, its ``def`` and its first parameter's name; ``None`` without them."""
    source = function_source(fn)
    fdef = function_def(source) if source is not None else None
    self_name = first_parameter(fdef) if fdef is not None else None
    if source is None or fdef is None or self_name is None:
        return None
    return source, fdef, self_name


def self_calls(fn: Callable[..., Any]) -> tuple[tuple[str, int], ...]:
    """The methods ``fn`` calls on its first parameter (``self._grads(x, dout)``), each with the
    file line of the call."""
    parsed = _parsed(fn)
    if parsed is None:
        return ()
    source, fdef, self_name = parsed
    return tuple(
        (node.func.attr, source.first_line + node.lineno - 1)
        for node in ast.walk(fdef)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == self_name
    )


def attribute_keys(fn: Callable[..., Any]) -> tuple[tuple[str, int], ...]:
    """The dict keys in ``fn`` written as its cell's attributes (``{self.w: g}``, see
    :func:`weight_key_path`), each with its file line: kwcell rewrites such keys for graphs in
    a bprop's own text, not in the methods the bprop calls."""
    parsed = _parsed(fn)
    if parsed is None:
        return ()
    source, fdef, self_name = parsed
    found: list[tuple[str, int]] = []
    for node in ast.walk(fdef):
        for key in node.keys if isinstance(node, ast.Dict) else []:
            path = weight_key_path(key, self_name) if key is not None else None
            if path is not None and key is not None:
                found.append((path, source.first_line + key.lineno - 1))
    return tuple(found)


def helper_weight_message(qualname: str, name: str, call_line: int, path: str, key_line: int) -> str:
    """The error, in a graph, for a method bprop calls (:func:`self_calls`) that keys a dict by
    a weight (:func:`attribute_keys`)."""
    return (
        f"{qualname}.bprop calls self.{name} (line {call_line}), which keys a weight gradient by "
        f"{path} (line {key_line}): kwcell rewrites weight keys for graphs in bprop's own text, not "
        "in the methods it calls, and a compiled graph (GRAPH_MODE, @ms.jit) cannot build a dict "
        'keyed by a Parameter (MindSpore\'s "make_dict evaluator key only supports string, ..."). '
        f"Build the dict in bprop: return the gradients from {name} and write {{{path}: ...}} in "
        "bprop; PYNATIVE takes it as written"
    )


def _defined_elsewhere(cls: type, fn: Callable[..., Any]) -> str:
    """The class ``fn`` was defined in (from its ``__qualname__``), if it is not ``cls``."""
    owner = getattr(inspect.unwrap(fn), "__qualname__", "").rpartition(".")[0]
    return "" if owner in ("", cls.__qualname__) or "<locals>" in owner.rpartition(".")[2] else owner


def tuple_returns(fn: Callable[..., Any], spec: CellSpec) -> list[tuple[int, int]]:
    """``(line, count)`` for each ``return`` of a tuple or list literal in ``fn``'s own body:
    the literals whose count the class statement checks (no ``*`` entry, and certainly not
    MindSpore's weight form: ``_returns.counted``). ``[]`` when ``fn`` has no source.
    ``kwcell check`` applies the same count rule to plain ``nn.Cell`` bprops through this."""
    found = _function_tree(fn)
    if found is None or not isinstance(found[1].body[0], ast.FunctionDef):
        return []
    first_line = found[3]
    assert spec.bprop is not None
    ends = ends_of([p.name for p in spec.bprop.signature.params])
    return [
        (first_line + ret.lineno - 1, len(ret.value.elts))
        for ret in _returns(found[1].body[0])
        if isinstance(ret.value, (ast.Tuple, ast.List))
        and not any(isinstance(e, ast.Starred) for e in ret.value.elts)
        and counted([element_kind(e, ends) for e in ret.value.elts], len(spec.names))
    ]


def rewrite_bprop(
    fn: Callable[..., Any],
    spec: CellSpec,
    reading: str,
    *,
    lenient: bool,
    super_class: str | None,
    weighted: bool = False,
) -> RewrittenBprop | None:
    """Rewrite ``fn`` (the user's bprop) to positional form: ``(self, *inputs, out, dout)``.

    ``reading`` is how ``fn``'s parameters map onto construct's (``_validate.BY_NAME`` or
    ``BY_POSITION``). With ``lenient`` (MindSpore's own forms), a literal return with more
    gradients than inputs is cut to the inputs, as MindSpore does, and noted. ``super().bprop``
    becomes ``self._kwcell_super_<super_class>`` (``kwcell._lookup.SuperBprop``): the rewritten
    function lives outside the class, and the search continues after the class that defines
    this bprop in the instance's MRO (diamonds included), to a parent's bprop the graph
    compiler gets as kwcell's copy too, a plain mixin's included (MindSpore's own ``super()``
    would restart from the instance's class). ``weighted``: for an instance whose
    ``internal_params`` lists weights (a returned pair may then be MindSpore's weight form).

    Returns ``None`` when ``fn`` has no source to rewrite (defined in a REPL or by ``exec``,
    a lambda, a module without its ``.py``, or a file edited since it was imported).
    """
    found = _function_tree(fn)
    if found is None:
        return None
    source, tree, filename, first_line = found
    origin = f"{filename}:{first_line}"
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        return None
    if fdef.decorator_list and not (spec.function and _registered_only(fdef)):
        raise decorated_bprop(spec.qualname, function=spec.function)
    bsig = spec.bprop.signature if spec.bprop else None
    assert bsig is not None and (bsig.self_name is not None or spec.function)
    # A custom_bprop function's backward has no self; the rewritten one takes the cell first.
    self_name = bsig.self_name or SELF
    text = _Text(source)
    notes: list[str] | None = [] if lenient else None
    # The body is kept as the user wrote it (comments included); only the signature and the
    # literal returns change. Every input arrives under an alias, then is bound to the name
    # bprop gave it (or put in its **kwargs): zeros for missing gradients refer to the input
    # as it arrived, and an input bprop does not name cannot shadow a global the body uses.
    replacements: list[tuple[int, int, str]] = []
    static = True
    changed = False
    nested = False
    ends = ends_of([p.name for p in bsig.params])
    how = _Entries(text, _sure_names(fdef, ends), f"{spec.qualname}.bprop", ends)
    classic = bsig.var_positional is not None and not bsig.params
    for ret in _returns(fdef) if not classic else ():
        if ret.value is not None:
            check_return(spec, ret.value, f"{spec.qualname}.bprop (line {first_line + ret.lineno - 1})")
            elements = ret.value.elts if isinstance(ret.value, (ast.Tuple, ast.List)) else [ret.value]
            containers = (ast.Tuple, ast.List, ast.Dict, ast.Set)
            nested = nested or any(isinstance(e, containers) for e in elements)
        tuple_text = (
            _return_text(spec, ret, how, first_line, notes, weighted) if ret.value is not None else None
        )
        if tuple_text is None:
            static = False
        else:
            assert ret.value is not None
            replacements.append((*text.span(ret.value), tuple_text))
            changed = changed or _squash(tuple_text) != _squash(text.segment(ret.value))
    weight_keys = _weight_key_replacements(fdef, self_name, text, replacements)
    if classic:
        # MindSpore's bprop(self, *args): only its weight keys change (a graph's dict keys
        # cannot be Parameters); what it returns is normalised when it runs
        if not weight_keys:
            return None
        static = False
        positional = [self_name, f"*{bsig.var_positional}"]
    else:
        positional = [self_name, *(_alias(n) for n in spec.names), OUT, DOUT]
    rewritten, has_super = _assemble(
        fdef,
        text,
        (source, filename, first_line),
        replacements,
        ", ".join(positional),
        _prologue(spec, reading) if not classic else [],
        self_name,
        super_class,
    )
    static = static and _ends_in_return(fdef.body)
    return RewrittenBprop(
        rewritten, origin, static, tuple(notes or ()), changed, has_super, nested, weight_keys
    )


def _assemble(
    fdef: ast.FunctionDef,
    text: _Text,
    where: tuple[str, str, int],
    replacements: list[tuple[int, int, str]],
    parameters: str,
    prologue: list[str],
    self_name: str,
    super_class: str | None,
    *,
    name: str | None = None,
) -> tuple[str, bool]:
    """The source of a copy of ``fdef`` with ``parameters``, ``prologue`` lines first, the
    body's ``replacements`` made, each line marked with the user's file and line, and
    ``super().bprop`` read through the reader of ``super_class`` (see ``_lookup.SuperBprop``);
    and whether it calls ``super().bprop``. ``name`` names the copy (``fdef``'s own name by
    default)."""
    source, filename, first_line = where
    # The body runs to the end of the function's last line (a trailing comment included).
    assert fdef.end_lineno is not None
    body_start, body_end = text.span(fdef.body[0])[0], text.starts[fdef.end_lineno]
    body = bytearray(text.data[body_start:body_end].rstrip())
    replacements = replacements + _line_marks(
        source, text, (body_start, body_start + len(body)), replacements, filename, first_line
    )
    for a, b, new in sorted(replacements, reverse=True):
        body[a - body_start : b - body_start] = new.encode("utf-8")
    if fdef.body[0].lineno > fdef.lineno:
        # The body's own indentation, tabs included (a tab-indented file stays consistent).
        line = text.data[text.starts[fdef.body[0].lineno - 1] :].decode("utf-8")
        indent = line[: len(line) - len(line.lstrip(" \t"))]
    else:
        indent = "    "
    lines = [f"def {name or fdef.name}({parameters}):\n", *(f"{indent}{p}\n" for p in prologue)]
    text_body = body.decode("utf-8")
    has_super = any(_is_super_bprop(node) for node in ast.walk(fdef))
    if has_super and super_class is not None:
        text_body = _SUPER_BPROP.sub(f"{self_name}.{super_reader(super_class)}", text_body)
    return "".join(lines) + indent + text_body + "\n", has_super


def written_copy(fn: Callable[..., Any], super_class: str | None) -> str | None:
    """The source of a copy of the bprop ``fn`` as written, for the graph compiler: what
    ``super().bprop(...)`` (or ``self.bprop(...)``) in another bprop reaches in a graph, so that
    it binds the call and returns what ``fn`` returns, as Python does in PYNATIVE. Only what a
    graph cannot parse as written changes: ``super().bprop`` continues after ``super_class``
    (as in ``rewrite_bprop``), and ``{self.w: gw}`` keys become ``{"self.w": gw}``. Parameters
    keep their names, kinds and defaults (annotations are dropped: the copy is never checked).

    ``None`` when ``fn`` has no source to copy (see ``rewrite_bprop``).
    """
    found = _function_tree(fn)
    if found is None:
        return None
    source, tree, filename, first_line = found
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef) or not fdef.args.args:
        return None
    text = _Text(source)
    self_name = fdef.args.args[0].arg
    replacements: list[tuple[int, int, str]] = []
    _weight_key_replacements(fdef, self_name, text, replacements)
    arguments = copy.deepcopy(fdef.args)
    for arg in (
        *arguments.posonlyargs,
        *arguments.args,
        *arguments.kwonlyargs,
        arguments.vararg,
        arguments.kwarg,
    ):
        if arg is not None:
            arg.annotation = None
    copied, _ = _assemble(
        fdef,
        text,
        (source, filename, first_line),
        replacements,
        ast.unparse(arguments),
        [],
        self_name,
        super_class,
    )
    return copied


def _line_marks(
    source: str,
    text: _Text,
    body: tuple[int, int],
    replacements: list[tuple[int, int, str]],
    filename: str,
    first_line: int,
) -> list[tuple[int, int, str]]:
    """A comment ``# <file>:<line>`` at the end of every line of the body: MindSpore's graph
    compiler reports an error in the rewritten bprop with the generated file's name and line
    and the line's text, which then says where the user's line is.

    Only where a comment may go (not inside a string, not after a backslash continuation, not
    inside a return that is replaced).
    """
    where = filename.replace("\n", " ")
    marks: list[tuple[int, int, str]] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):  # pragma: no cover - it parsed
        return []
    for tok in tokens:
        if tok.type not in (tokenize.NEWLINE, tokenize.NL) or not tok.line.strip():
            continue
        row, col = tok.start
        offset = text.offset(row, len(tok.line[:col].encode("utf-8")))
        if not body[0] <= offset <= body[1] or any(a < offset < b for a, b, _ in replacements):
            continue
        marks.append((offset, offset, f"  # {where}:{first_line + row - 1}"))
    return marks


def attribute_path(node: ast.expr, self_name: str) -> str | None:
    """``"self.a.b"`` for the expression ``<self_name>.a.b``, else ``None``."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not parts or not isinstance(node, ast.Name) or node.id != self_name:
        return None
    return ".".join(["self", *reversed(parts)])


def weight_key_path(node: ast.expr, self_name: str) -> str | None:
    """The name a weight's dict key written as ``node`` is rewritten to for a graph: an
    attribute of the cell (``"self.w"``), or an entry of its ``internal_params`` by a literal
    index (``"self.internal_params[0]"``: a weight the cell does not hold, such as a shared
    embedding); else ``None``."""
    if isinstance(node, ast.Subscript):
        index = node.slice
        if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
            index = index.operand
            sign = -1
        else:
            sign = 1
        if (
            attribute_path(node.value, self_name) == "self.internal_params"
            and isinstance(index, ast.Constant)
            and type(index.value) is int
        ):
            return f"self.internal_params[{sign * index.value}]"
        return None
    return attribute_path(node, self_name)


def _weight_key_replacements(
    fdef: ast.FunctionDef, self_name: str, text: _Text, replacements: list[tuple[int, int, str]]
) -> tuple[str, ...]:
    """Add to ``replacements`` the dict keys of ``fdef`` that name the cell's attributes
    (``{self.w: gw}`` becomes ``{"self.w": gw}``) or entries of its ``internal_params``
    (:func:`weight_key_path`) and give those names.

    Keys inside a return already replaced (a literal return made a full tuple) are left: such
    a return holds no weight dict.
    """
    taken = [(a, b) for a, b, _ in replacements]
    found: list[str] = []
    dicts = _dict_variables(fdef, self_name)
    for node in ast.walk(fdef):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in dicts:
            keys: list[ast.expr | None] = [node.slice]  # grads[self.w] = gw, in a dict variable
        elif isinstance(node, ast.Dict):
            keys = list(node.keys)
        else:
            continue
        for key in keys:
            path = weight_key_path(key, self_name) if key is not None else None
            if path is None:
                continue
            assert key is not None
            a, b = text.span(key)
            if any(x <= a and b <= y for x, y in taken):
                continue
            replacements.append((a, b, repr(path)))
            if path not in found:
                found.append(path)
    return tuple(found)


def _dict_variables(fdef: ast.FunctionDef, self_name: str) -> frozenset[str]:
    """The names ``fdef`` assigns a dict display, a dict comprehension or ``dict(...)`` to, or
    assigns an item keyed by a weight (``grads[self.w] = gw``, whatever ``grads`` came from: a
    Tensor is not indexed by a Parameter)."""
    found: set[str] = set()
    for node in ast.walk(fdef):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and weight_key_path(node.slice, self_name) is not None
        ):
            found.add(node.value.id)
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value = node.value
            is_dict = isinstance(value, (ast.Dict, ast.DictComp)) or (
                isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict"
            )
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if is_dict:
                found.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(found)


def _squash(text: str) -> str:
    """A return's text without spaces and outer parentheses (to tell a real rewrite)."""
    squashed = re.sub(r"\s+", "", text)
    while squashed.startswith("(") and squashed.endswith(")"):
        squashed = squashed[1:-1]
    return squashed.rstrip(",")


OUT, DOUT = "_kwcell_out", "_kwcell_dout"
# The first parameter of the rewritten backward of a custom_bprop function (which has no self
# of its own). MindSpore's graph parser binds a method's first parameter only when it is named
# ``self`` (measured: ``_kwcell_self`` gave "The parameters number of the function is 6, but
# the number of provided arguments is 5").
SELF = "self"


def undefined_name(fn: types.FunctionType) -> str | None:
    """A message for the first global name ``fn`` reads that neither its module nor the
    builtins define (what would be a ``NameError``), naming ``fn`` and the user's file and
    line; ``None`` when every name is defined."""
    module = fn.__globals__
    builtins_ = module.get("__builtins__", builtins)
    defined = builtins_ if isinstance(builtins_, dict) else vars(builtins_)
    todo = [fn.__code__]
    while todo:
        code = todo.pop()
        line = code.co_firstlineno
        for ins in dis.get_instructions(code):
            if ins.starts_line is not None and not isinstance(ins.starts_line, bool):
                line = ins.starts_line
            if (
                ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")
                and ins.argval not in module
                and ins.argval not in defined
            ):
                return (
                    f"name {ins.argval!r} is not defined (in {fn.__qualname__}, {code.co_filename}:{line}); "
                    "GRAPH_MODE and @ms.jit resolve it in the module of the bprop"
                )
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return None


def _registered_only(fdef: ast.FunctionDef) -> bool:
    """Whether the only decorator is the registration, ``@<function>.bprop``."""
    (*others, last) = fdef.decorator_list
    return not others and isinstance(last, ast.Attribute) and last.attr == "bprop"


_SUPER_BPROP = re.compile(r"\bsuper\(\s*\)\.bprop\b")


def calls_super_bprop(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``'s source reads ``super().bprop`` (zero-argument super); ``False`` without
    source."""
    found = _function_tree(fn)
    return found is not None and any(_is_super_bprop(node) for node in ast.walk(found[1]))


def _is_super_bprop(node: ast.AST) -> bool:
    """``super().bprop`` (zero-argument super)."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "bprop"
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "super"
        and not node.value.args
        and not node.value.keywords
    )


def _prologue(spec: CellSpec, reading: str) -> list[str]:
    """Statements binding bprop's own parameter names to the positional aliases."""
    assert spec.bprop is not None
    bsig = spec.bprop.signature
    if reading == BY_POSITION:
        sources = [*(_alias(n) for n in spec.names), OUT, DOUT]
        return [f"{p.name} = {src}" for p, src in zip(bsig.params, sources, strict=True)]
    prologue = [f"{n} = {_alias(n)}" for n in spec.names if bsig.get(n) is not None]
    prologue += ["out = " + OUT, "dout = " + DOUT]
    if bsig.var_keyword is not None:
        unnamed = ", ".join(f"{n!r}: {_alias(n)}" for n in spec.names if bsig.get(n) is None)
        prologue.append(f"{bsig.var_keyword} = {{{unnamed}}}")
    return prologue
