"""The class-creation rules of bprop against construct, applied to a :class:`CellSpec`."""

from __future__ import annotations

import keyword
from collections.abc import Sequence
from typing import Any

from ._errors import (
    GRAPH,
    PYNATIVE,
    GradientCountError,
    KwCellDefinitionError,
    MindSporeError,
    definition_code,
)
from ._spec import KEYWORD_ONLY, CellSpec, Signature, format_params, safe_repr

__all__ = [
    "BY_NAME",
    "BY_POSITION",
    "CLASSIC_ARGS",
    "MINDSPORE_ERRORS",
    "RESERVED_PREFIX",
    "check_bprop",
    "check_construct",
    "check_returned_literal",
    "count_mismatch",
    "decorated_bprop",
    "generator_bprop",
    "is_mindspore_form",
    "jit_on_bprop",
    "mindspore_errors",
    "needs_rewrite",
    "passes_through",
    "plain_problems",
    "position_conflicts",
    "same_default",
    "switch_problem",
]

RESERVED_PREFIX = "_kwcell_"
_GRAD_NAMES = ("out", "dout")

# How bprop receives construct's inputs (what :func:`validate` returns).
CLASSIC_ARGS = "args"  # bprop(self, *args): inputs, then out, dout, positionally
BY_POSITION = "position"  # MindSpore's positional form, whatever bprop's names are
BY_NAME = "name"  # kwcell's form: matched by name, out/dout anywhere


# What nn.Cell raises for each problem kwcell defers to gradient time (MindSpore's own bprop
# forms), measured on MindSpore 2.10.0 CPU with the nn.Cell twin of every row, by mode:
# PYNATIVE, and GRAPH (GRAPH_MODE and @ms.jit in PYNATIVE, which raise the same). The
# wording is MindSpore's; fields in braces come from the cell. A mode left out is one where
# nn.Cell raises nothing for the problem (kwcell raises its own error there). The deferred
# error is an instance of both KwCellDefinitionError and the class given here, with this
# text first (kwcell._errors.deferred). tests/test_error_contract.py compares each row with
# nn.Cell in each mode.
_OUTPUT_SIZE = (
    "The output size of the 'bprop' must match the number of parameters in its corresponding "
    "primal function '{cell}()' : {count} vs. {inputs}."
)
MINDSPORE_ERRORS: dict[str, dict[str, tuple[type[Exception], str]]] = {
    # PYNATIVE calls bprop(*inputs, out, dout) as a method: Python's own TypeError when that
    # call does not bind (too few or too many parameters, 'self' forgotten).
    "call": {PYNATIVE: (TypeError, "{python}")},
    # A compiled graph counts bprop's parameters (all but a first one named 'self').
    "no_out_dout": {
        GRAPH: (
            RuntimeError,
            "The function 'bprop' of Primitive or Cell requires at least 2 params 'out' and 'dout', "
            "but got only {params}.",
        )
    },
    "too_few_params": {
        GRAPH: (
            TypeError,
            "The params of function 'bprop' of Primitive or Cell requires the forward inputs as "
            "well as the 'out' and 'dout'.",
        )
    },
    "too_many_params": {
        GRAPH: (
            TypeError,
            "Function {qualname}.construct, The number of parameter of this primal function is "
            "{inputs}, but the number of parameters of bprop is {params}",
        )
    },
    # A literal return with fewer gradients than inputs (MindSpore ignores extra ones).
    "short_return": {
        PYNATIVE: (RuntimeError, "Grad size should lager than forward inputs, but got {count} vs {inputs}"),
        GRAPH: (GradientCountError, _OUTPUT_SIZE),
    },
    "empty_return": {
        PYNATIVE: (RuntimeError, "Hook fn grad output is empty!"),
        GRAPH: (GradientCountError, _OUTPUT_SIZE),
    },
    "generator_return": {
        PYNATIVE: (TypeError, "Unreasonable data type: <class 'generator'>."),
        GRAPH: (TypeError, "For bprop function, output should be a tuple, but got a generator"),
    },
    # A bare value when construct's first input cannot be a Tensor (kwcell would take it as
    # that input's gradient and lose it): nn.Cell wants a tuple.
    "single_return": {
        GRAPH: (TypeError, "For bprop function, output should be a tuple, but got a single value"),
    },
    "jit_bprop": {PYNATIVE: (RuntimeError, "Decorating bprop with '@jit' is not supported.")},
}


