"""Generated code is debuggable, and kwcell makes MindSpore log nothing new."""

from __future__ import annotations

import inspect
import linecache
import os
import re
import subprocess
import sys
import traceback
import typing
from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, ops

import kwcell
from kwcell import KwCell
from kwcell._meta import info_of

ROOT = Path(__file__).resolve().parent.parent


class Net(KwCell):
    def construct(self, x: Tensor, w: Any = 1.0) -> Any:
        return w * ops.sin(x)

    def bprop(self, x: Tensor, w: Any = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        if w == 13.0:
            raise ValueError("unlucky w")
        return {"x": w * ops.cos(x) * dout}


def test_generated_functions_have_source_and_names() -> None:
    info = info_of(Net)
    assert info is not None
    source = inspect.getsource(info.dispatcher)
    assert "def construct(self, x, w=1.0):" in source
    assert re.search(r"return self\._kwcell_core\(x, w\)", source)
    assert info.dispatcher.__qualname__ == "Net.construct"
    assert info.dispatcher.__module__ == __name__
    # Net.construct reads back as the user's function, as on nn.Cell
    assert "return w * ops.sin(x)" in inspect.getsource(Net.construct)
    Net()._kwcell_dispatcher()  # the file MindSpore's graph compiler reads is written when it runs
    for kind, path in info.files.items():
        assert re.fullmatch(rf"<kwcell generated {kind} tests\.test_debug\.Net #\d+>", os.path.basename(path))
        assert os.path.exists(path), "MindSpore logs an ERROR for generated code without a real file"
        assert linecache.getlines(path)


def test_generated_file_is_written_when_mindspore_first_runs_the_cell() -> None:
    class Lazy(KwCell):
        def construct(self, x: Tensor) -> Any:
            return x

        def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (dout,)

    info = info_of(Lazy)
    assert info is not None
    (path,) = info.files.values()
    assert not os.path.exists(path), "creating a class writes no file (0.2 ms saved per class)"
    assert "def bprop(" in "".join(linecache.getlines(path)), "Python and inspect use linecache"
    net = Lazy()
    assert not os.path.exists(path), "nor does creating an instance"
    net(Tensor(np.float32(2.0)))  # MindSpore reads the dispatcher
    assert os.path.exists(path)


def test_bprop_source_keeps_the_users_body() -> None:
    info = info_of(Net)
    assert info is not None
    source = inspect.getsource(info.positional_bprop)
    assert "def bprop(self, _kwcell_in_x, _kwcell_in_w, _kwcell_out, _kwcell_dout):" in source
    assert "x = _kwcell_in_x" in source and "w = _kwcell_in_w" in source
    assert "out = _kwcell_out" in source and "dout = _kwcell_dout" in source
    assert 'raise ValueError("unlucky w")' in source  # the user's own text, verbatim
    # The dict literal became a full tuple when the class was created: w gets zeros.
    assert "return (w * ops.cos(x) * dout, _kwcell_zero(_kwcell_in_w))" in source


def test_traceback_points_at_the_users_own_line() -> None:
    """In PYNATIVE the user's own bprop runs: the traceback ends at the user's file and line."""
    with pytest.raises(ValueError, match="unlucky w") as info:
        kwcell.grad(Net())(Tensor(np.array([0.5], np.float32)), w=13.0)
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert last.filename == __file__
    assert last.lineno == Net.bprop.__code__.co_firstlineno + 2
    assert last.line == 'raise ValueError("unlucky w")'


def test_pynative_runs_the_users_bprop_lines() -> None:
    """pdb breakpoints and coverage tools trace the user's lines: they must run as such."""
    ran: set[int] = set()
    code = Net.bprop.__code__

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code is code:
            ran.add(frame.f_lineno)
            return tracer
        return tracer if event == "call" and frame.f_code is code else None

    sys.settrace(tracer)
    try:
        g = kwcell.grad(Net())(Tensor(np.array([0.5], np.float32)), w=2.0)
    finally:
        sys.settrace(None)
    np.testing.assert_allclose(g.asnumpy(), 2.0 * np.cos([0.5]), rtol=1e-6)
    first = code.co_firstlineno
    assert {first + 1, first + 3} <= ran, "the user's 'if' and 'return' lines ran"


def test_dispatcher_keeps_the_users_docstring_and_annotations() -> None:
    class Documented(KwCell):
        def construct(self, x: Tensor, w: float = 1.0) -> Tensor:
            """Scale the sine of x."""
            return w * ops.sin(x)

        def bprop(self, x: Tensor, w: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
            return {"x": w * ops.cos(x) * dout}

    assert Documented.construct.__doc__ == "Scale the sine of x."
    assert typing.get_type_hints(Documented.construct) == {"x": Tensor, "w": float, "return": Tensor}


def _log_lines(kind: str) -> list[str]:
    env = {**os.environ, "GLOG_v": "2", "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "scripts" / "log_probe.py"), kind],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "probe ok" in run.stdout
    # Strip the per-run parts (pid, time) so that lines can be compared.
    lines = re.findall(r"^\[(?:ERROR|WARNING)\][^\]]*\] (.*)$", run.stdout + run.stderr, re.MULTILINE)
    return sorted(set(re.sub(r"\d+", "N", line) for line in lines))


def test_kwcell_makes_mindspore_log_nothing_new() -> None:
    baseline = _log_lines("plain")
    with_kwcell = _log_lines("kwcell")
    new = [line for line in with_kwcell if line not in baseline]
    assert new == [], "kwcell made MindSpore log:\n" + "\n".join(new)


class _ShapeError(KwCell):
    def construct(self, x: Tensor, w: float = 1.0) -> Tensor:
        return w * ops.sin(x)

    def bprop(self, x: Tensor, w: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        g = ops.cos(x) * dout
        h = ops.matmul(g, ops.ones((5, 5), ms.float32))  # the mistake: 3 against 5
        return {"x": h}


def test_an_error_in_a_graph_bprop_names_the_users_file_and_line() -> None:
    """MindSpore reports the generated file's line and its text; the text ends with where the
    user's line is."""
    lines, first = inspect.getsourcelines(_ShapeError.bprop)
    line = first + next(i for i, text in enumerate(lines) if "ops.matmul" in text)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises((RuntimeError, ValueError)) as caught:
            kwcell.grad(_ShapeError())(Tensor(np.ones(3, np.float32)), w=2.0)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert f"ms.float32))  # the mistake: 3 against 5  # {__file__}:{line}" in str(caught.value)
