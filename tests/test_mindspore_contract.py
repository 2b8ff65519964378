"""The MindSpore behaviours kwcell relies on, each asserted on plain MindSpore (no kwcell).

On a new MindSpore, run this file first: each failure names the behaviour that changed and
the kwcell module that depends on it, which is where the change lands.
"""

from __future__ import annotations

import importlib
import inspect
import linecache
import os
import re
import sys
import types
from collections.abc import Iterator
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, context, nn, ops


def _contract(behaviour: str, module: str) -> str:
    return f"MindSpore contract broken: {behaviour}. kwcell relies on it in {module}: change it there."


@pytest.fixture
def graph() -> Iterator[None]:
    ms.set_context(mode=ms.GRAPH_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


X = np.array([0.3, -0.7, 1.1], np.float32)


class _Bprop(nn.Cell):
    def construct(self, x: Tensor) -> Any:
        return ops.sin(x)

    def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout * 5.0,)


class _Outer(nn.Cell):
    def __init__(self, inner: nn.Cell) -> None:
        super().__init__()
        self.inner = inner

    def construct(self, x: Tensor) -> Any:
        return self.inner(x).sum()


def test_a_bprop_attribute_makes_a_custom_bprop_cell(graph: None) -> None:
    """A cell gets custom-bprop treatment when it has an attribute ``bprop`` (Cell.__init__ and
    the graph parser): the visible KwCell class keeps none, the hidden core has one."""
    got = ms.grad(_Outer(_Bprop()))(Tensor(X)).asnumpy()
    assert np.allclose(got, 5.0), _contract(
        "a cell with a bprop attribute uses it in graphs", "kwcell/_cell.py"
    )
    assert getattr(_Bprop(), "has_bprop", False), _contract(
        "Cell.has_bprop is set from a bprop attribute", "kwcell/_core.py"
    )


def test_the_graph_parser_follows_wrapped(graph: None) -> None:
    """The graph parser parses ``fn.__wrapped__`` instead of ``fn`` (inspect.unwrap): kwcell's
    PYNATIVE bprop carries the positional graph version there."""

    def py(self: Any, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout * 1.0,)

    def compiled(self: Any, x: Tensor, out: Tensor, dout: Tensor) -> Any:
        return (dout * 7.0,)

    py.__wrapped__ = compiled  # type: ignore[attr-defined]

    class Cell(nn.Cell):
        def construct(self, x: Tensor) -> Any:
            return ops.sin(x)

    Cell.bprop = py  # type: ignore[attr-defined]
    got = ms.grad(_Outer(Cell()))(Tensor(X)).asnumpy()
    assert np.allclose(got, 7.0), _contract("the graph parser unwraps __wrapped__", "kwcell/_generate.py")


def test_the_graph_parser_reads_source_from_linecache(graph: None) -> None:
    """Generated functions have no file: their source is registered in ``linecache`` under a
    ``<kwcell generated ...>`` name, and the parser reads it through ``inspect.getsourcelines``."""
    name = "<kwcell contract test>"
    source = "def construct(self, x):\n    return x * 3.0\n"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    namespace: dict[str, Any] = {"__name__": __name__}
    exec(compile(source, name, "exec"), namespace)

    class Cell(nn.Cell):
        pass

    Cell.construct = namespace["construct"]  # type: ignore[method-assign]
    try:
        got = ms.grad(_Outer(Cell()))(Tensor(X)).asnumpy()
    finally:
        linecache.cache.pop(name, None)
    assert np.allclose(got, 3.0), _contract(
        "the graph parser reads source from linecache", "kwcell/_codegen.py"
    )


def test_graph_reads_come_from_mindspores_files(graph: None) -> None:
    """kwcell tells MindSpore's reads of ``construct`` from the user's by the file of the
    reading frame: under MindSpore's package, and ``parser.py`` (or a frame named ``compile``)
    for the graph compiler."""
    ms_dir = os.path.dirname(os.path.dirname(os.path.abspath(nn.cell.__file__))) + os.sep  # type: ignore[attr-defined]
    files: list[tuple[str, str]] = []

    class Reader:
        def __get__(self, obj: Any, owner: Any = None) -> Any:
            if obj is not None:
                frame = sys._getframe(1)
                files.append((frame.f_code.co_filename, frame.f_code.co_name))
            return types.MethodType(lambda self, x: x * 2.0, obj) if obj is not None else self

    class Cell(nn.Cell):
        construct = Reader()

    ms.set_context(mode=ms.PYNATIVE_MODE)
    Cell()(Tensor(X))
    assert any(f.startswith(ms_dir) for f, _ in files), _contract(
        "Cell.__call__ reads construct from a frame in MindSpore's package", "kwcell/_lookup.py"
    )


