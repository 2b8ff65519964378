"""``kwcell.custom_bprop``: a function's custom backward with KwCell's rules, in every mode.

The functions live in ``tests/functional_lib.py``, written as a model library writes them; their
backwards differ from autodiff, so each gradient below shows the custom backward ran. Graph
tests share one compiled model per mode.
"""

from __future__ import annotations

import inspect
import pickle
import re
import sys
import typing
from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn, ops

import kwcell
from kwcell import KwCellDefinitionError, KwCellWarning
from kwcell._check import check
from kwcell._functional import function_info
from tests import functional_lib as lib

X = Tensor(np.array([0.3, -0.7], np.float32))
XS = X.asnumpy().astype(np.float64)
STEP = (XS > 0).astype(np.float64)
SURROGATE = lib.sigmoid_surrogate(XS)


def _np(value: Any) -> np.ndarray[Any, Any]:
    return np.asarray(value.asnumpy(), np.float64)


# -- every mode: keywords in any order, defaults left out, several calls, closures -----------


def test_model_gradients_in_pynative_and_graph_mode(mode: str) -> None:
    """An outer cell whose block calls ``spike`` four ways, and the other functions."""
    model = lib.Model()
    weights = model.trainable_params()
    assert [p.name for p in weights] == ["block.w"]
    dx, (dw,) = ms.grad(model, grad_position=0, weights=weights)(X)
    expected_dx = (1.5 + 2.0 + 1.0 + 3.0) * SURROGATE + 1.0 - 0.5 + 10.0 * np.array([2.0, 3.0]) + 10.0
    np.testing.assert_allclose(_np(dx), expected_dx, rtol=1e-5)
    np.testing.assert_allclose(_np(dw), STEP.sum(), rtol=1e-6)  # a Parameter passed as w=self.w


def test_jit_function_in_pynative() -> None:
    w = Tensor(np.float32(1.5))
    dx, dw = ms.grad(lib.jitted, grad_position=(0, 1))(X, w)
    np.testing.assert_allclose(_np(dx), (1.5 + 2.0 + 1.0) * SURROGATE + 1.0 - 0.5, rtol=1e-5)
    np.testing.assert_allclose(_np(dw), STEP.sum(), rtol=1e-6)


def test_named_positions_with_keywords_and_zeros_for_unnamed_inputs(mode: str) -> None:
    w, y = Tensor(np.float32(2.0)), Tensor(np.array([1.0, 1.0], np.float32))
    grad_fn = kwcell.grad(lib.spike, grad_position=("x", "w", "y"))
    dx, dw, dy = grad_fn(X, y=y, w=w)  # keyword-only y, and w, by keyword in another order
    np.testing.assert_allclose(_np(dx), 2.0 * SURROGATE, rtol=1e-5)
    np.testing.assert_allclose(_np(dw), STEP.sum(), rtol=1e-6)
    np.testing.assert_array_equal(_np(dy), [0.0, 0.0])  # the backward gave y nothing: zeros


def test_pynative_calls_match_the_equivalent_kwcell() -> None:
    """Every call form gives the value and gradient of the same forward and backward as a KwCell."""
    cell = _EquivalentSpike()
    w = Tensor(np.float32(2.5))
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((X,), {}),
        ((X, w), {}),
        ((X,), {"y": 1.0, "w": w}),
        ((), {"w": w, "x": X, "y": -1.0}),
    ]
    for args, kwargs in calls:
        got = kwcell.value_and_grad(lib.spike, grad_position=0)(*args, **kwargs)
        want = kwcell.value_and_grad(cell, grad_position=0)(*args, **kwargs)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6)


class _EquivalentSpike(kwcell.KwCell):
    """``spike`` written as a KwCell, for comparison."""

    def construct(self, x: Tensor, w: Any = 1.0, *, y: Any = 0.0) -> Tensor:
        spikes: Tensor = w * ops.cast(x > 0, x.dtype) + y
        return spikes

    def bprop(self, x: Tensor, w: Any = 1.0, *, y: Any = 0.0, out: Tensor, dout: Tensor) -> Any:
        s = ops.sigmoid(4.0 * x)
        return {"x": w * 4.0 * s * (1.0 - s) * dout, "w": (ops.cast(x > 0, x.dtype) * dout).sum()}


