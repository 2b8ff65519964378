"""What differs between MindSpore versions, for ``nn.Cell`` and for ``KwCell``, measured.

``python version_probe.py`` prints one JSON object: for each behaviour README's version table
names, what happened with a hand-written ``nn.Cell`` and with the same ``KwCell`` ("right", or
"error: " and the first line of the message). tests/test_mindspore_versions.py runs it on every
supported MindSpore and compares with the table. It is also imported (``measure()``) on the
development MindSpore, in the default test run.
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Callable
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

import kwcell
from kwcell import KwCell

X = np.array([0.5, 1.0, 2.0], np.float32)


class PlainScaled(nn.Cell):
    def construct(self, x: Tensor, w: float = 1.0, y: float = 1.0) -> Tensor:
        return w * ops.sin(x) + y

    def bprop(self, x: Tensor, w: float, y: float, out: Tensor, dout: Tensor) -> Any:
        return w * ops.cos(x) * dout, 0, 0


class Scaled(KwCell):
    def construct(self, x: Tensor, w: float = 1.0, y: float = 1.0) -> Tensor:
        return w * ops.sin(x) + y

    def bprop(self, x: Tensor, w: float = 1.0, y: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        return {"x": w * ops.cos(x) * dout}


class PlainTagged(nn.Cell):
    def construct(self, x: Tensor, tag: Any) -> Tensor:
        return 3.0 * x

    def bprop(self, x: Tensor, tag: Any, out: Tensor, dout: Tensor) -> Any:
        return 3.0 * dout, 0


class Tagged(KwCell):
    def construct(self, x: Tensor, tag: Any) -> Tensor:
        return 3.0 * x

    def bprop(self, x: Tensor, tag: Any, out: Tensor, dout: Tensor) -> Any:
        return 3.0 * dout, 0


def _outcome(run: Callable[[], Any], expected: Any) -> str:
    try:
        got = run()
    except Exception as e:  # noqa: BLE001 - the outcome is what is measured
        return "error: " + (str(e).strip().splitlines() or [type(e).__name__])[0]
    return "right" if np.allclose(got.asnumpy(), expected) else "wrong"


def _defaults_omitted(cls: type[nn.Cell], grad: Callable[..., Any]) -> str:
    """``grad(net)(x)`` in PYNATIVE, construct's defaults ``w``, ``y`` omitted."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    return _outcome(lambda: grad(cls())(Tensor(X)), np.cos(X))


def _mode_switch(cls: type[nn.Cell], grad: Callable[..., Any]) -> str:
    """One gradient function called in PYNATIVE, then again after switching to GRAPH_MODE."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    g = grad(cls())
    first = _outcome(lambda: g(Tensor(X), 2.0, 0.0), 2.0 * np.cos(X))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        second = _outcome(lambda: g(Tensor(X), 2.0, 0.0), 2.0 * np.cos(X))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    return second if first == "right" else "pynative " + first


def _bytes_input(cls: type[nn.Cell], grad: Callable[..., Any]) -> str:
    """A non-UTF-8 ``bytes`` argument next to the Tensor, backward in PYNATIVE."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    return _outcome(lambda: grad(cls())(Tensor(X), b"\x00\xff"), np.full_like(X, 3.0))


def measure() -> dict[str, dict[str, str]]:
    probes = {
        "defaults omitted, PYNATIVE": (_defaults_omitted, PlainScaled, Scaled),
        "gradient function reused after switching to GRAPH_MODE": (_mode_switch, PlainScaled, Scaled),
        "non-UTF-8 bytes argument, backward": (_bytes_input, PlainTagged, Tagged),
    }
    return {
        name: {"nn.Cell": probe(plain, ms.grad), "KwCell": probe(kw, kwcell.grad)}
        for name, (probe, plain, kw) in probes.items()
    }


if __name__ == "__main__":
    print(json.dumps({"mindspore": importlib.metadata.version("mindspore"), "outcomes": measure()}))
