"""Exception classes raised by kwcell, and the errors that keep MindSpore's contract.

A bprop written in MindSpore's own form keeps MindSpore's timing: a problem ``nn.Cell``
reports only when the gradient is taken is reported then by kwcell too. That error must be
caught by what catches MindSpore's (``except RuntimeError``, ``pytest.raises(RuntimeError,
match=...)``) and by what catches kwcell's (``except KwCellDefinitionError``):
:func:`deferred_error` makes a class that is both, and :func:`contract_message` puts
MindSpore's own wording first and kwcell's fix-it text after it.

Pure Python: the mypy plugin imports this module, which must never import MindSpore.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "GRAPH",
    "PYNATIVE",
    "GradcheckError",
    "KwCellDefinitionError",
    "KwCellWarning",
    "MindSporeError",
    "contract_message",
    "deferred",
    "deferred_error",
    "definition_code",
]

#: Where a gradient is taken, as far as MindSpore's errors differ: PYNATIVE, and compiled
#: graphs (GRAPH_MODE and ``@ms.jit`` in PYNATIVE, which raise the same errors: measured).
PYNATIVE = "pynative"
GRAPH = "graph"


# First matching fragment of a KwCellDefinitionError message -> the code ``kwcell check``
# reports it with (``kwcell migrate`` names the same code when it leaves a class alone).
_DEFINITION_CODES = (
    (".construct sets (line", "KW009"),  # a warning, kwcell._selfstate's
    ("by Parameters it computes (line", "KW010"),  # a warning, kwcell._weightdicts's
    ("returns ", "KW007"),
    ("positional parameter(s) (", "KW104"),
    ("is not a parameter of", "KW001"),
    ("is missing from bprop", "KW002"),
    ("missing parameter 'out'", "KW003"),
    ("missing parameter 'dout'", "KW003"),
    ("has default", "KW004"),
    ("cannot be used with a bprop", "KW005"),
    ("clashes with bprop's", "KW006"),
    ("uses a name kwcell reserves", "KW006"),
)


def definition_code(message: str) -> str:
    """The ``kwcell check`` code of a ``KwCellDefinitionError`` or class-creation
    ``KwCellWarning`` message (``KW008``: any other)."""
    for fragment, code in _DEFINITION_CODES:
        if fragment in message:
            return code
    return "KW008"


@dataclass(frozen=True)
class MindSporeError:
    """What MindSpore raises on ``nn.Cell`` for one mistake in one mode: class and wording."""

    base: type[Exception]
    text: str


class KwCellDefinitionError(TypeError):
    """A `KwCell` subclass whose `construct` and `bprop` do not fit together.

    A `TypeError`. Raised when the `class` statement runs (or when `Net.bprop` or
    `Net.construct` is assigned later) for kwcell's own bprop forms. The message names the
    class, the method and the parameter, and shows the signature kwcell expected; the error
    reference lists every message with the fix. A bprop in MindSpore's own positional form
    keeps MindSpore's timing: a [`KwCellWarning`][kwcell.KwCellWarning] when the class is
    created, and this error when the gradient is taken, which is then also an instance of the
    exception MindSpore raises there (`ValueError`, `RuntimeError`, ...).

    Example:
        ```python
        from mindspore import ops

        from kwcell import KwCell, KwCellDefinitionError

        try:

            class Net(KwCell):
                def construct(self, x, w=1.0):
                    return w * ops.sin(x)

                def bprop(self, x, z, *, out, dout):
                    return {"x": z * ops.cos(x) * dout}

        except KwCellDefinitionError as exc:
            assert str(exc).startswith("Net.bprop: parameter 'z' is not a parameter of construct")
        ```
    """

    #: Whether the error is raised at class creation even for a bprop written in MindSpore's
    #: positional form (whose other problems wait for the gradient, as on ``nn.Cell``): a form
    #: of kwcell's own (a dict return) that never worked on ``nn.Cell``, or bprop names that
    #: read one way by position and another by name.
    _kwcell_at_definition: bool = False
    #: For a problem deferred to gradient time: what ``nn.Cell`` raises for the same mistake,
    #: by :data:`PYNATIVE` / :data:`GRAPH`. A mode left out is one where ``nn.Cell`` raises
    #: nothing for it; kwcell raises this error there.
    _kwcell_mindspore: Mapping[str, MindSporeError] = types.MappingProxyType({})


class GradcheckError(AssertionError):
    """A custom `bprop` disagrees with finite differences of `construct`.

    An `AssertionError`, raised by [`kwcell.gradcheck`][kwcell.gradcheck], so that a failing
    check fails a test. The message is a table with one line per floating-point input: name,
    shape, largest absolute and relative error, the index of the worst element, the bprop's
    and the finite difference's values there, and PASS or FAIL.

    Example:
        ```python
        import numpy as np
        from mindspore import Tensor, ops

        import kwcell
        from kwcell import GradcheckError, KwCell


        class Wrong(KwCell):
            def construct(self, x):
                return ops.sin(x)

            def bprop(self, x, out, dout):
                return (ops.sin(x) * dout,)  # should be cos


        try:
            kwcell.gradcheck(Wrong(), Tensor(np.array([0.5, 1.0], np.float32)))
        except GradcheckError as exc:
            assert "disagrees with finite differences of construct for 'x'" in str(exc)
        ```
    """


class KwCellWarning(UserWarning):
    """Something MindSpore would do silently, or report only later, that is probably a mistake.

    A `UserWarning`. Given for a `KwCell` with trainable parameters whose `bprop` gives them
    no gradient (MindSpore uses zeros; once per class), for extra returned gradients (ignored,
    as MindSpore ignores them), and, when the class is created, for a problem of a bprop in
    MindSpore's own form that `nn.Cell` reports only when the gradient is taken (the gradient
    then raises [`KwCellDefinitionError`][kwcell.KwCellDefinitionError]). Turn it into an error
    with `warnings.simplefilter("error", kwcell.KwCellWarning)` or pytest's
    `-W error::kwcell.KwCellWarning`.

    Example:
        ```python
        import warnings

        from mindspore import ops

        from kwcell import KwCell, KwCellWarning

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            class Net(KwCell):
                def construct(self, x):
                    return x * 2.0

                def bprop(self, x, out, dout):
                    return 2.0 * dout, dout  # one gradient too many: ignored

        (warning,) = caught
        assert warning.category is KwCellWarning and "returns 2 gradients for 1 input" in str(warning.message)
        ```
    """


class GradientCountError(RuntimeError, ValueError):
    """What a compiled graph raises for a bprop that returns too few gradients: MindSpore
    raises ``RuntimeError``, or ``ValueError`` under ``set_context(check_bprop=True)``
    (its own tests expect either); a deferred error of this kind is both."""


class GradientShapeError(RuntimeError, ValueError):
    """A weight gradient of a shape the weight does not broadcast to. MindSpore raises
    ``RuntimeError`` for it in PYNATIVE ("grad tensor should be broadcast to expected shape");
    kwcell raises it in every mode, naming the weight and both shapes."""


def _rebuild(base: type[Exception], args: tuple[Any, ...]) -> KwCellDefinitionError:
    return deferred_error(base)(*args)


_CLASSES: dict[type[Exception], type[KwCellDefinitionError]] = {}


def deferred_error(base: type[Exception]) -> type[KwCellDefinitionError]:
    """The class of a deferred definition error where MindSpore raises ``base``.

    A subclass of both :class:`KwCellDefinitionError` and ``base`` (``KwCellRuntimeError``
    for ``RuntimeError``); ``KwCellDefinitionError`` itself for ``TypeError``, which it
    already is. One class per ``base``. ``TypeError`` adds no instance fields to
    ``BaseException``, so CPython combines it with any builtin exception class (``OSError``
    included); instances pickle (they are rebuilt through this function).
    """
    if issubclass(KwCellDefinitionError, base):
        return KwCellDefinitionError
    if base in _CLASSES:
        return _CLASSES[base]
    name = f"KwCell{base.__name__}"

    def __reduce__(self: KwCellDefinitionError) -> tuple[Any, ...]:
        return (_rebuild, (base, self.args))

    namespace = {
        "__module__": __name__,
        "__qualname__": name,
        "__doc__": f"A KwCellDefinitionError raised where MindSpore raises {base.__name__}.",
        "__reduce__": __reduce__,
    }
    cls = types.new_class(name, (KwCellDefinitionError, base), exec_body=lambda ns: ns.update(namespace))
    _CLASSES[base] = cls
    return cls


def contract_message(mindspore: str, kwcell: str) -> str:
    """MindSpore's own wording first (its own first line), then kwcell's fix-it text."""
    return f"{mindspore}\n{kwcell}"


def deferred(error: KwCellDefinitionError, mode: str) -> KwCellDefinitionError:
    """The error to raise at gradient time in ``mode`` (:data:`PYNATIVE` or :data:`GRAPH`)
    for ``error``, a problem of MindSpore's own bprop form found when the class was created."""
    mindspore = error._kwcell_mindspore.get(mode)
    if mindspore is None:
        return KwCellDefinitionError(str(error))
    return deferred_error(mindspore.base)(contract_message(mindspore.text, str(error)))
