"""Twin cells for tests/test_error_contract.py: each mistake of MindSpore's own bprop form
that ``nn.Cell`` reports only when the gradient is taken, built once on ``nn.Cell`` and once
on ``KwCell`` from the same source (so the class names in MindSpore's messages agree).

A real module: GRAPH_MODE parses the bprops' source.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mindspore as ms
from mindspore import Tensor, nn


def make(base: type[nn.Cell]) -> dict[str, type[nn.Cell]]:
    """The broken cells on ``base``, by the name of the mistake."""

    class ShortReturn(base):  # type: ignore[valid-type,misc]
        def construct(self, x: Tensor, y: Tensor) -> Any:
            return x * y

        def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (dout * y,)

    class EmptyReturn(base):  # type: ignore[valid-type,misc]
        def construct(self, x: Tensor, y: Tensor) -> Any:
            return x * y

        def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
            return ()

    class GeneratorReturn(base):  # type: ignore[valid-type,misc]
        def construct(self, x: Tensor, y: Tensor) -> Any:
            return x * y

        def bprop(self, x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (g for g in (dout * y, dout * x))

    class SingleReturn(base):  # type: ignore[valid-type,misc]
        def construct(self, s: float, y: Tensor) -> Any:
            return s * y

        def bprop(self, s: float, y: Tensor, out: Tensor, dout: Tensor) -> Any:
            return dout * s

    class FewParams(base):  # type: ignore[valid-type,misc]
        def construct(self, x: Tensor, y: Tensor) -> Any:
            return x * y

        def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
            return dout, dout

    class ManyParams(base):  # type: ignore[valid-type,misc]
        def construct(self, x: Tensor, y: Tensor) -> Any:
            return x * y

        def bprop(self, x: Tensor, y: Tensor, z: Tensor, out: Tensor, dout: Tensor) -> Any:
            return dout, dout

    class NoDout(base):  # type: ignore[valid-type,misc]
        def construct(self, x: Tensor, y: Tensor) -> Any:
            return x * y

        def bprop(self, x: Tensor, y: Tensor, dout: Tensor) -> Any:
            return dout * y, dout * x

    class OutOnly(base):  # type: ignore[valid-type,misc]
        def construct(self, x: Tensor) -> Any:
            return x * 2

        def bprop(self, out: Tensor) -> Any:
            return (out,)

    class SelfOnly(base):  # type: ignore[valid-type,misc]
        def construct(self, x: Tensor, y: Tensor) -> Any:
            return x * y

        def bprop(self) -> Any:
            return ()

    class NoSelf(base):  # type: ignore[valid-type,misc]
        def construct(self, x: Tensor, y: Tensor) -> Any:
            return x * y

        def bprop(x: Tensor, y: Tensor, out: Tensor, dout: Tensor) -> Any:
            return dout * y, dout * x

    class StarNoSelf(base):  # type: ignore[valid-type,misc]
        def construct(self, x: Tensor) -> Any:
            return x * 2

        def bprop(*args: Any) -> Any:
            return (args[-1] * 2,)

    class JitBprop(base):  # type: ignore[valid-type,misc]
        def construct(self, x: Tensor) -> Any:
            return x * 2

        @ms.jit
        def bprop(self, x: Tensor, out: Tensor, dout: Tensor) -> Any:
            return (dout * 2,)

    found: list[type[nn.Cell]] = [
        ShortReturn,
        EmptyReturn,
        GeneratorReturn,
        SingleReturn,
        FewParams,
        ManyParams,
        NoDout,
        OutOnly,
        SelfOnly,
        NoSelf,
        StarNoSelf,
        JitBprop,
    ]
    return {cls.__name__: cls for cls in found}


def jit_call(net: nn.Cell, inputs: int) -> Callable[..., Any]:
    """``net`` called from an ``@ms.jit`` function (PYNATIVE's compiled path)."""
    if inputs == 1:

        @ms.jit
        def one(x: Any) -> Any:
            return net(x)

        return one

    @ms.jit
    def two(x: Any, y: Any) -> Any:
        return net(x, y)

    return two