def test_gradcheck_passes_for_a_true_backward_and_names_the_input_of_a_wrong_one() -> None:
    w = Tensor(np.array([1.5, -0.5], np.float32))
    assert kwcell.gradcheck(lib.sin_gate, X, w=w)
    with pytest.raises(
        kwcell.GradcheckError,
        match=r"gradcheck: spike's bprop disagrees with finite differences of spike for 'x'",
    ):
        kwcell.gradcheck(lib.spike, X, w=Tensor(np.float32(1.5)))


# -- the function itself ------------------------------------------------------------------


def test_the_function_keeps_its_signature_name_docstring_and_hints() -> None:
    def reference(x: Tensor, w: Any = 1.0, *, y: Any = 0.0) -> Tensor:
        raise NotImplementedError

    assert inspect.signature(lib.spike) == inspect.signature(reference)
    assert (lib.spike.__name__, lib.spike.__qualname__, lib.spike.__module__) == (
        "spike",
        "spike",
        "tests.functional_lib",
    )
    assert lib.spike.__doc__ is not None and lib.spike.__doc__.startswith("``w * step(x) + y``")
    assert typing.get_type_hints(lib.spike) == {"x": Tensor, "w": Any, "y": Any, "return": Tensor}
    assert lib.spike.bprop is not None
    assert "custom_bprop" in kwcell.__all__


def test_the_function_pickles_by_reference() -> None:
    assert pickle.loads(pickle.dumps(lib.spike)) is lib.spike


def test_trainable_parameters_the_function_reads_but_does_not_take_are_not_silent() -> None:
    weight = Parameter(Tensor(np.ones(2, np.float32)), name="gain")
    dense = nn.Dense(2, 2)

    @kwcell.custom_bprop
    def gained(x: Tensor) -> Tensor:
        return dense(x) * weight

    with pytest.warns(KwCellWarning) as caught:

        @gained.bprop
        def _(x: Tensor, *, out: Tensor, dout: Tensor) -> Tensor:
            return dout

    (warning,) = caught
    assert warning.filename == __file__
    assert str(warning.message) == (
        "test_trainable_parameters_the_function_reads_but_does_not_take_are_not_silent.<locals>.gained "
        "uses trainable parameter(s) dense ('weight', 'bias'), weight ('gain') without taking them as "
        "inputs: its backward gives them no gradient (MindSpore uses zeros), so they will not train. Pass "
        "them to test_trainable_parameters_the_function_reads_but_does_not_take_are_not_silent.<locals>."
        "gained as arguments (its backward can then return their gradients), or create them with "
        "requires_grad=False"
    )


