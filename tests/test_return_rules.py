"""The class-creation return rules (kwcell/_returns.py), on source text alone.

A false alarm would refuse a valid cell, so ``single_value`` must say "single" only when no
value of any type could make the expression a tuple, list or dict.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

import pytest

from kwcell._returns import not_a_tensor, single_value
from kwcell._spec import signature_of

SINGLE = [
    "dout * ops.cos(x)",
    "w * ops.cos(x) * dout",
    "-dout",
    "dout / scale",
    "x @ dout",
    "ops.cos(x) * dout + y",
    "dout ** 2",
    "1.0 + dout",
]
NOT_KNOWN = [
    "dout",  # a tuple when construct returns one
    "grads",
    "ops.split(dout, 2)",
    "grads + (None,)",
    "(None,) * 3",
    "grads * 2",
    "dxs + dws",
    "(dx, dw)",
    '{"x": dx}',
    "dout[0]",
    "not flag",
]


@pytest.mark.parametrize("text", SINGLE)
def test_single_values(text: str) -> None:
    assert single_value(ast.parse(text, mode="eval").body)


@pytest.mark.parametrize("text", NOT_KNOWN)
def test_values_that_may_be_sequences(text: str) -> None:
    assert not single_value(ast.parse(text, mode="eval").body)


def _first(fn: Any) -> Any:
    return signature_of(fn).params[0]


def test_not_a_tensor() -> None:
    def by_default(self: Any, scale=2.0, x=None) -> None: ...  # type: ignore[no-untyped-def]
    def by_annotation(self: Any, n: int, x: Any) -> None: ...
    def by_string_annotation(self: Any, flag: "bool", x: Any) -> None: ...  # noqa: UP037
    def by_generic(self: Any, shape: tuple[int, ...], x: Any) -> None: ...
    def tensor_or_none(self: Any, bias: Any = None) -> None: ...
    def union(self: Any, s: float | Any) -> None: ...
    def plain(self: Any, x: Any) -> None: ...

    assert not_a_tensor(_first(by_default)) == "its default is 2.0"
    assert not_a_tensor(_first(by_annotation)) == "it is annotated 'int'"
    assert not_a_tensor(_first(by_string_annotation)) == "it is annotated 'bool'"
    assert not_a_tensor(_first(by_generic)) == "it is annotated 'tuple'"
    for fn in (tensor_or_none, union, plain):
        assert not_a_tensor(_first(fn)) is None, inspect.signature(fn)
