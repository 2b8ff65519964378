"""The bprop that runs is the bprop the user's code defines.

PYNATIVE runs the user's own function. GRAPH_MODE and @ms.jit compile bprop from its source
text, which kwcell takes only when it still matches the function (never a file edited after
import); without such source, GRAPH_MODE gives a clear error and PYNATIVE still works, as on
nn.Cell. Modules are written to a temporary directory to play the user's files.
"""

from __future__ import annotations

import importlib
import linecache
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

from kwcell import KwCell

X = np.array([0.5, -1.0, 2.0], np.float32)

FACTORY = """
from mindspore import ops
from kwcell import KwCell


def make():
    class Sin(KwCell):
        def construct(self, x):
            return ops.sin(x)

        def bprop(self, x, out, dout):
            return (ops.cos(x) * dout,)

    return Sin
"""


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("user_")]:
        del sys.modules[name]


def _grad(net: nn.Cell) -> Any:
    return ms.grad(net)(Tensor(X)).asnumpy()


def test_file_edited_after_import_is_never_compiled_in_its_place(user_dir: Path) -> None:
    path = user_dir / "user_edited.py"
    path.write_text(FACTORY)
    module = importlib.import_module("user_edited")
    path.write_text(FACTORY.replace("ops.cos(x) * dout", "100 * ops.cos(x) * dout"))
    linecache.checkcache(str(path))  # what a notebook or autoreload would see now
    net = module.make()()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(_grad(net), np.cos(X), rtol=1e-6)  # the function that was imported
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(
        RuntimeError, match=r"Sin\.bprop: GRAPH_MODE and @ms\.jit compile bprop from its source"
    ):
        _grad(net)


def test_class_made_by_exec_works_in_pynative_and_is_a_clear_error_in_graph_mode() -> None:
    """GRAPH_MODE cannot compile its construct either: MindSpore's own message, as on nn.Cell."""
    namespace: dict[str, Any] = {"__name__": __name__}
    exec(FACTORY, namespace)  # no file: as in a REPL or a generated module
    net = namespace["make"]()()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(_grad(net), np.cos(X), rtol=1e-6)
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(OSError, match="Please write source code to a python file"):
        _grad(net)


def test_bprop_without_source_next_to_construct_with_source_is_a_clear_graph_error() -> None:
    namespace: dict[str, Any] = {}
    exec("def bprop(self, x, out, dout):\n    return (2 * dout,)\n", namespace)

    class Half(KwCell):  # construct in this file; bprop from exec
        def construct(self, x: Tensor) -> Any:
            return 2 * x

        bprop = namespace["bprop"]

    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(_grad(Half()), np.full(3, 2.0), rtol=1e-6)
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(
        RuntimeError, match=r"Half\.bprop: GRAPH_MODE and @ms\.jit compile bprop from its source"
    ):
        _grad(Half())


class LambdaBprop(KwCell):
    def construct(self, x: Tensor) -> Any:
        return 3 * x

    bprop = lambda self, x, out, dout: (3 * dout,)  # noqa: E731 - the shape under test


def test_lambda_bprop_works_in_pynative() -> None:
    np.testing.assert_allclose(_grad(LambdaBprop()), np.full(3, 3.0), rtol=1e-6)


def test_module_without_source_works_in_pynative(user_dir: Path) -> None:
    """A module shipped as .pyc only: the function exists, its text does not."""
    path = user_dir / "user_compiled.py"
    path.write_text(FACTORY)
    compiled = user_dir / "user_compiled.pyc"
    import py_compile

    py_compile.compile(str(path), cfile=str(compiled))
    path.unlink()
    linecache.checkcache(str(path))
    module = importlib.import_module("user_compiled")
    net = module.make()()
    np.testing.assert_allclose(_grad(net), np.cos(X), rtol=1e-6)


def test_tab_indented_file(user_dir: Path, mode: str) -> None:
    source = FACTORY.replace("    ", "\t")
    assert "\t\t\treturn (ops.cos(x) * dout,)" in source
    (user_dir / "user_tabs.py").write_text(source)
    net = importlib.import_module("user_tabs").make()()
    np.testing.assert_allclose(_grad(net), np.cos(X), rtol=1e-6)


class Sin(KwCell):
    def construct(self, x: Tensor) -> Any:
        return ops.sin(x)

    def bprop(self, x: Tensor, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": ops.cos(x) * dout}


def test_source_in_the_repo_is_used_in_every_mode(mode: str) -> None:
    np.testing.assert_allclose(_grad(Sin()), np.cos(X), rtol=1e-6)


# fmt: off
class ColumnZero(KwCell):
    def construct(self, x: Tensor, w: float = 1.0) -> Any:
        return w * x

    def bprop(self, x: Tensor, w: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": w *
dout}
# fmt: on


def test_a_column_zero_line_in_bprop_is_named_as_the_cause() -> None:
    """Such a bprop fails in GRAPH_MODE on nn.Cell too (MindSpore dedents the source); kwcell's
    message says what is wrong instead of blaming exec, a REPL or an edited file."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(_grad(ColumnZero()), np.full(3, 1.0), rtol=1e-6)
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(RuntimeError, match=r"ColumnZero\.bprop: .* starts at column 0 .*Indent that line"):
        _grad(ColumnZero())
