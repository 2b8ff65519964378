"""The core promise: every mode x every call style x every argument kind reaches bprop right.

Each case compares the gradients with their analytic values. Modes:
- ``pynative`` / ``graph``: the cell is differentiated directly with ``kwcell.grad``.
- ``jit_step``: PyNative, the keyword call happens inside an ``@ms.jit`` function.
- ``jit_construct``: PyNative, the cell's construct is itself ``@ms.jit``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mindspore as ms
import numpy as np
import numpy.typing as npt
import pytest
from mindspore import Tensor, nn

import kwcell
from tests import cells

X = np.array([0.3, -1.2, 2.0], np.float32)
W = 1.5
Y = -0.25
BIAS = np.array([0.1, 0.2, 0.3], np.float32)
ONES = np.ones(3, np.float32)


@dataclass(frozen=True)
class Case:
    """One argument kind: cells, arguments per call style, expected gradients per style."""

    net: nn.Cell
    jit_net: nn.Cell
    outer: nn.Cell
    steps: dict[str, Callable[..., Any]]
    args: dict[str, tuple[tuple[Any, ...], dict[str, Any]]]
    positions: dict[str, tuple[str, ...]]
    expected: dict[str, tuple[npt.NDArray[np.float32], ...]]


def _affine() -> Case:
    net, jit_net = cells.Affine(), cells.AffineJit()
    outer = cells.AffineOuter(cells.Affine())
    x, w, y = Tensor(X), Tensor(W, ms.float32), Tensor(Y, ms.float32)
    full = (W * np.cos(X), np.array(np.sin(X).sum()), np.array(3.0))
    return Case(
        net,
        jit_net,
        outer,
        cells.affine_steps(net, outer),
        args={
            "positional": ((x, w, y), {}),
            "keywords": ((x,), {"y": y, "w": w}),
            "defaults": ((x,), {}),
            "outer": ((x, w, y), {}),
        },
        positions={"positional": ("x", "w", "y"), "keywords": ("x", "w", "y"), "defaults": ("x",)},
        expected={"positional": full, "keywords": full, "defaults": (2.0 * np.cos(X),), "outer": full},
    )


def _power() -> Case:
    net, jit_net = cells.Power(), cells.PowerJit()
    outer = cells.PowerOuter(cells.Power())
    x = Tensor(X)
    given = (-0.5 * 3 * X**2,)
    return Case(
        net,
        jit_net,
        outer,
        cells.power_steps(net, outer),
        args={
            "positional": ((x, 0.5, 3, True), {}),
            "keywords": ((x,), {"flip": True, "power": 3, "scale": 0.5}),
            "defaults": ((x,), {}),
            "outer": ((x,), {}),
        },
        positions={"positional": ("x",), "keywords": ("x",), "defaults": ("x",)},
        expected={"positional": given, "keywords": given, "defaults": (4.0 * X,), "outer": given},
    )


def _biased() -> Case:
    net, jit_net = cells.Biased(), cells.BiasedJit()
    outer = cells.BiasedOuter(cells.Biased())
    x, b = Tensor(X), Tensor(BIAS)
    given = (np.cos(X), ONES)
    return Case(
        net,
        jit_net,
        outer,
        cells.biased_steps(net, outer),
        args={
            "positional": ((x, b), {}),
            "keywords": ((), {"bias": b, "x": x}),
            "defaults": ((x,), {}),
            "outer": ((x, b), {}),
        },
        positions={"positional": ("x", "bias"), "keywords": ("x", "bias"), "defaults": ("x",)},
        expected={"positional": given, "keywords": given, "defaults": (np.cos(X),), "outer": given},
    )


CASES = {"tensor": _affine(), "python_scalar": _power(), "none_default": _biased()}
STYLES = ("positional", "keywords", "defaults", "outer")
MODES = ("pynative", "graph", "jit_step", "jit_construct")


def _as_tuple(grads: Any) -> tuple[Any, ...]:
    return tuple(grads) if isinstance(grads, tuple) else (grads,)


def _gradients(case: Case, mode: str, style: str) -> tuple[Any, ...]:
    args, kwargs = case.args[style]
    n = len(case.expected[style])
    if mode == "jit_step":
        # The @ms.jit steps in tests/cells.py take the Tensor inputs, in construct's order.
        step_args = tuple(
            a
            for a in (*args, *(kwargs[k] for k in case.positions.get(style, ()) if k in kwargs))
            if isinstance(a, Tensor)
        )
        return _as_tuple(ms.grad(case.steps[style], grad_position=tuple(range(n)))(*step_args))
    if style == "outer":
        return _as_tuple(ms.grad(case.outer, grad_position=tuple(range(n)))(*args))
    net = case.jit_net if mode == "jit_construct" else case.net
    return _as_tuple(kwcell.grad(net, grad_position=case.positions[style])(*args, **kwargs))


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("kind", sorted(CASES))
@pytest.mark.parametrize("mode", MODES)
def test_gradient_reaches_bprop(mode: str, kind: str, style: str) -> None:
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    case = CASES[kind]
    got = _gradients(case, mode, style)
    expected = case.expected[style]
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g.asnumpy(), e, rtol=1e-5, atol=1e-6)
