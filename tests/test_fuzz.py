"""Differential property tests: kwcell binds every call exactly as Python binds construct.

For random signatures (positional-only, positional-or-keyword, keyword-only, defaults of every
literal kind) and random calls, valid and invalid, the KwCell binder, the real cell call and
the ``kwcell.grad`` binder must agree with Python's own binding of the same parameter list on
acceptance, exception type and message, and on the very objects that are bound. With Tensor
inputs, each gradient must reach its own input: ``construct`` is ``sum_i c_i * p_i`` and
``bprop`` returns ``{name: c_i * dout}``.
"""

from __future__ import annotations

from typing import Any

import mindspore as ms
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from mindspore import Tensor

import kwcell
from kwcell._meta import info_of

from .fuzz_support import (
    NAMES,
    Sig,
    bind_outcome,
    calls,
    load_module,
    same_outcome,
    signatures,
    unload_module,
    valid_tensor_calls,
)

CALLS_PER_SIGNATURE = 8


def grad_binder(fn: Any) -> Any:
    """``kwcell.grad(fn)`` with MindSpore's gradient object swapped for ``lambda *a: a``.

    What the generated gradient function passes to MindSpore, positionally: its binding.
    """
    gfn: Any = kwcell.grad(fn)
    cell = gfn.__closure__[gfn.__code__.co_freevars.index("_kwcell_gradient")]
    cell.cell_contents = lambda *args: args
    return gfn


def check_binding(sig: Sig, module: Any, call_list: list[Any], *, real_cell_calls: bool) -> None:
    """Compare Python's binding of ``ref`` with kwcell's binder, cell call and grad binder."""
    net = module.Bind()
    bind = info_of(module.Bind).bind  # type: ignore[union-attr]
    gfn = kwcell.grad(module.ref_noself)
    gbind = grad_binder(module.ref_noself)
    for call in call_list:
        expected = bind_outcome(module.ref, net, *call.args, **call.kwargs)
        actual = bind_outcome(bind, net, *call.args, **call.kwargs)
        assert same_outcome(actual, expected), (sig, call, actual, expected)
        expected_noself = bind_outcome(module.ref_noself, *call.args, **call.kwargs)
        grad_bind = bind_outcome(gbind, *call.args, **call.kwargs)
        assert same_outcome(grad_bind, expected_noself), (sig, call, grad_bind, expected_noself)
        if expected_noself[0] == "error":
            # The public gradient function rejects the call before MindSpore sees it.
            grad_call = bind_outcome(gfn, *call.args, **call.kwargs)
            assert same_outcome(grad_call, expected_noself), (sig, call, grad_call, expected_noself)
        if real_cell_calls:
            cell = bind_outcome(net, *call.args, **call.kwargs)
            assert same_outcome(cell, expected), (sig, call, cell, expected)


def _binding(data: st.DataObject, sig: Sig) -> None:
    module = load_module(sig)
    try:
        call_list = [data.draw(calls(sig)) for _ in range(CALLS_PER_SIGNATURE)]
        check_binding(sig, module, call_list, real_cell_calls=True)
    finally:
        unload_module(module)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), sig=signatures())
def test_binding_agrees_with_python(data: st.DataObject, sig: Sig) -> None:
    """80 signatures x 8 calls = 640 calls through binder, cell call and grad binder (the
    slow run takes 300; bench/fuzz_100k.py takes 100,000)."""
    _binding(data, sig)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), sig=signatures())
def test_binding_agrees_with_python_300(data: st.DataObject, sig: Sig) -> None:
    """300 signatures x 8 calls = 2,400 calls."""
    _binding(data, sig)


def _tensor(i: int) -> Tensor:
    return Tensor(np.full((2,), 10.0 + i, np.float32))


def check_grads(
    sig: Sig, module: Any, cls: Any, positional: tuple[int, ...], keyword: dict[str, int]
) -> None:
    """Each input given as a Tensor gets gradient c_i; construct's value is sum_i c_i * p_i."""
    net = cls()
    given_idx = sorted([*positional, *keyword.values()])
    args = tuple(_tensor(i) for i in positional)
    kwargs = {name: _tensor(i) for name, i in keyword.items()}
    values = [10.0 + i if i in given_idx else float(sig.defaults[i]) for i in range(len(sig.names))]
    expected_out = sum(c * v for c, v in zip(sig.constants, values, strict=True))
    names = tuple(sig.names[i] for i in given_idx)
    module._RECORD.clear()
    out, grads = kwcell.value_and_grad(net, grad_position=names)(*args, **kwargs)
    np.testing.assert_allclose(out.asnumpy(), [expected_out] * 2, rtol=1e-5)
    grads = grads if isinstance(grads, tuple) else (grads,)
    assert len(grads) == len(names)
    for g, i in zip(grads, given_idx, strict=True):
        np.testing.assert_allclose(g.asnumpy(), [sig.constants[i]] * 2)
    if ms.get_context("mode") == ms.PYNATIVE_MODE:
        # The values that reached construct and bprop, in construct's order.
        kinds = [kind for kind, _ in module._RECORD]
        assert kinds[0] == "construct" and "bprop" in kinds
        for kind, got in module._RECORD:
            for i, v in enumerate(got):
                if i in given_idx:
                    np.testing.assert_allclose(v.asnumpy(), [10.0 + i] * 2)
                elif kind == "construct":
                    assert v is sig.defaults[i]
                else:  # MindSpore hands bprop its non-Tensor inputs as equal copies
                    assert v == sig.defaults[i]


_grad_sigs = signatures(literal_defaults=False, max_params=4).filter(lambda s: len(s.names) > 0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), sig=_grad_sigs)
def test_gradients_reach_the_right_input_pynative(data: st.DataObject, sig: Sig) -> None:
    positional, keyword = data.draw(valid_tensor_calls(sig))
    if not positional and not keyword:
        return
    module = load_module(sig)
    try:
        check_grads(sig, module, module.Grad, positional, keyword)
    finally:
        unload_module(module)


# MindSpore 2.10's graph parser rejects positional-only parameters in any construct
# ("The name 'a' is not defined"), for a plain nn.Cell too: GRAPH_MODE signatures have none.
# It also rejects a parameter named 'Tensor' ("The name 'Tensor' is not defined"), nn.Cell too.
_graph_sigs = signatures(
    literal_defaults=False,
    max_params=4,
    positional_only=False,
    pool=tuple(n for n in NAMES if n != "Tensor"),
).filter(lambda s: len(s.names) > 0)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.generate],  # each example compiles graphs: no shrinking
)
@given(data=st.data(), sig=_graph_sigs)
def test_gradients_reach_the_right_input_graph(data: st.DataObject, sig: Sig) -> None:
    positional, keyword = data.draw(valid_tensor_calls(sig))
    if not positional and not keyword:
        return
    module = load_module(sig)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        check_grads(sig, module, module.GraphGrad, positional, keyword)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        unload_module(module)
