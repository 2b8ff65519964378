"""The rules of SPEC 2.1, applied to a :class:`CellSpec` when the class statement runs."""

from __future__ import annotations

import keyword
from collections.abc import Sequence
from typing import Any

from ._errors import KwCellDefinitionError
from ._spec import CellSpec, Signature, format_params, safe_repr

__all__ = ["RESERVED_PREFIX", "check_returned_literal", "same_default", "validate"]

RESERVED_PREFIX = "_kwcell_"
_GRAD_NAMES = ("out", "dout")


def same_default(a: Any, b: Any) -> bool:
    """Whether two default values are the same value (``nan`` equals itself, types must match)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b) and repr(a) == repr(b)
    except Exception:  # noqa: BLE001 - a value whose == cannot be a bool is not "the same"
        return False


def _construct_text(construct: Signature) -> str:
    self_name = construct.self_name or "self"
    params = format_params(
        construct.params, var_positional=construct.var_positional, var_keyword=construct.var_keyword
    )
    return f"construct({self_name}, {params})" if params else f"construct({self_name})"


def expected_bprop(construct: Signature) -> str:
    """The bprop signature kwcell suggests for ``construct``."""
    params = format_params(construct.params, extra_keyword_only=_GRAD_NAMES)
    return f"bprop(self, {params})"


def _fail(spec: CellSpec, method: str, detail: str, *, suggest: bool = True) -> KwCellDefinitionError:
    msg = f"{spec.qualname}.{method}: {detail}"
    if suggest and not spec.construct.var_positional and not spec.construct.var_keyword:
        msg += f"; expected e.g. {expected_bprop(spec.construct)}"
    return KwCellDefinitionError(msg)


def _check_construct(spec: CellSpec) -> None:
    construct = spec.construct
    where = _construct_text(construct)
    if construct.self_name is None:
        msg = f"{spec.qualname}.construct must take 'self' as its first parameter, got {where}"
        raise KwCellDefinitionError(msg)
    for var in (construct.var_positional, construct.var_keyword):
        if var is not None:
            stars = "*" if var == construct.var_positional else "**"
            msg = (
                f"{spec.qualname}.construct: parameter '{stars}{var}' in {where} cannot be used with "
                "a bprop: bprop needs one gradient per named input. Name every input of construct "
                "explicitly, or drop bprop and let MindSpore differentiate construct"
            )
            raise KwCellDefinitionError(msg)
    for p in construct.params:
        if p.name in _GRAD_NAMES:
            msg = (
                f"{spec.qualname}.construct: parameter '{p.name}' in {where} clashes with bprop's "
                f"'{p.name}' argument (the forward output 'out' and its gradient 'dout'); "
                "rename it in construct"
            )
            raise KwCellDefinitionError(msg)
        if p.name.startswith(RESERVED_PREFIX) or p.name == "self" or keyword.iskeyword(p.name):
            msg = (
                f"{spec.qualname}.construct: parameter '{p.name}' in {where} uses a name kwcell "
                f"reserves ('self' or the '{RESERVED_PREFIX}' prefix); rename it"
            )
            raise KwCellDefinitionError(msg)


def _check_bprop(spec: CellSpec) -> None:
    assert spec.bprop is not None
    bprop = spec.bprop.signature
    construct = spec.construct
    where = _construct_text(construct)
    if bprop.self_name is None:
        raise _fail(spec, "bprop", "bprop must take 'self' as its first parameter")
    if spec.bprop.classic:
        return
    if bprop.var_positional is not None:
        raise _fail(
            spec,
            "bprop",
            f"'*{bprop.var_positional}' can only be used alone, as MindSpore's classic "
            f"bprop(self, *{bprop.var_positional}) (inputs, then out, dout); with named parameters, "
            "list them by name",
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
                f"parameter '{p.name}' has default {safe_repr(p.default)} but construct gives it {theirs}; "
                "bprop always receives the value construct got, so drop the default or make it match",
            )
    if bprop.var_keyword is None:
        for cp in construct.params:
            if bprop.get(cp.name) is None:
                raise _fail(
                    spec,
                    "bprop",
                    f"construct parameter '{cp.name}' is missing from bprop; name it, or add "
                    "'**kwargs' to receive the inputs bprop does not name",
                )


def validate(spec: CellSpec) -> None:
    """Raise :class:`KwCellDefinitionError` for the first rule ``spec`` breaks."""
    if spec.bprop is None:
        return
    _check_construct(spec)
    _check_bprop(spec)


def check_returned_literal(
    spec: CellSpec, line: int, *, keys: Sequence[str] | None = None, count: int | None = None
) -> None:
    """Raise for a bprop ``return`` of a literal that cannot fit construct's parameters.

    ``keys`` are the string keys of a returned dict literal, in source order; ``count`` is the
    number of entries of a returned tuple or list literal; ``line`` is the ``return``'s line in
    its file. The class statement (kwcell/_source.py) and the mypy plugin both call this.
    """
    names = spec.names
    expected = ", ".join(names)
    where = f"{spec.qualname}.bprop (line {line})"
    for key in keys or ():
        if key not in names:
            msg = (
                f"{where}: returns a gradient for '{key}', which is not a parameter of "
                f"construct; expected names: ({expected})"
            )
            raise KwCellDefinitionError(msg)
    if count is not None and count != len(names):
        msg = (
            f"{where}: returns {count} gradients, expected {len(names)}, one per "
            f"construct parameter in this order: ({expected}); return a dict keyed by "
            "parameter name to give only some of them"
        )
        raise KwCellDefinitionError(msg)
