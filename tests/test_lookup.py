"""construct and bprop are looked up when MindSpore runs or compiles the cell, as on nn.Cell.

Each case changes a class or an instance after it exists, the way user code does (patching a
library cell, a base's ``__init_subclass__``, a diamond of mixins), and compares the gradient
with the analytic value nn.Cell gives in PYNATIVE and GRAPH_MODE.
"""

from __future__ import annotations

import functools
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import kwcell
from kwcell import KwCell, KwCellDefinitionError

X = np.array([0.3, 1.1], np.float32)


def _gx(net: nn.Cell) -> Any:
    def f(x: Tensor) -> Any:
        return net(x=x)

    g = kwcell.grad(f)(Tensor(X))
    return g.asnumpy()


class Sin(KwCell):
    def construct(self, x: Tensor, w: float = 1.0) -> Any:
        return w * ops.sin(x)

    def bprop(self, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * dout, 0


def test_parent_bprop_assigned_after_a_child_exists_reaches_the_child(mode: str) -> None:
    class Base(Sin):
        pass

    class Child(Base):
        def construct(self, x: Tensor, w: float = 1.0) -> Any:
            return w * ops.sin(x)

    def tripled(self: Any, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
        return 3 * w * ops.cos(x) * dout, 0

    child = Child()
    np.testing.assert_allclose(_gx(child), np.cos(X), rtol=1e-6)
    Base.bprop = tripled  # type: ignore[method-assign]
    np.testing.assert_allclose(_gx(Child()), 3 * np.cos(X), rtol=1e-6)


def test_construct_assigned_with_other_defaults_runs_as_written(mode: str) -> None:
    class Net(Sin):
        pass

    def five(self: Any, x: Tensor, w: float = 5.0) -> Any:
        return w * ops.sin(x)

    def five_bprop(self: Any, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * dout, 0

    Net.construct = five  # type: ignore[method-assign]
    Net.bprop = five_bprop  # type: ignore[method-assign]
    assert Net.construct is five  # reads back what was assigned, as on nn.Cell
    np.testing.assert_allclose(_gx(Net()), 5 * np.cos(X), rtol=1e-6)


def test_construct_reordered_after_keyword_calls_binds_as_written_now(mode: str) -> None:
    # nn.Cell keeps the signature a GRAPH_MODE keyword call was first bound with; a KwCell binds
    # with the construct it runs now.
    class Net(Sin):
        pass

    net = Net()
    x = Tensor(X)
    np.testing.assert_allclose(net(x, w=2.0).asnumpy(), 2 * np.sin(X), rtol=1e-6)

    def reordered(self: Any, w: float, x: Tensor) -> Any:
        return w * ops.sin(x)

    def reordered_bprop(self: Any, w: float, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return 0, w * ops.cos(x) * dout

    Net.construct = reordered  # type: ignore[method-assign,assignment]
    Net.bprop = reordered_bprop  # type: ignore[method-assign,assignment]
    np.testing.assert_allclose(net(w=3.0, x=x).asnumpy(), 3 * np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(net(3.0, x=x).asnumpy(), 3 * np.sin(X), rtol=1e-6)  # type: ignore[misc,arg-type]


def test_instance_bprop_is_called_without_self_as_on_nn_cell() -> None:
    net = Sin()

    def doubled(x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
        return 2 * w * ops.cos(x) * dout, 0

    net.bprop = doubled  # type: ignore[method-assign]
    assert net.bprop is doubled
    np.testing.assert_allclose(_gx(net), 2 * np.cos(X), rtol=1e-6)
    del net.bprop
    np.testing.assert_allclose(_gx(net), np.cos(X), rtol=1e-6)


def test_class_bprop_runs_again_after_an_instance_bprop_is_deleted() -> None:
    # The instance runs its class's bprop first (and remembers it), then its own, then its
    # class's again: the core switched to the instance's plan must be switched back.
    net = Sin()
    np.testing.assert_allclose(_gx(net), np.cos(X), rtol=1e-6)

    def doubled(x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
        return 2 * w * ops.cos(x) * dout, 0

    net.bprop = doubled  # type: ignore[method-assign]
    np.testing.assert_allclose(_gx(net), 2 * np.cos(X), rtol=1e-6)
    del net.bprop
    np.testing.assert_allclose(_gx(net), np.cos(X), rtol=1e-6)
    net.construct = lambda x, w=1.0: 5 * w * ops.sin(x)  # type: ignore[method-assign]
    np.testing.assert_allclose(_gx(net), np.cos(X), rtol=1e-6)  # the class bprop, kept
    del net.construct
    np.testing.assert_allclose(_gx(net), np.cos(X), rtol=1e-6)


def test_instance_bprop_that_does_not_fit_is_refused_and_undone() -> None:
    net = Sin()

    def wrong(x: Tensor, z: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        return dout

    with pytest.raises(
        KwCellDefinitionError, match=r"Sin\.bprop: parameter 'z' is not a parameter of construct"
    ):
        net.bprop = wrong  # type: ignore[method-assign,assignment]
    assert "bprop" not in net.__dict__


def test_deleting_the_class_bprop_falls_back_to_autodiff(mode: str) -> None:
    class Wrong(KwCell):
        def construct(self, x: Tensor) -> Any:
            return ops.sin(x)

        def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (7 * dout,)

    np.testing.assert_allclose(_gx(Wrong()), np.full(2, 7.0), rtol=1e-6)
    del Wrong.bprop
    np.testing.assert_allclose(_gx(Wrong()), np.cos(X), rtol=1e-6)


def _gx_in(how: str, net: nn.Cell) -> Any:
    """The gradient in PYNATIVE, GRAPH_MODE, or from a PYNATIVE ``@ms.jit`` step."""
    ms.set_context(mode=ms.GRAPH_MODE if how == "graph" else ms.PYNATIVE_MODE)
    if how != "jit":
        return _gx(net)

    def f(x: Tensor) -> Any:
        return net(x=x)

    grad_fn = ms.grad(f)

    @ms.jit
    def step(x: Tensor) -> Any:
        return grad_fn(x)

    return step(Tensor(X)).asnumpy()


class Triple(nn.Cell):
    """A plain mixin (not a KwCell) scaling the next bprop in the MRO."""

    def bprop(self, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
        gx, gw = super().bprop(x, w, out, dout)  # type: ignore[misc]  # nn.Cell declares none
        return 3 * gx, gw


class Quintuple(nn.Cell):
    def bprop(self, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
        gx, gw = super().bprop(x, w, out, dout)  # type: ignore[misc]
        return 5 * gx, gw


class KwQuintuple(KwCell):
    def bprop(self, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
        gx, gw = super().bprop(x, w, out, dout)  # type: ignore[misc]
        return 5 * gx, gw


@pytest.mark.parametrize("how", ["pynative", "graph", "jit"])
@pytest.mark.parametrize(
    "mixins",
    [(Triple, Quintuple), (Triple, KwQuintuple), (KwQuintuple, Triple)],
    ids=["two plain", "plain then KwCell", "KwCell then plain"],
)
def test_cooperative_plain_mixins_scale_the_base_gradient(how: str, mixins: tuple[type, ...]) -> None:
    """Each mixin's super().bprop continues after its own class in graphs too (GRAPH_MODE
    recursed forever through the second plain mixin: nn.Cell does the same)."""
    net_class = type("Net", (*mixins, Sin), {})
    np.testing.assert_allclose(_gx_in(how, net_class()), 15 * np.cos(X), rtol=1e-5)


class Sevenfold(nn.Cell):
    """A plain mixin whose bprop reaches the next one through a helper method."""

    def bprop(self, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
        gx, gw = self.parent_gradient(x, w, out, dout)
        return 7 * gx, gw

    def parent_gradient(self, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
        return super().bprop(x, w, out, dout)  # type: ignore[misc]


def test_super_bprop_in_a_mixin_helper_is_an_error_in_graphs_not_a_hang(mode: str) -> None:
    """MindSpore's graph compiler reads super() in a helper as super(type(self), self): the
    gradient would compile forever (nn.Cell hangs), so kwcell says why before it starts."""

    class Net(Sevenfold, Sin):
        pass

    if mode == "pynative":
        np.testing.assert_allclose(_gx(Net()), 7 * np.cos(X), rtol=1e-5)
        return
    with pytest.raises(
        RuntimeError,
        match=r"\.Net: Sevenfold\.parent_gradient calls super\(\)\.bprop, which MindSpore's graph "
        r"compiler \(GRAPH_MODE, @ms\.jit\) reads as super\(Net, self\)\.bprop outside a bprop, .* "
        r"write super\(Sevenfold, self\)\.bprop in Sevenfold\.parent_gradient",
    ):
        _gx(Net())


def test_diamond_super_bprop_follows_the_instance_mro(mode: str) -> None:
    class Left(Sin):
        def bprop(self, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
            gx, gw = super().bprop(x, w, out, dout)
            return 3 * gx, gw

    class Right(Sin):
        def bprop(self, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
            gx, gw = super().bprop(x, w, out, dout)
            return 5 * gx, gw

    class Diamond(Left, Right):
        pass

    np.testing.assert_allclose(_gx(Diamond()), 15 * np.cos(X), rtol=1e-5)


def test_bprop_set_by_a_base_init_subclass(mode: str) -> None:
    def fourfold(self: Any, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (4 * ops.cos(x) * dout,)

    class Registry(KwCell):
        def __init_subclass__(cls, **kwargs: Any) -> None:
            super().__init_subclass__(**kwargs)
            cls.bprop = fourfold

    class Act(Registry):
        def construct(self, x: Tensor) -> Any:
            return ops.sin(x)

    assert Act.bprop is fourfold  # type: ignore[attr-defined]
    np.testing.assert_allclose(_gx(Act()), 4 * np.cos(X), rtol=1e-6)


def test_lambda_bprop_runs_in_every_mode(mode: str) -> None:
    class Lam(KwCell):
        def construct(self, x: Tensor) -> Any:
            return ops.sin(x)

        bprop = lambda self, x, out, dout: (6 * dout,)  # noqa: E731

    np.testing.assert_allclose(_gx(Lam()), np.full(2, 6.0), rtol=1e-6)


def test_forward_hooks_are_ignored_on_a_bprop_cell_as_on_nn_cell(mode: str) -> None:
    net = Sin()
    net.register_forward_hook(lambda cell, inputs, out: out * 10)
    np.testing.assert_allclose(net(Tensor(X)).asnumpy(), np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(_gx(net), np.cos(X), rtol=1e-6)


def test_reading_construct_back_after_assigning_a_jit_of_it() -> None:
    import mindspore as ms

    net = Sin()
    jitted = ms.jit(net.construct)
    net.construct = jitted  # type: ignore[method-assign]
    assert net.construct is jitted
    np.testing.assert_allclose(_gx(net), np.cos(X), rtol=1e-6)


class _RewriteNet(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.act = Sin()

    def construct(self, x: Tensor) -> Any:
        return self.act(x, w=3.0)


def test_mindspore_rewrite_rebuilds_a_network_holding_a_kwcell(tmp_path: Any, monkeypatch: Any) -> None:
    """``mindspore.rewrite`` re-creates a network's classes from source; it stops at KwCell as at
    nn.Cell (it copied kwcell's own source, relative imports and all), and the rebuilt network
    gives the same values and gradients."""
    from mindspore.rewrite import SymbolTree  # type: ignore[import-untyped]

    monkeypatch.chdir(tmp_path)  # the rewrite writes its module under the working directory
    net = _RewriteNet()
    rebuilt = SymbolTree.create(net).get_network()
    assert isinstance(rebuilt.act, KwCell)
    np.testing.assert_allclose(rebuilt(Tensor(X)).asnumpy(), 3.0 * np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(_gx(rebuilt.act), np.cos(X), rtol=1e-6)


def test_parent_construct_assigned_under_a_child_with_its_own_bprop(mode: str) -> None:
    class Parent(KwCell):
        def construct(self, x: Tensor) -> Any:
            return ops.sin(x)

    class Child(Parent):
        def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (out * dout,)  # the forward's output: shows which forward ran

    def doubled(self: Any, x: Tensor) -> Any:
        return 2 * ops.sin(x)

    Parent.construct = doubled  # type: ignore[method-assign]
    np.testing.assert_allclose(_gx(Child()), 2 * np.sin(X), rtol=1e-6)


def test_a_bprop_with_assert_in_a_pytest_module_compiles_in_graphs(mode: str) -> None:
    """pytest rewrites this module's asserts (its bytecode then differs from its source)."""

    class Checked(KwCell):
        def construct(self, x: Tensor, w: float = 1.0) -> Any:
            return w * ops.sin(x)

        def bprop(self, x: Tensor, w: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
            assert w > 0, "w must be positive"
            return {"x": w * ops.cos(x) * dout}

    np.testing.assert_allclose(_gx(Checked()), np.cos(X), rtol=1e-6)


def _logged(fn: Any) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


def test_a_functools_wraps_decorator_on_a_positional_bprop(mode: str) -> None:
    """As on nn.Cell: PYNATIVE calls the decorated bprop, graphs parse the wrapped one."""

    class Decorated(KwCell):
        def construct(self, x: Tensor) -> Any:
            return ops.sin(x)

        @_logged
        def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (3 * ops.cos(x) * dout,)

    np.testing.assert_allclose(_gx(Decorated()), 3 * np.cos(X), rtol=1e-6)


def test_super_bprop_from_a_helper_and_in_two_argument_form(mode: str) -> None:
    class Child(Sin):
        def bprop(self, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
            gx, gw = super().bprop(x, w, out, dout)
            return 2 * gx, gw

        def parent_gradient(self, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
            return super().bprop(x, w, out, dout)

    np.testing.assert_allclose(_gx(Child()), 2 * np.cos(X), rtol=1e-6)
    gx, _ = Child().parent_gradient(Tensor(X), 1.0, Tensor(X), Tensor(np.ones(2, np.float32)))
    np.testing.assert_allclose(gx.asnumpy(), np.cos(X), rtol=1e-6)


def test_bprop_assigned_twice_to_a_class_defined_without_one() -> None:
    class Late(KwCell):
        def construct(self, x: Tensor) -> Any:
            return ops.sin(x)

    def twice(self: Any, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (2 * dout,)

    def thrice(self: Any, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (3 * dout,)

    Late.bprop = twice
    net = Late()
    np.testing.assert_allclose(_gx(net), np.full(2, 2.0), rtol=1e-6)
    Late.bprop = thrice
    np.testing.assert_allclose(_gx(net), np.full(2, 3.0), rtol=1e-6)
    np.testing.assert_allclose(_gx(Late()), np.full(2, 3.0), rtol=1e-6)


def test_a_cell_whose_state_was_copied_from_one_that_ran_runs_as_itself(mode: str) -> None:
    # A clone made by copying a cell's __dict__ (how code that rebuilds networks copies state)
    # holds the original's record of what it ran last: the clone must not take the original's
    # core from it.
    class Scaled(Sin):
        def __init__(self, s: float) -> None:
            super().__init__()
            self.s = s

        def construct(self, x: Tensor, w: float = 1.0) -> Any:
            return self.s * w * ops.sin(x)

        def bprop(self, x: Tensor, w: float, out: Tensor, dout: Tensor) -> Any:
            return self.s * w * ops.cos(x) * dout, 0

    original = Scaled(2.0)
    np.testing.assert_allclose(_gx(original), 2 * np.cos(X), rtol=1e-6)
    clone = Scaled(5.0)
    clone.__dict__.update(original.__dict__)  # s = 2.0 too
    clone.s = 3.0
    np.testing.assert_allclose(_gx(clone), 3 * np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(_gx(original), 2 * np.cos(X), rtol=1e-6)


def _make_act() -> type:
    class Act(KwCell):  # a library's layer...
        def construct(self, x: Tensor, w: float = 1.0) -> Any:
            return w * ops.sin(x)

        def bprop(self, x: Tensor, w: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
            return {"x": w * ops.cos(x) * dout}

    return Act


_LibraryAct = _make_act()


class Act(_LibraryAct):  # type: ignore[valid-type,misc]  # ...subclassed under the same name
    def bprop(self, x: Tensor, w: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        g = super().bprop(x, w, out=out, dout=dout)  # kwcell's form: out and dout by keyword
        return {"x": 3 * g["x"]}  # the parent's dict, as it returned it


class Doubled(Act):
    def bprop(self, x: Tensor, w: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": 2 * super().bprop(x, w=w, out=out, dout=dout)["x"]}


class BareParent(KwCell):
    def construct(self, x: Tensor, w: float = 1.0) -> Any:
        return w * ops.sin(x)

    def bprop(self, x: Tensor, w: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * dout  # a bare Tensor: the first input's gradient


class BareChild(BareParent):
    def bprop(self, x: Tensor, w: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        return 5 * super().bprop(x, w, out=out, dout=dout)


@pytest.mark.parametrize("how", ["pynative", "graph", "jit"])
def test_super_bprop_returns_what_the_parent_returns(how: str) -> None:
    # A graph's super().bprop(...) takes the parent's arguments as Python binds them and gives
    # back what the parent's bprop returns (a dict here, a bare Tensor below), as in PYNATIVE;
    # a parent and a child of the same name (a library's Act subclassed as Act) each go on
    # after themselves (graphs recursed for ever).
    assert Act.__name__ == _LibraryAct.__name__
    np.testing.assert_allclose(_gx_in(how, Act()), 3 * np.cos(X), rtol=1e-5)
    np.testing.assert_allclose(_gx_in(how, Doubled()), 6 * np.cos(X), rtol=1e-5)
    np.testing.assert_allclose(_gx_in(how, BareChild()), 5 * np.cos(X), rtol=1e-5)
