"""The class machinery behaves like nn.Cell's: construct and bprop are found through the MRO
(mixins, bases that define only bprop, ``super().bprop(...)``, ``abc.ABC``), and instances
pickle. Each cell is compared with its nn.Cell twin or with analytic gradients."""

from __future__ import annotations

import abc
import copy
import pickle
from collections.abc import Callable
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn, ops

import kwcell
from kwcell import KwCell, KwCellDefinitionError

X = np.array([0.5, -1.0, 2.0], np.float32)
W = np.array([2.0, 0.5, -1.5], np.float32)


@pytest.fixture(params=["pynative", "graph", "jit"])
def any_mode(request: pytest.FixtureRequest) -> str:
    """PYNATIVE, GRAPH_MODE, and PYNATIVE with the gradient taken inside an @ms.jit function."""
    mode: str = request.param
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    return mode


def _grads(net: nn.Cell, mode: str, x: Tensor, w: Tensor) -> tuple[Any, Any]:
    g: Callable[..., Any] = ms.grad(net, grad_position=(0, 1))

    @ms.jit
    def step(a: Tensor, b: Tensor) -> Any:
        return g(a, b)

    gx, gw = step(x, w) if mode == "jit" else g(x, w)
    return gx.asnumpy(), gw.asnumpy()


# --- a bprop from a plain mixin --------------------------------------------------------------


