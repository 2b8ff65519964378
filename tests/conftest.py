"""Shared fixtures: MindSpore execution modes.

GRAPH_MODE compiles a graph per cell and input signature, so tests share module-level cell
instances (tests/cells.py) where that is honest: the same cell, called with the same kinds
of inputs, compiles once.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import mindspore as ms
import pytest

MODES = {"pynative": ms.PYNATIVE_MODE, "graph": ms.GRAPH_MODE}


@pytest.fixture(autouse=True)
def _pynative_by_default() -> Iterator[None]:
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def kept_dir(request: pytest.FixtureRequest, name: str, fallback: Path) -> Path:
    """A directory kept between runs (in pytest's cache directory), for mypy's cache.

    mypy rechecks every module whose source, options or dependencies changed since the cache
    was written, so a kept cache gives the same errors in a fraction of the time (``mypy
    --strict`` over the repository: 6.5 s of CPU with an empty cache). The paths mypy reads
    must stay the same between runs too, or it rechecks them: keep the stub links there as
    well. Without pytest's cache plugin (``-p no:cacheprovider``): ``fallback``.
    """
    cache = getattr(request.config, "cache", None)
    return cache.mkdir(name) if cache is not None else fallback


def link(path: Path, target: Path) -> Path:
    """``path``, made a symlink to the directory ``target`` (replacing what it was)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    path.symlink_to(target, target_is_directory=True)
    return path


@pytest.fixture(params=sorted(MODES))
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test once in PYNATIVE and once in GRAPH_MODE."""
    name: str = request.param
    ms.set_context(mode=MODES[name])
    yield name


# Run first, in this order (a stable sort: every other test keeps its place). pytest-xdist's
# default --dist load hands out the collection in order, the first quarter of each worker's
# share in one chunk, so all of these start on the first worker at the start of the run and
# the rest is shared out as the workers free up:
# - tests/test_typing.py's module fixture (one mypy and one basedpyright run, 4 s of CPU) is
#   set up once per worker that runs any of its tests; at its alphabetical place, near the end
#   of the run where xdist hands out two tests at a time, both workers set it up;
# - the longest tests (the 10,000-class memory test: 12 s of CPU; subprocesses; hypothesis),
#   so that no worker gets one at the end of the run while the other has nothing left to do.
RUN_FIRST = (
    "tests/test_memory.py::test_defining_and_dropping_10000_classes",
    "tests/test_typing.py::",
    "tests/test_fuzz.py::test_binding_agrees_with_python",
    "tests/test_docs.py::test_every_python_block_does_what_its_page_says",
    "tests/test_debug.py::test_kwcell_makes_mindspore_log_nothing_new",
    "tests/test_readme.py::",
    "tests/test_static.py::",
    "tests/test_check.py::",
    "tests/test_examples.py::",
    "tests/test_stubs.py::",
)


def _first_rank(item: pytest.Item) -> int:
    return next((i for i, prefix in enumerate(RUN_FIRST) if item.nodeid.startswith(prefix)), len(RUN_FIRST))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_first_rank)
