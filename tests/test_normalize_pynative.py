"""``normalize_pynative`` (what the PYNATIVE bprop calls) gives exactly what ``normalize`` gives.

It turns the usual returns into MindSpore's tuple in one pass and leaves everything else to
``normalize``; this compares the two on every combination of input kinds and return forms,
results and errors alike.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from mindspore import Parameter, Tensor

from kwcell._runtime import normalize, normalize_pynative
from tests.test_normalize import values

NAMES = ("a", "b")
WHERE = "Net.bprop"
G = Tensor(np.array([0.5, 0.25], np.float32))
W = Parameter(Tensor(np.ones(2, np.float32)), name="w")

# What an input can be: the fast path takes Tensors, None and plain values; the rest is
# normalize's.
INPUTS: list[Any] = [
    Tensor(np.array([1.0, 2.0], np.float32)),
    None,
    3.0,
    2,
    True,
    "s",
    (Tensor(np.ones(2, np.float32)), 1.0),
    [Tensor(np.ones(2, np.float32))],
    {"k": Tensor(np.ones(2, np.float32))},
]
# What one gradient entry can be.
ENTRIES: list[Any] = [G, None, 0, (G, None), {"k": G}]


def _returns() -> list[Any]:
    forms: list[Any] = []
    for ga, gb in itertools.product(ENTRIES, repeat=2):
        forms += [(ga, gb), [ga, gb], {"a": ga, "b": gb}, {"a": ga}, {"b": gb}]
    forms += [{}, (), (G,), (G, G, G), {"c": G}, {"a": G, W: G}, ((G, G), {W: G}), G, None, 3.0]
    forms += [{"a": G, "b": {W: G}}, (G, {}), iter([G, G]), {G, 1}]
    return forms


def _outcome(fn: Any, grads: Any, inputs: tuple[Any, ...], extras_ok: bool) -> Any:
    try:
        return ("ok", values(fn(grads, inputs, NAMES, WHERE, extras_ok)))
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return ("raised", type(exc), str(exc))


def test_same_result_or_error_as_normalize_for_every_form() -> None:
    compared = 0
    for first, second in itertools.product(INPUTS, repeat=2):
        for grads in _returns():
            for extras_ok in (False, True):
                inputs = (first, second)
                expected = _outcome(normalize, _fresh(grads), inputs, extras_ok)
                found = _outcome(normalize_pynative, _fresh(grads), inputs, extras_ok)
                assert found == expected, (grads, inputs, extras_ok)
                compared += 1
    assert compared > 10_000


def test_a_full_tuple_of_tensors_is_passed_on_entry_by_entry() -> None:
    x = Tensor(np.array([1.0, 2.0], np.float32))
    result = normalize_pynative((G, None), (x, x), NAMES, WHERE)
    assert type(result) is tuple and result[0] is G
    np.testing.assert_array_equal(result[1].asnumpy(), np.zeros(2, np.float32))


def _fresh(grads: Any) -> Any:
    """A one-shot iterator is consumed by the first call: each call gets its own."""
    if type(grads).__name__.endswith("iterator"):
        return iter([G, G])
    return grads
