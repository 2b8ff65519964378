"""Shared fixtures: MindSpore execution modes.

GRAPH_MODE compiles a graph per cell and input signature, so tests share module-level cell
instances (tests/cells.py) where that is honest: the same cell, called with the same kinds
of inputs, compiles once.
"""

from __future__ import annotations

from collections.abc import Iterator

import mindspore as ms
import pytest

MODES = {"pynative": ms.PYNATIVE_MODE, "graph": ms.GRAPH_MODE}


@pytest.fixture(autouse=True)
def _pynative_by_default() -> Iterator[None]:
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


@pytest.fixture(params=sorted(MODES))
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test once in PYNATIVE and once in GRAPH_MODE."""
    name: str = request.param
    ms.set_context(mode=MODES[name])
    yield name
