"""kwcell.gradcheck accepts right bprops and names the input or weight of a wrong one, in both modes."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn

import kwcell
from kwcell import GradcheckError, KwCellWarning, gradcheck

from . import gradcheck_cells as c

X = Tensor(np.array([[0.5, -1.0, 2.0], [0.25, 1.5, -0.75]], np.float32))
A = Tensor(np.array([[2.0, 3.0, -1.0], [0.5, 1.0, 4.0]], np.float32))
B = Tensor(np.array([[5.0, -7.0, 1.0], [0.0, 2.0, -3.0]], np.float32))


def failing(message: str) -> list[str]:
    """Names of the table rows marked FAIL."""
    return re.findall(r"^  (\S+)\s+\(2, 3\)\s.*\sFAIL$", message, flags=re.M)


def passing(message: str) -> list[str]:
    return re.findall(r"^  (\S+)\s+\(2, 3\)\s.*\sok$", message, flags=re.M)


def test_right_bprop_passes_positional_and_keyword(mode: str) -> None:
    assert gradcheck(c.SCALED, X, A, B) is True
    assert gradcheck(c.SCALED, X, y=B, w=A) is True


def test_right_plain_cell_and_two_outputs_pass(mode: str) -> None:
    assert gradcheck(c.PLAIN_RIGHT, X, A) is True
    assert gradcheck(c.TWO_OUTPUTS_RIGHT, X, A) is True


def test_wrong_scale_names_the_input(mode: str) -> None:
    with pytest.raises(
        GradcheckError, match=r"WrongScale's bprop disagrees .* for 'w' \(computed in float64"
    ) as e:
        gradcheck(c.WRONG_SCALE, X, y=B, w=A)
    msg = str(e.value)
    assert failing(msg) == ["w"]
    assert passing(msg) == ["x", "y"]
    assert re.search(
        r"^  input\s+shape\s+max abs err\s+max rel err\s+at index\s+bprop\s+finite diff\s+result$", msg, re.M
    )
    # The worst element of w: |2 sin x - sin x| * |v| is largest where it is reported, rel error 1.
    row = next(line for line in msg.splitlines() if line.startswith("  w "))
    assert re.match(r"^  w\s+\(2, 3\)\s+\S+\s+1\s+\(\d, \d\)\s", row)


def test_swapped_gradients_name_both_inputs(mode: str) -> None:
    with pytest.raises(GradcheckError, match=r"Swapped's bprop disagrees .* for 'x', 'y' \(") as e:
        gradcheck(c.SWAPPED, X, A)
    assert failing(str(e.value)) == ["x", "y"]


def test_missing_dout_factor(mode: str) -> None:
    with pytest.raises(GradcheckError, match=r"NoDout's bprop disagrees .* for 'x' \(") as e:
        gradcheck(c.NO_DOUT, X, y=A)
    assert failing(str(e.value)) == ["x"]
    assert passing(str(e.value)) == ["y"]


def test_wrong_gradient_of_keyword_only_input(mode: str) -> None:
    with pytest.raises(GradcheckError, match=r"for 'scale' \(") as e:
        gradcheck(c.WRONG_KEYWORD_ONLY, X, scale=A)
    assert failing(str(e.value)) == ["scale"]
    assert passing(str(e.value)) == ["x"]


def test_every_output_counts(mode: str) -> None:
    with pytest.raises(GradcheckError, match=r"TwoOutputs's bprop disagrees .* for 'x', 'y' \("):
        gradcheck(c.TWO_OUTPUTS, X, A)


def test_plain_cell_keyword_call_misbinding_is_caught(mode: str) -> None:
    # Right for positional calls ...
    assert gradcheck(c.PLAIN_SWAPS_KEYWORDS, X, A) is True
    # ... but MindSpore hands the bprop call order when called with keywords.
    with pytest.raises(GradcheckError, match=r"for 'x', 'y' \(") as e:
        gradcheck(c.PLAIN_SWAPS_KEYWORDS, y=A, x=X)
    assert failing(str(e.value)) == ["x", "y"]


def test_falls_back_to_input_dtype_and_says_so(mode: str) -> None:
    with pytest.raises(GradcheckError, match=r"for 'y' \(computed in Float32: float64 failed with ") as e:
        gradcheck(c.FLOAT32_ONLY, X, A)
    assert failing(str(e.value)) == ["y"]
    assert passing(str(e.value)) == ["x"]


def test_gradcheck_error_is_an_assertion_error_and_exported() -> None:
    assert issubclass(GradcheckError, AssertionError)
    assert kwcell.gradcheck is gradcheck
    assert "gradcheck" in kwcell.__all__


def test_needs_a_floating_tensor_input() -> None:
    with pytest.raises(
        ValueError, match=r"gradcheck: no floating-point Tensor among the arguments of Scaled"
    ):
        gradcheck(c.SCALED, Tensor(np.array([1, 2], np.int32)))
    with pytest.raises(
        TypeError, match=r"gradcheck: expected an nn.Cell or a kwcell.custom_bprop function, got function"
    ):
        gradcheck(test_needs_a_floating_tensor_input, X)  # type: ignore[arg-type]


def test_none_for_an_unused_input_reads_as_zeros(mode: str) -> None:
    """A compiled graph gives no gradient (None) where PYNATIVE gives zeros: both are zeros."""
    assert gradcheck(c.PlainUnusedInput(), X, A) is True


def _row(message: str, name: str) -> list[str]:
    line = next(row for row in message.splitlines() if row.startswith(f"  {name} "))
    return line.split(None, 7)


def test_none_for_a_used_input_fails_with_its_finite_difference(mode: str) -> None:
    with pytest.raises(GradcheckError, match=r"finite differences of construct for 'y' ") as info:
        gradcheck(c.PlainForgottenInput(), X, A)
    cotangent = np.random.default_rng(0).standard_normal((2, 3))  # gradcheck's fixed seed
    name, _shape, _dims, abs_err, _rel, _index, _index2, rest = _row(str(info.value), "y")
    assert name == "y"
    assert float(abs_err) == pytest.approx(3 * np.abs(cotangent).max(), rel=1e-2)
    bprop, numeric, result = rest.split(None, 2)
    assert float(bprop) == 0.0 and result.startswith("FAIL")
    assert abs(float(numeric)) == float(abs_err)  # the worst element: all of it is missing
    # where MindSpore gave None (a compiled graph), the row says how it was read
    assert result.endswith("(bprop gave None: read as zeros)") == (mode == "graph")
    assert _row(str(info.value), "x")[-1].endswith("ok")


def test_none_for_the_only_input(mode: str) -> None:
    with pytest.raises(GradcheckError, match=r"for 'x' ") as info:
        gradcheck(c.PlainOnlyInputNone(), X)
    assert float(_row(str(info.value), "x")[7].split()[0]) == 0.0  # bprop's value: zero


# -- weights ---------------------------------------------------------------------------------

S_A = Tensor(np.array([0.1], np.float32))  # QuantLinear's prev_act_scaling_factor
IDS = Tensor(np.array([[0, 2], [2, 3]], np.int32))

# (id, the layer, the call's args and kwargs, the weights the wrong variant gets wrong)
LAYERS: list[tuple[str, Callable[..., nn.Cell], tuple[Any, ...], dict[str, Any], list[str]]] = [
    ("quant-linear", c.QuantLinear, (X,), {"prev_act_scaling_factor": S_A}, ["self.fc_scaling_factor"]),
    ("quant-linear-default", c.QuantLinear, (X,), {}, ["self.fc_scaling_factor"]),
    ("lora", c.LoRALinear, (X,), {"scale": 3.0}, ["self.lora_b"]),
    ("lora-default", c.LoRALinear, (X,), {}, ["self.lora_b"]),
    ("rmsnorm", c.RMSNorm, (X,), {}, ["self.weight"]),
    ("linear", c.Linear, (X,), {}, ["self.bias"]),
    ("keyword-bprop-linear", c.DecoratedLinear, (X,), {}, ["self.bias"]),
    ("embedding", c.Embedding, (IDS,), {}, ["self.weight"]),
]
# every row checked: the floating inputs of the call, then internal_params
ROWS = {
    "quant-linear": ["x", "prev_act_scaling_factor", "self.fc_scaling_factor", "self.bias"],
    "quant-linear-default": ["x", "self.fc_scaling_factor", "self.bias"],
    "lora": ["x", "self.lora_a", "self.lora_b"],
    "lora-default": ["x", "self.lora_a", "self.lora_b"],
    "rmsnorm": ["x", "self.weight"],
    "linear": ["x", "self.weight", "self.bias"],
    "keyword-bprop-linear": ["x", "self.weight", "self.bias"],
    "embedding": ["self.weight"],
}


def results(message: str) -> dict[str, str]:
    """Each table row's name and result (``ok``, or ``FAIL`` and its note)."""
    rows = re.findall(r"^  (\S+)\s+\(.*?\)\s.*?\s(ok|FAIL.*)$", message, flags=re.M)
    return {name: result for name, result in rows if name != "input"}


