"""Hostile and odd definitions: none may change what generated code does.

Each case either works (the default that reaches construct is the very object, or an equal
value, and the gradient is right) or fails with a clear ``KwCellDefinitionError``. The
generated source never contains a default's ``repr`` unless it is a plain literal.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import gc
import linecache
import math
import os
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import kwcell
from kwcell import KwCell, KwCellDefinitionError
from kwcell._meta import info_of

MARKER = "kwcell-hostile-marker"
SEEN: dict[str, Any] = {}


class Hostile:
    """An object whose ``repr`` is code that would run a shell command if evaluated."""

    def __repr__(self) -> str:
        return f"__import__('os').system('echo {MARKER} > /dev/null')"


class BadRepr:
    """An object whose ``repr`` raises."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


class Color(enum.Enum):
    RED = 1


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int


def _x() -> Tensor:
    return Tensor(np.array([1.0, 2.0, 3.0], np.float32))


def _generated_sources(cls: type) -> str:
    info = info_of(cls)
    assert info is not None
    return "".join("".join(linecache.getlines(path)) for path in info.files.values()) + "".join(
        linecache.getlines(info.bind.__code__.co_filename)
    )


def _make(default: Any) -> type[KwCell]:
    class Net(KwCell):
        def construct(self, x, d=default):  # type: ignore[no-untyped-def]
            SEEN["d"] = d
            return x * 3.0

        def bprop(self, x, d, out, dout):  # type: ignore[no-untyped-def]
            return {"x": dout * 3.0}

    return Net


HOSTILE = Hostile()
CODE_LIKE = "'''); __import__('os').system('x'); ('''"
BAD_REPR = BadRepr()
ODD_DEFAULTS: list[Any] = [
    HOSTILE,
    BAD_REPR,
    math.nan,
    math.inf,
    -math.inf,
    -0.0,
    complex(math.nan, 1.0),
    10**100,
    10**5000,  # repr() raises ValueError (int_max_str_digits)
    -(2**63),
    ((1, (2, (3, "a"))), ()),
    (1, [2]),  # not a literal: holds a list
    "quote ' double \" newline \n tab \t backslash \\ end",
    CODE_LIKE,
    b"\x00\xff'",
    "ünïcödé ✓",
    Color.RED,
    Point(1, 2),
    [1, 2],
    {"a": 1},
    None,
    True,
    Ellipsis,
    object(),
    Tensor(np.array([5.0], np.float32)),
]


def _plain(default: Any) -> type[nn.Cell]:
    """The hand-written MindSpore cell with the same math and bprop (positional)."""

    class Plain(nn.Cell):
        def construct(self, x, d=default):  # type: ignore[no-untyped-def]
            SEEN["plain"] = d
            return x * 3.0

        def bprop(self, x, d, out, dout):  # type: ignore[no-untyped-def]
            return dout * 3.0, ops.zeros_like(d) if isinstance(d, Tensor) else 0

    return Plain


def _outcome(fn: Any) -> Any:
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - compared with the plain cell's exception type
        return type(e)


@pytest.mark.parametrize("default", ODD_DEFAULTS, ids=lambda v: type(v).__name__)
def test_odd_default_reaches_construct_unchanged(default: Any) -> None:
    """kwcell gives the very default object to construct, and otherwise does what nn.Cell does.

    Some values cannot be a cell input in MindSpore at all (an int beyond int64 in PyNative,
    non-UTF-8 bytes in a backward pass): there the hand-written cell fails too, with the same
    exception type, and kwcell must not fail differently.
    """
    net_cls = _make(default)
    net, plain = net_cls(), _plain(default)()
    x = _x()
    SEEN.clear()
    out, expected = _outcome(lambda: net(x)), _outcome(lambda: plain(x))
    if isinstance(expected, type):
        assert out is expected
    else:
        assert SEEN["d"] is default
        assert SEEN["plain"] is default
        np.testing.assert_allclose(out.asnumpy(), [3.0, 6.0, 9.0])
    g = _outcome(lambda: kwcell.grad(net)(x))
    g_plain = _outcome(lambda: ms.grad(plain)(x))
    if isinstance(g_plain, type):
        # Both fail inside MindSpore; for a 5,000-digit int MindSpore's own argument check
        # fails first (ValueError from str()) because the default is an explicit core input.
        assert isinstance(g, type)
        assert issubclass(g, (g_plain, ValueError))
    else:
        np.testing.assert_allclose(g.asnumpy(), [3.0, 3.0, 3.0])
        np.testing.assert_allclose(g_plain.asnumpy(), [3.0, 3.0, 3.0])
    info = info_of(net_cls)
    assert info is not None
    assert info.bind(net, x)[1] is default
    assert MARKER not in _generated_sources(net_cls)


