"""Parameters and state of KwCells: names, checkpoints, deepcopy, set_train, precision, recompute.

The reference for every name is the same network written with positional ``nn.Cell`` cells
(``RefNet``, ``RefScaledNet`` in tests/training_nets.py): a KwCell must be a drop-in.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, amp, nn

import kwcell
from kwcell import KwCell
from tests import training_nets as tn

W = tn.initial_weights()
X, Y = tn.make_data(8)
PAIRS = [(tn.KwNet, tn.RefNet), (tn.ScaledNet, tn.RefScaledNet)]


def _core(cell: nn.Cell) -> Any:
    return getattr(cell, "_kwcell_core")  # noqa: B009 -- private, not in the typed API


def _names(pairs: Any) -> list[str]:
    return [name for name, _ in pairs]


@pytest.mark.parametrize(("kw_cls", "ref_cls"), PAIRS, ids=["KwNet", "ScaledNet"])
def test_parameter_and_checkpoint_names_match_nn_cell(kw_cls: Any, ref_cls: Any, tmp_path: Path) -> None:
    kw, ref = kw_cls(W), ref_cls(W)
    assert _names(kw.parameters_and_names()) == _names(ref.parameters_and_names())
    assert [p.name for p in kw.trainable_params()] == [p.name for p in ref.trainable_params()]
    assert [p.name for p in kw.get_parameters()] == [p.name for p in ref.get_parameters()]
    # the hidden core is not a child cell: the cell tree is the nn.Cell one
    assert _names(kw.cells_and_names()) == _names(ref.cells_and_names())
    ms.save_checkpoint(kw, str(tmp_path / "kw.ckpt"))
    ms.save_checkpoint(ref, str(tmp_path / "ref.ckpt"))
    kw_ckpt = ms.load_checkpoint(str(tmp_path / "kw.ckpt"))
    ref_ckpt = ms.load_checkpoint(str(tmp_path / "ref.ckpt"))
    assert list(kw_ckpt) == list(ref_ckpt)
    for name in kw_ckpt:
        np.testing.assert_array_equal(kw_ckpt[name].asnumpy(), ref_ckpt[name].asnumpy())


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    trained = tn.KwNet(W)
    tn.train_one_step_cell(trained, X, Y, 2)
    path = str(tmp_path / "trained.ckpt")
    ms.save_checkpoint(trained, path)

    fresh = tn.KwNet(tn.initial_weights(seed=5))
    assert not np.allclose(fresh(Tensor(X)).asnumpy(), trained(Tensor(X)).asnumpy())
    not_loaded, _ = ms.load_param_into_net(fresh, ms.load_checkpoint(path), strict_load=True)
    assert not_loaded == []
    for name, value in tn.parameters_of(trained).items():
        np.testing.assert_array_equal(tn.parameters_of(fresh)[name], value)
    np.testing.assert_array_equal(fresh(Tensor(X)).asnumpy(), trained(Tensor(X)).asnumpy())

    # the checkpoint of a KwCell network loads into the equivalent nn.Cell network
    ref = tn.RefNet(tn.initial_weights(seed=5))
    not_loaded, _ = ms.load_param_into_net(ref, ms.load_checkpoint(path), strict_load=True)
    assert not_loaded == []
    np.testing.assert_allclose(ref(Tensor(X)).asnumpy(), trained(Tensor(X)).asnumpy(), rtol=1e-6)


def test_deepcopy_core_points_to_the_copy() -> None:
    original = tn.ScaledNet(W)
    clone = copy.deepcopy(original)
    assert _core(clone.scale)._kwcell_owner is clone.scale
    assert _core(original.scale)._kwcell_owner is original.scale
    assert _core(clone.scale) is not _core(original.scale)
    assert clone.scale.w is not original.scale.w
    assert _names(clone.parameters_and_names()) == _names(original.parameters_and_names())

    # gradients of the copy use the copy's parameters (input grad = w * dout, weight grad = 2 * x * dout)
    clone.scale.w.set_data(Tensor(np.full(tn.IN, 3.0, np.float32)))
    x = Tensor(np.array([1.0, -2.0, 0.5, 4.0], np.float32))
    gx, (gw,) = kwcell.grad(clone.scale, 0, clone.scale.trainable_params())(x, shift=1.0)  # type: ignore[no-untyped-call]
    np.testing.assert_allclose(gx.asnumpy(), np.full(tn.IN, 3.0))
    np.testing.assert_allclose(gw.asnumpy(), 2.0 * x.asnumpy())
    gx_orig = kwcell.grad(original.scale, 0)(x, shift=1.0)
    np.testing.assert_allclose(gx_orig.asnumpy(), np.linspace(0.5, 2.0, tn.IN), rtol=1e-6)
    assert float(original.scale.w.asnumpy()[0]) == pytest.approx(0.5)


def test_deepcopy_trains_independently() -> None:
    original = tn.KwNet(W)
    clone = copy.deepcopy(original)
    assert _core(clone.act)._kwcell_owner is clone.act
    losses = tn.train_one_step_cell(clone, X, Y, 3)
    assert losses == pytest.approx(tn.train_one_step_cell(tn.RefNet(W), X, Y, 3), rel=1e-5)
    for name, value in tn.parameters_of(original).items():
        np.testing.assert_array_equal(value, W[name])  # the original did not move


class TrainScaled(KwCell):
    """Output doubled in training mode: tells whether set_train reaches the user's construct."""

    def construct(self, x: Tensor, k: float = 1.0) -> Tensor:
        if self.training:
            return 2.0 * k * x
        return k * x

    def bprop(self, x: Tensor, k: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": 3.0 * dout}


class Holder(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.inner = TrainScaled()

    def construct(self, x: Tensor) -> Tensor:
        out: Tensor = self.inner(x, k=5.0)
        return out


def test_set_train(mode: str) -> None:
    net = Holder()
    x = Tensor(np.array([1.0, 2.0], np.float32))
    net.set_train(True)
    assert net.inner.training
    np.testing.assert_allclose(net(x).asnumpy(), [10.0, 20.0])
    net.set_train(False)
    assert not net.inner.training
    np.testing.assert_allclose(net(x).asnumpy(), [5.0, 10.0])
    np.testing.assert_allclose(kwcell.grad(net)(x).asnumpy(), [3.0, 3.0])


def test_to_float16() -> None:
    kw, ref = tn.KwNet(W), tn.RefNet(W)
    kw.to_float(ms.float16)
    ref.to_float(ms.float16)
    out = kw(Tensor(X))
    assert out.dtype == ms.float16
    np.testing.assert_array_equal(out.asnumpy(), ref(Tensor(X)).asnumpy())
    np.testing.assert_allclose(out.asnumpy(), tn.KwNet(W)(Tensor(X)).asnumpy(), atol=2e-2)
    # the bprop runs in float16 and still trains like the reference
    kw_losses = tn.train_one_step_cell(kw, X, Y, 2)
    assert kw_losses == pytest.approx(tn.train_one_step_cell(ref, X, Y, 2), rel=1e-3)
    assert all(np.isfinite(kw_losses))


@pytest.mark.parametrize("level", ["O2", "O3"])
def test_auto_mixed_precision(level: str) -> None:
    kw = amp.auto_mixed_precision(tn.KwNet(W), level)
    ref = amp.auto_mixed_precision(tn.RefNet(W), level)
    out = kw(Tensor(X))
    np.testing.assert_array_equal(out.asnumpy(), ref(Tensor(X)).asnumpy())
    np.testing.assert_allclose(out.asnumpy(), tn.KwNet(W)(Tensor(X)).asnumpy(), atol=2e-2)
    loss_fn = nn.MSELoss()

    def loss(net: nn.Cell) -> Any:
        def forward(x: Tensor, y: Tensor) -> Any:
            return loss_fn(net(x), y)

        return kwcell.value_and_grad(forward, None, net.trainable_params())(Tensor(X), Tensor(Y))

    (kw_loss, kw_grads), (ref_loss, ref_grads) = loss(kw), loss(ref)
    assert float(kw_loss.asnumpy()) == pytest.approx(float(ref_loss.asnumpy()), rel=1e-6)
    for a, b in zip(kw_grads, ref_grads, strict=True):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_recompute(mode: str) -> None:
    net = tn.KwNet(W)
    net.act.recompute()
    net.dense1.recompute()
    losses = tn.train_one_step_cell(net, X, Y, 3)
    assert losses == pytest.approx(tn.train_one_step_cell(tn.RefNet(W), X, Y, 3), rel=1e-5)