def test_bad_calls_raise_pythons_type_error_naming_the_function() -> None:
    with pytest.raises(TypeError, match=r"^spike\(\) got an unexpected keyword argument 'z'$"):
        lib.spike(X, z=1.0)  # type: ignore[call-arg]
    with pytest.raises(
        TypeError, match=r"^spike\(\) takes from 1 to 2 positional arguments but 3 were given$"
    ):
        lib.spike(X, 1.0, 2.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^spike\(\) missing 1 required positional argument: 'x'$"):
        lib.spike()  # type: ignore[call-arg]


def test_registering_returns_the_backward_unchanged() -> None:
    @kwcell.custom_bprop
    def double(x: Tensor) -> Tensor:
        return 2.0 * x

    def backward(x: Tensor, *, out: Tensor, dout: Tensor) -> Tensor:
        return 3.0 * dout

    assert double.bprop(backward) is backward
    np.testing.assert_allclose(_np(kwcell.grad(double)(X)), [3.0, 3.0])


def test_compile_once_is_refused_until_it_is_safe() -> None:
    """One cell per function: MindSpore's reuse would give every call site one call's values."""
    message = r"kwcell.custom_bprop: compile_once=True is not supported: a custom_bprop function has one cell"
    with pytest.raises(KwCellDefinitionError, match=message):
        kwcell.custom_bprop(compile_once=True)
    with pytest.raises(
        TypeError, match=r"kwcell.custom_bprop: compile_once must be True or False, got 'yes'"
    ):
        kwcell.custom_bprop(compile_once="yes")  # type: ignore[call-overload]

    @kwcell.custom_bprop(compile_once=False)
    def triple(x: Tensor, k: float = 3.0) -> Tensor:
        return k * x

    @triple.bprop
    def _(x: Tensor, k: float = 3.0, *, out: Tensor, dout: Tensor) -> Tensor:
        return 10.0 * k * dout

    class Twice(nn.Cell):
        def construct(self, x: Tensor) -> Tensor:
            return triple(x) + triple(x, k=1.0)

    np.testing.assert_allclose(_np(ms.grad(Twice())(X)), [40.0, 40.0])


def test_explain_shows_the_mapping_and_the_generated_source() -> None:
    text = kwcell.explain(lib.spike)
    assert text.startswith(
        "kwcell.explain(tests.functional_lib.spike)\n"
        "spike(x, w=1.0, *, y=0.0)\n"
        "bprop(x, w=1.0, *, y=0.0, out, dout)\n"
        "bprop style: named (parameters matched to spike by name)\n"
    )
    assert "  2  y      keyword-only           0.0      y" in text
    assert "def spike(x, w=1.0, *, y=0.0):" in text  # the function kwcell generated
    assert "return (w * 4.0 * s * (1.0 - s) * dout," in text  # the backward, for the graph compiler


# -- the backward's rules: bprop's, refused when it is registered ---------------------------


def _scaled_forward(x: Tensor, w: float = 1.0, *, y: float = 0.0) -> Tensor:
    return w * ops.sin(x) + y


_scaled_forward.__qualname__ = _scaled_forward.__name__ = "scaled"
EXPECTED = "; expected e.g. @scaled.bprop def _(x, w=1.0, *, y=0.0, out, dout)"
BAD_BACKWARDS = {
    "def _(x, z, *, out, dout):\n    return dout": (
        "scaled.bprop: parameter 'z' is not a parameter of scaled(x, w=1.0, *, y=0.0)" + EXPECTED
    ),
    "def _(x, *, out, dout):\n    return dout": (
        "scaled.bprop: parameter 'w' of scaled is missing from bprop; name it, or add '**kwargs' "
        "to receive the inputs bprop does not name" + EXPECTED
    ),
    "def _(x, w=1.0, *, y=0.0, out):\n    return out": "scaled.bprop: missing parameter 'dout'" + EXPECTED,
    "def _(x, w=2.0, *, y=0.0, out, dout):\n    return dout": (
        "scaled.bprop: parameter 'w' has default 2.0 but scaled gives it default 1.0; bprop always "
        "receives the value scaled got, so drop the default or make it match" + EXPECTED
    ),
    "def _(x, *a, out, dout):\n    return dout": (
        "scaled.bprop: '*a' can only be used alone, as MindSpore's classic bprop(*a) (inputs, then "
        "out, dout); with named parameters, list them by name" + EXPECTED
    ),
}


@pytest.mark.parametrize("source", list(BAD_BACKWARDS))
def test_a_backward_that_breaks_a_rule_is_refused_naming_the_function(source: str) -> None:
    fresh = kwcell.custom_bprop(_scaled_forward)
    namespace: dict[str, Any] = {}
    exec(compile(source, "<backward>", "exec"), {"ops": ops}, namespace)
    with pytest.raises(KwCellDefinitionError, match="^" + re.escape(BAD_BACKWARDS[source]) + "$"):
        fresh.bprop(namespace["_"])


def test_a_backward_may_take_the_rest_as_kwargs(mode: str) -> None:
    @kwcell.custom_bprop
    def affine(x: Tensor, a: Tensor, *, b: Tensor) -> Tensor:
        return a * x + b

    @affine.bprop
    def _(x: Tensor, *, out: Tensor, dout: Tensor, **rest: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return rest["a"] * dout * 2.0, x * dout, dout  # x's gradient doubled: the backward ran

    a, b = Tensor(np.array([2.0, 3.0], np.float32)), Tensor(np.array([1.0, 1.0], np.float32))
    dx, da, db = kwcell.grad(affine, grad_position=("x", "a", "b"))(X, b=b, a=a)
    np.testing.assert_allclose(_np(dx), [4.0, 6.0])
    np.testing.assert_allclose(_np(da), XS, rtol=1e-6)
    np.testing.assert_allclose(_np(db), [1.0, 1.0])


def test_literal_returns_are_checked_when_the_backward_is_registered() -> None:
    fresh = kwcell.custom_bprop(_scaled_forward)
    with pytest.raises(
        KwCellDefinitionError,
        match=r"scaled.bprop \(line \d+\): returns a gradient for 'scale', which is not a parameter of "
        r"scaled; expected names: \(x, w, y\)",
    ):

        @fresh.bprop
        def _(x: Tensor, w: float = 1.0, *, y: float = 0.0, out: Tensor, dout: Tensor) -> Any:
            return {"x": dout, "scale": dout}

    with pytest.raises(
        KwCellDefinitionError,
        match=r"scaled.bprop \(line \d+\): returns 2 gradients, expected 3, one per parameter of scaled in "
        r"this order: \(x, w, y\)",
    ):

        @fresh.bprop
        def _(x: Tensor, w: float = 1.0, *, y: float = 0.0, out: Tensor, dout: Tensor) -> Any:
            return dout, None


def test_mindspore_form_keeps_mindspores_timing_with_a_warning_at_the_registration() -> None:
    @kwcell.custom_bprop
    def mul(x: Tensor, y: Tensor) -> Tensor:
        return x * y

    with pytest.warns(
        KwCellWarning,
        match=r"mul.bprop \(line \d+\): returns 3 gradients for 2 input\(s\) \(x, y\); "
        r"MindSpore ignores the last 1, and so does kwcell. A function's backward gives "
        r"gradients to its inputs only",
    ) as caught:

        @mul.bprop
        def _(x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
            return y * dout, x * dout, dout

    assert caught[0].filename == __file__  # the @mul.bprop line, as a class statement's warning
    y = Tensor(np.array([4.0, 5.0], np.float32))
    dx, dy = kwcell.grad(mul, grad_position=(0, 1))(X, y)
    np.testing.assert_allclose(_np(dx), [4.0, 5.0])
    np.testing.assert_allclose(_np(dy), XS, rtol=1e-6)


def test_the_functions_own_problems_are_refused_when_it_is_decorated() -> None:
    def star(x: Tensor, *rest: Tensor) -> Tensor:
        return x

    def named_out(x: Tensor, out: Tensor) -> Tensor:
        return x

    def method_like(self: Any, x: Tensor) -> Tensor:
        return x

    with pytest.raises(
        KwCellDefinitionError,
        match=r"^test_the_functions_own_problems_are_refused_when_it_is_decorated.<locals>.star: parameter "
        r"'\*rest' in .*star\(x, \*rest\) cannot be used with a bprop: it gives one gradient per named input",
    ):
        kwcell.custom_bprop(star)
    with pytest.raises(
        KwCellDefinitionError, match=r"named_out: parameter 'out' in .*named_out\(x, out\) clashes"
    ):
        kwcell.custom_bprop(named_out)
    with pytest.raises(
        KwCellDefinitionError, match=r"method_like: parameter 'self' .* uses a name kwcell reserves"
    ):
        kwcell.custom_bprop(method_like)
    with pytest.raises(
        KwCellDefinitionError, match=r"kwcell.custom_bprop: expected a function \(def\), got 3"
    ):
        kwcell.custom_bprop(3)  # type: ignore[call-overload]
    with pytest.raises(
        KwCellDefinitionError, match=r"kwcell.custom_bprop: spike is already a kwcell.custom_bprop function"
    ):
        kwcell.custom_bprop(lib.spike)


def test_one_backward_per_function_and_a_clear_error_before_it_is_registered(mode: str) -> None:
    @kwcell.custom_bprop
    def late(x: Tensor) -> Tensor:
        return 2.0 * x

    class UsesLate(nn.Cell):
        def construct(self, x: Tensor) -> Tensor:
            return late(x)

    assert kwcell.explain(late).endswith(
        "late is a kwcell.custom_bprop function without a backward yet: register one with "
        "@late.bprop (calling test_one_backward_per_function_and_a_clear_error_before_it_is_registered."
        "<locals>.late raises until then)."
    )
    message = (
        r"late has no backward yet: register one with @late.bprop \(kwcell.custom_bprop\) before calling"
    )
    with pytest.raises(TypeError, match=message):
        late(X)
    with pytest.raises(TypeError, match=message):
        UsesLate()(X)
    with pytest.raises(KwCellDefinitionError, match=message):
        kwcell.gradcheck(late, X)

    @late.bprop
    def first(x: Tensor, *, out: Tensor, dout: Tensor) -> Tensor:
        return dout

    with pytest.raises(
        KwCellDefinitionError, match=r"late.bprop: .*late already has a backward \(.*test_functional.py:\d+\)"
    ):

        @late.bprop
        def second(x: Tensor, *, out: Tensor, dout: Tensor) -> Tensor:
            return dout

    with pytest.raises(
        KwCellDefinitionError, match=r"^scaled.bprop: expected a function \(def\) as the backward, got 1$"
    ):
        kwcell.custom_bprop(_scaled_forward).bprop(1)  # type: ignore[type-var]


def test_another_decorator_on_the_backward_is_refused() -> None:
    fresh = kwcell.custom_bprop(_scaled_forward)

    def logged(fn: Any) -> Any:
        return fn

    with pytest.raises(
        KwCellDefinitionError,
        match=r"scaled.bprop: decorators other than @scaled.bprop on bprop are not supported",
    ):

        @fresh.bprop
        @logged
        def _(x: Tensor, w: float = 1.0, *, y: float = 0.0, out: Tensor, dout: Tensor) -> Any:
            return {"x": dout}


def test_an_error_in_the_backward_points_at_the_users_line() -> None:
    @kwcell.custom_bprop
    def fails(x: Tensor) -> Tensor:
        return 2.0 * x

    @fails.bprop
    def backward(x: Tensor, *, out: Tensor, dout: Tensor) -> Tensor:
        raise ValueError("from the backward")

    with pytest.raises(ValueError, match="from the backward") as info:
        kwcell.grad(fails)(X)
    last = info.traceback[-1]
    assert (Path(str(last.path)), last.lineno + 1) == (Path(__file__), backward.__code__.co_firstlineno + 2)


# -- kwcell check reports what registration raises ------------------------------------------

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "functional_check.py"


def test_kwcell_check_reports_functions_at_their_lines() -> None:
    report = check([str(FIXTURE)])
    found = [(p.line, p.code, p.message) for p in report.problems]
    assert found == [
        (
            15,
            "KW001",
            "scaled.bprop: parameter 'z' is not a parameter of scaled(x, w=1.0, *, y=0.0); "
            "expected e.g. @scaled.bprop def _(x, w=1.0, *, y=0.0, out, dout)",
        ),
        (
            20,
            "KW005",
            "star: parameter '*rest' in star(x, *rest) cannot be used with a bprop: it gives one "
            "gradient per named input. Name every input of star explicitly",
        ),
        (
            30,
            "KW007",
            "pair.bprop (line 32): returns 3 gradients for 2 input(s) (x, y); MindSpore ignores the last 1, "
            "and so does kwcell. A function's backward gives gradients to its inputs only",
        ),
    ]
    assert (report.cells, report.modules) == (4, 1)
    module = sys.modules["tests.fixtures.functional_check"]  # imported by the check; the rest of it still ran
    registered = {
        name: info.cls is not None
        for name in ("scaled", "pair", "fine")
        if (info := function_info(getattr(module, name)))
    }
    assert registered == {"scaled": False, "pair": True, "fine": True}
