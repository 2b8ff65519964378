"""Random construct signatures and calls for the differential tests (tests/test_fuzz.py, bench/fuzz_100k.py).

A signature is turned into a real module (a ``.py`` file in a temporary directory, imported
with importlib) holding a ``KwCell`` class and a plain reference function with the very same
parameter list: kwcell rewrites ``bprop`` from its source, and GRAPH_MODE parses source too.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import math
import os
import sys
import tempfile
import types
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "Call",
    "Sig",
    "bind_outcome",
    "calls",
    "load_module",
    "same_outcome",
    "signatures",
    "valid_tensor_calls",
]

NAMES = ("a", "b", "c", "d", "e", "f", "x", "w", "y", "größe", "len", "Tensor")
UNKNOWN = "zz_unknown"

_literals = st.one_of(
    st.integers(min_value=-(2**62), max_value=2**62),  # beyond int64 MindSpore rejects cell inputs
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([-0.0, math.nan, math.inf, 0.0]),
    st.booleans(),
    st.none(),
    st.text(max_size=8),
    st.binary(max_size=4),
    st.complex_numbers(allow_nan=True, allow_infinity=True),
)
defaults_strategy = st.recursive(
    _literals, lambda inner: st.tuples(inner, inner) | st.tuples(inner), max_leaves=4
)


@dataclass(frozen=True)
class Sig:
    """``names[:n_posonly]`` positional-only, then positional-or-keyword, then keyword-only."""

    names: tuple[str, ...]
    n_posonly: int
    n_kwonly: int
    defaults: tuple[Any, ...]  # one per name; ``NO`` for none
    constants: tuple[float, ...]  # c_i in construct's sum_i c_i * p_i

    @property
    def n_positional(self) -> int:
        return len(self.names) - self.n_kwonly

    def has_default(self, i: int) -> bool:
        return self.defaults[i] is not NO

    def params_source(self, *, with_self: bool = True, literal: bool = False) -> str:
        """Defaults are written ``_D[i]``, or as literals (the GRAPH_MODE parser reads them from source)."""
        parts: list[str] = ["self"] if with_self else []
        for i, name in enumerate(self.names):
            if i == self.n_positional and self.n_kwonly:
                parts.append("*")
            default = _literal(self.defaults[i]) if literal else None
            default = default or f"_D[{i}]"
            parts.append(f"{name}={default}" if self.has_default(i) else name)
            if i == self.n_posonly - 1:
                parts.append("/")
        return ", ".join(parts)


def _literal(value: Any) -> str | None:
    try:
        text = repr(value)
        return (
            text if type(ast.literal_eval(text)) is type(value) and ast.literal_eval(text) == value else None
        )
    except (ValueError, SyntaxError):
        return None


class _No:
    def __repr__(self) -> str:
        return "NO"


NO: Any = _No()


@st.composite
def signatures(
    draw: st.DrawFn,
    *,
    literal_defaults: bool = True,
    max_params: int = 5,
    positional_only: bool = True,
    pool: tuple[str, ...] = NAMES,
) -> Sig:
    names = tuple(draw(st.lists(st.sampled_from(pool), unique=True, max_size=max_params)))
    n = len(names)
    n_kwonly = draw(st.integers(0, n))
    n_posonly = draw(st.integers(0, n - n_kwonly)) if positional_only else 0
    n_positional = n - n_kwonly
    first_default = draw(st.integers(0, n_positional))
    # Tensor-test defaults are exact in float32 (MindSpore hands bprop a float32 copy).
    value = defaults_strategy if literal_defaults else st.integers(-16, 16).map(lambda i: i / 4)
    defaults: list[Any] = []
    for i in range(n):
        if i < n_positional:
            defaults.append(draw(value) if i >= first_default else NO)
        else:
            defaults.append(draw(value) if draw(st.booleans()) else NO)
    constants = tuple(float(i + 2) for i in range(n))
    return Sig(names, n_posonly, n_kwonly, tuple(defaults), constants)


@dataclass(frozen=True)
class Call:
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


class Value:
    """A distinct argument value, compared by identity."""

    _ids = itertools.count()

    def __init__(self) -> None:
        self.id = next(self._ids)

    def __repr__(self) -> str:
        return f"V{self.id}"


@st.composite
def calls(draw: st.DrawFn, sig: Sig) -> Call:
    """Any call, valid or not: too many/few positionals, unknown, duplicate or positional-only keywords."""
    n_args = draw(st.integers(0, len(sig.names) + 1))
    keys = draw(st.lists(st.sampled_from((*sig.names, UNKNOWN)), unique=True, max_size=len(sig.names) + 1))
    return Call(tuple(Value() for _ in range(n_args)), {k: Value() for k in keys})


@st.composite
def valid_tensor_calls(draw: st.DrawFn, sig: Sig) -> tuple[tuple[int, ...], dict[str, int]]:
    """A call Python accepts: indices of params given positionally, and params given by keyword."""
    required_posonly = sum(1 for i in range(sig.n_posonly) if not sig.has_default(i))
    required_positional = sum(1 for i in range(sig.n_positional) if not sig.has_default(i))
    k = draw(st.integers(max(required_posonly, 0), sig.n_positional))
    positional = tuple(range(k))
    keyword: dict[str, int] = {}
    for i in range(k, len(sig.names)):
        if i < sig.n_posonly:
            continue  # positional-only after the positional prefix: left to its default
        if not sig.has_default(i) or draw(st.booleans()):
            keyword[sig.names[i]] = i
    del required_positional
    order = draw(st.permutations(list(keyword)))
    return positional, {name: keyword[name] for name in order}


_tmpdir: str | None = None
_modules = itertools.count()

MODULE_TEMPLATE = """\
from kwcell import KwCell

