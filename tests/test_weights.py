"""Weight gradients from a bprop: internal_params, Parameter keys, the warning.

MindSpore's own rule: a cell with a custom bprop gets weight gradients only when it lists
them in ``internal_params`` and its bprop returns ``(input_grads, {parameter: grad})``, and
only in PYNATIVE mode. Every expected value below is analytic: ``Scale`` computes
``w * x + shift`` and its bprop returns ``w * dout`` for x and (deliberately) ``2 * x * dout``
for w, so the weight gradient cannot come from MindSpore's autodiff.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn

import kwcell
from kwcell import KwCell, KwCellWarning
from tests import training_nets as tn

X = np.array([1.0, -2.0, 0.5, 4.0], np.float32)
W0 = np.linspace(0.5, 2.0, tn.IN).astype(np.float32)


class TupleScale(KwCell):
    """MindSpore's form: ``((input grads...), {parameter: grad})``."""

    def __init__(self) -> None:
        super().__init__()
        self.w = Parameter(Tensor(W0), name="w")
        self.internal_params = [self.w]

    def construct(self, x: Tensor, shift: float = 0.0) -> Tensor:
        return self.w * x + shift

    def bprop(self, x: Tensor, shift: float = 0.0, *, out: Tensor, dout: Tensor) -> Any:
        return (self.w * dout, None), {self.w: 2.0 * dout * x}


