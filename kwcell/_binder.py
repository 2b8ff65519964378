"""Generated argument binders: Python's own binding of a signature, as fast as a call.

A binder has exactly the signature it binds and returns the bound arguments in parameter
order. Python does the binding, so acceptance, ``TypeError`` wording and default filling are
Python's own; ``inspect`` is never called on the call path.
"""

from __future__ import annotations

from typing import Any

from ._codegen import Unit, literal_source
from ._spec import KEYWORD_ONLY, Param, Signature, format_params
from ._templates import BINDER

__all__ = ["DefaultRef", "binder_unit", "defaults_of", "signature_source"]


class DefaultRef:
    """A default rendered by name in generated source; its value reaches the code by closure."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def signature_source(sig: Signature, *, with_self: bool) -> tuple[str, str, dict[str, Any]]:
    """Source of a parameter list for ``sig``.

    Returns the parameter list, body lines that mention each non-literal default (which makes
    it a closure cell, where MindSpore's graph parser looks it up), and that closure.
    """
    closure: dict[str, Any] = {}
    refs: list[str] = []
    rendered: list[Param] = []
    for p in sig.params:
        if p.has_default and literal_source(p.default) is None:
            ref = f"_kwcell_default_{p.name}"
            closure[ref] = p.default
            refs.append(f"    {ref}  # a closure cell, so that MindSpore's graph parser finds it\n")
            rendered.append(Param(p.name, p.kind, DefaultRef(ref)))
        else:
            rendered.append(Param(p.name, p.kind, p.default))
    text = format_params(tuple(rendered))
    if with_self:
        text = f"self, {text}" if text else "self"
    return text, "".join(refs), closure


def defaults_of(sig: Signature) -> tuple[tuple[Any, ...] | None, dict[str, Any] | None]:
    """``(__defaults__, __kwdefaults__)`` for a function with ``sig``'s parameters."""
    positional = tuple(p.default for p in sig.params if p.has_default and p.kind is not KEYWORD_ONLY)
    keyword = {p.name: p.default for p in sig.params if p.has_default and p.kind is KEYWORD_ONLY}
    return positional or None, keyword or None


def binder_unit(
    sig: Signature,
    *,
    qualname: str,
    with_self: bool,
    rendered: tuple[str, str, dict[str, Any]] | None = None,
) -> Unit:
    """The generated-code unit of a binder for ``sig`` (a function named ``bind``).

    ``rendered`` is ``signature_source(sig, with_self=with_self)`` when the caller has it.
    """
    signature, default_refs, closure = rendered or signature_source(sig, with_self=with_self)
    body = BINDER.format(
        signature=signature,
        default_refs=default_refs,
        args_tuple="".join(f"{n}, " for n in sig.names),
        qualname=qualname,
    )
    return Unit(
        "binder",
        body,
        {"__name__": __name__, "__builtins__": __builtins__},
        closure=closure,
        defaults={"bind": defaults_of(sig)},
    )