# _D (the defaults) is set by load_module before this body runs
_RECORD = []


class Bind(KwCell):
    def construct({params}):
        return ({tuple_})

    def bprop({bprop_params}, *, out, dout):
        return {{}}


class Grad(KwCell):
    def construct({params}):
        _RECORD.append(("construct", ({tuple_})))
        return {sum_}

    def bprop({bprop_params}, out, dout):
        _RECORD.append(("bprop", ({tuple_})))
        return {{{grads}}}


class GraphGrad(KwCell):
    def construct({literal_params}):
        return {sum_}

    def bprop({bprop_params}, out, dout):
        return {{{grads}}}


def ref({params}):
    return ({tuple_})


def ref_noself({params_noself}):
    return ({tuple_})
"""


def load_module(sig: Sig) -> types.ModuleType:
    """Write the module for ``sig`` to a real file and import it (registered in ``sys.modules``)."""
    global _tmpdir
    if _tmpdir is None:
        _tmpdir = tempfile.mkdtemp(prefix="kwcell-fuzz-")
    name = f"kwcell_fuzz_{os.getpid()}_{next(_modules)}"
    tuple_ = "".join(f"{n}, " for n in sig.names)
    terms = [f"{c!r} * {n}" for c, n in zip(sig.constants, sig.names, strict=True)]
    # bprop lists its parameters in reverse (matched by name), all keyword-capable.
    bprop_params = ", ".join(["self", *reversed(sig.names)])
    source = MODULE_TEMPLATE.format(
        params=sig.params_source(),
        params_noself=sig.params_source(with_self=False),
        literal_params=sig.params_source(literal=True),
        bprop_params=bprop_params,
        tuple_=tuple_,
        sum_=" + ".join(terms) if terms else "0.0",
        grads=", ".join(f"{n!r}: {c!r} * dout" for c, n in zip(sig.constants, sig.names, strict=True)),
    )
    path = os.path.join(_tmpdir, f"{name}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module._D = sig.defaults  # type: ignore[attr-defined]
    sys.modules[name] = module
    # Defaults are read when the defs run: _D is set before the module body executes.
    spec.loader.exec_module(module)
    return module


def unload_module(module: types.ModuleType) -> None:
    sys.modules.pop(module.__name__, None)
    if module.__file__:
        os.remove(module.__file__)


def bind_outcome(fn: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """``("ok", result)`` or ``("error", (type, message after the function name))``."""
    try:
        return "ok", fn(*args, **kwargs)
    except TypeError as e:
        text = str(e)
        # "Net.construct() got ..." / "ref() got ...": compare what follows the name.
        return "error", (type(e), text.split("() ", 1)[1] if "() " in text else text)


def same_outcome(actual: tuple[str, Any], expected: tuple[str, Any]) -> bool:
    """Equal acceptance, exception type and message, and identical bound values."""
    if actual[0] != expected[0]:
        return False
    if actual[0] == "error":
        return bool(actual[1] == expected[1])
    a, b = actual[1], expected[1]
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