@pytest.mark.parametrize(("make", "args", "kwargs"), [row[1:4] for row in LAYERS], ids=[r[0] for r in LAYERS])
def test_right_weight_gradients_pass(make: Callable[..., nn.Cell], args: Any, kwargs: Any, mode: str) -> None:
    assert gradcheck(make(), *args, **kwargs) is True


@pytest.mark.parametrize(("name", "make", "args", "kwargs", "wrong"), LAYERS, ids=[r[0] for r in LAYERS])
def test_wrong_weight_gradient_names_the_weight(
    name: str, make: Callable[..., nn.Cell], args: Any, kwargs: Any, wrong: list[str], mode: str
) -> None:
    cls = type(make()).__qualname__
    names = ", ".join(repr(n) for n in wrong)
    with pytest.raises(
        GradcheckError, match=rf"{cls}'s bprop disagrees .* for {names} \(computed in float64;"
    ) as e:
        gradcheck(make(wrong=True), *args, **kwargs)
    found = results(str(e.value))
    assert list(found) == ROWS[name]
    assert {n for n, r in found.items() if r != "ok"} == set(wrong)


def _row_values(message: str, name: str) -> tuple[float, float]:
    """The bprop's and the finite difference's values at the worst element of ``name``'s row."""
    line = next(row for row in message.splitlines() if row.startswith(f"  {name} "))
    fields = re.split(r"\s{2,}", line.strip())
    return float(fields[-3]), float(fields[-2])