class NamedInputsScale(KwCell):
    """The input part of MindSpore's form may itself be a dict keyed by name."""

    def __init__(self) -> None:
        super().__init__()
        self.w = Parameter(Tensor(W0), name="w")
        self.internal_params = [self.w]

    def construct(self, x: Tensor, shift: float = 0.0) -> Tensor:
        return self.w * x + shift

    def bprop(self, x: Tensor, shift: float = 0.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": self.w * dout}, {self.w: 2.0 * dout * x}


WEIGHTED = [tn.Scale, TupleScale, NamedInputsScale]


def _scale_grads(net: nn.Cell, grad: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    gx, (gw,) = grad(net, 0, net.trainable_params())(*args, **kwargs)
    return gx.asnumpy(), gw.asnumpy()


@pytest.mark.parametrize("cls", WEIGHTED, ids=lambda c: c.__name__)
def test_weight_gradient_from_bprop_pynative(cls: Any) -> None:
    net = cls() if cls is not tn.Scale else cls(W0)
    gx, gw = _scale_grads(net, kwcell.grad, Tensor(X), shift=1.0)
    np.testing.assert_allclose(gx, W0)
    np.testing.assert_allclose(gw, 2.0 * X)


def test_weight_gradient_matches_mindspore_internal_params() -> None:
    """The same numbers as plain MindSpore's ``internal_params`` cell, called positionally."""
    gx, gw = _scale_grads(tn.Scale(W0), kwcell.grad, Tensor(X), shift=1.0)
    ref_gx, ref_gw = _scale_grads(tn.RefScale(W0), ms.grad, Tensor(X), 1.0)
    np.testing.assert_array_equal(gx, ref_gx)
    np.testing.assert_array_equal(gw, ref_gw)


def test_weighted_cell_trains_like_mindspore_pynative() -> None:
    w = tn.initial_weights()
    x, y = tn.make_data(16)
    y8 = np.repeat(y, tn.HIDDEN, axis=1)
    kw_net, ref_net = tn.ScaledNet(w), tn.RefScaledNet(w)
    kw = tn.train_one_step_cell(kw_net, x, y8, 3)
    ref = tn.train_one_step_cell(ref_net, x, y8, 3)
    np.testing.assert_allclose(kw, ref, rtol=1e-5)
    np.testing.assert_allclose(kw_net.scale.w.asnumpy(), ref_net.scale.w.asnumpy(), rtol=1e-6)
    assert not np.allclose(kw_net.scale.w.asnumpy(), W0)  # the bprop's weight gradient moved w


@pytest.mark.parametrize("cls", [tn.Scale, TupleScale], ids=lambda c: c.__name__)
def test_weight_gradient_in_graph_mode_is_a_clear_error(cls: Any) -> None:
    ms.set_context(mode=ms.GRAPH_MODE)
    net = cls() if cls is not tn.Scale else cls(W0)
    expected = (
        f"{cls.__name__}.bprop: weight gradients from a bprop (internal_params) work only in "
        "PYNATIVE mode; MindSpore's GRAPH_MODE and @ms.jit do not let a bprop use Parameters"
    )
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        kwcell.grad(net, 0, net.trainable_params())(Tensor(X), shift=1.0)  # type: ignore[no-untyped-call]
    # the forward pass still works in GRAPH_MODE
    np.testing.assert_allclose(net(Tensor(X), shift=1.0).asnumpy(), W0 * X + 1.0)


def test_weight_gradient_under_jit_is_a_clear_error() -> None:
    net = tn.Scale(W0)
    grad_fn = kwcell.grad(net, 0, net.trainable_params())

    @ms.jit
    def step(x: Tensor) -> Any:
        return grad_fn(x)

    with pytest.raises(RuntimeError, match=r"Scale\.bprop: weight gradients from a bprop"):
        step(Tensor(X))


def test_parameter_key_that_is_not_a_construct_parameter_is_still_an_error() -> None:
    class BadKey(KwCell):
        def __init__(self) -> None:
            super().__init__()
            self.w = Parameter(Tensor(W0), name="w")
            self.internal_params = [self.w]

        def construct(self, x: Tensor) -> Tensor:
            return self.w * x

        def bprop(self, x: Tensor, *, out: Tensor, dout: Tensor) -> Any:
            return {"y": dout, self.w: dout}

    with pytest.raises(ValueError, match=r"BadKey\.bprop returned a gradient for 'y'"):
        kwcell.grad(BadKey())(Tensor(X))


# ---- the warning: trainable parameters that a bprop gives no gradient ----------------------


def _make_silent_class() -> type[KwCell]:
    """A fresh class each time: the warning is issued once per class."""

    class Silent(KwCell):
        def __init__(self) -> None:
            super().__init__()
            self.w = Parameter(Tensor(W0), name="w")
            self.frozen = Parameter(Tensor(W0), name="frozen", requires_grad=False)

        def construct(self, x: Tensor) -> Tensor:
            return self.w * self.frozen * x

        def bprop(self, x: Tensor, *, out: Tensor, dout: Tensor) -> Any:
            return dout

    return Silent


def test_warns_once_per_class_for_parameters_without_gradient() -> None:
    cls = _make_silent_class()
    expected = (
        "Silent.bprop gives no gradient to trainable parameter(s) 'w': MindSpore uses zeros "
        "for them, so they will not train. To train them, set self.internal_params = [...]"
    )
    with pytest.warns(KwCellWarning, match=re.escape(expected)) as record:
        net = cls()
    assert len(record) == 1
    assert record[0].filename == __file__  # points at the line that created the cell
    assert "'frozen'" not in str(record[0].message)  # requires_grad=False is not reported
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cls()  # second instance: no warning
    # and what it warns about is true: MindSpore gives the parameter a zero gradient
    _, (gw,) = kwcell.grad(net, 0, net.trainable_params())(Tensor(X))
    np.testing.assert_array_equal(gw.asnumpy(), np.zeros(tn.IN))


def test_warns_for_parameters_of_child_cells() -> None:
    class WithChild(KwCell):
        def __init__(self) -> None:
            super().__init__()
            self.dense = nn.Dense(4, 4)

        def construct(self, x: Tensor) -> Tensor:
            out: Tensor = self.dense(x)
            return out

        def bprop(self, x: Tensor, *, out: Tensor, dout: Tensor) -> Any:
            return dout

    with pytest.warns(
        KwCellWarning, match=r"WithChild\.bprop gives no gradient .*'dense.weight', 'dense.bias'"
    ):
        WithChild()


def test_no_warning_when_parameters_are_graded_frozen_or_absent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tn.Scale(W0)  # internal_params
        TupleScale()
        tn.KwNet(tn.initial_weights())  # the bprop cell has no parameters of its own
        tn.SurrogateTanh()


def test_warning_is_a_user_warning() -> None:
    assert issubclass(KwCellWarning, UserWarning)
    assert kwcell.KwCellWarning is KwCellWarning