def mindspore_errors(*kinds: str, **fields: Any) -> dict[str, MindSporeError]:
    """What nn.Cell raises, by mode, for the rows ``kinds`` of :data:`MINDSPORE_ERRORS`
    (the first row that names a mode wins), their wording filled with ``fields``."""
    found: dict[str, MindSporeError] = {}
    for kind in kinds:
        for mode, (base, text) in MINDSPORE_ERRORS[kind].items():
            if mode not in found:
                found[mode] = MindSporeError(base, text.format(**fields))
    return found


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _names_text(names: Sequence[str]) -> str:
    """``'a'``, ``'a' and 'b'``, ``'a', 'b', and 'c'``: how Python lists missing arguments."""
    quoted = [f"'{n}'" for n in names]
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


def _call_error(spec: CellSpec) -> str | None:
    """Python's TypeError for PYNATIVE's call ``cell.bprop(*inputs, out, dout)``, or ``None``
    if that call binds."""
    assert spec.bprop is not None
    bprop = spec.bprop.signature
    if bprop.var_positional is not None:
        return None
    names = [*([bprop.self_name] if bprop.self_name is not None else []), *bprop.names]
    given = len(spec.names) + 3  # self, the inputs, out, dout
    where = f"{spec.qualname}.bprop()"
    if len(names) < given:
        plural = "" if len(names) == 1 else "s"
        return f"{where} takes {len(names)} positional argument{plural} but {given} were given"
    if len(names) > given:
        missing = names[given:]
        plural = "" if len(missing) == 1 else "s"
        return f"{where} missing {len(missing)} required positional argument{plural}: {_names_text(missing)}"
    return None


def _signature_errors(spec: CellSpec) -> dict[str, MindSporeError]:
    """What nn.Cell raises for a bprop in MindSpore's form whose parameters do not fit."""
    assert spec.bprop is not None
    bprop = spec.bprop.signature
    inputs = len(spec.names)
    kinds: list[str] = []
    python = _call_error(spec)
    if python is not None:
        kinds.append("call")
    params = (
        len(bprop.params)
        + (bprop.self_name is not None and bprop.self_name != "self")
        + (bprop.var_positional is not None)
    )
    if params < len(_GRAD_NAMES):
        kinds.append("no_out_dout")
    elif params - len(_GRAD_NAMES) < inputs:
        kinds.append("too_few_params")
    elif params - len(_GRAD_NAMES) > inputs:
        kinds.append("too_many_params")
    params_text = params if kinds[-1:] == ["no_out_dout"] else params - len(_GRAD_NAMES)
    return mindspore_errors(*kinds, python=python, params=params_text, inputs=inputs, qualname=spec.qualname)


def is_mindspore_form(bprop: Signature) -> bool:
    """Whether ``bprop`` is written the way MindSpore itself calls it: ``bprop(self, *args)``,
    or only positional parameters without defaults (inputs, then out, dout, whatever their
    names). Problems with such a bprop show on ``nn.Cell`` only when the gradient is taken, so
    kwcell warns about them at class creation and raises when the gradient is taken."""
    if bprop.var_keyword is not None:
        return False
    if bprop.var_positional is not None:
        return not bprop.params
    return all(p.kind is not KEYWORD_ONLY and not p.has_default for p in bprop.params)


