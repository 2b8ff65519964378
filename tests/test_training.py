"""Real training with KwCells: three MindSpore training APIs, PYNATIVE and GRAPH_MODE.

Each run trains ``KwNet`` (Dense -> KwCell activation with a custom bprop, called with
keywords in reverse order and non-default values -> Dense) and ``RefNet`` (the same network
with a positional ``nn.Cell`` and its hand-written positional bprop, trained with plain
MindSpore APIs) from the same initial weights, and compares the losses step by step.
"""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest

from tests import training_nets as tn

STEPS = 6
RTOL = 1e-5


@pytest.fixture(scope="module")
def data() -> tuple[tn.Array, tn.Array]:
    return tn.make_data(32)


def _check(kw: list[float], ref: list[float], steps: int) -> None:
    assert len(kw) == len(ref) == steps
    np.testing.assert_allclose(kw, ref, rtol=RTOL)
    assert kw[-1] < kw[0], f"loss did not go down: {kw}"


def test_functional_loop(mode: str, data: tuple[tn.Array, tn.Array]) -> None:
    x, y = data
    w = tn.initial_weights()
    kw = tn.train_functional(tn.KwNet(w), x, y, STEPS)
    ref = tn.train_functional(tn.RefNet(w), x, y, STEPS, value_and_grad=ms.value_and_grad)
    _check(kw, ref, STEPS)


def test_train_one_step_cell(mode: str, data: tuple[tn.Array, tn.Array]) -> None:
    x, y = data
    w = tn.initial_weights()
    kw_net, ref_net = tn.KwNet(w), tn.RefNet(w)
    kw = tn.train_one_step_cell(kw_net, x, y, STEPS)
    ref = tn.train_one_step_cell(ref_net, x, y, STEPS)
    _check(kw, ref, STEPS)
    # the trained parameters agree too, under the same names
    kw_params, ref_params = tn.parameters_of(kw_net), tn.parameters_of(ref_net)
    assert kw_params.keys() == ref_params.keys()
    for name, value in kw_params.items():
        np.testing.assert_allclose(value, ref_params[name], rtol=RTOL, atol=1e-7)


def test_model_train_over_generator_dataset(mode: str, data: tuple[tn.Array, tn.Array]) -> None:
    x, y = data
    w = tn.initial_weights()
    kw = tn.train_model(tn.KwNet(w), x, y, epochs=3, batch=16)
    ref = tn.train_model(tn.RefNet(w), x, y, epochs=3, batch=16)
    _check(kw, ref, 3 * 2)


def test_custom_bprop_is_what_trains(data: tuple[tn.Array, tn.Array]) -> None:
    """The comparison above can fail: with MindSpore's own tanh gradient the losses differ."""
    x, y = data
    w = tn.initial_weights()
    kw = tn.train_one_step_cell(tn.KwNet(w), x, y, 3)
    autodiff = tn.train_one_step_cell(tn.autodiff_net(w), x, y, 3)
    assert kw[0] == pytest.approx(autodiff[0], rel=RTOL)  # same forward
    assert abs(kw[2] - autodiff[2]) > 1e-4 * abs(autodiff[2])  # different backward
