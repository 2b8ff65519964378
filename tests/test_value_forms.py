"""What a bprop returns is decided by its value, not by how its return statement is written;
and MindSpore's reads of a cell are told from the user's by what MindSpore does with them.

Each case is a shape a reader of source text gets wrong (a dict or a ``None`` held in a
variable, a conditional, a comprehension; MindSpore's wrappers reading ``construct``; a bprop
installed by ``__init_subclass__``...), checked against analytic gradients in PYNATIVE,
GRAPH_MODE and a PyNative ``@ms.jit`` step, and against ``nn.Cell`` where it is right.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, amp, nn, ops

import kwcell
from kwcell import KwCell, KwCellWarning

X = np.array([0.5, 1.0, -0.25], np.float32)
W = np.array([2.0, 3.0, 4.0], np.float32)


def _grad(run: str, fn: Callable[..., Any], *args: Any, **options: Any) -> Any:
    g: Callable[..., Any] = ms.grad(fn, **options)
    if run == "jit":
        g = ms.jit(g)
    return g(*args)


def _np(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_np(v) for v in value]
    return value.asnumpy()


# ---------------------------------------------------------------- weight dicts held in variables


class _Weighted(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.w = Parameter(Tensor(W), name="w")
        self.internal_params = [self.w]

    def construct(self, x: Tensor) -> Any:
        return self.w * x


class DictInAVariable(_Weighted):
    def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
        g = {self.w: x * dout}
        return (self.w * dout,), g


class DictBuiltInSteps(_Weighted):
    def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
        grads = {}
        grads[self.w] = x * dout
        dx = self.w * dout
        return (dx,), grads


with warnings.catch_warnings():
    warnings.simplefilter("ignore", KwCellWarning)  # KW010: tested below

    class DictComprehension(_Weighted):
        def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
            return (self.w * dout,), {p: x * dout for p in self.internal_params}

    class DictInALoop(_Weighted):
        def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
            grads = {}
            for p in self.internal_params:
                grads[p] = x * dout
            return (self.w * dout,), grads


def _assert_weighted_gradients(run: str, net: Any) -> None:
    """dx = w * dout and dw = x * dout, for the cells on ``_Weighted`` (dout = ones)."""
    dx, dw = _grad(run, net, Tensor(X), grad_position=0, weights=net.trainable_params())
    np.testing.assert_allclose(_np(dx), W, rtol=1e-6)
    np.testing.assert_allclose(_np(dw[0]), X, rtol=1e-6)


def test_the_weight_form_with_its_dict_in_a_variable_warns_nothing_at_class_creation() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", KwCellWarning)

        class Quiet(_Weighted):
            def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
                g = {self.w: x * dout}
                grads = {}
                grads[self.w] = x * dout
                return (self.w * dout,), g if self.training else grads

    assert Quiet().internal_params


@pytest.mark.parametrize("cls", [DictInAVariable, DictBuiltInSteps], ids=["variable", "item-assignment"])
def test_the_weight_form_with_its_dict_in_a_variable(run: str, cls: Any) -> None:
    """(input_grads, g) with g = {self.w: ...}, or grads[self.w] = ... into an empty dict:
    dx = w * dout, dw = x * dout in every mode (graphs gave a 1-tuple dx and a zero weight
    gradient; the item assignment was MindSpore's dict_setitem error)."""
    net = cls()
    _assert_weighted_gradients(run, net)


@pytest.mark.parametrize(
    ("cls", "form"),
    [
        (DictComprehension, "a dict comprehension over the Parameters"),
        (DictInALoop, "an item assignment keyed by p, a loop variable over the Parameters"),
    ],
    ids=["comprehension", "loop"],
)
def test_a_weight_dict_keyed_by_computed_parameters_is_right_in_pynative_and_named_in_graphs(
    run: str, cls: Any, form: str
) -> None:
    """A graph cannot key a dict by a Parameter it computes (MindSpore's dicts take constant
    keys only). PYNATIVE is right; a graph raises kwcell's error naming the class, the bprop
    line and the form to write, before MindSpore's compiler (never a zero gradient)."""
    net = cls()
    if run == "pynative":
        _assert_weighted_gradients(run, net)
        return
    with pytest.raises(RuntimeError) as caught:
        _grad(run, net, Tensor(X), grad_position=0, weights=net.trainable_params())
    message = str(caught.value)
    assert message.startswith(
        f"{cls.__qualname__}.bprop keys its weight gradients by Parameters it computes (line "
    )
    assert f": {form}): that works in PYNATIVE only." in message
    assert "{self.w1: g1, self.w2: g2}" in message and "grads[self.w1] = g1" in message


def test_a_weight_dict_keyed_by_computed_parameters_warns_at_class_creation() -> None:
    with pytest.warns(KwCellWarning) as caught:

        class LoHa(_Weighted):
            def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
                grads = (x * dout,)
                return (self.w * dout,), dict(zip(self.internal_params, grads))  # noqa: B905

    lines = Path(__file__).read_text().splitlines()
    line = 1 + next(i for i, text in enumerate(lines) if "dict(zip(self.internal_params, grads))" in text)
    (warning,) = [w for w in caught if "keys its weight gradients" in str(w.message)]
    assert str(warning.message).startswith(
        "test_a_weight_dict_keyed_by_computed_parameters_warns_at_class_creation.<locals>.LoHa.bprop "
        f"keys its weight gradients by Parameters it computes (line {line}: dict(...) of the Parameters)"
    )


# ---------------------------------------------------------------- None and dicts reaching a return


class NoneInAConditional(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.train_y = False

    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x * y

    def bprop(self, x: Tensor, y: Tensor, out: Any, dout: Any) -> Any:
        gy = x * dout if self.train_y else None
        return (y * dout, gy)


class NoneInAVariable(KwCell):
    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x * y

    def bprop(self, x: Tensor, y: Tensor, *, out: Any, dout: Any) -> Any:
        nothing = None
        return {"x": y * dout, "y": nothing}


class NoneFromAHelper(KwCell):
    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x * y

    def grads(self, x: Tensor, dout: Any) -> Any:
        return x * dout, None

    def bprop(self, x: Tensor, y: Tensor, out: Any, dout: Any) -> Any:
        gx, gy = self.grads(y, dout)
        return gx, gy


@pytest.mark.parametrize("cls", [NoneInAConditional, NoneInAVariable, NoneFromAHelper])
def test_a_none_gradient_held_in_a_variable_is_zeros(run: str, cls: Any) -> None:
    """None reaching the return through a variable, a conditional, a dict value or a helper
    is zeros in every mode, as a literal None is (graphs passed None on)."""
    x, y = Tensor(X), Tensor(2 * X)
    gx, gy = _grad(run, cls(), x, y, grad_position=(0, 1))
    np.testing.assert_allclose(gx.asnumpy(), 2 * X, rtol=1e-6)
    assert gy is not None
    np.testing.assert_array_equal(gy.asnumpy(), np.zeros_like(X))


class DictForAnInput(KwCell):
    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x * y

    def bprop(self, x: Tensor, y: Tensor, out: Any, dout: Any) -> Any:
        gy = {"y": x * dout}
        return y * dout, gy


def test_a_dict_as_the_gradient_of_an_input_is_an_error_naming_it() -> None:
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(ValueError, match=r"DictForAnInput.bprop returned a dict as the gradient of 'y'"):
        _grad("graph", DictForAnInput(), Tensor(X), Tensor(X), grad_position=(0, 1))


class ExtraInAVariable(KwCell):
    def construct(self, x: Tensor) -> Any:
        return x * 2.0

    def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
        extra = ops.ones_like(dout)
        return 2.0 * dout, extra


def test_extra_gradients_in_a_variable_are_ignored_with_a_warning(run: str) -> None:
    """MindSpore ignores gradients beyond the inputs; kwcell too, never silently: a count
    known only when the gradient is taken warns then."""
    with pytest.warns(KwCellWarning, match=r"ExtraInAVariable.bprop returned 2 gradients for 1 input"):
        got = _grad(run, ExtraInAVariable(), Tensor(X))
    np.testing.assert_allclose(got.asnumpy(), np.full_like(X, 2.0))


# ---------------------------------------------------------------- used_bprop_inputs and a dict


class UsedFirst(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.used_bprop_inputs = [0]

    def construct(self, x: Tensor, y: Tensor) -> Any:
        return x * y

    def bprop(self, x: Tensor, y: Tensor, *, out: Any, dout: Any) -> Any:
        return {"x": dout * 2}


def test_used_bprop_inputs_with_a_dict_leaving_the_other_input_out(run: str) -> None:
    """PYNATIVE failed with MindSpore's 'grad tensor should be broadcast to expected shape';
    nn.Cell returning None there works: zeros for y."""
    gx, gy = _grad(run, UsedFirst(), Tensor(X), Tensor(X), grad_position=(0, 1))
    np.testing.assert_allclose(gx.asnumpy(), np.full_like(X, 2.0))
    np.testing.assert_array_equal(gy.asnumpy(), np.zeros_like(X))


# ---------------------------------------------------------------- a bprop from __init_subclass__


def default_bprop(self: Any, x: Tensor, out: Any, dout: Any) -> Any:
    return (5 * ops.cos(x) * dout,)


class Installs(KwCell):
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "bprop" not in cls.__dict__:
            cls.bprop = default_bprop


class Installed(Installs):
    def construct(self, x: Tensor) -> Any:
        return ops.sin(x)


@kwcell.keyword_bprop
class DecoratedInstalls(nn.Cell):
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "bprop" not in cls.__dict__:
            cls.bprop = default_bprop  # type: ignore[attr-defined]


class DecoratedInstalled(DecoratedInstalls):
    def construct(self, x: Tensor) -> Any:
        return ops.sin(x)


class PlainInstalls(nn.Cell):
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "bprop" not in cls.__dict__:
            cls.bprop = default_bprop  # type: ignore[attr-defined]


class PlainInstalled(PlainInstalls):
    def construct(self, x: Tensor) -> Any:
        return ops.sin(x)


@pytest.mark.parametrize("cls", [PlainInstalled, Installed, DecoratedInstalled])
def test_a_bprop_installed_by_init_subclass_is_used(run: str, cls: Any) -> None:
    """A base's __init_subclass__ sees the class statement's namespace, as on nn.Cell: the
    bprop it installs is the subclass's (autodiff's cos(x) before, silently)."""
    cell = cls()

    def f(x: Tensor) -> Any:
        return cell(x).sum()

    np.testing.assert_allclose(_grad(run, f, Tensor(X)).asnumpy(), 5 * np.cos(X), rtol=1e-5)


# ---------------------------------------------------------------- MindSpore's wrappers of construct


def _scaled(base: type) -> Any:
    class Scaled(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.dense = nn.Dense(3, 3, weight_init="ones")

        def construct(self, x: Tensor, w: float = 1.0) -> Any:
            return self.dense(x) * w

        def bprop(self, x: Tensor, w: float, out: Any, dout: Any) -> Any:
            return (dout * 2 * w, 0.0)

    return Scaled()


@pytest.mark.parametrize("base", [nn.Cell, KwCell], ids=["nn.Cell", "KwCell"])
def test_amp_auto_wraps_the_users_forward(run: str, base: type) -> None:
    """amp.auto_mixed_precision(net, "auto") reads net.construct to wrap it and assigns the
    wrapper back: it wraps the user's forward, which keeps its bprop (RecursionError before)."""
    net = amp.auto_mixed_precision(_scaled(base), "auto")

    def f(x: Tensor) -> Any:
        return net(x, 3.0).sum()

    got = _grad(run, f, Tensor(X.reshape(1, 3)))
    np.testing.assert_allclose(got.asnumpy(), np.full((1, 3), 6.0), rtol=1e-3)


# ---------------------------------------------------------------- Parameters a graph bprop reads


class FromACellList(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.CellList([nn.Dense(3, 3, weight_init="ones")])

    def construct(self, x: Tensor) -> Any:
        return self.layers[0](x)

    def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
        return (ops.matmul(dout, self.layers[0].weight),)  # type: ignore[attr-defined]


class ThroughAnAlias(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.dense = nn.Dense(3, 3, weight_init="ones")

    def construct(self, x: Tensor) -> Any:
        return self.dense(x)

    def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
        sub = self.dense
        return (ops.matmul(dout, sub.weight),)


class _Outer(nn.Cell):
    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, x: Tensor) -> Any:
        return (self.inner(x) * 2.0).sum()


@pytest.mark.filterwarnings("ignore::kwcell.KwCellWarning")
@pytest.mark.parametrize("cls", [FromACellList, ThroughAnAlias])
def test_a_bprop_reads_a_weight_through_an_index_or_an_alias(run: str, cls: Any) -> None:
    got = _grad(run, _Outer(cls()), Tensor(X.reshape(1, 3)))
    np.testing.assert_allclose(got.asnumpy(), np.full((1, 3), 6.0), rtol=1e-6)


# ---------------------------------------------------------------- errors at the user's line


class Misspelt(KwCell):
    def construct(self, x: Tensor) -> Any:
        return x * 2

    def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
        return (undefined_scale * dout,)  # type: ignore[name-defined]  # noqa: F821


def test_a_name_error_in_a_graph_bprop_names_the_users_file_and_line() -> None:
    ms.set_context(mode=ms.GRAPH_MODE)
    line = Misspelt.bprop.__code__.co_firstlineno + 1
    where = rf"\(in Misspelt.bprop, .*test_value_forms.py:{line}\)"
    with pytest.raises(NameError, match=rf"'undefined_scale' is not defined {where}"):
        _grad("graph", Misspelt(), Tensor(X))


# ---------------------------------------------------------------- state construct updates


def _counting(base: type, form: str) -> Any:
    class Counting(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.step = Parameter(Tensor(0.0, ms.float32), name="step", requires_grad=False)

        def construct(self, x: Tensor) -> Any:
            if form == "setattr":
                setattr(self, "step", self.step + 1.0)  # noqa: B010 - the form under test
            else:
                self.step = self.step + 1.0  # type: ignore[assignment]
            return x * 2

        def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
            return (dout * 3,)

    return Counting()


def _summed(cell: Any) -> Callable[[Tensor], Any]:
    def f(x: Tensor) -> Any:
        return cell(x).sum()

    return f


@pytest.mark.parametrize("form", ["setattr", "assignment"])
def test_a_counter_construct_updates_counts_as_on_nn_cell(run: str, form: str) -> None:
    """A Parameter counter updated in construct (``setattr`` or ``self.step = ...``) counts
    each call and each gradient as on nn.Cell (a graph copy ran the update while compiling)."""
    counts = []
    for base in (nn.Cell, KwCell):
        cell = _counting(base, form)
        for _ in range(3):
            cell(Tensor(X))

        np.testing.assert_allclose(_grad(run, _summed(cell), Tensor(X)).asnumpy(), np.full_like(X, 3.0))
        counts.append(float(cell.step.asnumpy()))
    assert counts[1] == counts[0] >= 3.0


# ---------------------------------------------------------------- MindSpore's own forms


class StarArgsWeights(_Weighted):
    def bprop(self, *args: Any) -> Any:
        return (self.w * args[-1],), {self.w: args[0] * args[-1]}


def test_bprop_star_args_gives_weight_gradients_in_every_mode(run: str) -> None:
    """MindSpore's bprop(self, *args) returning (input_grads, {self.w: gw}) (its own
    CustomNetWithParam test): graphs failed with make_dict's 'key only supports string'."""
    net = StarArgsWeights()
    _assert_weighted_gradients(run, net)


def _attention(base: type) -> Any:
    class AttentionWithCp(base):  # type: ignore[misc]
        """MindSpeed's shape: a positional bprop with defaults and its own name for out."""

        def construct(self, q: Tensor, n: int, softmax_scale: Any = None, dropout_p: float = 0.0) -> Any:
            return q * n

        def bprop(  # type: ignore[no-untyped-def]
            self, q, n, softmax_scale=None, dropout_p=0.0, attn_out=None, dout=None
        ):
            return dout * n, None, None, None

    return AttentionWithCp()


@pytest.mark.parametrize("base", [nn.Cell, KwCell], ids=["nn.Cell", "KwCell"])
def test_a_positional_bprop_with_defaults_is_read_by_position(run: str, base: type) -> None:
    """MindSpore passes bprop every input, then out and dout, by position: a bprop of only
    positional parameters is read so whatever its defaults (KwCell refused 'missing out')."""
    cell = _attention(base)

    def f(q: Tensor) -> Any:
        return cell(q, 3, None, 0.0).sum()

    np.testing.assert_allclose(_grad(run, f, Tensor(X)).asnumpy(), np.full_like(X, 3.0))


@pytest.mark.parametrize(
    ("body", "found"),
    [
        ("return (dout,), {p: g for p, g in zip(self.internal_params, gs)}", "a dict comprehension"),
        (
            "ps = self.internal_params\n    return (dout,), {p: g for p, g in zip(ps[1:], gs)}",
            "a dict comprehension",
        ),
        ("return (dout,), dict(zip(self.trainable_params(), gs))", "dict(...)"),
        (
            "d = {}\n    for p in reversed(self.internal_params):\n"
            "        d[p] = dout\n    return (dout,), d",
            "an item",
        ),
        ("t = self.internal_params[0]\n    return {n: g for n, g in zip(('x',), (dout @ t,))}", None),
        ("return {n: dout for n in ('x', 'y')}", None),
        ("d = {}\n    d[self.w] = dout\n    return (dout,), d", None),
    ],
    ids=["comprehension", "alias-slice", "dict-zip", "loop", "one-parameter", "names", "attribute-key"],
)
def test_the_computed_weight_key_rule_reads_sequences_of_parameters_only(
    body: str, found: str | None
) -> None:
    """The rule (kwcell._weightdicts) reports a dict keyed by what iterating the Parameters
    gives, and nothing for keys that are constants, names or one Parameter by attribute."""
    from kwcell._selfstate import Source
    from kwcell._weightdicts import computed_keys

    got = computed_keys(Source(f"def bprop(self, x, out, dout):\n    {body}\n", 10))
    if found is None:
        assert got == []
    else:
        ((_, form),) = got
        assert form.startswith(found)


# ---------------------------------------------------------------- a weight dict built in a helper


class DictFromAHelper(_Weighted):
    def _weight_grads(self, x: Tensor, dout: Tensor) -> dict[Any, Tensor]:
        return {self.w: x * dout}

    def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
        return (self.w * dout,), self._weight_grads(x, dout)


class NamesFromAHelper(_Weighted):
    """A helper keying by input name (a string): graphs take it."""

    def _input_grads(self, dout: Tensor) -> dict[Any, Tensor]:
        return {"x": self.w * dout}

    def bprop(self, x: Tensor, out: Any, dout: Any) -> Any:
        grads = self._input_grads(dout)
        grads[self.w] = x * dout
        return grads


def test_a_weight_dict_built_in_a_helper_is_right_in_pynative_and_named_in_graphs(run: str) -> None:
    """kwcell rewrites weight keys in bprop's own text only: a method bprop calls that writes
    ``{self.w: g}`` is MindSpore's make_dict error in a graph, so kwcell raises first, naming the
    class, the call, the key and the fix."""
    net = DictFromAHelper()
    if run == "pynative":
        _assert_weighted_gradients(run, net)
        return
    lines = Path(__file__).read_text().splitlines()
    key_line = 1 + next(i for i, t in enumerate(lines) if "return {self.w: x * dout}" in t)
    call_line = 1 + next(i for i, t in enumerate(lines) if "self._weight_grads(x, dout)" in t)
    with pytest.raises(RuntimeError) as caught:
        _grad(run, net, Tensor(X), grad_position=0, weights=net.trainable_params())
    assert str(caught.value).startswith(
        f"DictFromAHelper.bprop calls self._weight_grads (line {call_line}), which keys a weight gradient "
        f"by self.w (line {key_line}): kwcell rewrites weight keys for graphs in bprop's own text"
    )
    assert "Build the dict in bprop: return the gradients from _weight_grads and write {self.w: ...}" in str(
        caught.value
    )


def test_a_helper_keying_by_input_name_is_right_in_every_mode(run: str) -> None:
    net = NamesFromAHelper()
    _assert_weighted_gradients(run, net)