def test_weight_row_reports_the_true_gradient(mode: str) -> None:
    """Linear's bias gradient is the sum of the cotangent over the batch; the wrong bprop
    gives the mean, half of it (batch of 2): the row shows both values at the worst element."""
    with pytest.raises(GradcheckError) as e:
        gradcheck(c.Linear(wrong=True), X)
    cotangent = np.random.default_rng(0).standard_normal((2, 2))  # gradcheck's fixed seed
    bprop, numeric = _row_values(str(e.value), "self.bias")
    true = cotangent.sum(0)
    worst = int(np.argmax(np.abs(true)))  # |sum - mean| = |sum| / 2 is largest there
    assert numeric == pytest.approx(true[worst], rel=1e-3)
    assert bprop == pytest.approx(true[worst] / 2, rel=1e-3)


def test_plain_cell_weights_pynative() -> None:
    """MindSpore's own internal_params on a plain nn.Cell, in PYNATIVE, the only mode where
    MindSpore takes Parameters in a bprop (its GRAPH_MODE refuses them: asserted below)."""
    assert gradcheck(c.PlainLinear(), X) is True
    with pytest.raises(GradcheckError, match=r"PlainLinear's bprop disagrees .* for 'self.bias' \(") as e:
        gradcheck(c.PlainLinear(wrong=True), X)
    assert results(str(e.value)) == {"x": "ok", "self.weight": "ok", "self.bias": "FAIL"}
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(
        RuntimeError, match=r"The user defined 'bprop' function .* does not support using Parameter"
    ):
        gradcheck(c.PlainLinear(), X)


