"""kwcell.explain: the parameter mapping and the generated source of a class, as text."""

from __future__ import annotations

import re
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import kwcell
from kwcell import KwCell, explain


class Mapped(KwCell):
    def construct(self, x: Any, w: Any = 1.0, *, y: Any = 2.0) -> Any:
        return w * ops.sin(x) + y

    def bprop(self, x: Any, *, out: Any, dout: Any, **rest: Any) -> Any:
        return {"x": rest["w"] * ops.cos(x) * dout}


class Classic(KwCell):
    def construct(self, x: Any, y: Any) -> Any:
        return x * y

    def bprop(self, *args: Any) -> Any:
        x, y, _out, dout = args
        return y * dout, x * dout


class Named(KwCell):
    def construct(self, x: Any, y: Any) -> Any:
        return x * y

    def bprop(self, y: Any, x: Any, out: Any, dout: Any) -> Any:
        return {"y": x * dout, "x": y * dout}


class PlainWithBprop(nn.Cell):
    def construct(self, x: Any, y: Any = 1.0) -> Any:
        return x * y

    def bprop(self, x: Any, y: Any, out: Any, dout: Any) -> Any:
        return y * dout, x * dout


class Starred(KwCell):
    """Left to MindSpore as it is: construct's inputs have no names to match."""

    def construct(self, *inputs: Any) -> Any:
        return inputs[0] * inputs[1]

    def bprop(self, *args: Any) -> Any:
        x, y, _out, dout = args
        return 2 * y * dout, 3 * x * dout  # not the true gradient: shows which bprop ran


class PlainStarred(nn.Cell):
    def construct(self, *inputs: Any) -> Any:
        return inputs[0] * inputs[1]

    def bprop(self, *args: Any) -> Any:
        x, y, _out, dout = args
        return 2 * y * dout, 3 * x * dout


class NoBprop(KwCell):
    def construct(self, x: Any) -> Any:
        return x


def test_kwargs_style_mapping_and_generated_source() -> None:
    text = explain(Mapped)
    lines = text.splitlines()
    assert lines[:4] == [
        "kwcell.explain(tests.test_explain.Mapped)",
        "construct(self, x, w=1.0, *, y=2.0)",
        "bprop(self, x, *, out, dout, **rest)",
        "bprop style: **rest (named parameters matched by name; the rest by keyword)",
    ]
    table = lines[
        lines.index("Parameter mapping (construct's order; MindSpore sees the core's positional inputs):")
        + 1 :
    ]
    assert table[:4] == [
        "  #  construct  kind                   default  bprop receives it as",
        "  0  x          positional or keyword  -        x",
        "  1  w          positional or keyword  1.0      rest['w']",
        "  2  y          keyword-only           2.0      rest['y']",
    ]
    headers = re.findall(
        r"^--- (\w+): <kwcell generated (\w+) tests\.test_explain\.Mapped #\d+>$", text, re.M
    )
    assert headers == [("bprop", "bprop")]  # one generated file per class
    # The generated functions themselves: the user's bprop rewritten to construct's order,
    # the positional core, and the dispatcher with construct's exact signature.
    assert (
        "    def bprop(self, _kwcell_in_x, _kwcell_in_w, _kwcell_in_y, _kwcell_out, _kwcell_dout):\n" in text
    )
    assert "    def construct(self, x, w, y):\n" in text
    assert "    def construct(self, x, w=1.0, *, y=2.0):\n" in text
    assert re.search(r"^        return self\._kwcell_core\(x, w, y\)$", text, re.M)


def test_classic_and_named_styles() -> None:
    classic = explain(Classic)
    assert "bprop(self, *args)\nbprop style: classic (inputs, then out, dout, positionally)\n" in classic
    assert "  0  x          positional or keyword  -        args[0]\n" in classic
    assert "  1  y          positional or keyword  -        args[1]\n" in classic
    named = explain(Named())  # an instance works too
    assert named.startswith(
        "kwcell.explain(tests.test_explain.Named)\n"
        "construct(self, x, y)\n"
        "bprop(self, y, x, out, dout)\n"
        "bprop style: named (parameters matched to construct by name)\n"
    )
    assert "    def bprop(self, _kwcell_in_x, _kwcell_in_y, _kwcell_out, _kwcell_dout):\n" in named


def test_classes_without_kwcell_bprop() -> None:
    assert explain(NoBprop) == (
        "tests.test_explain.NoBprop has no bprop: MindSpore differentiates construct itself and "
        "kwcell generated nothing for it."
    )
    assert explain(PlainWithBprop()) == (
        "tests.test_explain.PlainWithBprop is not a KwCell: its bprop(x, y, out, dout) is a plain "
        "MindSpore bprop, which receives the inputs of construct(self, x, y=1.0) in call order, not "
        "by name. Derive the class from kwcell.KwCell to have them matched by name."
    )
    assert kwcell.explain is explain


@kwcell.keyword_bprop
class StarredLibraryBase(nn.Cell):
    pass


class DecoratedStarred(StarredLibraryBase):
    """Starred, under a base decorated with @kwcell.keyword_bprop: the same behaviour."""

    def construct(self, *inputs: Any) -> Any:
        return inputs[0] * inputs[1]

    def bprop(self, *args: Any) -> Any:
        x, y, _out, dout = args
        return 2 * y * dout, 3 * x * dout


@pytest.mark.parametrize("cls", [Starred, DecoratedStarred])
def test_a_kwcell_left_as_an_nn_cell_says_so(cls: type) -> None:
    assert explain(cls) == (
        f"tests.test_explain.{cls.__name__} is a KwCell that kwcell leaves to MindSpore as it is: "
        "construct(self, *inputs) gives its inputs no names to match, so its bprop(*args) receives "
        "them positionally, then out and dout, exactly as on nn.Cell; kwcell generated nothing for it."
    )


def test_a_kwcell_left_as_an_nn_cell_differentiates_as_one() -> None:
    x = np.array([0.5, -1.0], np.float32)
    y = np.array([2.0, 3.0], np.float32)
    ours = ms.grad(Starred(), grad_position=(0, 1))(Tensor(x), Tensor(y))
    theirs = ms.grad(PlainStarred(), grad_position=(0, 1))(Tensor(x), Tensor(y))
    for a, b, expected in zip(ours, theirs, (2 * y, 3 * x), strict=True):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy())
        np.testing.assert_allclose(a.asnumpy(), expected)
    # GRAPH_MODE compiles no bprop(self, *args) with construct(self, *inputs): nn.Cell's error
    # is kept as it is.
    ms.set_context(mode=ms.GRAPH_MODE)
    errors = []
    for cell in (PlainStarred(), Starred()):
        with pytest.raises(RuntimeError, match="requires at least 2 params 'out' and 'dout'") as info:
            ms.grad(cell, grad_position=(0, 1))(Tensor(x), Tensor(y))
        errors.append(type(info.value))
    assert errors == [RuntimeError, RuntimeError]


def test_an_instance_with_weights_says_which_and_how() -> None:
    from tests import weight_cells as wc

    text = kwcell.explain(wc.Weighted())
    assert (
        "weights (internal_params): 'w'; passed to the core after construct's inputs, their "
        "gradients are the ones bprop returns for them (in GRAPH_MODE and @ms.jit a dict key is "
        "written self.<attribute>)"
    ) in text
    assert "weights (internal_params)" not in kwcell.explain(wc.Weighted)
