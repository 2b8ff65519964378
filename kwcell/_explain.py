"""``kwcell.explain``: what kwcell made of a class, as text.

The parameter mapping (construct's order, which inputs bprop names, defaults, bprop style)
followed by the source of every generated function, read back from the files kwcell wrote
(the same text tracebacks and ``inspect.getsource`` show).
"""

from __future__ import annotations

import linecache
import os

from mindspore import nn

from ._decorate import has_kwcell_behaviour
from ._functional import CustomBprop, function_info
from ._meta import KwCellInfo, info_of
from ._reuse import FLAG, describe
from ._spec import KEYWORD_ONLY, POSITIONAL_ONLY, BpropSpec, Signature, format_params, signature_of
from ._validate import BY_POSITION

__all__ = ["explain"]

_KINDS: dict[object, str] = {KEYWORD_ONLY: "keyword-only", POSITIONAL_ONLY: "positional-only"}


def _params_text(sig: Signature) -> str:
    return format_params(sig.params, var_positional=sig.var_positional, var_keyword=sig.var_keyword)


def _style(bprop: BpropSpec, reading: str, forward: str = "construct") -> str:
    if bprop.classic:
        return "classic (inputs, then out, dout, positionally)"
    if reading == BY_POSITION:
        return "MindSpore's positional form (inputs by position, then out, dout; bprop's own names)"
    if bprop.signature.var_keyword is not None:
        return f"**{bprop.signature.var_keyword} (named parameters matched by name; the rest by keyword)"
    return f"named (parameters matched to {forward} by name)"


