"""More shapes of a cell created and called inside what is differentiated (beside
tests/test_temporaries.py): mindone's I-BERT layers (``floor_ste()(x)``, ``FixedPointMul()(...)``
in a quantised layer's construct, trained with ``TrainOneStepCell``), a temporary whose bprop
reads its instance and calls ``self.construct``, a bprop that creates a temporary, temporaries
called by keyword or with defaults omitted, and temporaries of subclasses, mixins and with an
instance bprop. Each is compared with the same class body on ``nn.Cell`` and with analytic
values, on ``KwCell`` and on a ``@keyword_bprop`` base, in PYNATIVE, GRAPH_MODE (an outer
cell's graph) and a PyNative ``@ms.jit``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn, ops

import kwcell
from kwcell import KwCell


@kwcell.keyword_bprop
class LibraryCell(nn.Cell):
    """A library's own base, decorated (its subclasses get KwCell's behaviour)."""


BASES: dict[str, type] = {"nn.Cell": nn.Cell, "KwCell": KwCell, "keyword_bprop": LibraryCell}
KWCELL_BASES = ("KwCell", "keyword_bprop")
X = np.array([-1.5, -0.25, 0.5, 1.75], np.float32)


def _grad(run: str, fn: Any, *args: Any, positions: Any = 0) -> Any:
    g: Callable[..., Any] = ms.grad(fn, grad_position=positions)
    if run == "jit":

        @ms.jit
        def step(*a: Any) -> Any:
            return g(*a)

        return step(*args)
    return g(*args)


# --- the cells, one class body per base ----------------------------------------------------


def floor_ste(base: type) -> type:
    """mindone's straight-through floor: floor forward, the identity backward (MindSpore's
    positional form, with its own names for out and dout)."""

    class FloorSte(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.floor = ops.Floor()

        def construct(self, input: Tensor) -> Any:
            return self.floor(input)

        def bprop(self, input: Tensor, output: Tensor, grad_output: Tensor) -> Any:
            return (ops.cast(grad_output, ms.float32),)

    return FloorSte


def fixed_point_mul(base: type) -> type:
    """mindone's FixedPointMul shape: a rescale with an optional identity, whose backward is
    the straight-through rescale (``dout / z_scaling_factor``)."""

    class FixedPointMul(base):  # type: ignore[misc]
        def construct(
            self,
            pre_act: Tensor,
            pre_act_scaling_factor: Tensor,
            z_scaling_factor: Tensor,
            identity: Any = None,
        ) -> Any:
            z_int = ops.round(pre_act / pre_act_scaling_factor)
            out = ops.round(z_int * (pre_act_scaling_factor / z_scaling_factor))
            if identity is not None:
                out = out + ops.round(identity / z_scaling_factor)
            return ops.clamp(out, -128.0, 127.0)

        def bprop(
            self,
            pre_act: Tensor,
            pre_act_scaling_factor: Tensor,
            z_scaling_factor: Tensor,
            identity: Any,
            output: Tensor,
            grad_output: Tensor,
        ) -> Any:
            grad = grad_output / z_scaling_factor
            return (
                grad,
                ops.zeros_like(pre_act_scaling_factor),
                ops.zeros_like(z_scaling_factor),
                None if identity is None else grad,
            )

    return FixedPointMul


def scaled_exp(base: type) -> type:
    """A cell whose bprop reads the instance: ``self.k`` and ``self.construct(x)``."""

    class ScaledExp(base):  # type: ignore[misc]
        def __init__(self, k: float) -> None:
            super().__init__()
            self.k = k

        def construct(self, x: Tensor) -> Any:
            return ops.exp(x * self.k)

        def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (self.k * self.construct(x) * dout,)

    return ScaledExp


STE = {name: floor_ste(base) for name, base in BASES.items()}
FPM = {name: fixed_point_mul(base) for name, base in BASES.items()}
EXP = {name: scaled_exp(base) for name, base in BASES.items()}


class MakesOne(nn.Cell):
    """``(ste()(x) * 3).sum()``: the temporary created in the outer cell's construct."""

    def __init__(self, ste: type) -> None:
        super().__init__()
        self.ste = ste

    def construct(self, x: Tensor) -> Any:
        return (self.ste()(x) * 3.0).sum()


# --- a temporary in the differentiated function ----------------------------------------------


@pytest.mark.parametrize("name", sorted(BASES))
@pytest.mark.parametrize("how", ["kwcell.grad", "jit"])
def test_a_temporary_created_in_the_differentiated_function(name: str, how: str) -> None:
    # (ms.grad and ms.value_and_grad: tests/test_temporaries.py)
    ste = STE[name]

    def loss(x: Tensor) -> Any:
        return (ste()(x) * 3.0).sum()

    grad = kwcell.grad(loss) if how == "kwcell.grad" else ms.grad(ms.jit(loss))
    got = grad(Tensor(X))
    np.testing.assert_allclose(got.asnumpy(), np.full_like(X, 3.0), rtol=1e-6)  # STE: dout * 3


@pytest.mark.parametrize("name", sorted(BASES))
def test_a_temporary_created_in_an_outer_construct(run: str, name: str) -> None:
    got = _grad(run, MakesOne(STE[name]), Tensor(X))
    np.testing.assert_allclose(got.asnumpy(), np.full_like(X, 3.0), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(BASES))
def test_a_temporary_whose_bprop_reads_its_instance_and_calls_construct(run: str, name: str) -> None:
    exp = EXP[name]

    class Outer(nn.Cell):
        def construct(self, x: Tensor) -> Any:
            return (exp(0.5)(x) + exp(2.0)(x)).sum()

    got = _grad(run, Outer(), Tensor(X))
    expected = 0.5 * np.exp(0.5 * X) + 2.0 * np.exp(2.0 * X)
    np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-5)


