"""MindSpore's execution mode, read on every PyNative call without going through its getters.

``context._get_mode()`` costs four Python calls (``_context()``, ``get_mode()`` and the
context's ``__getattribute__`` twice), and a KwCell's call path asks twice per call. The mode
is a plain attribute of MindSpore's context object (a singleton); :data:`MODE` is that object's
own attribute dictionary, so ``MODE[KEY]`` is the current mode itself, read where
``set_context`` writes it, never a copy. A MindSpore that keeps its mode elsewhere gets
MindSpore's getter behind the same subscript.
"""

from __future__ import annotations

from typing import Any

from mindspore import context

__all__ = ["GRAPH", "KEY", "MODE"]

GRAPH = context.GRAPH_MODE
KEY = "_mode"


class _Getter:
    """``MODE[KEY]`` through MindSpore's getter."""

    def __getitem__(self, key: str) -> Any:
        return context._get_mode()


def _attributes() -> Any:
    """The context's attribute dictionary, if the mode lives there (checked both ways)."""
    try:
        ctx = context._context()  # type: ignore[attr-defined]
        state = object.__getattribute__(ctx, "__dict__")
    except Exception:  # noqa: BLE001 - any other layout: the getter
        return _Getter()
    if not isinstance(state, dict) or state.get(KEY, object()) != context._get_mode():
        return _Getter()
    getter = getattr(type(ctx), "get_mode", None)
    if KEY not in getattr(getattr(getter, "__code__", None), "co_names", ()):
        return _Getter()  # MindSpore's getter does not just read the attribute
    if "__setattr__" in type(ctx).__dict__:
        return _Getter()  # writes may not land in the attribute dictionary
    return state


#: ``MODE[KEY]``: the current execution mode (``GRAPH`` or ``context.PYNATIVE_MODE``).
MODE: Any = _attributes()
