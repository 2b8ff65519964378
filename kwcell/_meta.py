"""``KwCellMeta``: resolve construct and bprop through the MRO, generate, attach."""

from __future__ import annotations

import abc
import inspect
import sys
import types
import warnings
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mindspore import nn

from ._errors import KwCellDefinitionError, KwCellWarning
from ._generate import generate
from ._info import INFO as _INFO
from ._info import KwCellInfo, info_of, keyword_only, own_infos
from ._override import route_class_construct
from ._spec import safe_repr

__all__ = ["KwCellInfo", "KwCellMeta", "info_of", "keyword_only", "own_infos"]


_WARNED: weakref.WeakSet[type] = weakref.WeakSet()


def _warn_ungraded_parameters(cell: nn.Cell) -> None:
    """Warn once per class when a bprop cell has trainable parameters it gives no gradient."""
    cls = type(cell)
    if cls in _WARNED:
        return
    state = cell.__dict__
    if not state.get("_params", True) and not state.get("_cells", True):
        return  # no parameters and no sub-cells: nothing to walk (most bprop cells)
    params = cell.trainable_params()
    if not params:
        return
    graded = getattr(cell, "internal_params", None) or ()
    ungraded = [p for p in params if not any(p is q for q in graded)]
    if not ungraded:
        return
    _WARNED.add(cls)
    names = ", ".join(repr(p.name) for p in ungraded)
    msg = (
        f"{cls.__qualname__}.bprop gives no gradient to trainable parameter(s) {names}: MindSpore "
        "uses zeros for them, so they will not train. To train them, set "
        "self.internal_params = [...] in __init__ and return (input_grads, {param: grad}) or a "
        "dict with Parameter keys from bprop (PYNATIVE only); to keep them fixed, create them "
        "with requires_grad=False"
    )
    warnings.warn(msg, KwCellWarning, stacklevel=3)


# Code objects of every function some KwCell uses as its bprop: only their frames see
# ``bprop`` on an instance (``super().bprop(...)``); MindSpore must not.
_BPROP_CODES: weakref.WeakSet[types.CodeType] = weakref.WeakSet()


class _HiddenBprop:
    """The ``bprop`` attribute of a KwCell class with a bprop.

    MindSpore treats any cell that has an attribute ``bprop`` as a custom-bprop cell and would
    call it with the visible call's arguments; kwcell's hidden core carries the bprop instead.
    So instances answer ``bprop`` only to the code of a user's bprop (``super().bprop(...)``
    from a subclass); the class answers with the user's function (``Net.bprop``).
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self.fn
        if sys._getframe(1).f_code in _BPROP_CODES:
            return types.MethodType(self.fn, obj)
        raise AttributeError("bprop")


class _LazyCore:
    """A class's core attribute for instances that do not have it yet (see ``_setup``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        obj._kwcell_attach_cores()
        return obj.__dict__[self.name]


_OWN = "_kwcell_own_"  # + "bprop" / "construct": the user's function a KwCell class defined


def _resolve(cls: type, name: str, *, after: type | None = None) -> tuple[type | None, Any]:
    """The class that provides ``name`` to ``cls`` through the MRO, and the user's function.

    KwCell classes keep their own ``construct``/``bprop`` under ``_kwcell_own_<name>`` (the
    visible attributes are kwcell's dispatcher and ``_HiddenBprop``); any other class, a
    mixin for example, provides the function it defines. ``nn.Cell``'s own construct does
    not count. With ``after``, the search starts after that class (``super()``).
    """
    mro = cls.__mro__
    for klass in mro[mro.index(after) + 1 :] if after is not None else mro:
        if klass is nn.Cell:
            break
        found = klass.__dict__.get(_OWN + name)
        if found is None:
            found = klass.__dict__.get(name)
            if isinstance(found, _HiddenBprop) or getattr(found, "_kwcell_generated", False):
                continue
        if found is not None:
            return klass, found
    return None, None


def _method_error(qualname: str, method: str, fn: Any) -> str | None:
    """Why ``fn`` cannot be the ``method`` of a cell, or ``None``."""
    if isinstance(fn, (staticmethod, classmethod)):
        kind = type(fn).__name__
        return (
            f"{qualname}.{method} is a {kind}: MindSpore calls {method} as a method of the cell, "
            f"with self first; remove @{kind} and write {method}(self, ...)"
        )
    if not callable(fn):
        return f"{qualname}.{method} must be a function defined in the class, got {safe_repr(fn)}"
    return None


