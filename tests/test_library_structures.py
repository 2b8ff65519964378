"""KwCells inside the structures large MindSpore libraries build, checked against ``nn.Cell``.

The network is shaped like a mindformers decoder with quantisation-aware training (as MindSpore
Golden Stick adds it): a stack of decoder layers whose ``__init__`` is decorated with
``mindspore.lazy_inline`` (mindformers does this to its decoder layers; on CPU MindSpore
compiles it with ``policy="front"``), each layer holding a fake-quantiser with a hand-written
straight-through bprop (forward: clip and round to a step held in a Parameter; backward: pass
``dout`` where ``|x| <= clip``). The round has no useful derivative, so a gradient that matches
the straight-through formula proves the bprop ran.

Three versions of the quantiser: ``FakeQuant`` (the library's ``nn.Cell``), ``KwFakeQuant``
(the same class with its base switched to ``KwCell``, what ``python -m kwcell migrate`` does)
and ``KwFakeQuantByName`` (kwcell's own form, a default and a keyword call from the layer).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
import numpy.typing as npt
import pytest
from mindspore import Parameter, Tensor, lazy_inline, nn, ops

from kwcell import KwCell

Array = npt.NDArray[np.float32]
DIM, HIDDEN, LAYERS = 3, 4, 2
CLIP, STEP = 1.0, 0.25
DEFAULT_CLIP = 0.5  # KwFakeQuantByName's default, which KwDecoderLayer's second call uses


class FakeQuant(nn.Cell):
    """Quantise to multiples of ``step`` inside ``[-clip, clip]``; straight-through backward."""

    def __init__(self) -> None:
        super().__init__()
        self.step = Parameter(Tensor(STEP, ms.float32), name="step", requires_grad=False)

    def construct(self, x: Tensor, clip: float) -> Tensor:
        q: Tensor = ops.round(ops.clip_by_value(x, -clip, clip) / self.step) * self.step
        return q

    def bprop(self, x: Tensor, clip: float, out: Tensor, dout: Tensor) -> Any:
        return dout * (ops.abs(x) <= clip).astype(dout.dtype), 0


class RoundOnly(nn.Cell):
    """The quantiser's forward without a bprop (MindSpore's autodiff)."""

    def construct(self, x: Tensor, clip: float) -> Tensor:
        q: Tensor = ops.round(ops.clip_by_value(x, -clip, clip) / STEP) * STEP
        return q


class KwFakeQuant(KwCell):
    """``FakeQuant`` with only its base class switched."""

    def __init__(self) -> None:
        super().__init__()
        self.step = Parameter(Tensor(STEP, ms.float32), name="step", requires_grad=False)

    def construct(self, x: Tensor, clip: float) -> Tensor:
        q: Tensor = ops.round(ops.clip_by_value(x, -clip, clip) / self.step) * self.step
        return q

    def bprop(self, x: Tensor, clip: float, out: Tensor, dout: Tensor) -> Any:
        return dout * (ops.abs(x) <= clip).astype(dout.dtype), 0


class KwFakeQuantByName(KwCell):
    """The same quantiser in kwcell's form: a default, out/dout by keyword, a dict return."""

    def __init__(self) -> None:
        super().__init__()
        self.step = Parameter(Tensor(STEP, ms.float32), name="step", requires_grad=False)

    def construct(self, x: Tensor, clip: float = DEFAULT_CLIP) -> Tensor:
        q: Tensor = ops.round(ops.clip_by_value(x, -clip, clip) / self.step) * self.step
        return q

    def bprop(self, x: Tensor, clip: float = DEFAULT_CLIP, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": dout * (ops.abs(x) <= clip).astype(dout.dtype)}


class DecoderLayer(nn.Cell):
    """``x + down(quant(up(x), clip))``, compiled once for all layers (``lazy_inline``)."""

    @lazy_inline(policy="front")  # type: ignore[untyped-decorator]  # untyped in MindSpore
    def __init__(self, quant_cls: type[nn.Cell]) -> None:
        super().__init__()
        self.up = nn.Dense(DIM, HIDDEN, has_bias=False)
        self.down = nn.Dense(HIDDEN, DIM, has_bias=False)
        self.quant = quant_cls()
        self.clip = CLIP

    def construct(self, x: Tensor) -> Tensor:
        return x + self.down(self.quant(self.up(x), self.clip))


class KwDecoderLayer(DecoderLayer):
    """The layer calling kwcell's form: keywords in another order, then the default omitted."""

    def construct(self, x: Tensor) -> Tensor:
        h = self.quant(clip=self.clip, x=self.up(x))
        return x + self.down(self.quant(h))


class AscendDecoderLayer(nn.Cell):
    """``DecoderLayer`` as written for Ascend: ``@lazy_inline`` with the default policy."""

    @lazy_inline(policy=None)  # type: ignore[untyped-decorator]  # untyped in MindSpore
    def __init__(self, quant_cls: type[nn.Cell]) -> None:
        super().__init__()
        self.up = nn.Dense(DIM, HIDDEN, has_bias=False)
        self.down = nn.Dense(HIDDEN, DIM, has_bias=False)
        self.quant = quant_cls()
        self.clip = CLIP

    def construct(self, x: Tensor) -> Tensor:
        return x + self.down(self.quant(self.up(x), self.clip))


class Decoder(nn.Cell):
    def __init__(self, layer_cls: Callable[[type[nn.Cell]], nn.Cell], quant_cls: type[nn.Cell]) -> None:
        super().__init__()
        self.layers = nn.CellList([layer_cls(quant_cls) for _ in range(LAYERS)])

    def construct(self, x: Tensor) -> Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


VARIANTS = {
    "nn.Cell": (DecoderLayer, FakeQuant),
    "KwCell, base switched": (DecoderLayer, KwFakeQuant),
    "KwCell, by name": (KwDecoderLayer, KwFakeQuantByName),
}

RNG = np.random.default_rng(7)
X = RNG.normal(size=(2, DIM)).astype(np.float32)
C = RNG.normal(size=(2, DIM)).astype(np.float32)  # loss = sum(C * decoder(x)): dout is not 1
WEIGHTS = {
    f"layers.{i}.{name}.weight": RNG.normal(size=shape).astype(np.float32)
    for i in range(LAYERS)
    for name, shape in (("up", (HIDDEN, DIM)), ("down", (DIM, HIDDEN)))
}


def _decoder(variant: str, weights: dict[str, Array] = WEIGHTS) -> Decoder:
    net = Decoder(*VARIANTS[variant])
    for p in net.trainable_params():
        p.set_data(Tensor(weights[p.name]))
    return net


def _step(net: Decoder, i: int) -> Parameter:
    """Layer ``i``'s quantisation step (a non-trainable Parameter)."""
    layer = net.layers[i]
    assert isinstance(layer, DecoderLayer)
    step = getattr(layer.quant, "step")  # noqa: B009 -- each quantiser class has one
    assert isinstance(step, Parameter)
    return step


def _quant(h: Array, clip: float = CLIP) -> Array:
    return np.asarray(np.round(np.clip(h, -clip, clip) / STEP) * STEP, np.float32)


def _analytic(kw_layer: bool) -> tuple[Array, dict[str, Array]]:
    """d sum(C * decoder(X)) / d (X, weights) with the straight-through backward, in numpy."""
    xs, hs, hs2, qs = [X], [], [], []
    for i in range(LAYERS):
        up, down = WEIGHTS[f"layers.{i}.up.weight"], WEIGHTS[f"layers.{i}.down.weight"]
        h = xs[-1] @ up.T
        # KwDecoderLayer quantises twice, the second time to the default clip
        h2 = _quant(h) if kw_layer else h
        q = _quant(h2, DEFAULT_CLIP) if kw_layer else _quant(h2)
        hs.append(h)
        hs2.append(h2)
        qs.append(q)
        xs.append(xs[-1] + q @ down.T)
    dy = C
    grads: dict[str, Array] = {}
    for i in reversed(range(LAYERS)):
        up, down = WEIGHTS[f"layers.{i}.up.weight"], WEIGHTS[f"layers.{i}.down.weight"]
        grads[f"layers.{i}.down.weight"] = dy.T @ qs[i]
        dh = (dy @ down) * (np.abs(hs[i]) <= CLIP)
        if kw_layer:
            dh = dh * (np.abs(hs2[i]) <= DEFAULT_CLIP)
        grads[f"layers.{i}.up.weight"] = dh.T @ xs[i]
        dy = dy + dh @ up
    return dy, grads


def _gradients(net: Decoder) -> tuple[Array, dict[str, Array]]:
    params = net.trainable_params()

    def loss(x: Tensor) -> Tensor:
        return (Tensor(C) * net(x)).sum()

    dx, dw = ms.grad(loss, grad_position=0, weights=params)(Tensor(X))
    return dx.asnumpy(), {p.name: g.asnumpy() for p, g in zip(params, dw, strict=True)}


def _assert_gradients(got: tuple[Array, dict[str, Array]], want: tuple[Array, dict[str, Array]]) -> None:
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    assert got[1].keys() == want[1].keys()
    for name, value in want[1].items():
        np.testing.assert_allclose(got[1][name], value, rtol=1e-5, atol=1e-6, err_msg=name)


# --- lazy_inline ---------------------------------------------------------------------------


def test_lazy_inline_takes_effect_on_each_layer() -> None:
    """The decorator ran for every variant: MindSpore keys the shared graph on cell_init_args."""
    for variant, (layer_cls, quant_cls) in VARIANTS.items():
        net = Decoder(layer_cls, quant_cls)
        for layer in net.layers:
            assert getattr(layer, "no_inline") is False, variant  # noqa: B009 -- not in the stubs
            assert layer.cell_init_args.startswith(f"lazy_inline_{layer_cls.__name__}"), variant
            assert quant_cls.__name__ in layer.cell_init_args, variant


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_lazy_inline_layers_give_the_straight_through_gradients(mode: str, variant: str) -> None:
    """In each mode, every variant gives the analytic straight-through gradients for the input
    and each layer's weights (so no layer uses another's weights through the shared graph),
    and the base-switched KwCell gives exactly what the nn.Cell gives."""
    got = _gradients(_decoder(variant))
    _assert_gradients(got, _analytic(kw_layer=variant == "KwCell, by name"))
    if variant == "KwCell, base switched":
        _assert_gradients(got, _gradients(_decoder("nn.Cell")))


@pytest.mark.parametrize(
    "quant_cls", [FakeQuant, KwFakeQuant, RoundOnly], ids=["nn.Cell", "KwCell", "no bprop"]
)
def test_lazy_inline_without_policy_fails_on_cpu_for_nn_cell_too(quant_cls: type[nn.Cell]) -> None:
    """MindSpore documents lazy_inline as Ascend-only: on CPU, without ``policy="front"``, its
    graph does not compile (a cell without any bprop fails the same way), KwCell or not."""
    ms.set_context(mode=ms.GRAPH_MODE)
    net = Decoder(AscendDecoderLayer, quant_cls)
    with pytest.raises(
        RuntimeError, match="Input\\[0\\] must be a Primitive ValueNode, but get ValueNode<FuncGraph>"
    ):
        net(Tensor(X))


# --- checkpoints -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "target"), [("nn.Cell", "KwCell, base switched"), ("KwCell, base switched", "nn.Cell")]
)
def test_checkpoint_loads_across_the_base_switch(source: str, target: str, tmp_path: Path) -> None:
    """A checkpoint saved with nn.Cell quantisers loads into the model whose quantisers are
    KwCells, and back: the same parameter names, every one loaded, the same outputs and
    gradients."""
    trained = {name: value * 1.5 for name, value in WEIGHTS.items()}
    saved = _decoder(source, trained)
    _step(saved, 1).set_data(Tensor(0.5, ms.float32))  # a non-trainable Parameter too
    path = str(tmp_path / "decoder.ckpt")
    ms.save_checkpoint(saved, path)

    loaded = _decoder(target)
    assert [p.name for p in loaded.get_parameters()] == [p.name for p in saved.get_parameters()]
    assert list(ms.load_checkpoint(path)) == [p.name for p in saved.get_parameters()]
    assert not np.allclose(loaded(Tensor(X)).asnumpy(), saved(Tensor(X)).asnumpy())
    not_loaded, unused = ms.load_param_into_net(loaded, ms.load_checkpoint(path), strict_load=True)
    assert (not_loaded, unused) == ([], [])
    assert float(_step(loaded, 1).asnumpy()) == 0.5
    np.testing.assert_array_equal(loaded(Tensor(X)).asnumpy(), saved(Tensor(X)).asnumpy())
    _assert_gradients(_gradients(loaded), _gradients(saved))