def _mapping(info: KwCellInfo, forward: str = "construct") -> list[str]:
    construct = info.spec.construct
    bprop = info.spec.bprop
    assert bprop is not None
    bsig = bprop.signature
    rows = [("#", forward, "kind", "default", "bprop receives it as")]
    for i, p in enumerate(construct.params):
        if bprop.classic:
            received = f"{bsig.var_positional}[{i}]"
        elif info.reading == BY_POSITION:
            received = bsig.params[i].name
        elif bsig.get(p.name) is not None:
            received = p.name
        elif bsig.var_keyword is not None:
            received = f"{bsig.var_keyword}[{p.name!r}]"
        else:  # check_bprop() rejects this; kept for completeness
            received = "-"
        kind = _KINDS.get(p.kind) or "positional or keyword"
        rows.append((str(i), p.name, kind, repr(p.default) if p.has_default else "-", received))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return ["  " + "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _weights(cell: object) -> list[str]:
    """For an instance that lists weights: which, and how they reach its bprop."""
    listed = getattr(cell, "internal_params", None) if isinstance(cell, nn.Cell) else None
    if not listed:
        return []
    names = ", ".join(repr(getattr(p, "name", p)) for p in listed)
    return [
        f"weights (internal_params): {names}; passed to the core after construct's inputs, "
        "their gradients are the ones bprop returns for them (in GRAPH_MODE and @ms.jit a dict "
        "key is written self.<attribute>)"
    ]


def _generated(info: KwCellInfo) -> list[str]:
    return _files(info.files)


def _files(files: dict[str, str]) -> list[str]:
    lines: list[str] = []
    for kind, path in files.items():
        source = "".join(linecache.getlines(path))
        lines.append(f"--- {kind}: {os.path.basename(path)}")
        lines.append(source.rstrip("\n") if source else "(source no longer available)")
    return lines


def _explain_function(fn: CustomBprop[..., object]) -> str:
    found = function_info(fn)
    assert found is not None
    spec = found.spec
    label = f"{spec.module}.{spec.qualname}"
    if found.cls is None:
        return (
            f"{label} is a kwcell.custom_bprop function without a backward yet: register one "
            f"with @{found.name}.bprop (calling {spec.qualname} raises until then)."
        )
    info = info_of(found.cls)
    assert info is not None and info.spec.bprop is not None
    lines = [
        f"kwcell.explain({label})",
        f"{spec.qualname}({_params_text(spec.construct)})",
        f"bprop({_params_text(info.spec.bprop.signature)})",
        f"bprop style: {_style(info.spec.bprop, info.reading, spec.qualname)}",
        "",
        f"Parameter mapping ({spec.qualname}'s order; MindSpore sees the core's positional inputs):",
        *_mapping(info, spec.qualname),
        "",
        "Generated functions:",
        *_files({"function": found.public.__code__.co_filename, **info.files}),
    ]
    return "\n".join(lines) + "\n"


def explain(cls: type | nn.Cell | CustomBprop[..., object]) -> str:
    """What kwcell made of `cls` (a class, or an instance of one), as text.

    For a `KwCell` with a bprop: construct's and bprop's signatures, the bprop style
    (named, `**kwargs`, MindSpore's positional form, or the classic `bprop(self, *args)`),
    one line per construct parameter (order, kind, default, how bprop receives it), then the
    source of every function kwcell generated for the class, as tracebacks and
    `inspect.getsource` show it. A [`kwcell.custom_bprop`][kwcell.custom_bprop] function is
    explained the same way, its parameters in place of construct's.

    It raises nothing: for a class kwcell generated nothing for (a cell without bprop, a
    plain `nn.Cell` with one, any other object) the text says why.

    Args:
        cls: A cell class, a cell instance, or a `kwcell.custom_bprop` function.

    Returns:
        The explanation, ending with a newline.

    Example:
        ```python
        from mindspore import ops

        import kwcell
        from kwcell import KwCell


        class Scaled(KwCell):
            def construct(self, x, w=1.0):
                return w * ops.sin(x)

            def bprop(self, x, *, out, dout, **rest):
                return {"x": rest["w"] * ops.cos(x) * dout}


        text = kwcell.explain(Scaled)
        assert "1  w          positional or keyword  1.0      rest['w']" in text
        ```
    """
    if function_info(cls) is not None:
        return _explain_function(cls)  # type: ignore[arg-type]
    klass: type = cls if isinstance(cls, type) else type(cls)
    label = f"{klass.__module__}.{klass.__qualname__}"
    info = info_of(klass)
    if info is None:
        bprop = getattr(klass, "bprop", None)
        if bprop is None:
            text = (
                f"{label} has no bprop: MindSpore differentiates construct itself and kwcell "
                "generated nothing for it."
            )
            if hasattr(klass, FLAG):
                text += "\n" + "\n".join(describe(cls)) + "\n"
            return text
        construct = signature_of(klass.construct) if hasattr(klass, "construct") else None
        where = f"construct(self, {_params_text(construct)})" if construct is not None else "construct"
        if has_kwcell_behaviour(klass):
            # construct(self, *inputs) with MindSpore's bprop(self, *args): left as it stands.
            return (
                f"{label} is a KwCell that kwcell leaves to MindSpore as it is: {where} gives its "
                "inputs no names to match, so its "
                f"bprop({_params_text(signature_of(bprop))}) receives them positionally, then out "
                "and dout, exactly as on nn.Cell; kwcell generated nothing for it."
            )
        return (
            f"{label} is not a KwCell: its bprop({_params_text(signature_of(bprop))}) is a plain "
            f"MindSpore bprop, which receives the inputs of {where} in call order, not by name. "
            "Derive the class from kwcell.KwCell to have them matched by name."
        )
    spec = info.spec
    assert spec.bprop is not None
    lines = [
        f"kwcell.explain({label})",
        f"construct(self, {_params_text(spec.construct)})",
        f"bprop(self, {_params_text(spec.bprop.signature)})",
        f"bprop style: {_style(spec.bprop, info.reading)}",
        *describe(cls),
        *_weights(cls),
        "",
        "Parameter mapping (construct's order; MindSpore sees the core's positional inputs):",
        *_mapping(info),
        "",
        "Generated functions:",
        *_generated(info),
    ]
    return "\n".join(lines) + "\n"
