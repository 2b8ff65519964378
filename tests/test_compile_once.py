"""``compile_once=True``: one graph for the instances of a class whose graphs would be identical.

The oracle is the same network compiled per instance (each class's ``compile_once=False``
twin, tests/compile_once_cells.py): gradients and trained weights must agree, whatever the
instances' arguments, attributes changed after ``__init__`` or between compiles, Parameters,
and call styles. The keys are checked too, so that a test passes only when reuse happens
where it should and not where it must not.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mindspore import Tensor, nn

import kwcell
from kwcell import KwCell, KwCellDefinitionError, _reuse
from kwcell._info import info_of
from tests import compile_once_cells as C
from tests import test_zoo as zoo

X = np.linspace(-1.0, 1.0, 2 * C.WIDTH, dtype=np.float32).reshape(2, C.WIDTH)


@pytest.fixture
def graph() -> Iterator[None]:
    ms.set_context(mode=ms.GRAPH_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def _key(cell: nn.Cell) -> str | None:
    """The key MindSpore reads when it compiles ``cell`` in GRAPH_MODE (where it applies): on
    the shared cell its dispatcher calls (a cell with a bprop), or on the cell itself."""
    mode = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        carrier: Any = cell
        if isinstance(cell, KwCell) and cell._kwcell_plan() is not None:
            carrier = cell._kwcell_core
        return carrier.cell_init_args if hasattr(carrier, "cell_init_args") else None
    finally:
        ms.set_context(mode=mode)


def _grads(net: nn.Cell) -> tuple[float, list[Any]]:
    value, grads = kwcell.value_and_grad(net, None, net.trainable_params())(Tensor(X))
    return float(value.asnumpy()), [g.asnumpy() for g in grads]


def _twin(cell: Any) -> Any:
    """The same cell, state and all, as an instance of its compile_once=False twin."""
    off = copy.deepcopy(cell)
    off.__class__ = C.OFF[type(cell)]
    for name, sub in cell.name_cells().items():
        if type(sub) in C.OFF:
            setattr(off, name, _twin(sub))
    return off


def _assert_same(ours: tuple[float, list[Any]], theirs: tuple[float, list[Any]]) -> None:
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    assert len(ours[1]) == len(theirs[1])
    for a, b in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _stack(cells: Sequence[nn.Cell], calls: list[str]) -> tuple[Any, Any]:
    """The network, and the same network of twins compiled per instance."""
    return C.Stack(cells, calls), C.Stack([_twin(c) for c in cells], calls)


# ---------------------------------------------------------------- keys


def test_instances_with_equal_state_share_a_key_and_different_state_does_not() -> None:
    a, b, c = C.Act(2.0, gain=1.0), C.Act(2.0, gain=3.0), C.Act(1.0)
    assert _key(a) == _key(b)  # Parameter values are graph inputs: their own in each instance
    assert _key(a) != _key(c)
    assert _key(a).startswith("lazy_inline_")  # type: ignore[union-attr]
    b.s = 1.0  # changed after __init__
    assert _key(b) == _key(c)
    assert _key(C.Act(True)) != _key(C.Act(1)) != _key(C.Act(1.0))


def test_keys_do_not_depend_on_attribute_order_and_see_attributes_added_later() -> None:
    # _compute keeps per class what it does with each set of attribute names: not stale.
    a, b = C.Act(2.0), C.Act(2.0)
    assert _key(a) == _key(b)
    reordered = dict(reversed(list(b.__dict__.items())))
    b.__dict__.clear()
    b.__dict__.update(reordered)
    assert list(a.__dict__) != list(b.__dict__)
    assert _key(a) == _key(b)
    b.s = 3.0
    assert _key(a) != _key(b)
    del b.s
    assert _key(a) != _key(b)  # construct reads the class's s now (none: compiled on its own)
    b.s = 2.0
    assert _key(a) == _key(b)


def test_a_parameter_a_bprop_reads_is_keyed_by_identity() -> None:
    # MindSpore does not make a bprop's Parameters inputs of a reused graph.
    assert _key(C.GainAct(2.0)) != _key(C.GainAct(2.0))


def test_a_parameter_of_another_shape_is_another_key() -> None:
    a, b = C.Act(), C.Act()
    b.gain = ms.Parameter(Tensor(np.ones((2, C.WIDTH), np.float32)), name="gain2", requires_grad=False)
    assert _key(a) != _key(b)


def test_a_method_and_a_property_are_followed_into_their_source() -> None:
    a, b = C.Helped(1.0), C.Helped(1.0)
    assert _key(a) == _key(b)
    b.offset = 2.0  # read by shift(), which construct calls
    assert _key(a) != _key(b)
    b.offset, b.s = 0.5, 3.0  # s is read by the property scale
    assert _key(a) != _key(b)


def test_sub_cells_of_other_types_or_states_are_other_keys() -> None:
    a, b, c = C.Block(2.0), C.Block(2.0), C.Block(2.0, act=C.GainAct)
    assert _key(a) == _key(b)
    assert _key(a) != _key(c)
    b.act.s = 5.0
    assert _key(a) != _key(b)
    # A sub-cell whose bprop reads a Parameter: never shared (MindSpore would keep the first's).
    assert _key(C.Block(2.0, act=C.GainAct)) != _key(C.Block(2.0, act=C.GainAct))
    assert _key(C.Block(2.0, act=C.Act)) == _key(C.Block(2.0, act=C.Act))


def test_unknown_attribute_values_and_replaced_constructs_compile_per_instance() -> None:
    cell = C.Unkeyable()
    assert not hasattr(cell, "cell_init_args")
    assert "Unkeyable.config is a value of type" in kwcell.explain(cell)
    act = C.Act()
    act.construct = _doubled  # type: ignore[method-assign]  # an instance-level forward
    assert not hasattr(act, "cell_init_args")


def test_dynamic_reads_key_on_the_whole_instance() -> None:
    a, b = C.Dynamic(1.0), C.Dynamic(1.0)
    assert _key(a) == _key(b)
    b.name = "t"  # not read by construct's source, but the source reads self dynamically
    assert _key(a) != _key(b)
    assert "whole state of the instance" in kwcell.explain(C.Dynamic)


def test_mindspore_flags_are_part_of_the_key() -> None:
    a, b = C.Act(), C.Act()
    b.set_train(True)
    assert _key(a) != _key(b)
    c = C.Act()
    c.register_forward_hook(lambda cell, args, out: None)
    assert _key(a) == _key(c)  # ignored on a cell with a bprop, as on nn.Cell: the same graph
    d = C.Act()
    d.to_float(ms.float16)  # mixed precision
    assert _key(a) != _key(d)
    e = C.Act()
    e.recompute()
    assert _key(a) != _key(e)


def _doubled(x: Any, alpha: Any = 1.0) -> Any:
    return 2 * x


# ---------------------------------------------------------------- the class keyword


def test_the_keyword_is_inherited_and_can_be_turned_off() -> None:
    class Sub(C.Act):
        pass

    assert _key(Sub()) is not None
    assert not hasattr(C.ActOff(), "cell_init_args")
    assert not hasattr(C.ActOff(), "no_inline")
    assert getattr(C.Act(), "no_inline") is False  # noqa: B009  # MindSpore inlines the reused graph (runs on CPU)


def test_a_bad_keyword_value_is_an_error_naming_the_class() -> None:
    with pytest.raises(KwCellDefinitionError, match=r"Bad: compile_once must be True or False, got 'yes'"):

        class Bad(KwCell, compile_once="yes"):
            def construct(self, x):  # type: ignore[no-untyped-def]
                return x


def test_a_decorated_class_is_told_to_use_the_decorator_argument() -> None:
    # A decorated class keeps its own bases and metaclass: its class statement does not take
    # KwCell's class keyword, so the hints name the decorator's argument.
    hint = r"got 'yes'; write @keyword_bprop\(compile_once=True\) on class Bad"
    with pytest.raises(KwCellDefinitionError, match=rf"Bad: compile_once must be True or False, {hint}"):

        @kwcell.keyword_bprop(compile_once="yes")  # type: ignore[call-overload]
        class Bad(nn.Cell):
            def construct(self, x):  # type: ignore[no-untyped-def]
                return x

    @kwcell.keyword_bprop
    class Plain(nn.Cell):
        def construct(self, x, scale=2.0):  # type: ignore[no-untyped-def]
            return x * scale

        def bprop(self, x, scale, out, dout):  # type: ignore[no-untyped-def]
            return (dout * scale, 0)

    assert "to share one: @keyword_bprop(compile_once=True) on class Plain)" in kwcell.explain(Plain)
    assert "to share one: class ActOff(KwCell, compile_once=True))" in kwcell.explain(C.ActOff)


def test_explain_says_whether_a_class_reuses_and_on_what_key() -> None:
    text = kwcell.explain(C.Act)
    assert "compile once: on" in text
    assert "construct reads gain, s" in text
    assert "bprop reads s" in text
    assert "this instance: key lazy_inline_" in kwcell.explain(C.Act())
    assert "compile once: off" in kwcell.explain(C.ActOff)
    assert "compile once: on (inherited from Act)" in kwcell.explain(type("Sub", (C.Act,), {}))


# ---------------------------------------------------------------- gradients, GRAPH_MODE


@pytest.mark.usefixtures("graph")
def test_gradients_match_per_instance_compiles() -> None:
    cells: list[Any] = [C.Act(2.0, 1.0), C.Act(2.0, 0.5), C.Act(1.0, 2.0), C.GainAct(1.5, 0.5)]
    cells += [C.GainAct(1.5, 2.0), C.Helped(0.5), C.Helped(0.5)]
    calls = ["tensor", "positional", "tensor", "keyword", "tensor_positional", "positional", "tensor"]
    cells[1].s = 3.0  # after __init__: the lazy_inline case (silently the first's graph)
    ours, theirs = _stack(cells, calls)
    assert _key(cells[0]) != _key(cells[1])
    _assert_same(_grads(ours), _grads(theirs))


@pytest.mark.usefixtures("graph")
def test_an_attribute_changed_between_compiles_is_seen_by_the_next_compile() -> None:
    cells: list[Any] = [C.Act(2.0), C.Act(2.0)]
    net, twin = _stack(cells, ["tensor", "tensor"])
    _assert_same(_grads(net), _grads(twin))
    cells[0].s = 5.0
    twin.layers[0].s = 5.0
    _assert_same(_grads(net), _grads(twin))  # a new value_and_grad: a new compile


@pytest.mark.usefixtures("graph")
def test_parameters_keep_their_own_values_and_train() -> None:
    """Blocks share one graph; each trains its own Dense weights (through Act's bprop)."""
    blocks = [C.Block(1.0, 1.0, seed=i) for i in range(3)]
    assert _key(blocks[0]) == _key(blocks[1]) == _key(blocks[2])
    net, twin = _stack(blocks, ["plain"] * 3)
    for model in (net, twin):
        opt = nn.SGD(model.trainable_params(), learning_rate=0.1)
        step = kwcell.value_and_grad(model, None, opt.parameters)
        for _ in range(2):
            _, grads = step(Tensor(X))
            opt(grads)
    for ours, theirs in zip(net.trainable_params(), twin.trainable_params(), strict=True):
        np.testing.assert_allclose(ours.asnumpy(), theirs.asnumpy(), rtol=1e-5, atol=1e-6)
    assert not np.allclose(net.layers[0].dense.weight.asnumpy(), net.layers[1].dense.weight.asnumpy())


@pytest.mark.usefixtures("graph")
def test_pynative_jit_functions_compile_each_instance_on_its_own() -> None:
    """Under PYNATIVE, each @ms.jit function is compiled on its own, and a graph shared in an
    earlier one was served with stale results (measured): there is no key there."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    cell = C.Act(2.0, 1.0)
    assert not hasattr(cell, "cell_init_args")
    assert _key(cell) is not None


def test_in_a_jit_step_under_pynative() -> None:
    """A PYNATIVE training step under @ms.jit takes its gradient inside the step: the
    compile-once class gives its twins' gradients (each instance compiled on its own there)."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    a, b, c = C.Act(2.0, 1.0), C.Act(2.0, 3.0), C.Act(0.5)
    ta, tb, tc = _twin(a), _twin(b), _twin(c)

    def step(f: nn.Cell, g: nn.Cell, h: nn.Cell) -> Callable[[Any], Any]:
        cells = nn.CellList([f, g, h])  # distinct Parameter names

        def loss(x: Any) -> Any:
            return (cells[2](cells[1](cells[0](x, alpha=0.5), 0.25)) ** 2).sum()

        grad = kwcell.grad(loss)

        @ms.jit
        def fn(x: Any) -> Any:
            return grad(x)

        return fn

    ours_fn, theirs_fn = step(a, b, c), step(ta, tb, tc)
    ours = ours_fn(Tensor(X)).asnumpy()
    theirs = theirs_fn(Tensor(X)).asnumpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert np.abs(ours).max() > 0


def test_pynative_is_unchanged() -> None:
    a = C.Act(2.0, 3.0)
    x = Tensor(X)
    g = kwcell.grad(a)(x, alpha=0.5).asnumpy()
    t = np.tanh(0.5 * 2.0 * X)
    # sum of the output's sensitivities (ones) through the straight-through bprop
    np.testing.assert_allclose(g, 0.5 * 2.0 * (1 - t * t), rtol=1e-5, atol=1e-6)


class _Twice(nn.Cell):
    """One instance called with its default given and omitted, in one graph."""

    def __init__(self, act: nn.Cell) -> None:
        super().__init__()
        self.act = act

    def construct(self, x):  # type: ignore[no-untyped-def]
        return (self.act(x, alpha=0.5) + self.act(x)).sum()


@pytest.mark.usefixtures("graph")
def test_a_cell_called_with_and_without_a_default_in_one_graph() -> None:
    """MindSpore's reuse cannot compile a reused cell called once with a default given and
    once without it (nn.Cell with a lazy_inline_ key fails: 'Fail to get eval result'). The
    shared cell is reached positionally with every argument: right, as per instance."""
    act = C.Act(2.0, 1.5)
    _assert_same(_grads(_Twice(act)), _grads(_Twice(_twin(act))))
    # Instances that share a graph, called by keyword, by position and with the default omitted.
    cells = [C.Act(), C.Act(gain=2.0), C.Act(gain=0.5)]
    assert _key(cells[0]) == _key(cells[1]) == _key(cells[2]) is not None
    _assert_same(*(_grads(net) for net in _stack(cells, ["keyword", "positional", "plain"])))
    _assert_same(*(_grads(net) for net in _stack(cells, ["tensor", "tensor_positional", "plain"])))


@pytest.mark.usefixtures("graph")
def test_shared_instances_called_with_other_values_by_keyword_and_position() -> None:
    """Shared instances called with other Python values at two call sites (by position and by
    keyword) give the per-instance gradient. MindSpore's reuse specialises a shared graph on
    one call site's Python values and serves them to every call site (measured: 7 runs in 8
    with alpha=0.5 and alpha=0.25, by PYTHONHASHSEED), so a call with a Python value goes to the
    instance's own core (_templates.ROUTE)."""
    cells = [C.Act(2.0, 1.0), C.Act(2.0, 3.0)]
    assert _key(cells[0]) == _key(cells[1]) is not None
    ours, theirs = C.TwoValues(cells), C.TwoValues([_twin(c) for c in cells])
    _assert_same(_grads(ours), _grads(theirs))


@pytest.mark.usefixtures("graph")
def test_one_instance_called_with_other_python_values_at_three_sites() -> None:
    act = C.Act(2.0, 1.5)
    _assert_same(_grads(C.TwoSites(act)), _grads(C.TwoSites(_twin(act))))


@pytest.mark.usefixtures("graph")
def test_shared_instances_called_with_other_tensor_values() -> None:
    """Tensor inputs are inputs of the shared graph: other values at two call sites are right."""
    cells = [C.Act(2.0, 1.0), C.Act(2.0, 3.0)]
    _assert_same(_grads(C.TwoTensors(cells)), _grads(C.TwoTensors([_twin(c) for c in cells])))


@pytest.mark.usefixtures("graph")
def test_one_instance_called_with_a_tensor_and_with_python_values() -> None:
    cells = [C.Act(2.0, 1.0), C.Act(2.0, 3.0)]
    _assert_same(_grads(C.Mixed(cells)), _grads(C.Mixed([_twin(c) for c in cells])))


def test_only_all_tensor_calls_reach_the_shared_graph() -> None:
    """The dispatcher of a compile_once class sends a call with any Python value to the
    instance's own core; a class without compile_once has no such branch."""
    once = info_of(C.Act)
    off = info_of(C.ActOff)
    assert once is not None and once.routes
    assert off is not None and not off.routes
    source = kwcell.explain(C.Act)
    assert "isinstance(x, _kwcell_Tensor) and isinstance(alpha, _kwcell_Tensor)" in source
    assert "_kwcell_own_core" not in kwcell.explain(C.ActOff)


@pytest.mark.usefixtures("graph")
def test_instances_without_parameters_never_share_and_are_right() -> None:
    """Parameter-free instances sharing a graph gave another gradient than per-instance
    compiles when called with other values (in some runs, not others: measured), and when
    called by keyword, by position and with a default omitted: they compile per instance."""
    cells = [C.Plain(2.0), C.Plain(2.0), C.Plain(2.0)]
    assert _key(cells[0]) is None
    assert "it has no Parameters" in kwcell.explain(cells[0])
    _assert_same(*(_grads(net) for net in _stack(cells, ["keyword", "positional", "plain"])))
    pair = [C.Plain(2.0), C.Plain(2.0)]
    _assert_same(_grads(C.TwoValues(pair)), _grads(C.TwoValues([_twin(c) for c in pair])))


@pytest.mark.usefixtures("graph")
def test_a_compile_once_cell_inside_another_gets_no_key_of_its_own() -> None:
    """MindSpore crashes when one shared graph serves an instance inside another shared graph
    and one outside it; the inner one is parsed once with its parent's graph anyway."""
    act, block = C.Act(), C.Block()
    assert _key(block) is not None
    assert _key(block.act) is None
    assert "inside another compile-once cell" in kwcell.explain(block.act)
    _assert_same(*(_grads(net) for net in _stack([act, block], ["keyword", "plain"])))


# ---------------------------------------------------------------- the property test

_CLASSES = (C.Act, C.GainAct, C.Helped, C.Block)
_VALUES = (0.5, 1.0, 2.0)


@st.composite
def _networks(draw: st.DrawFn) -> tuple[list[Any], list[str], list[tuple[int, float]]]:
    n = draw(st.integers(2, 4))
    # Calls by keyword, by position, with alpha omitted and with a Tensor alpha mix freely (the
    # shared cell is reached positionally with every argument; only all-Tensor calls reach it).
    cells: list[Any] = []
    calls: list[str] = []
    for _ in range(n):
        cls = draw(st.sampled_from(_CLASSES))
        s = draw(st.sampled_from(_VALUES))
        if cls is C.Block:
            act = draw(st.sampled_from((C.Act, C.GainAct)))
            cells.append(C.Block(s, draw(st.sampled_from(_VALUES)), act))
        elif cls is C.Helped:
            cells.append(C.Helped(s))
        else:
            cells.append(cls(s, draw(st.sampled_from(_VALUES))))
        if cls is C.Block:
            calls.append("plain")
        else:
            kinds = ("keyword", "positional", "plain", "tensor", "tensor_positional")
            calls.append(draw(st.sampled_from(kinds)))
        if draw(st.booleans()):  # mutated after __init__, before the first compile
            _mutate(cells[-1], draw(st.sampled_from(_VALUES)))
    between = draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(_VALUES)), max_size=2))
    return cells, calls, between