def _parser() -> Any:
    try:
        return importlib.import_module("mindspore.graph._parse.parser")
    except ImportError:  # MindSpore before 2.10
        return importlib.import_module("mindspore._extends.parse.parser")


def test_the_graph_parser_module_is_named_parser() -> None:
    """``_lookup._compiling`` recognises the graph parser's Python side by its file name."""
    parser = _parser()
    assert os.path.basename(parser.__file__ or "") == "parser.py", _contract(
        "the graph parser's Python module is parser.py", "kwcell/_lookup.py"
    )


def test_the_pynative_executor_calls_a_custom_bprop() -> None:
    """The core's PyNative fast path: ``_pynative_executor.requires_grad()`` and
    ``call_custom_bprop(cell, output, *args)``, and ``_no_grad``."""
    try:
        from mindspore.graph.api import _pynative_executor  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        from mindspore.common.api import _pynative_executor
    for name in ("requires_grad", "call_custom_bprop"):
        assert callable(getattr(_pynative_executor, name, None)), _contract(
            f"_pynative_executor.{name} exists", "kwcell/_core.py"
        )
    assert "call_custom_bprop" in nn.Cell._call_custom_bprop.__code__.co_names, _contract(  # type: ignore[attr-defined]
        "Cell._call_custom_bprop calls _pynative_executor.call_custom_bprop", "kwcell/_core.py"
    )


def test_the_cpp_cell_base_exists() -> None:
    """Cores are built from a template ``__dict__`` over ``mindspore._c_expression.Cell_``."""
    cell_ = importlib.import_module("mindspore._c_expression").Cell_
    assert issubclass(nn.Cell, cell_), _contract(
        "nn.Cell derives from _c_expression.Cell_", "kwcell/_corecell.py"
    )


def test_graph_mode_cell_call_binds_with_construct_sig() -> None:
    """In GRAPH_MODE, ``Cell.__call__`` binds a keyword call with ``_construct_sig`` and calls
    ``_predict``: kwcell's dispatcher relies on these names."""
    names = nn.Cell.__call__.__code__.co_names
    for name in ("_construct_sig", "_predict"):
        assert name in names, _contract(f"Cell.__call__ uses {name}", "kwcell/_cell.py")


def test_the_mode_is_an_attribute_of_the_context() -> None:
    """``_mode`` reads the mode from the context object's ``__dict__``."""
    ctx = context._context()  # type: ignore[attr-defined]
    state = object.__getattribute__(ctx, "__dict__")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        assert state.get("_mode") == ms.GRAPH_MODE, _contract(
            "the context keeps the mode in _mode", "kwcell/_mode.py"
        )
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert state.get("_mode") == ms.PYNATIVE_MODE


def test_cell_reuse_reads_cell_init_args() -> None:
    """compile_once: the graph parser reuses a graph for cells whose ``cell_init_args`` is equal
    and starts with ``lazy_inline_``."""
    assert isinstance(nn.Cell.__dict__.get("cell_init_args"), property), _contract(
        "nn.Cell.cell_init_args is a property", "kwcell/_reuse.py"
    )
    source = inspect.getsource(_parser().get_object_key)
    assert "cell_init_args" in source, _contract(
        "the parser's get_object_key keys a cell's graph by its cell_init_args", "kwcell/_reuse.py"
    )


def test_keyword_calls_inside_a_graph_bprop_fail(graph: None) -> None:
    """Why the graph bprop is rewritten into positional form: a keyword call of a method inside
    a graph-mode bprop fails. If this starts to pass, kwcell's rewrite could be simplified."""

    class Cell(nn.Cell):
        def helper(self, x: Tensor, *, k: float) -> Any:
            return x * k

        def construct(self, x: Tensor) -> Any:
            return ops.sin(x)

        def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (self.helper(dout, k=4.0),)

    try:
        got = ms.grad(_Outer(Cell()))(Tensor(X)).asnumpy()
    except Exception:  # noqa: BLE001 - the failure is the documented behaviour
        return
    assert np.allclose(got, 4.0)  # works now: the rewrite is no longer needed (kwcell/_source.py)


