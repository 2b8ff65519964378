"""What kwcell generated for a class's construct and bprop, found when it is needed.

Nothing here is a snapshot: :func:`plan` is asked with the construct and bprop that the class
(or an instance) holds *now*, and returns what was generated for exactly those functions,
generating it the first time (cached by their identity, so a later assignment, a ``del``, a
diamond or an ``__init_subclass__`` is simply a new key).
"""

from __future__ import annotations

import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._lookup import BpropSlot, class_backward, class_forward, super_key
from ._spec import CellSpec

__all__ = ["PASSTHROUGH", "KwCellInfo", "class_plan", "forget_plans", "info_of", "plan", "resolved"]


@dataclass(frozen=True)
class KwCellInfo:
    """What kwcell generated for one (construct, bprop) pair of a class."""

    spec: CellSpec
    user_construct: Callable[..., Any]
    user_bprop: Callable[..., Any]
    positional_bprop: Callable[..., Any]
    #: What PYNATIVE calls as the bprop (the user's own function behind a normalizer); its
    #: ``__wrapped__`` is ``positional_bprop``, which the graph compiler parses.
    py_bprop: Callable[..., Any]
    #: The hidden core's class: its positional construct and bprop call the user's functions
    #: under this plan's token.
    core_cls: type
    #: What the graph version of bprop calls as ``self._kwcell_rbprop`` (or ``None``).
    rbprop: Callable[..., Any] | None
    dispatcher: types.FunctionType
    bind: types.FunctionType
    files: dict[str, str] = field(default_factory=dict)
    token: int = 0
    #: How bprop receives construct's inputs: ``_validate.CLASSIC_ARGS``, ``BY_POSITION`` or
    #: ``BY_NAME``.
    reading: str = ""
    #: Whether the dispatcher sends only all-Tensor calls to ``_kwcell_core`` (the graph a
    #: compile_once class's instances share) and every other call to the instance's own core
    #: (``_templates.ROUTE``): only such a plan may reach a shared graph.
    routes: bool = False


class _Passthrough:
    """``construct(self, *inputs)`` with MindSpore's ``bprop(self, *args)``: an nn.Cell as is."""

    def __repr__(self) -> str:
        return "PASSTHROUGH"


PASSTHROUGH: Any = _Passthrough()

_Key = tuple[Any, bool, Any, bool, int]
# A class's plans live in its own ``__dict__`` (never inherited: read with ``__dict__``), not
# in a dictionary keyed weakly by the class: a plan holds the user's functions, whose
# ``__class__`` cell (``super()``) refers to the class, and a weak-key dictionary's value that
# refers to its key keeps it alive for ever. In the class itself they form a cycle the garbage
# collector frees with the class.
_PLANS = "_kwcell_plans"
_lock = threading.RLock()


def _plans_of(cls: type) -> dict[_Key, Any] | None:
    found: dict[_Key, Any] | None = cls.__dict__.get(_PLANS)
    return found


def _new_plans(cls: type) -> dict[_Key, Any]:
    found = _plans_of(cls)
    if found is None:
        found = {}
        type.__setattr__(cls, _PLANS, found)
    return found


def forget_plans(cls: type) -> None:
    """Forget what was generated for ``cls`` (a setting that shapes it changed)."""
    with _lock:
        if _PLANS in cls.__dict__:
            type.__delattr__(cls, _PLANS)


def plan(
    cls: type,
    construct: Any,
    bprop: Any,
    *,
    construct_self: bool = True,
    bprop_self: bool = True,
    warn: bool = True,
    weights: int = 0,
) -> Any:
    """What was generated for ``cls`` with this construct and bprop: a :class:`KwCellInfo`,
    or :data:`PASSTHROUGH`. Raises ``KwCellDefinitionError`` when they do not fit together.

    ``weights``: for an instance whose ``internal_params`` lists that many Parameters (they
    reach the core as extra inputs); checked and warned about once, with ``weights=0``.
    """
    key = (construct, construct_self, bprop, bprop_self, weights)
    per_class = _plans_of(cls)
    if per_class is not None:
        found = per_class.get(key)
        if found is not None:
            return found
    with _lock:
        per_class = _new_plans(cls)
        found = per_class.get(key)
        if found is not None:
            return found
        from ._generate import generate  # generating needs MindSpore's pieces; found is cheap

        if weights:
            # The unweighted plan first: the checks and warnings happen once, and a class
            # that does not fit raises the same error.
            plain = plan(
                cls, construct, bprop, construct_self=construct_self, bprop_self=bprop_self, warn=warn
            )
            if plain is PASSTHROUGH:
                per_class[key] = plain
                return plain
            warn = False

        construct_owner = _holder(cls, "construct", construct) if construct_self else None
        bprop_owner = _holder(cls, "bprop", bprop) if bprop_self else None
        blame = ""
        if bprop_owner is not None and bprop_owner is not cls and construct_owner is cls:
            blame = bprop_owner.__qualname__
        info = generate(
            cls,
            construct,
            bprop,
            blame,
            construct_self=construct_self,
            bprop_self=bprop_self,
            super_name=super_key(bprop_owner) if bprop_owner is not None else None,
            warn=warn,
            weights=weights,
        )
        if info is not None:
            _install(cls, info, construct, construct_self, bprop_self)
        result = PASSTHROUGH if info is None else info
        per_class[key] = result
        return result


def _install(cls: type, info: KwCellInfo, construct: Any, construct_self: bool, bprop_self: bool) -> None:
    """Make the user's functions for ``info`` methods of ``cls`` under its token (the core calls
    them; functions assigned to an instance are set on the instance, see ``KwCell``)."""
    token = info.token
    type.__setattr__(cls, f"_kwcell_bprop_{token}", info.py_bprop)
    if construct_self:
        type.__setattr__(cls, f"_kwcell_construct_{token}", construct)
    if info.rbprop is not None and (bprop_self or info.rbprop is not info.user_bprop):
        rbprop: Any = info.rbprop
        if info.spec.function and rbprop is info.user_bprop:
            rbprop = staticmethod(rbprop)  # a custom_bprop function's own backward: no self
        type.__setattr__(cls, f"_kwcell_rbprop_{token}", rbprop)


def _holder(cls: type, name: str, fn: Any) -> type | None:
    """The class of ``cls``'s MRO whose own ``name`` is ``fn`` (a parent's bprop reached by
    ``super()`` continues after its own class, not after the one ``cls`` resolves to)."""
    for klass in cls.__mro__:
        found = klass.__dict__.get(name)
        if found is fn or getattr(found, "fn", None) is fn:
            return klass
    return None


def resolved(cls: type) -> Any:
    """The class-level plan of ``cls`` now: a :class:`KwCellInfo`, :data:`PASSTHROUGH`, or
    ``None`` when the class has no bprop or no construct (yet), or is not kwcell's."""
    return class_plan(cls, class_forward(cls)[1], class_backward(cls)[1])


def class_plan(cls: type, construct: Any, bprop: Any) -> Any:
    """:func:`resolved` for the construct and bprop ``cls`` was already found to resolve to."""
    if not isinstance(cls.__dict__.get("bprop"), BpropSlot):
        return None  # a plain nn.Cell (every KwCell class holds its own slot)
    if construct is None or bprop is None:
        return None
    return plan(cls, construct, bprop)


def info_of(cls: type) -> KwCellInfo | None:
    """The kwcell information of ``cls``'s own construct and bprop as they are now, or ``None``
    (no bprop, no construct, or a cell kwcell leaves exactly as an nn.Cell)."""
    found = resolved(cls)
    return None if found is None or found is PASSTHROUGH else found
