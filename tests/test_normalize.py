"""``kwcell._runtime.normalize`` called directly in PYNATIVE, for every return form.

In PYNATIVE the user's own bprop runs and whatever it returns reaches ``normalize`` as
Python values; these tests pin the tuple MindSpore receives for each form. (GRAPH_MODE and
``@ms.jit`` compile the same function; tests/test_returns.py, test_inputs.py and
test_weights.py check the gradients that come out in every mode.)
"""

from __future__ import annotations

from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor

from kwcell._runtime import normalize

X = np.array([1.0, 2.0], np.float32)
W = np.array([3.0, -1.0], np.float32)
G = np.array([0.5, 0.25], np.float32)
ZEROS = np.zeros(2, np.float32)
NAMES = ("x", "w", "s")
WHERE = "Net.bprop"


def inputs() -> tuple[Any, ...]:
    return (Tensor(X), Tensor(W), 3.0)


def values(result: Any) -> Any:
    """Tensors as numpy arrays, sequences as tuples (lists marked), other values as they are."""
    if isinstance(result, Tensor):
        return result.asnumpy().tolist()
    if isinstance(result, list):
        return ["list", *(values(v) for v in result)]
    if isinstance(result, tuple):
        return tuple(values(v) for v in result)
    if isinstance(result, dict):
        return {k: values(v) for k, v in result.items()}
    return result


g, gw = Tensor(G), Tensor(W * 2)
CASES: dict[str, tuple[Any, Any]] = {
    "tuple": ((g, gw, 7.0), (G.tolist(), (W * 2).tolist(), 0)),
    "list": ([g, gw, None], (G.tolist(), (W * 2).tolist(), 0)),
    "None entries": ((None, gw, None), (ZEROS.tolist(), (W * 2).tolist(), 0)),
    "dict by name": ({"w": gw}, (ZEROS.tolist(), (W * 2).tolist(), 0)),
    "dict with None": ({"x": None, "w": gw}, (ZEROS.tolist(), (W * 2).tolist(), 0)),
    "bare Tensor": (g, (G.tolist(), ZEROS.tolist(), 0)),
}


@pytest.mark.parametrize("form", list(CASES))
def test_input_forms(form: str) -> None:
    grads, expected = CASES[form]
    assert values(normalize(grads, inputs(), NAMES, WHERE)) == expected


def _weight() -> Any:
    return Parameter(Tensor(W), name="w")


def test_weight_form_gives_the_weights_after_the_inputs() -> None:
    w = _weight()
    result = normalize(
        ((g, None, None), {w: gw}),
        inputs(),
        NAMES,
        WHERE,
        False,
        (w,),
        ((("self.w",), ms.float32, W.shape, "self.w"),),
    )
    assert values(result) == (G.tolist(), ZEROS.tolist(), 0, (W * 2).tolist())


def test_weight_form_with_inputs_by_name() -> None:
    w = _weight()
    result = normalize(
        ({"w": g}, {w: gw}),
        inputs(),
        NAMES,
        WHERE,
        False,
        (w,),
        ((("self.w",), ms.float32, W.shape, "self.w"),),
    )
    assert values(result) == (ZEROS.tolist(), G.tolist(), 0, (W * 2).tolist())


def test_dict_with_parameter_keys_gives_inputs_then_weights() -> None:
    w, v = _weight(), Parameter(Tensor(W), name="v")
    result = normalize(
        {"x": g, w: gw},
        inputs(),
        NAMES,
        WHERE,
        False,
        (v, w),
        ((("self.v",), ms.float32, W.shape, "self.v"), (("self.w",), ms.float32, W.shape, "self.w")),
    )
    assert values(result) == (G.tolist(), ZEROS.tolist(), 0, ZEROS.tolist(), (W * 2).tolist())


def test_weight_gradients_without_weights_are_dropped_as_mindspore_drops_them() -> None:
    w = _weight()
    assert values(normalize({"x": g, w: gw}, inputs(), NAMES, WHERE)) == (G.tolist(), ZEROS.tolist(), 0)
    assert values(normalize(((g, None, None), {w: gw}), inputs(), NAMES, WHERE)) == (
        G.tolist(),
        ZEROS.tolist(),
        0,
    )


