"""Defining KwCell classes from many threads at once: every class correct, every file unique."""

from __future__ import annotations

import threading
import traceback
from typing import Any

import numpy as np
from mindspore import Tensor

import kwcell
from kwcell import KwCell
from kwcell._meta import info_of

THREADS = 8
PER_THREAD = 250


def make(k: int) -> type[KwCell]:
    """A class whose default and gradient depend on ``k``."""
    scale = float(k)

    class Net(KwCell):
        def construct(self, x, w=k, *, y=-k):  # type: ignore[no-untyped-def]
            return x * scale

        def bprop(self, x, *, y, w, out, dout):  # type: ignore[no-untyped-def]
            return {"x": dout * scale}

    return Net


def test_threads_define_classes_concurrently() -> None:
    made: dict[int, type[KwCell]] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(THREADS)

    def work(t: int) -> None:
        try:
            barrier.wait()
            for i in range(PER_THREAD):
                k = t * PER_THREAD + i
                made[k] = make(k)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, "".join(traceback.format_exception(errors[0]))
    assert len(made) == THREADS * PER_THREAD
    files: list[str] = []
    sentinel: Any = object()
    for k, cls in made.items():
        info = info_of(cls)
        assert info is not None
        assert info.bind(None, sentinel) == (sentinel, k, -k)
        assert info.bind(None, 1, y=2, w=3) == (1, 3, 2)
        # One generated file per class holds all its generated functions.
        assert {info.bind.__code__.co_filename} == set(info.files.values())
        files.extend(info.files.values())
    assert len(files) == len(set(files)) == len(made), "generated filenames must be unique"
    x = Tensor(np.array([1.0, 2.0], np.float32))
    for k in (0, 777, THREADS * PER_THREAD - 1):
        g = kwcell.grad(made[k]())(x, y=1)
        np.testing.assert_allclose(g.asnumpy(), [float(k)] * 2)
