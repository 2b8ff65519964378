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


#: PYNATIVE, GRAPH_MODE, and ``@ms.jit`` under PYNATIVE (the ``run`` fixture).
RUNS = ("pynative", "graph", "jit")


@pytest.fixture(params=RUNS)
def run(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test in PYNATIVE, GRAPH_MODE and under ``@ms.jit`` in PYNATIVE (``"jit"``: the
    test wraps its gradient in ``ms.jit``)."""
    name: str = request.param
    ms.set_context(mode=ms.GRAPH_MODE if name == "graph" else ms.PYNATIVE_MODE)
    yield name


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


# The default run's budget (under 2 minutes on 2 cores, the README's command): these tests run
# with the slow ones (``pytest -m slow``, a step of .ci/run) instead, each because a cheaper
# test in the default run checks the same behaviour (named here), or because it measures over
# many repetitions. A node id prefix, and why.
SLOW_HERE = {
    "tests/test_temporaries.py::test_many_temporaries_keep_memory_bounded": (
        "2,000 temporaries for RSS (23 s); the default run frees 300 "
        "(test_temporaries_are_freed_after_their_backward)"
    ),
    "tests/test_memory.py::test_defining_and_dropping_10000_classes": (
        "10,000 class statements for RSS (21 s)"
    ),
    "tests/test_gradcheck.py::test_right_weight_gradients_pass[graph-": (
        "every layer's weights in GRAPH_MODE; PYNATIVE runs them all, GRAPH_MODE one layer "
        "(test_trainable_params_checks_the_weights_no_bprop_gives_a_gradient[graph])"
    ),
    "tests/test_gradcheck.py::test_wrong_weight_gradient_names_the_weight[graph-": "as the test above",
    "tests/test_zoo.py::": (
        "the zoo of MindSpore's bprop forms against nn.Cell in every mode; tests/corpus runs real "
        "cells in every mode, tests/test_mindspore_forms.py each form"
    ),
    "tests/test_compile_once.py::test_zoo_cells_with_compile_once": "the zoo again, with compile_once",
    "tests/test_weights.py::test_a_weight_gradient_the_weight_does_not_broadcast_to_is_an_error[jit-": (
        "the error's shapes in @ms.jit (6 s); PYNATIVE and GRAPH_MODE run every shape"
    ),
    "tests/test_check.py::test_a_": (
        "`kwcell check` in a subprocess; test_text_report_lines_and_exit_status covers it"
    ),
    "tests/test_check.py::test_decorated_": "as above",
    "tests/test_check.py::test_state_stored_": "as above; tests/test_self_state.py checks the rule itself",
    "tests/test_check.py::test_missing_module": "as above",
    "tests/test_examples.py::test_example_runs": (
        "each example in a subprocess; test_blog_kwargs_measures_the_readme_table runs the main one"
    ),
    "tests/test_examples.py::test_gradcheck_demo": "as above",
    "tests/test_normalize_pynative.py::test_same_result_or_error_as_normalize_for_every_form": (
        "every return form and input kind through both normalisers (8 s); the forms' own tests "
        "(tests/test_returns.py, tests/test_value_forms.py) run in every mode"
    ),
    "tests/test_concurrency.py::": "threads defining classes for 4 s",
    "tests/test_stubs.py::": (
        "regenerates the MindSpore stubs and the coverage figure; test_static's mypy --strict "
        "reads the committed stubs"
    ),
}


def _first_rank(item: pytest.Item) -> int:
    return next((i for i, prefix in enumerate(RUN_FIRST) if item.nodeid.startswith(prefix)), len(RUN_FIRST))


@pytest.hookimpl(tryfirst=True)  # before pytest's -m selection reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.nodeid.startswith(prefix) for prefix in SLOW_HERE):
            item.add_marker(pytest.mark.slow)
    items.sort(key=_first_rank)
