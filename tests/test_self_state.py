"""A bprop reading what construct stored on self: PYNATIVE only, warned at class creation.

The measured behaviour the warning is about (MindSpore 2.10, nn.Cell and KwCell alike): right
in PYNATIVE; in GRAPH_MODE an ``AttributeError``, or, when ``__init__`` set the attribute too,
the gradient computed from ``__init__``'s value, without an error. The warning names the
class, the attribute and both lines; the rule is kwcell._selfstate's, shared with ``kwcell
check`` (KW009) and the mypy plugin (tests/test_plugin_parity.py).
"""

from __future__ import annotations

import inspect
import re
import textwrap
import warnings
from collections.abc import Iterator
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import kwcell
from kwcell import KwCell, KwCellWarning, keyword_bprop
from kwcell._selfstate import Source, attribute_reads, attribute_writes

from . import self_state_cells as c

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)


def rms_grad(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """d/dx sum(x * rsqrt(mean(x^2) + eps)), analytic."""
    rstd = 1.0 / np.sqrt((x * x).mean(-1, keepdims=True) + c.EPS)
    n = x * rstd
    grad: np.ndarray[Any, Any] = rstd * (1.0 - n * n.mean(-1, keepdims=True))
    return grad


def line_of(cls: type, method: str, text: str) -> int:
    """The file line of the first line of ``cls.method`` containing ``text``."""
    lines, start = inspect.getsourcelines(inspect.unwrap(getattr(cls, method)))
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.fixture
def caught() -> Iterator[list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always")
        yield found


def kw_messages(found: list[warnings.WarningMessage]) -> list[str]:
    """The KwCellWarnings, with the qualnames of the test functions' classes made short."""
    return [
        re.sub(r"[\w.]*<locals>\.", "", str(w.message))
        for w in found
        if issubclass(w.category, KwCellWarning)
    ]


@pytest.mark.parametrize("cls", [c.PlainStateNorm, c.StateNorm], ids=["nn.Cell", "KwCell"])
def test_the_pattern_works_in_pynative_and_fails_in_a_graph(cls: type[nn.Cell], mode: str) -> None:
    grad = kwcell.grad(cls())
    if mode == "pynative":
        assert np.allclose(grad(Tensor(X)).asnumpy(), rms_grad(X), atol=1e-5)
    else:
        with pytest.raises(AttributeError, match=r"has no attribute 'norm_x'"):
            grad(Tensor(X))


@pytest.mark.parametrize("cls", [c.PlainStateNormDefault, c.StateNormDefault], ids=["nn.Cell", "KwCell"])
def test_with_a_value_from_init_a_graph_reads_that_value(cls: type[nn.Cell], mode: str) -> None:
    """__init__'s norm_x is zeros: a graph's gradient is rstd * dout, as if norm_x were 0."""
    got = kwcell.grad(cls())(Tensor(X)).asnumpy()
    if mode == "pynative":
        assert np.allclose(got, rms_grad(X), atol=1e-5)
    else:
        rstd = 1.0 / np.sqrt((X * X).mean(-1, keepdims=True) + c.EPS)
        assert np.allclose(got, np.broadcast_to(rstd, X.shape), atol=1e-5)  # silently wrong


@pytest.mark.parametrize("cls", [c.NormFromOut, c.NormRecomputed], ids=["from-out", "recomputed"])
def test_the_fixes_are_right_in_every_mode(cls: type[nn.Cell], mode: str) -> None:
    assert np.allclose(kwcell.grad(cls())(Tensor(X)).asnumpy(), rms_grad(X), atol=1e-5)
    assert kwcell.gradcheck(cls(), Tensor(X))


def test_class_creation_warns_with_the_class_the_attribute_and_both_lines(
    caught: list[warnings.WarningMessage],
) -> None:
    class RMSNorm2D(KwCell):
        def construct(self, x: Any) -> Any:
            self.norm_x = x * ops.rsqrt((x * x).mean(-1, keep_dims=True) + 1e-6)
            return self.norm_x

        def bprop(self, x: Any, out: Any, dout: Any) -> Any:
            return (dout * self.norm_x,)

    set_line = line_of(RMSNorm2D, "construct", "self.norm_x =")
    read_line = line_of(RMSNorm2D, "bprop", "self.norm_x")
    assert kw_messages(caught) == [
        f"RMSNorm2D.bprop reads self.norm_x (line {read_line}), which RMSNorm2D.construct sets (line "
        f"{set_line}): that works in PYNATIVE only. GRAPH_MODE and @ms.jit compile bprop apart from "
        "construct, and construct's assignment never reaches the cell, so MindSpore fails with "
        "AttributeError (no attribute 'norm_x'). Return it from construct as part of out (e.g. `return y, "
        "norm_x`; bprop gets it as out[1]), or recompute it in bprop from the inputs"
    ]
    assert caught[0].filename == __file__  # at the class statement


class _Base(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.scale: Any = None  # a default, set by a base's __init__


def test_a_value_from_init_is_named_in_the_warning(caught: list[warnings.WarningMessage]) -> None:
    @keyword_bprop
    class Cached(_Base):
        def construct(self, x: Any, *, w: float = 2.0) -> Any:
            self.scale, y = ops.cos(x), w * ops.sin(x)
            return y

        def bprop(self, x: Any, *, w: float = 2.0, out: Any, dout: Any) -> Any:
            return {"x": w * self.scale * dout}

    init_line = inspect.getsourcelines(_Base.__init__)[1] + 2
    (message,) = kw_messages(caught)
    assert message.startswith(
        f"Cached.bprop reads self.scale (line {line_of(Cached, 'bprop', 'self.scale')}), which "
        f"Cached.construct sets (line {line_of(Cached, 'construct', 'self.scale')}): that works in "
        "PYNATIVE only."
    )
    assert (
        f"so bprop reads the value __init__ gives it (line {init_line}), never construct's: a wrong gradient "
        "without an error (or an error, if that value cannot be computed with, such as None). Return it"
    ) in message


def test_inherited_bprop_and_later_assignment_are_checked(caught: list[warnings.WarningMessage]) -> None:
    class Base(KwCell):
        def bprop(self, x: Any, out: Any, dout: Any) -> Any:
            return (getattr(self, "saved") * dout,)  # noqa: B009 - the getattr form is read too

    class Child(Base):
        def construct(self, x: Any) -> Any:
            self.saved = ops.cos(x)
            return ops.sin(x)

    (message,) = kw_messages(caught)
    assert message.startswith("Child.bprop (inherited from Base) reads self.saved (line ")
    caught.clear()

    def construct(self: Any, x: Any) -> Any:  # assigned later: checked again
        self.saved, self.other = ops.cos(x), x
        return ops.sin(x)

    Child.construct = construct  # type: ignore[method-assign]
    assert [m.split(" (line")[0] for m in kw_messages(caught)] == [
        "Child.bprop (inherited from Base) reads self.saved"
    ]


def test_no_warning_when_bprop_does_not_read_what_construct_sets(
    caught: list[warnings.WarningMessage],
) -> None:
    class Counter(KwCell):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0
            self.w = 2.0

        def construct(self, x: Any) -> Any:
            self.calls += 1  # construct's own bookkeeping, bprop never reads it

            def inner() -> None:
                self.w = 3.0  # a nested function's assignment is not construct's

            return self.w * x

        def bprop(self, x: Any, out: Any, dout: Any) -> Any:
            return (self.w * dout,)  # set in __init__ only

    assert kw_messages(caught) == []
    assert np.allclose(kwcell.grad(Counter())(Tensor(X)).asnumpy(), 2.0)


def test_the_rule_reads_every_assignment_form() -> None:
    source = textwrap.dedent(
        """\
        def construct(this, x):
            this.a = x
            this.b, (this.c, *rest) = x, (x, x)
            this.d += 1
            this.e: int = 2
            this.f: int
            setattr(this, "g", x)
            this.h.i = x
            other.j = x
            return [this.k for _ in x]
        """
    )
    assert attribute_writes(Source(source, 10)) == {"a": 11, "b": 12, "c": 12, "d": 13, "e": 14, "g": 16}
    assert attribute_reads(Source(source, 10)) == {"h": 17, "k": 19}
    assert attribute_writes(Source("def f(:\n", 1)) == {}  # no source that parses: nothing


def test_a_positional_cell_left_to_mindspore_is_warned_too(caught: list[warnings.WarningMessage]) -> None:
    class Recompute(KwCell):  # construct(*inputs) and bprop(*args): kwcell leaves it as it is
        def construct(self, *inputs: Any) -> Any:
            self.first = inputs[0]
            return inputs[0] * 2

        def bprop(self, *args: Any) -> Any:
            return (2 * args[-1] + 0 * self.first,)

    assert [m.split(" (line")[0] for m in kw_messages(caught)] == ["Recompute.bprop reads self.first"]


def test_graph_mode_error_is_the_warned_one() -> None:
    """The AttributeError of a graph, for the KwCell that warned: the message's claim."""
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(AttributeError, match=r"no attribute 'norm_x'"):
        kwcell.grad(c.StateNorm())(Tensor(X))