def test_trainable_params_checks_the_weights_no_bprop_gives_a_gradient(mode: str) -> None:
    with warnings.catch_warnings():  # "gives no gradient to trainable parameter(s)", once per class
        warnings.simplefilter("ignore", KwCellWarning)
        net = c.LoRALinear(train_base=True)
    assert gradcheck(net, X, scale=3.0) is True  # internal_params only: lora_a, lora_b
    with pytest.raises(GradcheckError, match=r"for 'self.base.weight', 'self.base.bias' \(") as e:
        gradcheck(net, X, scale=3.0, trainable_params=True)
    assert results(str(e.value)) == {
        "x": "ok",
        "self.lora_a": "ok",
        "self.lora_b": "ok",
        "self.base.weight": "FAIL (in no internal_params: a custom bprop gives it no gradient)",
        "self.base.bias": "FAIL (in no internal_params: a custom bprop gives it no gradient)",
    }
    # frozen (requires_grad=False), the base is not a trainable parameter: nothing to report
    assert gradcheck(c.LoRALinear(), X, scale=3.0, trainable_params=True) is True


def _state(net: nn.Cell) -> list[tuple[int, str, str, Any]]:
    return [(id(p), p.name, str(p.dtype), p.asnumpy().copy()) for p in net.get_parameters()]


@pytest.mark.parametrize("wrong", [False, True], ids=["passing", "failing"])
def test_parameters_are_restored_and_the_cell_still_trains(wrong: bool, mode: str) -> None:
    """gradcheck casts the cell's Parameters to float64 in place and puts them back: the same
    objects, dtypes (an int8 one never cast) and values, and the next gradient, in the same
    mode, is the analytic one in float32."""
    net = c.QuantLinear(wrong=wrong)
    before = _state(net)
    assert "Int8" in {dtype for _, _, dtype, _ in before}
    if wrong:
        with pytest.raises(GradcheckError):
            gradcheck(net, X, prev_act_scaling_factor=S_A)
    else:
        assert gradcheck(net, X, prev_act_scaling_factor=S_A)
    after = _state(net)
    assert [b[:3] for b in before] == [a[:3] for a in after]
    assert all(np.array_equal(b[3], a[3]) for b, a in zip(before, after, strict=True))
    weights = [net.fc_scaling_factor, net.bias]

    def loss(x: Tensor) -> Tensor:
        total: Tensor = net(x, prev_act_scaling_factor=S_A)[0].sum()
        return total

    _, (g_scale, g_bias) = kwcell.grad(loss, 0, weights)(X)
    w_int = np.array([[3, -7, 2], [-1, 4, 5]], np.float32)
    assert g_scale.dtype == ms.float32 and g_bias.dtype == ms.float32
    assert np.allclose(g_scale.asnumpy(), (X.asnumpy() @ w_int.T).sum(0), rtol=1e-5)
    assert np.allclose(g_bias.asnumpy(), [2.0, 2.0])


def test_float64_option(mode: str) -> None:
    """False: the own dtypes, said in the message; True: float64 or the error."""
    assert gradcheck(c.Linear(), X, float64=False) is True
    with pytest.raises(GradcheckError, match=r"for 'self.bias' \(computed in Float32 \(float64=False\);"):
        gradcheck(c.Linear(wrong=True), X, float64=False)
    with pytest.raises(TypeError, match=r"Float32Only takes float32 only"):
        gradcheck(c.FLOAT32_ONLY, X, A, float64=True)


def test_weights_of_a_function_or_not_parameters_are_type_errors() -> None:
    from . import functional_lib as lib

    with pytest.raises(
        TypeError, match=r"gradcheck: trainable_params=True needs a cell; sin_gate is a function"
    ):
        gradcheck(lib.sin_gate, X, trainable_params=True)
    net = c.Linear()
    net.internal_params = [net.weight, X]  # type: ignore[list-item]
    with pytest.raises(
        TypeError, match=r"gradcheck: Linear.internal_params\[1\] is a Tensor; internal_params"
    ):
        gradcheck(net, X)


def test_weights_only_and_nothing_to_check() -> None:
    assert gradcheck(c.Embedding(), IDS) is True  # integer ids: the weight is checked alone
    net = c.Linear()
    net.internal_params = []
    with pytest.raises(
        ValueError,
        match=r"gradcheck: no floating-point Tensor among the arguments of Linear, and no floating "
        r"Parameter in its internal_params \(trainable_params=False\)",
    ):
        gradcheck(net, Tensor(np.array([1, 2], np.int32)))
