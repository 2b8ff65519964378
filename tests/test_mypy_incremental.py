"""The kwcell mypy plugin on a two-module project across runs: cold, warm (cache kept) and dmypy.

mypy reads unchanged modules from its cache, where functions carry no parameter defaults and
no bodies. A KwCell whose parent lives in another module must get the same errors in every
run: after an edit of its own module, after an edit of the parent's module, and under the
daemon (``dmypy run``), which re-checks only what an edit affects. The parent is a ``KwCell``
subclass, or derives from a base decorated with ``@kwcell.keyword_bprop`` (what the cache
keeps of the decorator must be enough too).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mypy import api

from tests.test_typing import REPO, write_mypy_config

# four mypy runs and a daemon: about 30 s on a loaded 2-core machine
pytestmark = pytest.mark.slow

LAYERS = '''\
"""Custom activations shared by the models of this project."""

from __future__ import annotations

import mindspore as ms
from mindspore import ops

from kwcell import KwCell

SLOPE = 1.0


class SurrogateTanh(KwCell):
    def construct(self, x: ms.Tensor, alpha: float = 1.0, beta: float = 1.0) -> ms.Tensor:
        return beta * ops.tanh(alpha * x)

    def bprop(
        self, x: ms.Tensor, alpha: float = 1.0, beta: float = 1.0, *, out: ms.Tensor, dout: ms.Tensor
    ) -> dict[str, ms.Tensor]:
        u = alpha * x
        return {"x": dout * beta * alpha / (1.0 + u * u)}
'''

# the same activation, derived from a base decorated with @kwcell.keyword_bprop
LAYERS_DECORATED = '''\
"""Custom activations shared by the models of this project."""

from __future__ import annotations

import mindspore as ms
from mindspore import nn, ops

from kwcell import keyword_bprop

SLOPE = 1.0


@keyword_bprop
class Activation(nn.Cell):
    """The project's base for activations with a custom gradient."""


class SurrogateTanh(Activation):
''' + LAYERS.split("class SurrogateTanh(KwCell):\n", 1)[1]
BASES = {"kwcell": LAYERS, "keyword_bprop": LAYERS_DECORATED}

MODEL = '''\
"""A model that specialises the shared activation."""

from __future__ import annotations

import mindspore as ms
from mindspore import nn

from layers import SurrogateTanh


class SteepTanh(SurrogateTanh):
    def bprop(  # type: ignore[override]
        self, x: ms.Tensor, alpha: float = 4.0, *, out: ms.Tensor, dout: ms.Tensor, **rest: float
    ) -> dict[str, ms.Tensor]:
        return {"x": dout * alpha, "gamma": dout}


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.dense = nn.Dense(4, 4)
        self.act = SteepTanh()

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return self.act(self.dense(x), alpha=4.0)
'''

EXPECTED = [
    "model.py:12: error: SteepTanh.bprop: parameter 'alpha' has default 4.0 but construct gives it "
    "default 1.0; bprop always receives the value construct got, so drop the default or make it match; "
    "expected e.g. bprop(self, x, alpha=1.0, beta=1.0, *, out, dout)  [kwcell-bprop]",
]
# after the parent's construct takes alpha=4.0 (and its bprop follows), the returned dict's
# unknown key is the first problem of SteepTanh
EXPECTED_AFTER_PARENT_EDIT = [
    "model.py:15: error: SteepTanh.bprop (line 15): returns a gradient for 'gamma', which is not a "
    "parameter of construct; expected names: (x, alpha, beta)  [kwcell-bprop]",
]


def _project(root: Path, layers: str) -> list[str]:
    """Write the project; the mypy arguments that check it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "layers.py").write_text(layers, encoding="utf-8")
    (root / "model.py").write_text(MODEL, encoding="utf-8")
    config = write_mypy_config(root)
    return ["--config-file", str(config), "--no-error-summary", "--hide-error-context"]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    before = path.stat().st_mtime_ns
    path.write_text(text.replace(old, new), encoding="utf-8")
    if path.stat().st_mtime_ns == before:  # a coarse file-system clock: make the edit visible
        os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def _errors(output: str) -> list[str]:
    return sorted(line for line in output.splitlines() if ": error:" in line)


def _mypy(args: list[str], root: Path, cache: Path) -> list[str]:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        stdout, stderr, status = api.run([*args, "--cache-dir", str(cache), "layers.py", "model.py"])
    finally:
        os.chdir(cwd)
    assert status in (0, 1), f"mypy crashed (exit {status}):\n{stdout}\n{stderr}"
    return _errors(stdout)


def _edit_parent(root: Path) -> None:
    # construct's and bprop's alpha both
    _edit(root / "layers.py", "alpha: float = 1.0, beta", "alpha: float = 4.0, beta")


@pytest.mark.parametrize("base", list(BASES))
def test_warm_runs_report_what_cold_runs_report(tmp_path: Path, base: str) -> None:
    config_args = _project(tmp_path / "project", BASES[base])
    root, cache = tmp_path / "project", tmp_path / "cache"
    assert _mypy(config_args, root, cache) == EXPECTED
    # an edit of the subclass's module: its parent is read from the cache
    _edit(root / "model.py", "self.dense = nn.Dense(4, 4)", "self.dense = nn.Dense(4, 4, has_bias=False)")
    assert _mypy(config_args, root, cache) == EXPECTED
    # an edit of the parent's module changes what the (unchanged) subclass is checked against
    _edit_parent(root)
    warm = _mypy(config_args, root, cache)
    assert warm == EXPECTED_AFTER_PARENT_EDIT
    assert _mypy(config_args, root, tmp_path / "cold-cache") == warm


@pytest.mark.parametrize("base", list(BASES))
def test_the_daemon_reports_what_a_cold_run_reports(tmp_path: Path, base: str) -> None:
    config_args = _project(tmp_path / "project", BASES[base])
    root = tmp_path / "project"
    status_file = tmp_path / "dmypy.json"
    dmypy = [sys.executable, "-m", "mypy.dmypy", "--status-file", str(status_file)]
    # the daemon runs in the project's directory: it loads the plugin of this checkout (not
    # whichever kwcell is installed)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }

    def run() -> list[str]:
        args = [*config_args, "--cache-dir", str(tmp_path / "cache")]
        result = subprocess.run(
            [*dmypy, "run", "--timeout", "120", "--", *args, "layers.py", "model.py"],
            cwd=root,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert result.returncode in (0, 1), f"dmypy failed:\n{result.stdout}\n{result.stderr}"
        return _errors(result.stdout)

    try:
        assert run() == EXPECTED
        _edit(root / "model.py", "self.dense = nn.Dense(4, 4)", "self.dense = nn.Dense(4, 4, has_bias=False)")
        assert run() == EXPECTED
        _edit_parent(root)
        assert run() == EXPECTED_AFTER_PARENT_EDIT
    finally:
        subprocess.run([*dmypy, "stop"], capture_output=True, env=env, check=False)
