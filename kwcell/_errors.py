"""Exception classes raised by kwcell."""

from __future__ import annotations

__all__ = ["GradcheckError", "KwCellDefinitionError", "KwCellWarning"]


class KwCellDefinitionError(TypeError):
    """A ``KwCell`` subclass whose ``construct`` and ``bprop`` do not fit together.

    Raised when the ``class`` statement runs, never later. The message names the class,
    the method and the parameter, and shows the signature kwcell expected.
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
    """A custom ``bprop`` disagrees with finite differences of ``construct``."""


class KwCellWarning(UserWarning):
    """Something MindSpore would do silently that is probably not what the user meant.

    For example: a ``KwCell`` with trainable parameters whose ``bprop`` gives them no
    gradient (MindSpore uses zeros). Issued once per class.
    """
