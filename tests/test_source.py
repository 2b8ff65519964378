"""kwcell._source: the user's bprop rewritten to positional form, from its own text."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
from mindspore import Tensor, ops

import kwcell
from kwcell import KwCell, KwCellDefinitionError
from kwcell._meta import info_of

X = np.array([0.5, -1.0], np.float32)


class Nested(KwCell):
    """Returns inside for/try/with/match blocks are all found and checked."""

    def construct(self, x: Tensor, mode: int = 0) -> Any:
        return ops.sin(x)

    def bprop(self, x: Tensor, mode: int = 0, *, out: Tensor, dout: Tensor) -> Any:
        def helper(v: Any) -> Any:  # a nested function's return is not bprop's
            return v, v, v

        match mode:
            case 1:
                return {"x": 2.0 * ops.cos(x) * dout}
            case _:
                pass
        try:
            for _ in range(1):
                return {"x": ops.cos(x) * dout}  # trailing comment survives
        finally:
            pass
        return helper(dout)[0], None


def test_returns_in_every_block_are_rewritten() -> None:
    info = info_of(Nested)
    assert info is not None
    source = inspect.getsource(info.positional_bprop)
    assert "return (2.0 * ops.cos(x) * dout, _kwcell_zero(_kwcell_in_mode))" in source
    assert "return (ops.cos(x) * dout, _kwcell_zero(_kwcell_in_mode))  # trailing comment survives" in source
    # a call may give None or a dict: decided by its value when the graph is compiled
    fill = "_kwcell_fill(helper(dout)[0], _kwcell_in_x, 'Nested.bprop', 'x')"
    assert f"return ({fill}, _kwcell_zero(_kwcell_in_mode))" in source
    assert "            return v, v, v" in source  # the nested function is left alone


@pytest.mark.parametrize(("mode", "scale"), [(0, 1.0), (1, 2.0)])
def test_rewritten_bprop_runs(mode: int, scale: float) -> None:
    g = kwcell.grad(Nested())(Tensor(X), mode=mode)
    np.testing.assert_allclose(g.asnumpy(), scale * np.cos(X), rtol=1e-6)


def test_wrong_length_inside_a_block_is_caught() -> None:
    with pytest.raises(
        KwCellDefinitionError, match=r"Bad\.bprop \(line \d+\): returns 3 gradients, expected 1"
    ):

        class Bad(KwCell):
            def construct(self, x: Tensor) -> Any:
                return x

            def bprop(self, x: Tensor, *, out: Tensor, dout: Tensor) -> Any:
                for _ in range(2):
                    if out is None:
                        return dout, dout, dout
                return (dout,)


def test_unicode_source_positions() -> None:
    class Uni(KwCell):
        def construct(self, x: Tensor, größe: float = 2.0) -> Any:
            return größe * x

        def bprop(self, x: Tensor, größe: float = 2.0, *, out: Tensor, dout: Tensor) -> Any:
            return {"x": größe * dout}  # «größe» is a non-ASCII name

    g = kwcell.grad(Uni())(Tensor(X), größe=3.0)
    np.testing.assert_allclose(g.asnumpy(), np.full(2, 3.0, np.float32))
    info = info_of(Uni)
    assert info is not None
    assert "return (größe * dout, _kwcell_zero(_kwcell_in_größe))  # «größe»" in inspect.getsource(
        info.positional_bprop
    )