def test_values_mindspore_cannot_take_as_inputs_are_the_same_for_nn_cell() -> None:
    """Pin which odd defaults MindSpore itself rejects, so that a change in MindSpore is noticed."""
    rejected = [d for d in ODD_DEFAULTS if isinstance(_outcome(lambda d=d: ms.grad(_plain(d)())(_x())), type)]
    assert [type(d).__name__ for d in rejected] == ["int", "int", "bytes"]


def test_code_like_string_default_is_a_string_literal() -> None:
    """A string that looks like code goes into source only as a string literal."""
    text = CODE_LIKE
    source = _generated_sources(_make(text))
    rendered = [
        line.split("d=", 1)[1].rsplit("):", 1)[0]
        for line in source.splitlines()
        if "def " in line and "d=" in line
    ]
    assert rendered
    for r in rendered:
        assert ast.literal_eval(r) == text


def test_hostile_repr_in_error_message_is_only_text() -> None:
    """A bprop default that differs is reported with its repr, never evaluated."""
    with pytest.raises(KwCellDefinitionError, match=r"Net\.bprop: parameter 'd' has default"):

        class Net(KwCell):
            def construct(self, x, d=HOSTILE):  # type: ignore[no-untyped-def]
                return x

            def bprop(self, x, d=1, *, out, dout):  # type: ignore[no-untyped-def]
                return {"x": dout}


def test_unreprable_default_in_error_message() -> None:
    """A default whose repr raises still gives a KwCellDefinitionError, not the repr's error."""
    with pytest.raises(KwCellDefinitionError, match=r"Net\.bprop: parameter 'z' is not a parameter"):

        class Net(KwCell):
            def construct(self, x, d=BAD_REPR, big=10**5000):  # type: ignore[no-untyped-def]
                return x

            def bprop(self, x, d, big, z, *, out, dout):  # type: ignore[no-untyped-def]
                return {"x": dout}


def test_same_nan_object_default_in_bprop_is_accepted() -> None:
    class Net(KwCell):
        def construct(self, x, d=math.nan):  # type: ignore[no-untyped-def]
            SEEN["d"] = d
            return x * 3.0

        def bprop(self, x, d=math.nan, *, out, dout):  # type: ignore[no-untyped-def]
            return {"x": dout * 3.0}

    SEEN.clear()
    g = kwcell.grad(Net())(_x())
    assert SEEN["d"] is math.nan
    np.testing.assert_allclose(g.asnumpy(), [3.0, 3.0, 3.0])


def test_negative_zero_default_keeps_its_sign() -> None:
    net = _make(-0.0)()
    SEEN.clear()
    net(_x())
    assert math.copysign(1.0, SEEN["d"]) == -1.0


def test_names_shadowing_builtins_and_helpers() -> None:
    """Parameters named like builtins, MindSpore names and the generated code's helpers."""

    class Net(KwCell):
        def construct(self, len, isinstance, tuple, ops, Tensor, zeros_like=2.0, normalize=3.0):  # type: ignore[no-untyped-def]
            return len * isinstance + tuple * ops * Tensor * zeros_like * normalize

        def bprop(self, len, isinstance, tuple, ops, Tensor, zeros_like, normalize, out, dout):  # type: ignore[no-untyped-def]
            return {
                "len": dout * isinstance,
                "isinstance": dout * len,
                "tuple": dout * ops * Tensor * zeros_like * normalize,
            }

    a, b, c = (Tensor(np.array([v], np.float32)) for v in (2.0, 5.0, 7.0))
    net = Net()
    out = net(a, b, c, ops=1.0, Tensor=1.0)
    np.testing.assert_allclose(out.asnumpy(), [2 * 5 + 7 * 6.0])
    grads = kwcell.grad(net, grad_position=("len", "isinstance", "tuple"))(a, b, c, ops=1.0, Tensor=1.0)
    np.testing.assert_allclose([g.asnumpy()[0] for g in grads], [5.0, 2.0, 6.0])


