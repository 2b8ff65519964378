"""Signatures of ``construct`` and ``bprop`` as frozen, MindSpore-free data.

What the signatures say is read here, once per pair of functions: which parameters
``construct`` has, in which order, with which defaults, and which parameters ``bprop`` takes.
The rules that judge them are in ``_validate``; what is generated from them, in ``_generate``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "EMPTY",
    "BpropSpec",
    "CellSpec",
    "Param",
    "call_text",
    "format_params",
    "safe_repr",
    "signature_of",
]

EMPTY: Any = inspect.Parameter.empty

POSITIONAL_ONLY = inspect.Parameter.POSITIONAL_ONLY
POSITIONAL_OR_KEYWORD = inspect.Parameter.POSITIONAL_OR_KEYWORD
KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY


@dataclass(frozen=True)
class Param:
    """One named parameter of ``construct`` or ``bprop`` (never ``self``)."""

    name: str
    kind: inspect._ParameterKind
    default: Any = EMPTY
    #: As written (a string under ``from __future__ import annotations``); not compared.
    annotation: Any = field(default=EMPTY, compare=False)

    @property
    def has_default(self) -> bool:
        return self.default is not EMPTY


@dataclass(frozen=True)
class Signature:
    """A method signature without its first (``self``) parameter."""

    self_name: str | None
    params: tuple[Param, ...]
    var_positional: str | None
    var_keyword: str | None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def get(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None


@dataclass(frozen=True)
class BpropSpec:
    """How the user's ``bprop`` receives its arguments.

    ``classic`` is MindSpore's own ``bprop(self, *args)`` form: inputs, then ``out``,
    ``dout``, all positionally. Otherwise parameters are matched to ``construct`` by name.
    """

    signature: Signature
    classic: bool


@dataclass(frozen=True)
class CellSpec:
    """Everything kwcell needs to know about one ``KwCell`` subclass."""

    module: str
    qualname: str
    construct: Signature
    bprop: BpropSpec | None
    #: The class whose bprop this class inherits while defining its own construct ("" when
    #: the class defines its bprop itself): errors then point at this class's construct.
    inherited_bprop: str = ""
    #: The cell stands for a function decorated with ``kwcell.custom_bprop`` (``qualname`` is
    #: the function's): its backward takes no ``self``, and messages name the function.
    function: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return self.construct.names

    @property
    def forward(self) -> str:
        """What the inputs belong to, in messages: ``construct``, or the function's name."""
        return self.qualname if self.function else "construct"

    @property
    def input_word(self) -> str:
        """``construct parameter``, or ``parameter of <function>``."""
        return f"parameter of {self.qualname}" if self.function else "construct parameter"


def signature_of(fn: Callable[..., Any], *, has_self: bool = True) -> Signature:
    """Read ``fn``'s signature, dropping its first parameter (``self``) if ``has_self``."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    self_name: str | None = None
    if has_self and params and params[0].kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD):
        self_name = params.pop(0).name
    named: list[Param] = []
    var_positional: str | None = None
    var_keyword: str | None = None
    for p in params:
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            var_positional = p.name
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            var_keyword = p.name
        else:
            named.append(Param(p.name, p.kind, p.default, p.annotation))
    return Signature(self_name, tuple(named), var_positional, var_keyword)


def safe_repr(value: Any) -> str:
    """``repr(value)`` for messages; a placeholder when ``repr`` raises (e.g. a 5,000-digit int)."""
    try:
        return repr(value)
    except Exception:  # noqa: BLE001 - any user __repr__ may raise; a message must still be built
        return f"<{type(value).__qualname__} object>"


def call_text(params: tuple[Param, ...]) -> str:
    """Source of a call passing each parameter on: ``x, w, y=y`` (keyword-only by keyword)."""
    return ", ".join(p.name if p.kind is not KEYWORD_ONLY else f"{p.name}={p.name}" for p in params)


def format_params(
    params: tuple[Param, ...],
    *,
    extra_keyword_only: tuple[str, ...] = (),
    var_positional: str | None = None,
    var_keyword: str | None = None,
) -> str:
    """Render parameters as Python source, ``x, /, w=1.0, *, y=2.0``.

    ``extra_keyword_only`` names (``out``, ``dout``) are appended after a ``*``.
    """
    parts: list[str] = []
    seen_positional_only = False
    star_written = False
    for p in params:
        if p.kind is POSITIONAL_ONLY:
            seen_positional_only = True
        elif seen_positional_only:
            parts.append("/")
            seen_positional_only = False
        if p.kind is KEYWORD_ONLY and not star_written:
            parts.append(f"*{var_positional}" if var_positional else "*")
            star_written = True
        parts.append(f"{p.name}={safe_repr(p.default)}" if p.has_default else p.name)
    if seen_positional_only:
        parts.append("/")
    if var_positional and not star_written:
        parts.append(f"*{var_positional}")
        star_written = True
    if extra_keyword_only:
        if not star_written:
            parts.append("*")
        parts.extend(extra_keyword_only)
    if var_keyword:
        parts.append(f"**{var_keyword}")
    return ", ".join(parts)
