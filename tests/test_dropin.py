"""Drop-in: what works on nn.Cell works the same on KwCell, MindSpore's own bprop
features included, and subclasses re-check and regenerate."""

from __future__ import annotations

from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn, ops

import kwcell
from kwcell import KwCell, KwCellDefinitionError

X = np.array([0.5, 1.0, -2.0], np.float32)
W = np.array([2.0, -1.0, 0.5], np.float32)


class ClassicVarArgs(KwCell):
    """MindSpore's classic form: inputs, then out, dout, positionally."""

    def construct(self, x: Tensor, w: Tensor) -> Any:
        return w * ops.sin(x)

    def bprop(self, *args: Any) -> Any:
        x, w, _out, dout = args
        return w * ops.cos(x) * dout, ops.sin(x) * dout


class ClassicPositional(KwCell):
    def construct(self, x: Tensor, w: Tensor) -> Any:
        return w * ops.sin(x)

    def bprop(self, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * dout, ops.sin(x) * dout


NETS: dict[type[KwCell], KwCell] = {cls: cls() for cls in (ClassicVarArgs, ClassicPositional)}


@pytest.mark.parametrize("cls", list(NETS), ids=lambda c: c.__name__)
def test_classic_forms(mode: str, cls: type[KwCell]) -> None:
    gx, gw = ms.grad(NETS[cls], grad_position=(0, 1))(Tensor(X), Tensor(W))
    np.testing.assert_allclose(gx.asnumpy(), W * np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), np.sin(X), rtol=1e-6)