def same_default(a: Any, b: Any) -> bool:
    """Whether two default values are the same value (``nan`` equals ``nan``, types must match)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) in (float, complex) and repr(a) == repr(b):
        return True  # float("nan") written twice: two objects, one value
    try:
        return bool(a == b) and repr(a) == repr(b)
    except Exception:  # noqa: BLE001 - a value whose == cannot be a bool is not "the same"
        return False


def _construct_text(spec: CellSpec) -> str:
    """``construct(self, x, w=1.0)``, or ``scaled(x, w=1.0)`` for a ``custom_bprop`` function."""
    construct = spec.construct
    params = format_params(
        construct.params, var_positional=construct.var_positional, var_keyword=construct.var_keyword
    )
    if spec.function:
        return f"{spec.qualname}({params})"
    self_name = construct.self_name or "self"
    return f"construct({self_name}, {params})" if params else f"construct({self_name})"


def expected_bprop(construct: Signature, *, function: str | None = None) -> str:
    """The bprop signature kwcell suggests for ``construct``.

    For the backward of a ``custom_bprop`` function (``function`` is its qualified name), the
    decorated definition: ``@scaled.bprop def _(x, *, out, dout)``.
    """
    params = format_params(construct.params, extra_keyword_only=_GRAD_NAMES)
    if function is not None:
        return f"@{function.rsplit('.', 1)[-1]}.bprop def _({params})"
    return f"bprop(self, {params})"


def _fail(spec: CellSpec, method: str, detail: str, *, suggest: bool = True) -> KwCellDefinitionError:
    if method == "bprop" and spec.inherited_bprop:
        # The class changed only construct: the mistake is in its construct, not in the bprop
        # it inherits (and does not define).
        inherits = f"the bprop it inherits from {spec.inherited_bprop}"
        msg = f"{spec.qualname}.construct does not fit {inherits}: {detail}"
    else:
        msg = f"{spec.qualname}.{method}: {detail}"
    if suggest and not spec.construct.var_positional and not spec.construct.var_keyword:
        function = spec.qualname if spec.function else None
        msg += f"; expected e.g. {expected_bprop(spec.construct, function=function)}"
    return KwCellDefinitionError(msg)


def decorated_bprop(qualname: str, *, jit: bool = False, function: bool = False) -> KwCellDefinitionError:
    """The error for a decorated bprop (seen through ``__wrapped__``, or in its source);
    ``jit``: the decorator is MindSpore's ``@jit``; ``function``: a ``custom_bprop`` backward.
    The runtime and the mypy plugin call this."""
    what = f"decorators other than @{qualname.rsplit('.', 1)[-1]}.bprop" if function else "decorators"
    msg = (
        f"{qualname}.bprop: {what} on bprop are not supported (MindSpore calls bprop "
        "itself, and kwcell reads its source); move the decorated logic into a helper"
    )
    error = KwCellDefinitionError(msg)
    if jit:
        error._kwcell_mindspore = mindspore_errors("jit_bprop")
    return error


def needs_rewrite(spec: CellSpec, reading: str) -> bool:
    """Whether bprop must be rewritten for the graph compiler, which calls it positionally with
    construct's inputs, then out and dout: only kwcell's own forms need it (names in another
    order, keyword-only parameters, defaults, ``**kwargs``)."""
    if reading in (CLASSIC_ARGS, BY_POSITION):
        return False
    assert spec.bprop is not None
    bsig = spec.bprop.signature
    if bsig.var_keyword is not None or bsig.var_positional is not None:
        return True
    if any(p.kind is KEYWORD_ONLY or p.has_default for p in bsig.params):
        return True
    return bsig.names != (*spec.names, "out", "dout")


def generator_bprop(qualname: str) -> KwCellDefinitionError:
    """A bprop that uses ``yield`` returns a generator, never gradients (GRAPH_MODE would fail
    with "Unsupported expression 'Yield'")."""
    error = KwCellDefinitionError(
        f"{qualname}.bprop uses yield, so it returns a generator; return a tuple with one gradient "
        "per construct parameter, a dict keyed by parameter name, or a Tensor for the first one"
    )
    error._kwcell_mindspore = mindspore_errors("generator_return")
    return error


def jit_on_bprop(qualname: str) -> KwCellDefinitionError:
    """``@jit`` on a bprop kwcell need not rewrite: graphs ignore the decorator (as on
    nn.Cell) and PYNATIVE refuses it when the gradient is taken (as on nn.Cell)."""
    error = KwCellDefinitionError(
        f"{qualname}.bprop: MindSpore runs a bprop decorated with @jit only in graphs (GRAPH_MODE, "
        "@ms.jit), where it ignores the decorator; remove @jit to take this gradient in "
        "PYNATIVE mode too"
    )
    error._kwcell_mindspore = mindspore_errors("jit_bprop")
    return error


def passes_through(spec: CellSpec) -> bool:
    """Whether the cell is left to MindSpore as it is: a ``construct`` with ``*inputs`` or
    ``**kwargs`` and a bprop in MindSpore's own form (``bprop(self, *args)``, or positional
    parameters). construct's inputs have no fixed names or count to match, so the cell
    behaves exactly as an ``nn.Cell`` (``mindformers``' recompute cells are written so)."""
    construct = spec.construct
    return (
        not spec.function
        and spec.bprop is not None
        and is_mindspore_form(spec.bprop.signature)
        and (construct.var_positional is not None or construct.var_keyword is not None)
    )


def _check_construct_self(spec: CellSpec, where: str) -> None:
    construct = spec.construct
    if construct.self_name is None:
        msg = f"{spec.qualname}.construct must take 'self' as its first parameter, got {where}"
        raise KwCellDefinitionError(msg)
    bprop = spec.bprop.signature if spec.bprop is not None else None
    if (
        construct.self_name != "self"
        and bprop is not None
        and bprop.self_name != construct.self_name
        and construct.self_name in bprop.names
    ):
        # construct(x, w) with bprop(self, x, w, out, dout): construct forgot 'self', so its
        # first input became the cell.
        names = ", ".join(["self", construct.self_name, *construct.names])
        msg = (
            f"{spec.qualname}.construct: its first parameter '{construct.self_name}' receives the "
            f"cell itself, but bprop treats '{construct.self_name}' as an input; did you forget "
            f"'self'? write construct({names})"
        )
        raise KwCellDefinitionError(msg)


def check_construct(spec: CellSpec) -> None:
    """The rules for construct alone (for a ``custom_bprop`` function: for the function)."""
    construct = spec.construct
    where = _construct_text(spec)
    # A custom_bprop function's construct is generated (with self): problems are the function's.
    label = spec.qualname if spec.function else f"{spec.qualname}.construct"
    if not spec.function:
        _check_construct_self(spec, where)
        if passes_through(spec):
            return
    for var in (construct.var_positional, construct.var_keyword):
        if var is not None and spec.function:
            stars = "*" if var == construct.var_positional else "**"
            msg = (
                f"{label}: parameter '{stars}{var}' in {where} cannot be used with a bprop: it gives "
                f"one gradient per named input. Name every input of {label} explicitly"
            )
            raise KwCellDefinitionError(msg)
        if var is not None:
            stars = "*" if var == construct.var_positional else "**"
            msg = (
                f"{spec.qualname}.construct: parameter '{stars}{var}' in {where} cannot be used with "
                "a bprop that names its inputs: bprop needs one gradient per named input. Name "
                "every input of construct explicitly, write MindSpore's bprop(self, *args), or drop "
                "bprop and let MindSpore differentiate construct"
            )
            raise KwCellDefinitionError(msg)
    for p in construct.params:
        if p.name in _GRAD_NAMES:
            msg = (
                f"{label}: parameter '{p.name}' in {where} clashes with bprop's "
                f"'{p.name}' argument (the forward output 'out' and its gradient 'dout'); "
                f"rename it in {spec.forward}"
            )
            raise KwCellDefinitionError(msg)
        if p.name.startswith(RESERVED_PREFIX) or p.name == "self" or keyword.iskeyword(p.name):
            msg = (
                f"{label}: parameter '{p.name}' in {where} uses a name kwcell "
                f"reserves ('self' or the '{RESERVED_PREFIX}' prefix); rename it"
            )
            raise KwCellDefinitionError(msg)


def position_conflicts(inputs: Sequence[str], bprop_names: Sequence[str]) -> list[tuple[str, str]]:
    """``(bprop name, what it receives by position)`` for each name of ``bprop_names`` that
    construct's ``inputs`` (or out/dout) use at another position.

    For a bprop in MindSpore's positional form, each such name means the two readings, by
    position (what MindSpore does) and by name (what the names say), disagree. Other names
    (``_``, ``grad_output``) read the same either way. Used for KwCells here and for plain
    cells by ``kwcell check`` (KW103).
    """
    expected = [*inputs, *_GRAD_NAMES]
    return [
        (name, expected[i])
        for i, name in enumerate(bprop_names)
        if i < len(expected) and name in expected and expected.index(name) != i
    ]


def count_mismatch(spec: CellSpec) -> str | None:
    """For a bprop in MindSpore's positional form whose parameter count is not construct's
    inputs plus out and dout: ``"takes N positional parameter(s) (...) but MindSpore passes M:
    ..."``; ``None`` when the count fits, or when bprop names both ``out`` and ``dout`` (its
    names then say what it means: the by-name rules report it).

    One rule for a plain ``nn.Cell`` (``kwcell check``'s KW104) and for a KwCell's class
    statement: ``bprop(self, x, out, grad_output)`` for ``construct(self, x, scale)`` is one
    parameter short, whatever its last name is.
    """
    assert spec.bprop is not None
    bprop = spec.bprop.signature
    if bprop.var_positional is not None or bprop.var_keyword is not None:
        return None
    positional = [p.name for p in bprop.params if p.kind is not KEYWORD_ONLY]
    expected = len(spec.names) + len(_GRAD_NAMES)
    if len(positional) == expected or {*_GRAD_NAMES} <= {*bprop.names}:
        return None
    return _count_text(spec, positional)


def _count_text(spec: CellSpec, positional: Sequence[str]) -> str:
    expected = len(spec.names) + len(_GRAD_NAMES)
    return (
        f"takes {len(positional)} positional parameter(s) ({', '.join(positional)}) but MindSpore "
        f"passes {expected}: the inputs of {_construct_text(spec)}, then out, dout"
    )


def plain_problems(spec: CellSpec) -> list[tuple[str, str]]:
    """``(code, message)`` for each hazard of a plain ``nn.Cell`` whose bprop MindSpore calls
    positionally: KW101 (construct defaults), KW102 (keyword-only inputs), KW103 (a name of
    construct's at another position: the by-name reading differs from MindSpore's), KW104 (a
    parameter count that does not fit). ``kwcell check`` reports them; ``kwcell migrate``
    leaves a class with KW103 alone (switching it would change its gradient)."""
    assert spec.bprop is not None
    construct = spec.construct
    bprop = spec.bprop.signature
    name = spec.qualname
    found: list[tuple[str, str]] = []
    if construct.var_positional or construct.var_keyword:
        return found  # bprop(self, *args) territory: nothing to match by name
    defaults = [p.name for p in construct.params if p.has_default and p.kind is not KEYWORD_ONLY]
    if defaults:
        names = ", ".join(f"'{n}'" for n in defaults)
        found.append(
            (
                "KW101",
                f"{name}.construct: parameter(s) {names} have defaults and the cell has a bprop: a call "
                "that omits them fails to compile in GRAPH_MODE, and keyword calls reach bprop in "
                "call order",
            )
        )
    keyword_only = [p.name for p in construct.params if p.kind is KEYWORD_ONLY]
    if keyword_only:
        names = ", ".join(f"'{n}'" for n in keyword_only)
        found.append(
            (
                "KW102",
                f"{name}.construct: keyword-only parameter(s) {names} with a bprop: MindSpore passes "
                "bprop its inputs by position, so they are misbound or rejected",
            )
        )
    if bprop.var_positional is not None and not bprop.params:
        return found  # classic bprop(self, *args): receives whatever MindSpore passes
    expected = [*construct.names, *_GRAD_NAMES]
    positional = [p.name for p in bprop.params if p.kind is not KEYWORD_ONLY]
    if len(positional) != len(expected) and bprop.var_positional is None:
        found.append(("KW104", f"{name}.bprop {_count_text(spec, positional)}"))
    elif conflicts := position_conflicts(construct.names, positional):
        pairs = ", ".join(f"'{b}' gets {e if e in _GRAD_NAMES else repr(e)}" for b, e in conflicts)
        found.append(
            (
                "KW103",
                f"{name}.bprop({', '.join(positional)}) receives construct's inputs by position, not "
                f"by name: {pairs}",
            )
        )
    return found


def _slot(name: str) -> str:
    return name if name in _GRAD_NAMES else f"input '{name}'"


def _reading(spec: CellSpec) -> str:
    """How bprop's parameters map onto construct's inputs (and raise if that is ambiguous)."""
    assert spec.bprop is not None
    bprop = spec.bprop.signature
    if spec.bprop.classic:
        return CLASSIC_ARGS
    names = bprop.names
    # MindSpore passes bprop every input, then out and dout, by position: defaults never act,
    # so a bprop of only positional parameters is read by position whatever its defaults
    # (MindSpeed's AttentionWithCp: bprop(self, q, ..., attn_out=None, dout=None)).
    positional = bprop.var_keyword is None and bprop.var_positional is None
    positional = positional and all(p.kind is not KEYWORD_ONLY for p in bprop.params)
    if not positional or len(names) != len(spec.names) + len(_GRAD_NAMES):
        return BY_NAME
    if sorted(names) == sorted([*spec.names, *_GRAD_NAMES]):
        return BY_NAME  # exactly construct's names (in any order), out and dout
    conflicts = [
        f"'{b}' (position {names.index(b) + 1}) would receive {_slot(e)}"
        for b, e in position_conflicts(spec.names, names)
    ]
    if conflicts:
        by_position = ", ".join(
            f"{p}={_slot(e)}" for p, e in zip(names, [*spec.names, *_GRAD_NAMES], strict=True)
        )
        msg = (
            f"{spec.qualname}.bprop({', '.join(names)}) is ambiguous: MindSpore passes bprop its "
            f"inputs by position ({by_position}), but "
            + "; ".join(conflicts)
            + f" although {spec.forward} names it otherwise. Rename bprop's parameters to "
            f"{spec.forward}'s names (matched by name) or to names {spec.forward} does not use "
            "(matched by position)"
        )
        error = KwCellDefinitionError(msg)
        error._kwcell_at_definition = True  # kwcell cannot know which reading was meant
        raise error
    return BY_POSITION


def _check_bprop_self(spec: CellSpec) -> None:
    assert spec.bprop is not None
    bprop = spec.bprop.signature
    if bprop.self_name is None:
        raise _fail(spec, "bprop", "bprop must take 'self' as its first parameter")
    if bprop.self_name in (*spec.construct.names, *_GRAD_NAMES):
        names = ", ".join(["self", bprop.self_name, *bprop.names])
        raise _fail(
            spec,
            "bprop",
            f"its first parameter '{bprop.self_name}' receives the cell itself (MindSpore calls "
            f"bprop as a method); did you forget 'self'? write bprop({names})",
            suggest=False,
        )


def check_bprop(spec: CellSpec) -> str:
    """Raise :class:`KwCellDefinitionError` for the first rule bprop breaks against construct;
    return how bprop receives construct's inputs.

    For a bprop in MindSpore's own form, the error carries what nn.Cell raises for the same
    mistake when the gradient is taken (kwcell defers it to then).
    """
    try:
        return _check_bprop(spec)
    except KwCellDefinitionError as exc:
        assert spec.bprop is not None
        if is_mindspore_form(spec.bprop.signature) and not exc._kwcell_at_definition:
            exc._kwcell_mindspore = _signature_errors(spec)
        raise


def _check_bprop(spec: CellSpec) -> str:
    assert spec.bprop is not None
    bprop = spec.bprop.signature
    construct = spec.construct
    where = _construct_text(spec)
    if not spec.function:  # a custom_bprop function's backward has no self
        _check_bprop_self(spec)
    reading = _reading(spec)
    if reading != BY_NAME:
        return reading
    count = None if spec.function or not is_mindspore_form(bprop) else count_mismatch(spec)
    if count is not None and any(n not in spec.names and n not in _GRAD_NAMES for n in bprop.names):
        # MindSpore's positional form with names of its own (grad_output, _): the count is
        # what is wrong, not a name
        raise _fail(spec, "bprop", count)
    if bprop.var_positional is not None:
        star = f"*{bprop.var_positional}"
        raise _fail(
            spec,
            "bprop",
            f"'{star}' can only be used alone, as MindSpore's classic "
            f"bprop({star if spec.function else 'self, ' + star}) (inputs, then out, dout); with named "
            "parameters, list them by name",
        )
    for name in _GRAD_NAMES:
        if bprop.get(name) is None:
            raise _fail(spec, "bprop", f"missing parameter '{name}'")
    for p in bprop.params:
        if p.name in _GRAD_NAMES:
            continue
        cp = construct.get(p.name)
        if cp is None:
            raise _fail(spec, "bprop", f"parameter '{p.name}' is not a parameter of {where}")
        if p.has_default and not (cp.has_default and same_default(p.default, cp.default)):
            theirs = f"default {safe_repr(cp.default)}" if cp.has_default else "no default"
            raise _fail(
                spec,
                "bprop",
                f"parameter '{p.name}' has default {safe_repr(p.default)} but {spec.forward} gives it "
                f"{theirs}; bprop always receives the value {spec.forward} got, so drop the default or "
                "make it match",
            )
    if bprop.var_keyword is None:
        for cp in construct.params:
            if bprop.get(cp.name) is None:
                which = f"{spec.input_word} '{cp.name}'"
                if spec.function:
                    which = f"parameter '{cp.name}' of {spec.qualname}"
                raise _fail(
                    spec,
                    "bprop",
                    f"{which} is missing from bprop; name it, or add "
                    "'**kwargs' to receive the inputs bprop does not name",
                )
    return BY_NAME


def check_returned_literal(
    spec: CellSpec,
    line: int,
    *,
    keys: Sequence[str] | None = None,
    count: int | None = None,
    lenient: bool = False,
) -> str | None:
    """Check a bprop ``return`` of a literal against construct's parameters.

    ``keys`` are the string keys of a returned dict literal, in source order; ``count`` is the
    number of entries of a returned tuple or list literal; ``line`` is the ``return``'s line in
    its file; ``lenient`` is true for MindSpore's own bprop forms. Raises
    :class:`KwCellDefinitionError`, or returns a warning (MindSpore's forms may return more
    gradients than inputs: MindSpore ignores the extra ones). The class statement
    (kwcell/_source.py) and the mypy plugin both call this.
    """
    names = spec.names
    expected = ", ".join(names)
    where = f"{spec.qualname}.bprop (line {line})"
    for key in keys or ():
        if key not in names:
            msg = (
                f"{where}: returns a gradient for '{key}', which is not a parameter of "
                f"{spec.forward}; expected names: ({expected})"
            )
            error = KwCellDefinitionError(msg)
            error._kwcell_at_definition = True  # a dict return is kwcell's form: fail now
            raise error
    if count is None or count == len(names):
        return None
    if lenient and count > len(names):
        # MindSpore's own forms: MindSpore ignores gradients beyond the inputs; so does
        # kwcell, with a warning (they were probably meant for weights).
        hint = (
            "A function's backward gives gradients to its inputs only"
            if spec.function
            else "For weight gradients set self.internal_params and return (input_grads, {param: grad})"
        )
        return (
            f"{where}: returns {_plural(count, 'gradient')} for {len(names)} input(s) ({expected}); "
            f"MindSpore ignores the last {count - len(names)}, and so does kwcell. {hint}"
        )
    msg = (
        f"{where}: returns {_plural(count, 'gradient')}, expected {len(names)}, one per "
        f"{spec.input_word} in this order: ({expected}); return a dict keyed by "
        "parameter name to give only some of them"
    )
    error = KwCellDefinitionError(msg)
    if count < len(names):  # nn.Cell ignores extra gradients
        error._kwcell_mindspore = mindspore_errors(
            "empty_return" if count == 0 else "short_return",
            count=count,
            inputs=len(names),
            cell=spec.qualname.rpartition(".")[2],
        )
    raise error


def switch_problem(spec: CellSpec) -> tuple[str, str] | None:
    """Why a plain ``nn.Cell`` with ``spec``'s construct and bprop must stay one: ``(code,
    message)`` when switching its base to ``KwCell`` would change its gradient or make its
    class statement raise; ``None`` when it is safe (``kwcell migrate`` asks).

    nn.Cell passes bprop construct's inputs by position; KwCell matches names when bprop's
    names are construct's. A name of construct's at another position (KW103) reads one way on
    each: switching would swap gradients silently. A problem the class statement defers to
    gradient time (MindSpore's own forms) fails there on nn.Cell too: safe to switch.
    """
    assert spec.bprop is not None
    try:
        check_construct(spec)
    except KwCellDefinitionError as exc:
        return definition_code(str(exc)), str(exc)
    if passes_through(spec) or spec.bprop.classic:
        return None
    for code, message in plain_problems(spec):
        if code == "KW103":
            return code, message
    try:
        check_bprop(spec)
    except KwCellDefinitionError as exc:
        if not is_mindspore_form(spec.bprop.signature) or exc._kwcell_at_definition:
            return definition_code(str(exc)), str(exc)
    return None