def _mutate(cell: Any, value: float) -> None:
    target: Any = cell.act if isinstance(cell, C.Block) else cell
    target.s = value


def _check(network: tuple[list[Any], list[str], list[tuple[int, float]]]) -> None:
    cells, calls, between = network
    ours, theirs = _stack(cells, calls)
    _assert_same(_grads(ours), _grads(theirs))
    if between:  # mutated between two compiles
        for i, value in between:
            _mutate(ours.layers[i], value)
            _mutate(theirs.layers[i], value)
        _assert_same(_grads(ours), _grads(theirs))


_PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


@pytest.mark.usefixtures("graph")
@settings(_PROPERTY, max_examples=2)
@given(_networks())
def test_random_networks_match_per_instance_compiles(
    network: tuple[list[Any], list[str], list[tuple[int, float]]],
) -> None:
    _check(network)


@pytest.mark.slow
@pytest.mark.usefixtures("graph")
@settings(_PROPERTY, max_examples=40, derandomize=False)
@given(_networks())
def test_random_networks_match_per_instance_compiles_many(
    network: tuple[list[Any], list[str], list[tuple[int, float]]],
) -> None:
    _check(network)


# ---------------------------------------------------------------- the zoo, with compile_once on

_RESTORE = (_reuse.FLAG, "cell_init_args", "no_inline", "_kwcell_core")


