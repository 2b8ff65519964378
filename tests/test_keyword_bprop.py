"""``@kwcell.keyword_bprop``: KwCell's behaviour for hierarchies that keep their own base and
metaclass (a library base with a metaclass of its own, mixins the library controls)."""

from __future__ import annotations

import pickle
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn, ops

import kwcell
from kwcell import KwCellDefinitionError

X = np.array([0.3, 1.1], np.float32)
W = 2.5


class Registry(type):
    """A library's own metaclass (it conflicts with KwCellMeta)."""

    classes: list[str] = []  # noqa: RUF012 - the registry itself

    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any], **kw: Any) -> Any:
        cls = super().__new__(mcls, name, bases, ns, **kw)
        mcls.classes.append(name)
        return cls


class LoggingMixin:
    def describe(self) -> str:
        return type(self).__name__


class CellMeta(Registry, type(nn.Cell)):  # type: ignore[misc]
    pass


@kwcell.keyword_bprop
class LibraryBase(nn.Cell, LoggingMixin, metaclass=CellMeta):
    """A library's base class: kwcell cannot become its base."""

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        self.scale = scale


class Scaled(LibraryBase):
    def construct(self, x: Tensor, w: Any = 1.0, y: float = 0.0) -> Any:
        return self.scale * w * ops.sin(x) + y

    def bprop(self, x: Tensor, w: Any = 1.0, y: float = 0.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": self.scale * w * ops.cos(x) * dout}


class Outer(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Scaled(3.0)

    def construct(self, x: Tensor) -> Any:
        return self.inner(w=W, x=x)  # keywords in another order, y omitted


def test_the_base_and_metaclass_are_kept() -> None:
    assert type(Scaled) is CellMeta and "Scaled" in Registry.classes
    assert Scaled.__mro__[1:] == LibraryBase.__mro__
    assert Scaled(1.0).describe() == "Scaled"


def test_keyword_calls_reach_bprop_by_name(mode: str) -> None:
    g = kwcell.grad(Outer())(Tensor(X))
    np.testing.assert_allclose(g.asnumpy(), 3.0 * W * np.cos(X), rtol=1e-6)
    gx, gw = kwcell.grad(Scaled(2.0), grad_position=("x", "w"))(Tensor(X), w=Tensor(np.float32(W)))
    np.testing.assert_allclose(gx.asnumpy(), 2.0 * W * np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), 0.0)


def test_mindspore_sees_no_bprop_on_the_visible_cell() -> None:
    net = Scaled()
    assert getattr(net, "has_bprop") is False  # noqa: B009 - MindSpore's flag
    assert Scaled.bprop.__qualname__ == "Scaled.bprop"


def test_subclass_mistakes_fail_at_the_class_statement() -> None:
    with pytest.raises(
        KwCellDefinitionError, match=r"Bad\.bprop: parameter 'z' is not a parameter of construct"
    ):

        class Bad(LibraryBase):
            def construct(self, x: Tensor) -> Any:
                return x

            def bprop(self, x: Tensor, z: Tensor, *, out: Tensor, dout: Tensor) -> Any:
                return dout


def test_bprop_assigned_to_a_subclass_later_is_used(mode: str) -> None:
    class Later(LibraryBase):
        def construct(self, x: Tensor) -> Any:
            return ops.sin(x)

        def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (dout,)

    def fivefold(self: Any, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (5 * ops.cos(x) * dout,)

    Later.bprop = fivefold  # type: ignore[method-assign]  # a plain class attribute: no metaclass hook
    net = Later()
    np.testing.assert_allclose(kwcell.grad(net)(Tensor(X)).asnumpy(), 5 * np.cos(X), rtol=1e-6)


@kwcell.keyword_bprop
class Patched(nn.Cell):
    def construct(self, x: Tensor) -> Any:
        return ops.sin(x)

    def bprop(self, x: Tensor, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": 2 * ops.cos(x) * dout}


class PatchedTwin(nn.Cell):
    def construct(self, x: Tensor) -> Any:
        return ops.sin(x)

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (2 * ops.cos(x) * dout,)


class Holder(nn.Cell):
    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, x: Tensor) -> Any:
        return self.inner(x)


def _grad_through(net: nn.Cell, how: str) -> Any:
    """The gradient of ``net`` inside an outer cell (whose graph holds net's), in ``how``."""
    ms.set_context(mode=ms.GRAPH_MODE if how == "graph" else ms.PYNATIVE_MODE)
    grad_fn = ms.grad(Holder(net))
    if how != "jit":
        return grad_fn(Tensor(X)).asnumpy()

    @ms.jit
    def step(x: Tensor) -> Any:
        return grad_fn(x)

    return step(Tensor(X)).asnumpy()


@pytest.mark.parametrize("how", ["pynative", "graph", "jit"])
def test_class_assignments_reach_existing_instances_as_on_nn_cell(how: str) -> None:
    """``Patched.construct = f``, ``Patched.bprop = g`` and ``del Patched.bprop`` on a decorated
    class reach instances made before (construct reached only later ones), as on nn.Cell."""
    saved = {name: Patched.__dict__[name] for name in ("construct", "bprop")}
    twin_saved = {name: PatchedTwin.__dict__[name] for name in ("construct", "bprop")}

    def tripled(self: Any, x: Tensor) -> Any:
        return 3 * ops.sin(x)

    def fivefold(self: Any, x: Tensor, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": 5 * ops.cos(x) * dout}

    def twin_fivefold(self: Any, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (5 * ops.cos(x) * dout,)

    net, twin = Patched(), PatchedTwin()
    try:
        np.testing.assert_allclose(_grad_through(net, how), 2 * np.cos(X), rtol=1e-6)
        for cls in (Patched, PatchedTwin):
            cls.construct = tripled  # type: ignore[method-assign]  # the bprop still decides
        for cell in (net, twin):
            np.testing.assert_allclose(_grad_through(cell, how), 2 * np.cos(X), rtol=1e-6)
        Patched.bprop = fivefold  # type: ignore[method-assign]
        PatchedTwin.bprop = twin_fivefold  # type: ignore[method-assign]
        for cell in (net, twin):
            np.testing.assert_allclose(_grad_through(cell, how), 5 * np.cos(X), rtol=1e-6)
        del Patched.bprop, PatchedTwin.bprop  # MindSpore's autodiff of the new construct
        np.testing.assert_allclose(_grad_through(net, how), 3 * np.cos(X), rtol=1e-6)
        if how != "pynative":  # nn.Cell's PyNative remembers its bprop: AttributeError there
            np.testing.assert_allclose(_grad_through(twin, how), 3 * np.cos(X), rtol=1e-6)
    finally:
        for cls, state in ((Patched, saved), (PatchedTwin, twin_saved)):
            for name, value in state.items():
                type.__setattr__(cls, name, value)


def test_deleting_a_subclass_bprop_inherits_and_a_bad_one_fails_when_used(mode: str) -> None:
    @kwcell.keyword_bprop
    class Base(nn.Cell):
        def construct(self, x: Tensor) -> Any:
            return ops.sin(x)

        def bprop(self, x: Tensor, *, out: Tensor, dout: Tensor) -> Any:
            return {"x": 2 * ops.cos(x) * dout}

    class Child(Base):
        def bprop(self, x: Tensor, *, out: Tensor, dout: Tensor) -> Any:
            return {"x": 7 * ops.cos(x) * dout}

    def bad(self: Any, x: Tensor, z: Tensor, *, out: Tensor, dout: Tensor) -> Any:
        return dout

    net = Child()
    np.testing.assert_allclose(kwcell.grad(net)(Tensor(X)).asnumpy(), 7 * np.cos(X), rtol=1e-6)
    del Child.bprop  # Base's bprop again, as on nn.Cell
    np.testing.assert_allclose(kwcell.grad(net)(Tensor(X)).asnumpy(), 2 * np.cos(X), rtol=1e-6)
    Child.bprop = bad  # type: ignore[method-assign,assignment]  # no metaclass: checked when used
    with pytest.raises(
        KwCellDefinitionError, match=r"Child\.bprop: parameter 'z' is not a parameter of construct"
    ):
        kwcell.grad(net)(Tensor(X))


def test_instances_pickle() -> None:
    net = pickle.loads(pickle.dumps(Scaled(4.0)))
    g = kwcell.grad(net)(Tensor(X), w=W)
    np.testing.assert_allclose(g.asnumpy(), 4.0 * W * np.cos(X), rtol=1e-6)


def test_only_cells_can_be_decorated() -> None:
    with pytest.raises(
        KwCellDefinitionError, match=r"keyword_bprop: expected a subclass of mindspore\.nn\.Cell"
    ):
        kwcell.keyword_bprop(int)


def test_compile_once_on_the_decorator_is_inherited() -> None:
    @kwcell.keyword_bprop(compile_once=True)
    class Once(nn.Cell):
        def construct(self, x: Tensor) -> Any:
            return ops.sin(x)

        def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (ops.cos(x) * dout,)

    class Child(Once):
        pass

    assert "compile once: on (inherited from " in kwcell.explain(Child)


def test_compile_once_as_a_subclass_keyword_or_on_a_decorated_subclass(mode: str) -> None:
    """The two forms the docs give a subclass of a decorated base (the second is the one
    pyright accepts): compile_once is on, and gradients are the class's own."""

    class Keyword(Scaled, compile_once=True):
        pass

    @kwcell.keyword_bprop(compile_once=True)
    class Decorated(Scaled):
        pass

    for cls in (Keyword, Decorated):
        assert "compile once: on: " in kwcell.explain(cls)
        g = kwcell.grad(cls(2.0))(Tensor(X), w=W)
        np.testing.assert_allclose(g.asnumpy(), 2.0 * W * np.cos(X), rtol=1e-6)


class WeightedLayer(LibraryBase):
    """A library layer whose bprop gives its own weight gradient (``internal_params``)."""

    def __init__(self) -> None:
        super().__init__(2.0)
        self.w = Parameter(Tensor(X + 1.0), name="w")
        self.internal_params = [self.w]

    def construct(self, x: Tensor, shift: float = 0.0) -> Any:
        return self.w * x + shift

    def bprop(self, x: Tensor, shift: float = 0.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": self.w * dout, self.w: self.scale * x * dout}


def test_weight_gradients_from_a_decorated_class(mode: str) -> None:
    net = WeightedLayer()
    gx, (gw,) = kwcell.grad(net, 0, [net.w])(Tensor(X), shift=1.0)
    np.testing.assert_allclose(gx.asnumpy(), X + 1.0, rtol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), 2.0 * X, rtol=1e-6)


# --- subclasses the decorator did not see being created ---------------------------------------


class LateBase(nn.Cell):
    """A library's base, decorated only after its subclasses exist (its source cannot change)."""

    def construct(self, x: Any, w: Any) -> Any:
        return w * ops.sin(x)

    def bprop(self, x: Any, w: Any, out: Any, dout: Any) -> Any:
        return w * ops.cos(x) * dout, ops.sin(x) * dout


class ExistingSub(LateBase):
    def construct(self, x: Any, w: Any) -> Any:
        return w * ops.sin(x) * 2.0

    def bprop(self, x: Any, w: Any, out: Any, dout: Any) -> Any:
        return 2.0 * w * ops.cos(x) * dout, 2.0 * ops.sin(x) * dout


class QuietHook(LateBase):
    def __init_subclass__(cls, **kwargs: Any) -> None:  # does not call super()
        pass


class BelowQuietHook(QuietHook):
    def construct(self, x: Any, w: Any) -> Any:
        return w * ops.sin(x) * 3.0

    def bprop(self, x: Any, w: Any, out: Any, dout: Any) -> Any:
        return 3.0 * w * ops.cos(x) * dout, 3.0 * ops.sin(x) * dout


kwcell.keyword_bprop(LateBase)


class DefinedAfterDecoration(QuietHook):  # below the quiet hook, after the decorator ran
    def construct(self, x: Any, w: Any) -> Any:
        return w * ops.sin(x) * 4.0

    def bprop(self, x: Any, w: Any, out: Any, dout: Any) -> Any:
        return 4.0 * w * ops.cos(x) * dout, 4.0 * ops.sin(x) * dout


class SwappedCall(nn.Cell):
    def __init__(self, cell: nn.Cell) -> None:
        super().__init__()
        self.cell = cell

    def construct(self, x: Any, w: Any) -> Any:
        return self.cell(w=w, x=x).sum()  # keywords in the other order


@pytest.mark.parametrize(
    ("cls", "k"), [(ExistingSub, 2.0), (BelowQuietHook, 3.0), (DefinedAfterDecoration, 4.0)]
)
def test_subclasses_the_decorator_did_not_see_created_bind_by_name(mode: str, cls: type, k: float) -> None:
    x = np.array([0.3, 1.0, -0.6], np.float32)
    w = np.array([2.0, 0.5, 1.5], np.float32)
    gx, gw = ms.grad(SwappedCall(cls()), grad_position=(0, 1))(Tensor(x), Tensor(w))
    np.testing.assert_allclose(gx.asnumpy(), k * w * np.cos(x), rtol=1e-5)
    np.testing.assert_allclose(gw.asnumpy(), k * np.sin(x), rtol=1e-5)