# --- MindIR export -------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["KwCell, base switched", "KwCell, by name"])
def test_export_to_mindir_runs_the_same_forward(variant: str, tmp_path: Path) -> None:
    """ms.export writes the KwCell network's forward (the bprop is not part of inference);
    loaded back as an nn.GraphCell it gives the network's own output."""
    net = _decoder(variant)
    ms.export(net, Tensor(X), file_name=str(tmp_path / "decoder"), file_format="MINDIR")
    graph = nn.GraphCell(ms.load(str(tmp_path / "decoder.mindir")))
    expected = net(Tensor(X)).asnumpy()
    np.testing.assert_allclose(graph(Tensor(X)).asnumpy(), expected, rtol=1e-6)


def test_export_a_kwcell_alone_with_its_default(tmp_path: Path) -> None:
    """A KwCell as the exported network itself: its default fills the parameter not passed."""
    net = KwFakeQuantByName()
    x = np.array([-2.0, -0.3, 0.1, 0.62, 3.0], np.float32)
    ms.export(net, Tensor(x), file_name=str(tmp_path / "quant"), file_format="MINDIR")
    graph = nn.GraphCell(ms.load(str(tmp_path / "quant.mindir")))
    np.testing.assert_allclose(graph(Tensor(x)).asnumpy(), [-0.5, -0.25, 0.0, 0.5, 0.5])