@contextlib.contextmanager
def _compile_once_on(net: nn.Cell) -> Iterator[list[type]]:
    """Every KwCell class in ``net`` made compile-once, for the duration."""
    classes = list(dict.fromkeys(type(c) for _, c in net.cells_and_names() if isinstance(c, KwCell)))
    saved = [{n: cls.__dict__[n] for n in _RESTORE if n in cls.__dict__} for cls in classes]
    try:
        for cls in classes:
            _reuse.configure(cls, True)
        yield classes
    finally:
        for cls, old in zip(classes, saved, strict=True):
            for name in _RESTORE:
                if name in old:
                    type.__setattr__(cls, name, old[name])
                elif name in cls.__dict__:
                    type.__delattr__(cls, name)


@pytest.mark.parametrize("name", sorted(zoo.CASES))
def test_zoo_cells_with_compile_once(name: str) -> None:
    """The real-world cell shapes of tests/test_zoo.py, compile-once, in GRAPH_MODE: the bprop's
    own gradient, or the same failure as without compile_once."""
    ms.set_context(mode=ms.GRAPH_MODE)
    case = zoo.CASES[name]
    net = case.kw  # compile_once is switched off again when the test ends
    args, sens = case.inputs(), case.sens()
    expected = case.expected(*(a.asnumpy() for a in args), zoo._np(sens))
    with _compile_once_on(net) as classes:
        assert classes, "no KwCell in the case"
        if "graph" in case.kw_fails:
            with pytest.raises(
                (RuntimeError, TypeError, ValueError, IndexError), match=case.kw_fails["graph"]
            ):
                zoo._grads(net, "graph", args, sens)
            return
        zoo._assert_same(zoo._grads(net, "graph", args, sens), expected)


