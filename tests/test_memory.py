"""Defining and dropping many KwCell classes does not leak: sources, files and caches go too; nor
do cells created and called, thousands of times, inside what is differentiated."""

from __future__ import annotations

import gc
import linecache
import os
import weakref
from typing import Any, ClassVar

import mindspore as ms
import numpy as np
import psutil
import pytest
from mindspore import Tensor, nn, ops

import kwcell
from kwcell import KwCell, _codegen
from kwcell._corecell import CORES, core_of
from kwcell._meta import info_of

N = 10_000
BUDGET_MB = 20.0


def make(k: int) -> type[KwCell]:
    class Net(KwCell):
        def construct(self, x, w=k, *, y=2.0):  # type: ignore[no-untyped-def]
            return x * w + y

        def bprop(self, x, w, y, *, out, dout):  # type: ignore[no-untyped-def]
            return {"x": dout * w}

    return Net


def _define_and_drop(n: int) -> None:
    for k in range(n):
        cls = make(k)
        if k % 10 == 0:
            cls()  # an instance with its core, dropped too
        del cls
    gc.collect()


def test_generated_files_and_linecache_entries_go_with_the_class() -> None:
    cls = make(1)
    cls()._kwcell_dispatcher()  # the generated file is written when MindSpore first runs the cell
    info = info_of(cls)
    assert info is not None
    paths = [*info.files.values(), info.bind.__code__.co_filename]
    assert all(os.path.exists(p) and p in linecache.cache for p in paths)
    del cls, info
    gc.collect()
    assert not any(os.path.exists(p) for p in paths)
    assert not any(p in linecache.cache for p in paths)


def test_a_cell_that_ran_is_freed_when_dropped_without_the_cycle_collector() -> None:
    # What an instance remembers of its last run (its dispatcher, its core) holds no reference
    # back to it: a dropped network goes at once, as one of nn.Cells does.
    net = make(3)()
    net(Tensor(np.ones(2, np.float32)))
    assert "_kwcell_seen" in net.__dict__
    dropped, core = weakref.ref(net), weakref.ref(core_of(net))
    gc.disable()
    try:
        del net
        assert dropped() is None
        assert core() is None  # and its core with it
    finally:
        gc.enable()


def test_a_class_whose_bprop_calls_super_is_freed_with_its_plans() -> None:
    # A bprop that calls super() holds its class in a closure cell; the plans kept for the
    # class hold that bprop. They are kept in the class, so the class still goes when dropped
    # (in a dictionary keyed weakly by the class, it never did). Its as-written copy for a
    # graph's super() goes too.
    base = make(2)

    def subclass() -> Any:
        class Child(base):  # type: ignore[valid-type,misc]
            def bprop(self, x, w, y, *, out, dout):  # type: ignore[no-untyped-def]
                return {"x": 2 * super().bprop(x, w, y=y, out=out, dout=dout)["x"]}

        net = Child()
        x = Tensor(np.array([1.0, 3.0], np.float32))
        np.testing.assert_allclose(kwcell.grad(net)(x).asnumpy(), [4.0, 4.0])
        net._kwcell_face_of(base.__dict__["bprop"].fn, base)  # the copy a graph's super() reaches
        return weakref.ref(Child)

    dropped = subclass()
    gc.collect()
    assert dropped() is None


def test_defining_and_dropping_10000_classes_grows_rss_by_under_20mb() -> None:
    _define_and_drop(500)  # warm-up: MindSpore and kwcell caches, allocator arenas
    process = psutil.Process()
    before = process.memory_info().rss
    generated = os.path.dirname(info_of(make(0)).files["bprop"])  # type: ignore[union-attr]
    gc.collect()
    files_before = len(os.listdir(generated))
    _define_and_drop(N)
    after = process.memory_info().rss
    grown_mb = (after - before) / 2**20
    assert grown_mb < BUDGET_MB, f"RSS grew by {grown_mb:.1f} MB for {N} classes"
    assert len(os.listdir(generated)) <= files_before
    # A linecache entry without its file must be one whose writing is still deferred (a class
    # that is alive and has no instance yet), never a leftover of a dropped class.
    orphans = [
        k
        for k in linecache.cache
        if "kwcell generated" in k and not os.path.exists(k) and k not in _codegen._unwritten
    ]
    assert not orphans


class _Ste(KwCell):
    """A straight-through floor, created per call (mindone's I-BERT ``floor_ste()(x)``)."""

    made: ClassVar[list[weakref.ref[KwCell]]] = []

    def __init__(self) -> None:
        super().__init__()
        _Ste.made.append(weakref.ref(self))

    def construct(self, x):  # type: ignore[no-untyped-def]
        return ops.floor(x)

    def bprop(self, x, out, dout):  # type: ignore[no-untyped-def]
        return (dout,)


def _quantised_loss(x: Tensor) -> Any:
    return (_Ste()(x) * 2.0 + _Ste()(x * 3.0) + _Ste()(x - 1.0)).sum()


@pytest.mark.slow  # about 10 s: the default run keeps tests/test_temporaries.py's 300-step check
def test_2100_temporaries_are_freed_step_by_step_without_the_cycle_collector() -> None:
    # Each step's temporaries live as long as MindSpore's tape needs them, and no longer
    # (tests/test_temporaries.py counts them after gc.collect()): with the cycle collector
    # off, those of every earlier step are gone after each step (MindSpore keeps the last
    # step's tape until the next, as it does for nn.Cell), each cell deleted once
    # (nn.Cell.__del__ counts instances down), and nothing accumulates.
    ms.set_context(mode=ms.PYNATIVE_MODE)
    step = ms.grad(_quantised_loss)
    x = Tensor(np.array([0.25, 1.5, -2.5], np.float32))
    for _ in range(50):  # warm-up: MindSpore's and kwcell's caches, allocator arenas
        np.testing.assert_allclose(step(x).asnumpy(), [6.0, 6.0, 6.0])
    gc.collect()
    process = psutil.Process()
    rss, objects = process.memory_info().rss, len(gc.get_objects())
    cells, cores = nn.Cell.total_instance_count, len(CORES)
    _Ste.made.clear()
    gc.disable()
    try:
        for _ in range(700):
            step(x)
            earlier = _Ste.made[:-3]
            assert all(r() is None for r in earlier), "a temporary of an earlier step is still alive"
            del _Ste.made[:-3]
            assert len(CORES) <= cores + 3
        grad = step(x).asnumpy()
        grown_objects = len(gc.get_objects()) - objects
        grown_cells = nn.Cell.total_instance_count - cells
    finally:
        gc.enable()
    grown_mb = (process.memory_info().rss - rss) / 2**20
    np.testing.assert_allclose(grad, [6.0, 6.0, 6.0])
    # 2,100 leaked temporaries would be ~50,000 gc-tracked objects and 4,200 cells (and cores)
    assert grown_objects < 2_000, f"{grown_objects} more gc-tracked objects after 2100 temporaries"
    assert grown_cells <= 6, f"{grown_cells} more live cells after 2100 temporaries"
    assert grown_mb < BUDGET_MB, f"RSS grew by {grown_mb:.1f} MB for 2100 temporaries"
    gc.collect()
    assert all(r() is None for r in _Ste.made)
