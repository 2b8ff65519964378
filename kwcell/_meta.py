"""``KwCellMeta``: keep a class's construct and bprop in slots, and check them when they change."""

from __future__ import annotations

import abc
import warnings
import weakref
from typing import TYPE_CHECKING, Any

from mindspore import nn

from ._errors import KwCellDefinitionError, KwCellWarning
from ._info import KwCellInfo, info_of, resolved
from ._lookup import BpropSlot, ConstructSlot, class_backward, class_forward, install_super_readers, is_slot
from ._spec import safe_repr

__all__ = ["KwCellInfo", "KwCellMeta", "check_class", "info_of", "slot_for"]


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
        "dict with Parameter keys from bprop; to keep them fixed, create them "
        "with requires_grad=False"
    )
    warnings.warn(msg, KwCellWarning, stacklevel=3)


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


_SLOTS: dict[str, type[ConstructSlot] | type[BpropSlot]] = {"construct": ConstructSlot, "bprop": BpropSlot}


def slot_for(qualname: str, name: str, value: Any, owner: type | None = None) -> Any:
    """``value`` (a class's own construct or bprop) in its slot, after checking it is a method."""
    if is_slot(value):
        return value
    error = _method_error(qualname, name, value)
    if error is not None:
        raise KwCellDefinitionError(error)
    return _SLOTS[name](value, owner)


def check_class(cls: type) -> None:
    """Check (and generate for) the construct and bprop ``cls`` resolves to now.

    Runs when the class statement runs and whenever the class's construct or bprop is
    assigned or deleted; errors and warnings then point at the user's statement. What the
    class resolves to later (a plain mixin changed, say) is checked when it is first used.
    """
    _, construct = class_forward(cls)
    _, bprop = class_backward(cls)
    if bprop is None or construct is None:
        return
    error = _method_error(cls.__qualname__, "construct", construct)
    if error is not None:
        raise KwCellDefinitionError(error)
    resolved(cls)


class KwCellMeta(abc.ABCMeta):
    """Metaclass of :class:`kwcell.KwCell`.

    A class's ``construct`` and ``bprop`` are kept in slots that answer every read as
    ``nn.Cell`` would (see ``kwcell._lookup``), except that MindSpore, when it runs a cell
    with a bprop, gets a dispatcher with construct's exact signature that calls a hidden core
    cell, whose positional ``construct``/``bprop`` MindSpore differentiates. They are checked
    against each other when the class is created and whenever one of them is assigned or
    deleted; what runs is looked up when the cell is called or compiled. Derived from
    ``abc.ABCMeta``, so that ``class Net(KwCell, abc.ABC)`` works as it does for ``nn.Cell``.

    Subclass `KwCell` rather than naming this metaclass; where a class cannot (a metaclass
    of its own), use `kwcell.keyword_bprop`.

    Raises:
        KwCellDefinitionError: A class statement, or a later assignment of `construct` or
            `bprop`, whose construct and bprop do not fit together.

    Example:
        ```python
        import abc

        from mindspore import ops

        import kwcell
        from kwcell import KwCell, KwCellMeta


        class Base(KwCell, abc.ABC):
            @abc.abstractmethod
            def scale(self): ...

            def construct(self, x, w=1.0):
                return w * self.scale() * ops.sin(x)

            def bprop(self, x, w=1.0, *, out, dout):
                return {"x": w * self.scale() * ops.cos(x) * dout}


        class Double(Base):
            def scale(self):
                return 2.0


        assert type(Double) is KwCellMeta
        assert "construct(self, x, w=1.0)" in kwcell.explain(Double)
        ```
    """

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> KwCellMeta:
        qualname = namespace.get("__qualname__", name)
        for attr in _SLOTS:
            if attr in namespace:
                namespace[attr] = slot_for(qualname, attr, namespace[attr])
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        # A class that does not define construct or bprop gets an inheriting slot only now:
        # a base's __init_subclass__ (run by type.__new__) sees the class statement's own
        # namespace, as on nn.Cell (``if "bprop" not in cls.__dict__: cls.bprop = default``),
        # and what it assigns is kept.
        for attr, slot in _SLOTS.items():
            if attr not in cls.__dict__:
                type.__setattr__(cls, attr, slot(None, cls))
        install_super_readers(cls)
        check_class(cls)
        return cls

    def __setattr__(cls, name: str, value: Any) -> None:
        if name in _SLOTS:
            # Cls.bprop = f / Cls.construct = f after the class statement (or from a base's
            # __init_subclass__): checked as if defined there; instances see it at once.
            type.__setattr__(cls, name, slot_for(cls.__qualname__, name, value, cls))
            check_class(cls)
            return
        super().__setattr__(name, value)

    def __delattr__(cls, name: str) -> None:
        if name in _SLOTS:
            own = cls.__dict__.get(name)
            if own is None or (is_slot(own) and own.fn is None):
                raise AttributeError(name)
            # del Cls.bprop: the class inherits again (or has none), as on nn.Cell.
            type.__setattr__(cls, name, _SLOTS[name](None, cls))
            check_class(cls)
            return
        super().__delattr__(name)

    if not TYPE_CHECKING:
        # Runtime only: a metaclass __call__ that type checkers see replaces the class's own
        # constructor for them (pyright then types ``Net()`` as this method's ``Any``).

        def __call__(cls, *args: Any, **kwargs: Any) -> Any:
            cell = super().__call__(*args, **kwargs)
            if info_of(cls) is not None:
                _warn_ungraded_parameters(cell)
            return cell
