"""kwcell.gradcheck accepts right bprops and names the input of a wrong one, in both modes."""

from __future__ import annotations

import re

import numpy as np
import pytest
from mindspore import Tensor

import kwcell
from kwcell import GradcheckError, gradcheck

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