class Base(KwCell):
    def construct(self, x: Tensor, w: Any = 2.0) -> Any:
        return w * ops.sin(x)

    def bprop(self, x: Tensor, w: Any = 2.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": w * ops.cos(x) * dout}


class NewConstruct(Base):
    """Overrides construct only: the inherited bprop is re-checked against it."""

    def construct(self, x: Tensor, w: Any = 2.0) -> Any:
        return w * ops.sin(x) + 1.0


class NewBprop(Base):
    """Overrides bprop only: checked against the inherited construct."""

    def bprop(self, x: Tensor, w: Any = 2.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": 10.0 * dout}


def test_subclass_overriding_construct_only(mode: str) -> None:
    net = NewConstruct()
    out = net(Tensor(X), w=3.0)
    np.testing.assert_allclose(out.asnumpy(), 3.0 * np.sin(X) + 1.0, rtol=1e-6)
    g = kwcell.grad(net)(Tensor(X), w=3.0)
    np.testing.assert_allclose(g.asnumpy(), 3.0 * np.cos(X), rtol=1e-6)


def test_subclass_overriding_bprop_only(mode: str) -> None:
    g = kwcell.grad(NewBprop())(Tensor(X), w=3.0)
    np.testing.assert_allclose(g.asnumpy(), np.full(3, 10.0, np.float32), rtol=1e-6)


def test_subclass_construct_that_breaks_inherited_bprop() -> None:
    """The subclass changed only construct: the error names its construct, not the bprop it
    does not define."""
    with pytest.raises(
        KwCellDefinitionError,
        match=r"Broken\.construct does not fit the bprop it inherits from Base: parameter 'w' is not a "
        r"parameter of construct\(self, x, scale=2\.0\)",
    ):

        class Broken(Base):
            def construct(self, x: Tensor, scale: Any = 2.0) -> Any:
                return scale * x


class Debugged(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.bprop_debug = True

    def construct(self, x: Tensor) -> Any:
        return ops.sin(x)

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return ops.cos(x) * dout


class PlainDebugged(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.bprop_debug = True

    def construct(self, x: Tensor) -> Any:
        return ops.sin(x)

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (ops.cos(x) * dout,)


def test_bprop_debug_is_forwarded_to_the_core() -> None:
    net = Debugged()
    assert net._kwcell_core.bprop_debug is True
    net.bprop_debug = False
    assert net._kwcell_core.bprop_debug is False
    net.bprop_debug = True
    g = ms.grad(net)(Tensor(X))
    np.testing.assert_allclose(g.asnumpy(), np.cos(X), rtol=1e-6)


@pytest.mark.parametrize("cls", [PlainDebugged, Debugged], ids=lambda c: c.__name__)
def test_bprop_debug_in_graph_mode_fails_as_for_nn_cell(cls: type[nn.Cell]) -> None:
    """MindSpore 2.10 cannot compile a bprop_debug cell in GRAPH_MODE (a known limit,
    documented in the README); KwCell fails the same way nn.Cell does, not differently."""
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(RuntimeError, match=r"The pointer\[graph\] is null"):
        ms.grad(cls())(Tensor(X))


def test_used_bprop_inputs_is_forwarded() -> None:
    """MindSpore hands bprop only the inputs listed in ``used_bprop_inputs`` (others arrive as
    None), exactly as for an nn.Cell."""
    received: list[bool] = []

    class Used(KwCell):
        def __init__(self) -> None:
            super().__init__()
            self.used_bprop_inputs = [1]

        def construct(self, x: Tensor, w: Tensor) -> Any:
            return w * x

        def bprop(self, x: Tensor, w: Tensor, out: Tensor, dout: Tensor) -> Any:
            received.append(x is None)
            return {"x": w * dout}

    net = Used()
    core: Any = net._kwcell_core  # MindSpore reads used_bprop_inputs from the bprop cell
    assert core.used_bprop_inputs == [1]
    gx = ms.grad(net)(Tensor(X), Tensor(W))
    np.testing.assert_allclose(gx.asnumpy(), W, rtol=1e-6)
    assert received == [True], "the unused input x should reach bprop as None"


def test_backward_hook_sees_the_bprop_gradient() -> None:
    seen: list[np.ndarray[Any, Any]] = []

    def hook(cell: nn.Cell, grad_input: Any, grad_output: Any) -> None:
        seen.append(grad_input[0].asnumpy())

    net = NETS[ClassicPositional]
    handle = net.register_backward_hook(hook)
    try:
        gx = ms.grad(net)(Tensor(X), Tensor(W))
    finally:
        handle.remove()
    np.testing.assert_allclose(gx.asnumpy(), W * np.cos(X), rtol=1e-6)
    assert seen, "the backward hook was not called"
    np.testing.assert_allclose(seen[0], W * np.cos(X), rtol=1e-6)


class WithParam(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.scale = Parameter(Tensor(np.float32(2.0)), name="scale", requires_grad=False)

    def construct(self, x: Tensor) -> Any:
        return self.scale * ops.sin(x)

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return self.scale * ops.cos(x) * dout


class Holder(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.inner = WithParam()

    def construct(self, x: Tensor) -> Any:
        return self.inner(x=x)


def test_parameter_names_and_children_are_those_of_nn_cell(mode: str) -> None:
    holder = Holder()
    assert [n for n, _ in holder.parameters_and_names()] == ["inner.scale"]
    assert [n for n, _ in holder.cells_and_names()] == ["", "inner"]
    g = ms.grad(holder)(Tensor(X))
    np.testing.assert_allclose(g.asnumpy(), 2.0 * np.cos(X), rtol=1e-6)


def test_set_train_propagates() -> None:
    holder = Holder()
    holder.set_train(True)
    assert holder.inner.training
    holder.set_train(False)
    assert not holder.inner.training


class SuperChild(Base):
    """Overrides construct and calls the parent's through super(), as with nn.Cell."""

    def construct(self, x: Tensor, w: Any = 2.0) -> Any:
        return super().construct(x, w) + 1.0


def test_super_construct_from_an_overriding_subclass(mode: str) -> None:
    net = SuperChild()
    out = net(Tensor(X), w=3.0)
    np.testing.assert_allclose(out.asnumpy(), 3.0 * np.sin(X) + 1.0, rtol=1e-6)
    g = kwcell.grad(net)(Tensor(X), w=3.0)  # the inherited bprop, checked against the new construct
    np.testing.assert_allclose(g.asnumpy(), 3.0 * np.cos(X), rtol=1e-6)