# ---------------------------------------------------------------- values the key cannot see


@pytest.mark.usefixtures("graph")
@pytest.mark.parametrize("cls", [C.Computed, C.Described, C.Forwarded, C.Holder])
def test_computed_reads_compile_per_instance(cls: Any) -> None:
    """A value computed when it is read (cached_property, a descriptor, __getattr__, on the
    class or on a sub-cell's class) is not in the instance's state: scales 2.0 and 5.0 must
    not share one graph (forward 4*sin(x) instead of 10*sin(x))."""
    cells = [cls(2.0), cls(5.0)]
    assert _key(cells[0]) is None
    assert "compiles on its own" in kwcell.explain(cells[0])
    _assert_same(*(_grads(net) for net in _stack(cells, ["plain", "plain"])))


@pytest.mark.usefixtures("graph")
def test_a_property_is_read_through_and_a_class_attribute_changed_later_is_seen() -> None:
    a, b = C.Helped(2.0), C.Helped(5.0)  # scale is a property of s
    assert _key(a) != _key(b)
    _assert_same(*(_grads(net) for net in _stack([a, b], ["keyword", "keyword"])))
    c, d = C.Act(2.0), C.Act(2.0)
    d.s = 5.0  # set after __init__
    assert _key(c) != _key(d)
    net, twin = _stack([c, d], ["plain", "plain"])
    _assert_same(_grads(net), _grads(twin))
