"""The execution mode kwcell reads on every call (``kwcell._mode.MODE``) is MindSpore's own."""

from __future__ import annotations

import mindspore as ms
from mindspore import context

from kwcell._mode import KEY, MODE, _Getter


def test_mode_read_in_place_follows_set_context() -> None:
    assert isinstance(MODE, dict)  # the context's own attributes on this MindSpore
    for mode in (ms.GRAPH_MODE, ms.PYNATIVE_MODE, ms.GRAPH_MODE, ms.PYNATIVE_MODE):
        ms.set_context(mode=mode)
        assert MODE[KEY] == mode == context._get_mode()


def test_the_getter_a_mindspore_with_another_layout_gets_is_mindspores() -> None:
    for mode in (ms.GRAPH_MODE, ms.PYNATIVE_MODE):
        ms.set_context(mode=mode)
        assert _Getter()[KEY] == mode
