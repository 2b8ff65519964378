"""Errors keep MindSpore's contract.

A bprop in MindSpore's own form whose problem ``nn.Cell`` reports only when the gradient is
taken gets a warning when the class is created and, when the gradient is taken, an exception
that is an instance of both ``KwCellDefinitionError`` and the class ``nn.Cell`` raises for the
same mistake in that mode, with MindSpore's own wording as its first line and kwcell's
message after it. Each twin in tests/error_contract_cells.py is run on ``nn.Cell`` and on
``KwCell`` in PYNATIVE, GRAPH_MODE and PYNATIVE ``@ms.jit``, and the two are compared.
"""

from __future__ import annotations

import pickle
import re
import warnings
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn

from kwcell import KwCell, KwCellDefinitionError, KwCellWarning
from kwcell._errors import GRAPH, PYNATIVE, deferred_error
from kwcell._validate import MINDSPORE_ERRORS

from .error_contract_cells import jit_call, make

X = Tensor(np.array([0.5, -1.0, 2.0], np.float32))
Y = Tensor(np.array([1.5, 0.25, -3.0], np.float32))

PLAIN = make(nn.Cell)
with warnings.catch_warnings(record=True) as _caught:
    warnings.simplefilter("always", KwCellWarning)
    KW = make(KwCell)
_SUFFIX = re.compile(r" \(MindSpore's bprop form: the gradient of .* will raise this error\)$")
#: kwcell's own message for each KwCell twin: what it warned when the class was created.
WARNED = {
    name: _SUFFIX.sub("", str(w.message))
    for name in KW
    for w in _caught
    if issubclass(w.category, KwCellWarning) and f".{name}.bprop" in str(w.message)
}

_ONE_INPUT = {"OutOnly", "StarNoSelf", "JitBprop"}


def _gradient(cls: type[nn.Cell], mode: str) -> Any:
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    net = cls()
    name = cls.__name__
    if name == "SingleReturn":
        args: tuple[Any, ...] = (2.0, Y)
        position: int | tuple[int, ...] = 1
    elif name in _ONE_INPUT:
        args, position = (X,), 0
    else:
        args, position = (X, Y), (0, 1)
    fn = jit_call(net, len(args)) if mode == "jit" else net
    return ms.grad(fn, grad_position=position)(*args)


def _as_numpy(grads: Any) -> Any:
    if isinstance(grads, tuple):
        return [g.asnumpy() for g in grads]
    return grads.asnumpy()


def _nn_cell_error(cls: type[nn.Cell], mode: str) -> Exception | None:
    try:
        _gradient(cls, mode)
    except Exception as exc:  # noqa: BLE001 - what nn.Cell raises is what is measured
        return exc
    return None


def _pattern(first_line: str) -> str:
    """A regex for MindSpore's first line: its wording, without the parts no cell controls
    (a graph's internal name, the abstract value a graph got)."""
    if m := re.fullmatch(r"Function \S+, (.*)", first_line):
        return r"(?m)\AFunction \S+, " + re.escape(m[1]) + "$"
    if m := re.fullmatch(r"(For bprop function, output should be a tuple, but got ).*", first_line):
        return r"\A" + re.escape(m[1])
    return r"(?m)\A" + re.escape(first_line) + "$"


def test_every_kwcell_twin_warned_at_class_creation() -> None:
    assert sorted(WARNED) == sorted(KW)


@pytest.mark.parametrize("mode", ["pynative", "graph", "jit"])
@pytest.mark.parametrize("name", sorted(PLAIN))
def test_deferred_error_is_what_nn_cell_raises_then_kwcell_text(name: str, mode: str) -> None:
    theirs = _nn_cell_error(PLAIN[name], mode)
    kwcell_text = WARNED[name]
    if theirs is None:
        # nn.Cell runs this cell in this mode (measured): so does KwCell, with its gradient,
        # or it raises kwcell's own error where it cannot (a bprop without self in a graph).
        try:
            ours = _gradient(KW[name], mode)
        except KwCellDefinitionError as own:
            assert type(own) is KwCellDefinitionError
            assert str(own) == kwcell_text
            return
        np.testing.assert_allclose(
            np.asarray(_as_numpy(ours)), np.asarray(_as_numpy(_gradient(PLAIN[name], mode))), rtol=1e-6
        )
        return
    first = str(theirs).splitlines()[0]
    # What catches nn.Cell's error catches kwcell's, and so does KwCellDefinitionError.
    with pytest.raises(type(theirs), match=_pattern(first)) as info:
        _gradient(KW[name], mode)
    ours = info.value
    assert isinstance(ours, KwCellDefinitionError)
    assert str(ours).splitlines() == [str(ours).splitlines()[0], kwcell_text]
    assert re.search(_pattern(first), str(ours).splitlines()[0])


def test_the_table_says_where_nn_cell_raises_nothing() -> None:
    """Modes a row of the table leaves out are the modes where nn.Cell runs the cell."""
    assert set(MINDSPORE_ERRORS["jit_bprop"]) == {PYNATIVE}  # @jit on bprop: graphs ignore it
    assert set(MINDSPORE_ERRORS["call"]) == {PYNATIVE}
    for row in ("no_out_dout", "too_few_params", "too_many_params", "single_return"):
        assert set(MINDSPORE_ERRORS[row]) == {GRAPH}


@pytest.mark.parametrize("base", [RuntimeError, ValueError, TypeError, KeyError, OSError])
def test_deferred_error_class_is_both(base: type[Exception]) -> None:
    cls = deferred_error(base)
    assert cls is deferred_error(base)
    error = cls("MindSpore's words\nkwcell's words")
    assert isinstance(error, base) and isinstance(error, KwCellDefinitionError)
    assert isinstance(error, TypeError)  # as every KwCellDefinitionError
    with pytest.raises(base, match="MindSpore's words"):
        raise error
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is cls and again.args == error.args
    assert cls.__module__ == "kwcell._errors"
    assert cls.__name__ == ("KwCellDefinitionError" if base is TypeError else f"KwCell{base.__name__}")