def test_extra_gradients_are_ignored_only_for_mindspore_forms() -> None:
    extra = (g, gw, None, gw)
    assert values(normalize(extra, inputs(), NAMES, WHERE, True)) == (
        G.tolist(),
        (W * 2).tolist(),
        0,
    )
    with pytest.raises(ValueError, match=r"Net\.bprop returned 4 gradients, expected 3"):
        normalize(extra, inputs(), NAMES, WHERE)


def test_tuple_input_gets_one_entry_per_element_as_a_list() -> None:
    """A list, not a tuple: PyNative reads ``((g0, g1), gy)`` as the weight form."""
    pair = (Tensor(X), Tensor(W))
    names = ("xs", "y")
    assert values(normalize(((g, None), gw), (pair, Tensor(X)), names, WHERE)) == (
        ["list", G.tolist(), ZEROS.tolist()],
        (W * 2).tolist(),
    )
    assert values(normalize({"y": gw}, (pair, Tensor(X)), names, WHERE)) == (
        ["list", ZEROS.tolist(), ZEROS.tolist()],
        (W * 2).tolist(),
    )
    # A placeholder such as 0 for the whole tuple: placeholders for each element.
    assert values(normalize((0, gw), (pair, Tensor(X)), names, WHERE)) == (
        ["list", ZEROS.tolist(), ZEROS.tolist()],
        (W * 2).tolist(),
    )


def test_tuple_input_errors_name_the_parameter() -> None:
    pair = (Tensor(X), Tensor(W))
    with pytest.raises(ValueError, match=r"Net\.bprop returned 3 gradients for 'xs', a tuple input with 2"):
        normalize(((g, g, g), gw), (pair, Tensor(X)), ("xs", "y"), WHERE)
    with pytest.raises(ValueError, match=r"Net\.bprop returned a single Tensor for 'xs', a tuple input"):
        normalize((g, gw), (pair, Tensor(X)), ("xs", "y"), WHERE)


def test_mutable_number_needs_only_a_placeholder_in_pynative() -> None:
    """MindSpore gives a mutable number no gradient in PYNATIVE (in a graph it does:
    tests/test_inputs.py)."""
    assert values(normalize((g, gw), (Tensor(X), ms.mutable(2.0)), ("x", "s"), WHERE)) == (G.tolist(), 0)


def test_input_left_out_by_used_bprop_inputs_keeps_its_gradient() -> None:
    assert values(normalize((g, gw, None), (None, Tensor(W), 3.0), NAMES, WHERE)) == (
        G.tolist(),
        (W * 2).tolist(),
        0,
    )


ERRORS: dict[str, tuple[Any, type[Exception], str]] = {
    "None": (None, ValueError, r"Net\.bprop returned None; return one gradient per construct parameter"),
    "unknown name": (
        {"z": g},
        ValueError,
        r"Net\.bprop returned a gradient for 'z', which is not a parameter",
    ),
    "too few": ((g,), ValueError, r"Net\.bprop returned 1 gradients, expected 3"),
    "generator": (
        (v for v in (g, gw, None)),
        TypeError,
        r"Net\.bprop returned a generator or iterator; return a tuple with one gradient per construct "
        r"parameter \(x, w, s\)",
    ),
    "set": ({g}, TypeError, r"Net\.bprop returned a set; return a tuple"),
}


@pytest.mark.parametrize("form", list(ERRORS))
def test_bad_returns(form: str) -> None:
    grads, error, message = ERRORS[form]
    with pytest.raises(error, match=message):
        normalize(grads, inputs(), NAMES, WHERE)


def test_bare_value_for_a_non_tensor_first_input() -> None:
    with pytest.raises(
        ValueError,
        match=r"Net\.bprop returned a single value, which would be the gradient of the first construct "
        r"parameter 's', but 's' is not a Tensor, so that gradient would be lost; return a dict keyed by "
        r"parameter name, e\.g\. \{'x': \.\.\., 'w': \.\.\.\}, or a tuple with one entry per construct "
        r"parameter \(s, x, w\)",
    ):
        normalize(g, (3.0, Tensor(X), Tensor(W)), ("s", "x", "w"), WHERE)


def test_no_inputs() -> None:
    assert normalize((), (), (), WHERE) == ()
    with pytest.raises(
        ValueError, match=r"Net\.bprop returned a gradient, but construct takes no inputs; return \(\)"
    ):
        normalize(g, (), (), WHERE)