def _setup(cls: KwCellMeta, *, defines_construct: bool) -> None:
    """Resolve ``cls``'s construct and bprop through the MRO, check them, and generate.

    Runs when the class statement runs, and again when ``cls.bprop`` is assigned later.
    """
    bprop_owner, bprop = _resolve(cls, "bprop")
    if bprop is None:
        setattr(cls, _INFO, None)
        return
    _BPROP_CODES.add(getattr(inspect.unwrap(bprop), "__code__", None) or _NO_CODE)
    type.__setattr__(cls, "bprop", _HiddenBprop(bprop))
    construct_owner, construct = _resolve(cls, "construct")
    if construct is None:
        # A base that defines only bprop: its subclasses bring construct (as for nn.Cell).
        setattr(cls, _INFO, None)
        return
    error = _method_error(cls.__qualname__, "construct", construct)
    if error is not None:
        raise KwCellDefinitionError(error)
    inherited = info_of(cls)
    if inherited is not None and inherited.user_bprop is bprop and inherited.user_construct is construct:
        return  # nothing new: the base's generated code serves this class too
    if construct_owner is cls and defines_construct:
        setattr(cls, _OWN + "construct", construct)
    blame = (
        bprop_owner.__qualname__ if bprop_owner is not cls and construct_owner is cls and bprop_owner else ""
    )
    info = generate(cls, construct, bprop, blame)
    if info is None:
        # construct(self, *inputs) with bprop(self, *args): an nn.Cell as it stands.
        type.__setattr__(cls, "bprop", bprop)
        setattr(cls, _INFO, None)
        return
    assert bprop_owner is not None
    _, parent_bprop = _resolve(cls, "bprop", after=bprop_owner)
    if parent_bprop is not None:
        # super().bprop(...) in the graph version of bprop (see _source.rewrite_bprop).
        setattr(cls, f"_kwcell_super_{info.token}", parent_bprop)
    type.__setattr__(cls, "construct", info.dispatcher)  # not routed: see __setattr__
    # The user's functions under this class's token, so that a parent's core still runs
    # the parent's own code for super().construct(...) from a subclass.
    setattr(cls, f"_kwcell_construct_{info.token}", construct)
    setattr(cls, f"_kwcell_bprop_{info.token}", info.py_bprop)
    # Instances get their cores when created; one made before ``cls.bprop`` was assigned
    # gets the new core on first use (an instance attribute then shadows this).
    type.__setattr__(cls, f"_kwcell_core_{info.token}", _LazyCore(f"_kwcell_core_{info.token}"))
    setattr(cls, _INFO, info)


class KwCellMeta(abc.ABCMeta):
    """Metaclass of :class:`kwcell.KwCell`.

    When a class statement defines or inherits (through the MRO, mixins included) both a
    ``bprop`` and a ``construct``, the two are checked against each other, ``bprop`` is hidden
    from MindSpore (which must not treat the visible cell as a custom-bprop cell), and a
    dispatcher ``construct`` with construct's exact signature is installed. It calls a hidden
    core cell whose positional ``construct``/``bprop`` MindSpore differentiates. Derived from
    ``abc.ABCMeta``, so that ``class Net(KwCell, abc.ABC)`` works as it does for ``nn.Cell``.
    """

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> KwCellMeta:
        if "bprop" in namespace:
            error = _method_error(namespace.get("__qualname__", name), "bprop", namespace["bprop"])
            if error is not None:
                raise KwCellDefinitionError(error)
        own_bprop = namespace.pop("bprop", None)
        if own_bprop is not None:
            namespace[_OWN + "bprop"] = own_bprop
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        _setup(cls, defines_construct="construct" in namespace)
        return cls

    def __setattr__(cls, name: str, value: Any) -> None:
        if name == "bprop" and not isinstance(value, _HiddenBprop):
            # Cls.bprop = f after the class statement: checked and generated as if defined
            # there (the visible class must still show MindSpore no bprop).
            error = _method_error(cls.__qualname__, "bprop", value)
            if error is not None:
                raise KwCellDefinitionError(error)
            type.__setattr__(cls, _OWN + "bprop", value)
            _setup(cls, defines_construct=False)
            return
        # Cls.construct = f, e.g. @jit on the class: the bprop keeps wrapping the new forward.
        info = info_of(cls) if name == "construct" else None
        if info is not None and route_class_construct(
            cls,
            value,
            info.dispatcher,
            info.token,
            info.user_construct,
            keyword_only(info.spec),
            _OWN + "construct",
        ):
            return
        super().__setattr__(name, value)

    if not TYPE_CHECKING:
        # Runtime only: a metaclass __call__ that type checkers see replaces the class's own
        # constructor for them (pyright then types ``Net()`` as this method's ``Any``).

        def __call__(cls, *args: Any, **kwargs: Any) -> Any:
            cell = super().__call__(*args, **kwargs)
            if info_of(cls) is not None:
                _warn_ungraded_parameters(cell)
            return cell


_NO_CODE = compile("", "<kwcell>", "exec")
