"""Constructing many instances of one KwCell class: every instance gets a core of its own.

After the first instance of a class, cores are built from a template of a freshly
initialised ``nn.Cell`` instead of running ``nn.Cell.__init__`` (kwcell/_corecell.py); these
tests check that such cores hold the same state as a normally built one, share no mutable
state with each other, and give each instance's gradient in both modes.
"""

from __future__ import annotations

from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import kwcell
from kwcell import KwCell
from kwcell._core import KwCellCore
from kwcell._corecell import core_of
from kwcell._meta import info_of


class Surrogate(KwCell):
    """A spiking network's surrogate gradient: one class, many instances of different slope."""

    def __init__(self, slope: float) -> None:
        super().__init__()
        self.slope = slope

    def construct(self, x: Tensor, threshold: float = 0.0) -> Any:
        return ops.sigmoid(self.slope * (x - threshold))

    def bprop(self, x: Tensor, threshold: float = 0.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": self.slope * out * (1 - out) * dout}


class Chain(nn.Cell):
    def __init__(self, slopes: list[float]) -> None:
        super().__init__()
        self.acts = nn.CellList([Surrogate(s) for s in slopes])

    def construct(self, x: Tensor) -> Any:
        for cell in self.acts:
            x = cell(x, threshold=0.5)
        return x


SLOPES = [1.0, 2.0, 3.0]
CHAIN = Chain(SLOPES)


def _sigmoid(v: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-v))


def _core(cell: Any) -> Any:
    """The cell's core, made (as when MindSpore first runs the cell) if it has none yet."""
    cell._kwcell_dispatcher()
    found = core_of(cell)
    assert found is not None
    return found


def test_cores_hold_the_state_of_a_normally_built_core() -> None:
    reference = info_of(Surrogate).core_cls()  # type: ignore[union-attr]
    reference.__class__ = KwCellCore
    cores = [_core(cell) for cell in CHAIN.acts]
    assert len({id(c) for c in cores}) == len(cores)
    for core in cores:
        assert set(core.__dict__) == set(reference.__dict__) | {"_kwcell_owner_ref"}
        for name, value in reference.__dict__.items():
            if name == "_create_time":
                continue
            assert type(core.__dict__[name]) is type(value), name
            assert core.__dict__[name] == value, name
    for name in ("_params", "_cells", "_buffers", "_params_list", "_primitives", "_jit_config_dict"):
        containers = [core.__dict__[name] for core in cores]
        assert len({id(c) for c in containers}) == len(cores), f"cores share {name}"


def test_cores_reach_their_own_owner() -> None:
    for cell in CHAIN.acts:
        assert _core(cell)._kwcell_owner is cell
        assert _core(cell).has_bprop


def test_each_instance_gives_its_own_gradient(mode: str) -> None:
    """Each cell's bprop uses its own slope: a core wired to the wrong owner changes the result."""
    x = np.array([0.2, 0.7, 1.3], np.float32)
    expected = np.ones_like(x)
    v = x
    grads = []
    for slope in SLOPES:
        out = _sigmoid(slope * (v - 0.5))
        grads.append(slope * out * (1 - out))
        v = out
    for g in grads:
        expected = expected * g
    value, grad = kwcell.value_and_grad(CHAIN)(Tensor(x))
    np.testing.assert_allclose(value.asnumpy(), v, rtol=1e-5)
    np.testing.assert_allclose(grad.asnumpy(), expected, rtol=1e-4)


def test_hooks_on_one_instance_stay_on_it() -> None:
    """PyNative: a backward hook on one cell fires for that cell only (no shared hook state)."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    seen: list[int] = []
    chain = Chain(SLOPES)
    handle = chain.acts[1].register_backward_hook(lambda cell, grad_in, grad_out: seen.append(1))
    try:
        ms.grad(chain)(Tensor(np.array([0.1, 0.2], np.float32)))
    finally:
        handle.remove()
    assert seen == [1]
    assert not _core(chain.acts[0])._backward_hook
    assert not _core(chain.acts[2])._backward_hook


def test_a_core_with_a_hook_takes_nn_cells_own_path_in_pynative() -> None:
    # The core's PyNative call does what nn.Cell.__call__ does for a plain custom-bprop cell
    # without its chain of checks; anything that chain acts on sends it through nn.Cell's.
    cell = Surrogate(2.0)
    core = _core(cell)
    seen: list[Any] = []
    core.register_forward_pre_hook(lambda c, args: seen.append(len(args)))
    x = Tensor(np.array([0.2, 0.9], np.float32))
    g = kwcell.grad(cell)(x, threshold=0.5)
    s = _sigmoid(2.0 * (x.asnumpy() - 0.5))
    np.testing.assert_allclose(g.asnumpy(), 2.0 * s * (1 - s), rtol=1e-5)
    assert seen == [2]  # the hook ran, on the core's positional inputs


def test_the_core_forwards_what_mindspore_reads_from_the_owner_as_getattr_finds_it() -> None:
    class FromClass(Surrogate):
        used_bprop_inputs = [0]  # noqa: RUF012 - MindSpore's attribute

    class FromProperty(Surrogate):
        @property
        def internal_params(self) -> Any:
            return ["p"]

    class FromGetattr(Surrogate):
        def __getattr__(self, name: str) -> Any:
            if name == "used_bprop_inputs":
                return [1]
            return super().__getattr__(name)  # type: ignore[misc]

    class FromGetattrToo(Surrogate):
        def __getattr__(self, name: str) -> Any:
            if name == "internal_params":
                return [2]
            return super().__getattr__(name)  # type: ignore[misc]

    plain = _core(Surrogate(1.0))
    assert not hasattr(plain, "used_bprop_inputs") and not hasattr(plain, "internal_params")
    owner = Surrogate(1.0)
    owner.used_bprop_inputs = [0, 1]  # type: ignore[attr-defined]
    assert _core(owner).used_bprop_inputs == [0, 1]
    assert _core(FromClass(1.0)).used_bprop_inputs == [0]
    assert _core(FromGetattr(1.0)).used_bprop_inputs == [1]
    # internal_params is not forwarded: the owner's dispatcher passes the Parameters it lists
    # to the core as inputs. It is read as getattr finds it, through a property or __getattr__.
    for cls in (FromProperty, FromGetattrToo):
        with pytest.raises(TypeError, match=rf"{cls.__name__}\.internal_params\[0\] is a"):
            cls(1.0)._kwcell_dispatcher()