def test_unicode_identifiers() -> None:
    class Netz(KwCell):
        def construct(self, größe, β=2.0, *, 变量=3.0):  # type: ignore[no-untyped-def]
            return größe * β + 变量

        def bprop(self, 变量, größe, β, *, out, dout):  # type: ignore[no-untyped-def]
            return {"größe": dout * β}

    net = Netz()
    g = kwcell.grad(net)(_x(), 变量=1.0, β=4.0)
    np.testing.assert_allclose(g.asnumpy(), [4.0, 4.0, 4.0])
    info = info_of(Netz)
    assert info is not None
    assert info.bind(net, 1, 变量=5) == (1, 2.0, 5)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("_kwcell_core", r"Net\.construct: parameter '_kwcell_core' .* uses a name kwcell reserves"),
        ("_kwcell_owner", r"Net\.construct: parameter '_kwcell_owner' .* uses a name kwcell reserves"),
        ("_kwcell_default_x", r"parameter '_kwcell_default_x' .* uses a name kwcell reserves"),
        ("out", r"Net\.construct: parameter 'out' .* clashes with bprop's 'out' argument"),
        ("dout", r"Net\.construct: parameter 'dout' .* clashes with bprop's 'dout' argument"),
    ],
)
def test_reserved_names_are_rejected(name: str, message: str) -> None:
    namespace: dict[str, Any] = {"KwCell": KwCell}
    source = (
        f"class Net(KwCell):\n"
        f"    def construct(self, x, {name}):\n        return x\n"
        f"    def bprop(self, x, {name}, *args):\n        return args\n"
    )
    # The classic bprop form skips bprop checks, so only the construct rule can fire.
    source = source.replace(f"def bprop(self, x, {name}, *args)", "def bprop(self, *args)")
    with pytest.raises(KwCellDefinitionError, match=message):
        exec(compile(source, "<hostile>", "exec"), namespace)


def test_self_as_parameter_name_is_rejected() -> None:
    with pytest.raises(KwCellDefinitionError, match=r"Net\.construct: parameter 'self' .* reserves"):

        class Net(KwCell):
            def construct(this, x, self):  # type: ignore[no-untyped-def]
                return x

            def bprop(this, *args):  # type: ignore[no-untyped-def]
                return args[:2]


def test_bprop_self_may_have_another_name() -> None:
    class Net(KwCell):
        def construct(this, x, w=2.0):  # type: ignore[no-untyped-def]
            return x * w

        def bprop(me, x, w, out, dout):  # type: ignore[no-untyped-def]
            return {"x": dout * w}

    g = kwcell.grad(Net())(_x(), w=5.0)
    np.testing.assert_allclose(g.asnumpy(), [5.0, 5.0, 5.0])


def test_default_named_like_a_closure_of_bprop() -> None:
    """The user's closure variables keep their values in the rewritten bprop."""
    scale = 7.0
    _kwcell_user_bprop = "not the generated helper"

    class Net(KwCell):
        def construct(self, x, d=HOSTILE):  # type: ignore[no-untyped-def]
            return x * scale

        def bprop(self, x, d, out, dout):  # type: ignore[no-untyped-def]
            assert _kwcell_user_bprop == "not the generated helper"
            return {"x": dout * scale}

    g = kwcell.grad(Net())(_x())
    np.testing.assert_allclose(g.asnumpy(), [7.0, 7.0, 7.0])


def test_generated_files_never_contain_hostile_text_on_disk() -> None:
    net_cls = _make(HOSTILE)
    net_cls()._kwcell_dispatcher()  # the generated file is written when MindSpore first runs the cell
    info = info_of(net_cls)
    assert info is not None
    for path in [*info.files.values(), info.bind.__code__.co_filename]:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert MARKER not in text
    del net_cls, info
    gc.collect()


def test_hostile_default_in_graph_mode() -> None:
    """Non-literal defaults go in by reference in GRAPH_MODE too; the source stays clean."""
    ms.set_context(mode=ms.GRAPH_MODE)
    net = GRAPH_NET
    g = kwcell.grad(net)(_x())
    np.testing.assert_allclose(g.asnumpy(), [6.0, 6.0, 6.0])
    g = kwcell.grad(net)(_x(), s=-0.0, t=((3, 4), "z"))
    np.testing.assert_allclose(g.asnumpy(), [6.0, 6.0, 6.0])
    assert MARKER not in _generated_sources(GraphNet)
    assert os.path.exists(info_of(GraphNet).files["bprop"])  # type: ignore[union-attr]


class GraphNet(KwCell):
    def construct(self, x, s=math.inf, big=2**62, t=((1, 2), "q'\n")):  # type: ignore[no-untyped-def]
        return ops.mul(x, 6.0)

    def bprop(self, x, s, big, t, out, dout):  # type: ignore[no-untyped-def]
        return {"x": dout * 6.0}


GRAPH_NET = GraphNet()


def test_two_nan_literals_are_the_same_default() -> None:
    """float("nan") written in construct and again in bprop: two objects, one value."""

    class Net(KwCell):
        def construct(self, x, d=float("nan")):  # type: ignore[no-untyped-def]
            return x * 3.0

        def bprop(self, x, d=float("nan"), *, out, dout):  # type: ignore[no-untyped-def]
            return {"x": dout * 3.0}

    np.testing.assert_allclose(kwcell.grad(Net())(_x()).asnumpy(), [3.0, 3.0, 3.0])