class SinBprop:
    """A mixin shared by several cells: the gradient of w * sin(x), matched by name."""

    def bprop(self, w: Tensor, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * dout, ops.sin(x) * dout


class MixinNet(SinBprop, KwCell):
    def construct(self, x: Tensor, w: Tensor) -> Any:
        return w * ops.sin(x)


def test_bprop_from_a_plain_mixin_is_matched_by_name(any_mode: str) -> None:
    gx, gw = _grads(MixinNet(), any_mode, Tensor(X), Tensor(W))
    np.testing.assert_allclose(gx, W * np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(gw, np.sin(X), rtol=1e-6)


# --- a construct from a mixin ahead of a KwCell parent ---------------------------------------


class Scaled(KwCell):
    def construct(self, x: Tensor, w: Tensor) -> Any:
        return w * ops.sin(x)

    def bprop(self, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * dout, ops.sin(x) * dout


class DoubleForward:
    def construct(self, x: Tensor, w: Tensor) -> Any:
        return 2 * w * ops.sin(x)


class MixedForward(DoubleForward, Scaled):
    """The mixin's construct comes first in the MRO, as it does for nn.Cell."""


def test_construct_from_a_mixin_ahead_of_the_kwcell_parent(mode: str) -> None:
    net = MixedForward()
    np.testing.assert_allclose(net(Tensor(X), Tensor(W)).asnumpy(), 2 * W * np.sin(X), rtol=1e-6)
    gx, gw = _grads(net, mode, Tensor(X), Tensor(W))
    # the bprop still comes from Scaled
    np.testing.assert_allclose(gx, W * np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(gw, np.sin(X), rtol=1e-6)


# --- a base that defines only bprop, and abc ---------------------------------------------------


class GradBase(KwCell, abc.ABC):
    """Subclasses bring construct; the base brings the gradient (and is an ABC)."""

    def bprop(self, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * dout, self.weight_grad(x, dout)

    @abc.abstractmethod
    def weight_grad(self, x: Tensor, dout: Tensor) -> Any: ...


class FromBase(GradBase):
    def construct(self, x: Tensor, w: Tensor) -> Any:
        return w * ops.sin(x)

    def weight_grad(self, x: Tensor, dout: Tensor) -> Any:
        return ops.sin(x) * dout


def test_base_with_only_bprop_and_abc(mode: str) -> None:
    assert issubclass(FromBase, abc.ABC) and GradBase.__abstractmethods__ == frozenset({"weight_grad"})
    gx, gw = _grads(FromBase(), mode, Tensor(X), Tensor(W))
    np.testing.assert_allclose(gx, W * np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(gw, np.sin(X), rtol=1e-6)


# --- super().bprop(...) ---------------------------------------------------------------------------


class Doubled(Scaled):
    def bprop(self, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
        gx, gw = super().bprop(x, w, out, dout)
        return 2 * gx, 3 * gw


class PlainScaled(nn.Cell):
    def construct(self, x: Tensor, w: Tensor) -> Any:
        return w * ops.sin(x)

    def bprop(self, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * dout, ops.sin(x) * dout


class PlainDoubled(PlainScaled):
    def bprop(self, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
        gx, gw = super().bprop(x, w, out, dout)
        return 2 * gx, 3 * gw


def test_super_bprop_from_a_subclass(mode: str) -> None:
    ours = _grads(Doubled(), mode, Tensor(X), Tensor(W))
    theirs = _grads(PlainDoubled(), mode, Tensor(X), Tensor(W))
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    np.testing.assert_allclose(ours[0], 2 * W * np.cos(X), rtol=1e-6)


def test_instances_show_their_bprop_to_users_but_not_to_mindspore() -> None:
    """As on nn.Cell, ``net.bprop`` is the class's bprop bound to the instance (callable
    directly); MindSpore, which would treat the visible cell as the bprop cell, finds none
    (``has_bprop``, set by ``nn.Cell.__init__``, is False; the core carries the bprop)."""
    net = Doubled()
    assert net.bprop.__func__ is Doubled.bprop  # type: ignore[attr-defined]
    assert getattr(net, "has_bprop") is False  # noqa: B009 - not in the stubs
    assert getattr(net._kwcell_core, "has_bprop") is True  # noqa: B009
    dx, _dw = net.bprop(Tensor(X), Tensor(W), Tensor(X), Tensor(np.float32(1.0)))
    np.testing.assert_allclose(dx.asnumpy(), 2 * W * np.cos(X), rtol=1e-6)
    assert MixinNet().bprop is not None


# --- pickle and copy ------------------------------------------------------------------------------


class WithParam(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.scale = Parameter(Tensor(np.float32(3.0)), name="scale", requires_grad=False)

    def construct(self, x: Tensor, w: Tensor) -> Any:
        return self.scale * w * ops.sin(x)

    def bprop(self, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
        return self.scale * w * ops.cos(x) * dout, self.scale * ops.sin(x) * dout


@pytest.mark.parametrize("clone", [pickle.loads, copy.deepcopy], ids=["pickle", "deepcopy"])
def test_pickle_and_deepcopy_round_trip(mode: str, clone: Callable[[Any], Any]) -> None:
    net = WithParam()
    copied = clone(pickle.dumps(net)) if clone is pickle.loads else clone(net)
    assert type(copied) is WithParam
    assert copied._kwcell_core.__dict__["_kwcell_owner_ref"]() is copied
    gx, gw = _grads(copied, mode, Tensor(X), Tensor(W))
    np.testing.assert_allclose(gx, 3 * W * np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(gw, 3 * np.sin(X), rtol=1e-6)


def test_keyword_calls_still_bind_through_the_mro(mode: str) -> None:
    g = kwcell.grad(MixinNet(), grad_position=("x", "w"))
    gx, gw = g(w=Tensor(W), x=Tensor(X))
    np.testing.assert_allclose(gx.asnumpy(), W * np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), np.sin(X), rtol=1e-6)


# --- Net.bprop = f after the class statement ----------------------------------------------------


class Patched(KwCell):
    def construct(self, x: Tensor, w: Tensor) -> Any:
        return w * ops.sin(x)

    def bprop(self, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
        return dout, dout  # replaced below, as a user patching a library cell would


def _patched_bprop(self: Any, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
    return w * ops.cos(x) * dout, ops.sin(x) * dout


def test_bprop_assigned_to_the_class_later_is_checked_and_used(mode: str) -> None:
    before = Patched()  # an instance made before the patch follows it, as on nn.Cell
    Patched.bprop = _patched_bprop  # type: ignore[method-assign]
    for net in (before, Patched()):
        assert getattr(net, "has_bprop") is False  # noqa: B009 - still hidden from MindSpore
        assert net.bprop.__func__ is _patched_bprop  # type: ignore[attr-defined]
        gx, gw = kwcell.grad(net, grad_position=("x", "w"))(w=Tensor(W), x=Tensor(X))
        np.testing.assert_allclose(gx.asnumpy(), W * np.cos(X), rtol=1e-6)
        np.testing.assert_allclose(gw.asnumpy(), np.sin(X), rtol=1e-6)


def test_bprop_assigned_to_the_class_later_is_checked() -> None:
    def bad(self: Any, x: Tensor, z: Tensor, *, out: Tensor, dout: Tensor) -> Any:
        return dout

    class Target(KwCell):
        def construct(self, x: Tensor, w: Tensor) -> Any:
            return w * x

    with pytest.raises(KwCellDefinitionError, match=r"Target\.bprop: parameter 'z' is not a parameter"):
        Target.bprop = bad