def test_temporaries_called_by_keyword_and_with_defaults_omitted(run: str) -> None:
    # What only kwcell gives (nn.Cell: the positional call of the same cell is the reference).
    x = np.array([3.0, -5.0, 12.0], np.float32)
    s_in, s_out = Tensor(np.float32(0.5)), Tensor(np.float32(0.25))

    def outer(fpm: type, call: str) -> nn.Cell:
        class Outer(nn.Cell):
            def construct(self, x: Tensor, identity: Tensor) -> Any:
                if call == "positional":
                    y = fpm()(x, s_in, s_out, None) + fpm()(x, s_in, s_out, identity)
                else:
                    y = fpm()(x, z_scaling_factor=s_out, pre_act_scaling_factor=s_in) + fpm()(
                        x, s_in, identity=identity, z_scaling_factor=s_out
                    )
                return (y * Tensor(np.array([1.0, 2.0, 3.0], np.float32))).sum()

        return Outer()

    weights = np.array([1.0, 2.0, 3.0], np.float32)
    expected = [2 * weights / 0.25, weights / 0.25]  # two rescales of x, one of the identity
    args = (Tensor(x), Tensor(np.array([1.0, 1.0, 1.0], np.float32)))
    got = _grad(run, outer(FPM["nn.Cell"], "positional"), *args, positions=(0, 1))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g.asnumpy(), e, rtol=1e-6, err_msg="nn.Cell")
    for name in KWCELL_BASES:
        got = _grad(run, outer(FPM[name], "keywords"), *args, positions=(0, 1))
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g.asnumpy(), e, rtol=1e-6, err_msg=name)


@pytest.mark.parametrize("name", sorted(BASES))
def test_a_bprop_that_creates_a_temporary_and_calls_it(run: str, name: str) -> None:
    ste, base = STE[name], BASES[name]

    class Quantised(base):  # type: ignore[misc,valid-type]
        def construct(self, x: Tensor) -> Any:
            return x * 2.5

        def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (ste()(dout * 2.5),)  # the gradient itself quantised

    class Outer(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.q = Quantised()

        def construct(self, x: Tensor) -> Any:
            return (self.q(x) * Tensor(np.array([1.0, 2.0, 3.0, 4.0], np.float32))).sum()

    got = _grad(run, Outer(), Tensor(X))
    np.testing.assert_allclose(got.asnumpy(), np.floor(2.5 * np.array([1.0, 2.0, 3.0, 4.0])), rtol=1e-6)


@pytest.mark.parametrize("name", KWCELL_BASES)
def test_temporaries_of_subclasses_mixins_and_instance_bprops(name: str) -> None:
    base = STE[name]

    class Mixin:
        def bprop(self, input: Tensor, output: Tensor, grad_output: Tensor) -> Any:
            return (grad_output * 2.0,)

    class Doubled(Mixin, base):  # type: ignore[misc,valid-type]
        pass

    class Halved(base):  # type: ignore[misc,valid-type]
        def bprop(self, input: Tensor, *, out: Tensor, dout: Tensor) -> Any:
            return {"input": dout * 0.5}

    def with_instance_bprop() -> Any:
        cell = base()
        cell.bprop = lambda input, out, dout: (dout * 4.0,)
        return cell

    x = Tensor(X)
    for make, factor in ((Doubled, 2.0), (Halved, 0.5), (with_instance_bprop, 4.0)):
        got = ms.grad(lambda x, make=make: (make()(x) * 3.0).sum())(x)
        np.testing.assert_allclose(got.asnumpy(), np.full_like(X, 3.0 * factor), rtol=1e-6)


# --- mindone's shape, trained ------------------------------------------------------------------


def quant_linear(name: str) -> Any:
    """An I-BERT style quantised linear layer: the weight and activation are quantised with
    temporaries created in construct (``floor_ste()(...)``, ``FixedPointMul()(...)``)."""
    ste, fpm = STE[name], FPM[name]

    class QuantLinear(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            w = np.array([[0.3, -0.7, 0.2], [0.9, 0.1, -0.4]], np.float32)
            self.weight = Parameter(Tensor(w), name="weight")
            self.scale_in = Tensor(np.float32(0.05))
            self.scale_out = Tensor(np.float32(0.1))

        def construct(self, x: Tensor) -> Any:
            w_scale = ops.stop_gradient(ops.abs(self.weight).max() / 127.0)
            w_int = ste()(self.weight / w_scale + 0.5)  # round to nearest, straight through
            x_int = ste()(x / self.scale_in)
            y = ops.matmul(x_int, (w_int * w_scale).T) * self.scale_in
            return fpm()(y, self.scale_in, self.scale_out, None) * self.scale_out

    return QuantLinear()


def _train(name: str, steps: int) -> list[Any]:
    net = quant_linear(name)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    rng = np.random.default_rng(3)
    losses = []
    for _ in range(steps):
        x = Tensor(rng.uniform(-1, 1, (4, 3)).astype(np.float32))
        y = Tensor(rng.uniform(-1, 1, (4, 2)).astype(np.float32))
        losses.append(step(x, y).asnumpy())
    return [*losses, net.weight.asnumpy()]


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_mindone_quantised_layer_trains_as_on_nn_cell(mode: str) -> None:
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    reference = _train("nn.Cell", 3)
    assert not np.allclose(reference[-1], quant_linear("nn.Cell").weight.asnumpy())  # it learnt
    for name in KWCELL_BASES:
        for got, expected in zip(_train(name, 3), reference, strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-6, err_msg=name)