def test_the_same_composite_in_forward_and_bprop_is_mindspores_limit(graph: None) -> None:
    """A custom-bprop cell whose construct and bprop call the same Python composite
    (``ops.clip_by_value``): MindSpore parses it into one function graph per compile, shared by
    both, and in this arrangement frees it with the forward ("The func graph is empty"). kwcell
    keeps the user's construct a separate function graph called from the core (no copies into
    the core), which nn.Cell's own shape of the public cells survives; this test records the
    limit itself so that a MindSpore that fixes it is noticed (docs/differences.md)."""

    class Act(nn.Cell):
        def construct(self, inp: Tensor, nbit_a: int) -> Any:
            return ops.sign(ops.clip_by_value(inp, -1.0, 1.0))

        def bprop(self, inp: Tensor, nbit_a: int, out: Tensor, dout: Tensor) -> Any:
            return (ops.clip_by_value(2 - 2 * inp, 0.0, 1e26) * dout, 0)

    class Outer(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.act = Act()

        def construct(self, x: Tensor) -> Any:
            return self.act(x, 1).sum()

    with pytest.raises(RuntimeError, match="The func graph is empty"):
        ms.grad(Outer())(Tensor(X))


def test_the_pynative_tape_reads_bprop_when_it_records_the_call() -> None:
    """``call_custom_bprop`` reads ``cell.bprop`` when the forward call is recorded and keeps what
    it read until the backward runs: a temporary KwCell's core hands the tape a bprop that holds
    the owner (``_core.PinningBprop``)."""
    try:
        from mindspore.graph.api import _pynative_executor  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        from mindspore.common.api import _pynative_executor
    log: list[str] = []

    class Reader:
        def __get__(self, obj: Any, owner: Any = None) -> Any:
            if obj is None:
                return self
            log.append("read")

            def bprop(x: Tensor, out: Tensor, dout: Tensor) -> Any:
                log.append("run")
                return (dout * 5.0,)

            return bprop

    class Cell(nn.Cell):
        bprop = Reader()

        def construct(self, x: Tensor) -> Any:
            return ops.sin(x)

        def __call__(self, x: Tensor) -> Any:
            out = self.construct(x)
            log.append("record")
            _pynative_executor.call_custom_bprop(self, out, x)
            return out

    cell = Cell()
    log.clear()

    def f(x: Tensor) -> Any:
        y = cell(x)
        log.append("forward done")
        return y.sum()

    got = ms.grad(f)(Tensor(X)).asnumpy()
    assert np.allclose(got, 5.0)
    assert log == ["record", "read", "forward done", "run"], _contract(
        "the PyNative tape reads bprop when it records the call, and keeps it", "kwcell/_core.py"
    )


_WRAP = re.compile(r"\.construct\.__func__|\.construct\s*=[^=]")


def _construct_wrap_sites() -> set[tuple[str, str]]:
    """(file name, innermost function) of every place in MindSpore's package that reads a
    cell's ``construct`` to wrap it: ``<x>.construct.__func__``, or an assignment to
    ``<x>.construct``."""
    import ast

    root = os.path.dirname(ms.__file__)
    found: set[tuple[str, str]] = set()
    for dirpath, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".py"):
                continue
            with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                text = f.read()
            if not _WRAP.search(text):
                continue
            tree = ast.parse(text)
            pending: list[tuple[ast.AST, str]] = [(tree, "<module>")]
            while pending:
                node, where = pending.pop()
                for child in ast.iter_child_nodes(node):
                    inner = (
                        child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else where
                    )
                    wraps = (
                        isinstance(child, ast.Attribute)
                        and child.attr == "__func__"
                        and isinstance(child.value, ast.Attribute)
                        and child.value.attr == "construct"
                    )
                    assigns = isinstance(child, ast.Assign) and any(
                        isinstance(t, ast.Attribute) and t.attr == "construct" for t in child.targets
                    )
                    if wraps or assigns:
                        found.add((name, where))
                    pending.append((child, inner))
    return found


def test_every_wrapper_of_a_cells_construct_is_known() -> None:
    """MindSpore's wrappers of a cell's forward (amp, jit in each capture mode) read
    ``cell.construct`` to wrap it: kwcell gives them the user's forward, as nn.Cell does, and
    the dispatcher to every other read of MindSpore's (which runs the cell). A new wrapper
    would get the dispatcher and call it again from inside the core."""
    from kwcell._lookup import WRAPPERS

    sites = _construct_wrap_sites()
    assert sites, _contract("MindSpore wraps a cell's construct somewhere", "kwcell/_lookup.py")
    missing = sites - WRAPPERS
    assert not missing, _contract(
        f"only the known sites wrap a cell's construct; new: {sorted(missing)}",
        "kwcell/_lookup.py (WRAPPERS)",
    )
