"""Exception classes raised by kwcell."""

from __future__ import annotations

__all__ = ["GradcheckError", "KwCellDefinitionError", "KwCellWarning"]


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
    #: The builtin exception a graph raises for this error when it is deferred to gradient
    #: time (what MindSpore raises for the same mistake on ``nn.Cell``).
    _kwcell_graph_error: str = "TypeError"


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
