"""The mypy plugin and ``kwcell check`` report exactly what the class statement raises or warns,
from one table.

Each entry of ``TABLE`` is a small module defining classes that behave as KwCells: ``KwCell``
subclasses, classes decorated with ``@kwcell.keyword_bprop`` (however it is imported) and
their subclasses, and ``kwcell.custom_bprop`` functions. The test imports every module (the
class statements run: ``KwCellDefinitionError`` or ``KwCellWarning``), runs mypy with the
plugin once over all of them (errors and notes with the same messages) and ``kwcell check``
once over all of them (one problem per error or warning, with the same message), then
compares the three outcomes entry by entry, so that the tools and the runtime cannot drift
apart.
"""

from __future__ import annotations

import importlib
import re
import sys
import warnings
from pathlib import Path

import pytest
from mypy import api

from kwcell import KwCellDefinitionError, KwCellWarning
from kwcell._check import check
from tests.conftest import kept_dir
from tests.test_typing import write_mypy_config

HEADER = """\
from __future__ import annotations

from typing import Any, Final

import mindspore as ms
from mindspore import ops

from kwcell import KwCell

"""

# name -> the module's classes (after HEADER); "no report" entries guard against false alarms
TABLE: dict[str, str] = {
    "valid_by_name": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * ops.sin(x)

    def bprop(self, x: ms.Tensor, w: float = 1.0, *, out: ms.Tensor, dout: ms.Tensor) -> dict[str, ms.Tensor]:
        return {"x": w * ops.cos(x) * dout}
""",
    "unknown_parameter": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, z: float, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    "missing_parameter_kwcell_form": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    "missing_parameter_mindspore_form": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    "positional_with_other_names": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, y: ms.Tensor) -> ms.Tensor:
        return x * y

    def bprop(self, a: ms.Tensor, b: ms.Tensor, o: ms.Tensor, g: ms.Tensor) -> tuple[ms.Tensor, ms.Tensor]:
        return b * g, a * g
""",
    "ambiguous_positional_names": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, y: ms.Tensor) -> ms.Tensor:
        return x * y

    def bprop(self, y: ms.Tensor, x: ms.Tensor, o: ms.Tensor, g: ms.Tensor) -> tuple[ms.Tensor, ms.Tensor]:
        return x * g, y * g
""",
    "classic_args": """
class Net(KwCell):
    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return ops.sin(x)

    def bprop(self, *args: ms.Tensor) -> tuple[ms.Tensor]:
        return (ops.cos(args[0]) * args[2],)
""",
    "default_differs": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, w: float = 2.0, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    "default_is_an_equal_variable": """
SCALE = 1.0


class Net(KwCell):
    def construct(self, x: ms.Tensor, w: float = SCALE) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, w: float = 1.0, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    "defaults_are_equal_constants": """
A = 2.0
B = 2.0
C: Final = 3
D: Final = 3


class Net(KwCell):
    def construct(self, x: ms.Tensor, w: float = A, n: int = C) -> ms.Tensor:
        return w * n * x

    def bprop(self, x: ms.Tensor, w: float = B, n: int = D, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    "defaults_are_different_final_constants": """
C: Final = 3
D: Final = 4


class Net(KwCell):
    def construct(self, x: ms.Tensor, n: int = C) -> ms.Tensor:
        return n * x

    def bprop(self, x: ms.Tensor, n: int = D, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    "defaults_negative_and_tuple": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, b: float = -1.5, ax: tuple[int, ...] = (0, -1)) -> ms.Tensor:
        return x + b

    def bprop(
        self, x: ms.Tensor, b: float = -1.5, ax: tuple[int, ...] = (0, -1), *, out: ms.Tensor, dout: ms.Tensor
    ) -> ms.Tensor:
        return dout
""",
    "returned_dict_unknown_key": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, w: float = 1.0, *, out: ms.Tensor, dout: ms.Tensor) -> dict[str, ms.Tensor]:
        if w > 0:
            return {"x": w * dout}
        return {"x": dout, "scale": dout}
""",
    "returned_tuple_wrong_count": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, y: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x * y

    def bprop(
        self, x: ms.Tensor, y: ms.Tensor, w: float = 1.0, *, out: ms.Tensor, dout: ms.Tensor
    ) -> tuple[ms.Tensor, ms.Tensor]:
        return y * dout, x * dout
""",
    "mindspore_form_extra_gradient": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, y: ms.Tensor) -> ms.Tensor:
        return x * y

    def bprop(
        self, x: ms.Tensor, y: ms.Tensor, out: ms.Tensor, dout: ms.Tensor
    ) -> tuple[ms.Tensor, ms.Tensor, ms.Tensor]:
        return y * dout, x * dout, dout
""",
    "mindspore_form_missing_gradient": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, y: ms.Tensor) -> ms.Tensor:
        return x * y

    def bprop(self, x: ms.Tensor, y: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> tuple[ms.Tensor]:
        return (y * dout,)
""",
    "subclass_construct_against_inherited_returns": """
class Base(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, *, out: ms.Tensor, dout: ms.Tensor, **rest: Any) -> dict[str, ms.Tensor]:
        return {"x": dout, "w": dout}


class Child(Base):
    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return 2.0 * x
""",
    "var_positional_construct_mindspore_form": """
class Net(KwCell):
    def construct(self, *inputs: ms.Tensor) -> ms.Tensor:
        return inputs[0]

    def bprop(self, *args: ms.Tensor) -> tuple[ms.Tensor, ...]:
        return tuple(ops.zeros_like(a) for a in args[:-2])
""",
    "out_in_construct": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, out: ms.Tensor) -> ms.Tensor:
        return x + out

    def bprop(self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    "decorated_mindspore_form": """
class Net(KwCell):
    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return x * 2

    @ms.jit
    def bprop(self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> tuple[ms.Tensor]:
        return (dout * 2,)
""",
    "decorated_kwcell_form": """
import functools


def logged(fn: Any) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


class Net(KwCell):
    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return x * 2

    @logged
    def bprop(self, x: ms.Tensor, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout * 2
""",
    "var_positional_construct": """
class Net(KwCell):
    def construct(self, x: ms.Tensor, *more: ms.Tensor) -> ms.Tensor:
        return x

    def bprop(self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    # state construct stores on self for bprop (KW009): PYNATIVE only
    "state_on_self": """
class RMSNorm2D(KwCell):
    def __init__(self, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        self.norm_x = x * ops.rsqrt((x * x).mean(-1, keep_dims=True) + self.eps)
        return self.norm_x

    def bprop(self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> tuple[ms.Tensor]:
        rstd = ops.rsqrt((x * x).mean(-1, keep_dims=True) + self.eps)
        return (rstd * (dout - self.norm_x * (dout * self.norm_x).mean(-1, keep_dims=True)),)
""",
    "state_on_self_with_default_in_init": """
class Cached(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.scale: ms.Tensor | None = None

    def construct(self, x: ms.Tensor, *, w: float = 2.0) -> ms.Tensor:
        self.scale, y = ops.cos(x), w * ops.sin(x)
        return y

    def bprop(self, x: ms.Tensor, *, w: float = 2.0, out: ms.Tensor, dout: ms.Tensor) -> dict[str, ms.Tensor]:
        assert self.scale is not None
        return {"x": w * self.scale * dout}
""",
    # a weight dict keyed by Parameters bprop computes (KW010): PYNATIVE only
    "weight_dict_comprehension": """
class LoHa(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.a = ms.Parameter(ms.Tensor([1.0]), name="a")
        self.b = ms.Parameter(ms.Tensor([2.0]), name="b")
        self.internal_params = [self.a, self.b]

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return self.a * self.b * x

    def bprop(self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> Any:
        grads = (self.b * x * dout, self.a * x * dout)
        return (self.a * self.b * dout,), {p: g for p, g in zip(self.internal_params, grads)}
""",
    "weight_dict_loop": """
class Adapter(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.a = ms.Parameter(ms.Tensor([1.0]), name="a")
        self.internal_params = [self.a]

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return self.a * x

    def bprop(self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> Any:
        grads = {}
        for p in self.internal_params:
            grads[p] = x * dout
        return (self.a * dout,), grads
""",
    # no report: keys written as attributes of the cell (kwcell rewrites them for graphs)
    "weight_dict_attribute_keys": """
class Adapter(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.a = ms.Parameter(ms.Tensor([1.0]), name="a")
        self.internal_params = [self.a]

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return self.a * x

    def bprop(self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> Any:
        grads = {}
        grads[self.a] = x * dout
        return (self.a * dout,), grads
""",
    "state_on_self_bprop_inherited": """
class Base(KwCell):
    def bprop(self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> tuple[ms.Tensor]:
        return (getattr(self, "saved") * dout,)


class Child(Base):
    def construct(self, x: ms.Tensor) -> ms.Tensor:
        setattr(self, "saved", ops.cos(x))
        return ops.sin(x)
""",
    "state_on_self_not_read_back": """
class Counter(KwCell):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.w = 2.0

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        self.calls += 1
        return self.w * x

    def bprop(self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> tuple[ms.Tensor]:
        def helper() -> ms.Tensor:
            return self.w * dout

        return (helper(),)
""",
    # @kwcell.keyword_bprop: a library base decorated once (it keeps its bases, mixin included),
    # and the models derived from it, in this module or another
    "keyword_bprop_library_valid": """
from mindspore import nn

import kwcell


class GenerationMixin:
    def generate(self, steps: int) -> list[int]:
        return list(range(steps))


@kwcell.keyword_bprop
class PreTrainedModel(nn.Cell, GenerationMixin):
    def __init__(self, hidden: int = 4) -> None:
        super().__init__()
        self.hidden = hidden


class Gelu(PreTrainedModel):
    def construct(self, x: ms.Tensor, alpha: float = 1.0, *, beta: float = 1.0) -> ms.Tensor:
        return beta * ops.tanh(alpha * x)

    def bprop(
        self, x: ms.Tensor, alpha: float = 1.0, *, beta: float = 1.0, out: ms.Tensor, dout: ms.Tensor
    ) -> dict[str, ms.Tensor]:
        return {"x": dout * beta * alpha}
""",
    "keyword_bprop_library_default_differs": """
from mindspore import nn

import kwcell


class GenerationMixin:
    pass


@kwcell.keyword_bprop
class PreTrainedModel(nn.Cell, GenerationMixin):
    pass


class Gelu(PreTrainedModel):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, w: float = 2.0, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    "keyword_bprop_model_in_another_module": """
from parity_keyword_bprop_library_valid import PreTrainedModel


class Gelu(PreTrainedModel):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    "keyword_bprop_grandchild_inherited_returns": """
from mindspore import nn

from kwcell import keyword_bprop


@keyword_bprop
class PreTrainedModel(nn.Cell):
    pass


class Base(PreTrainedModel):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, *, out: ms.Tensor, dout: ms.Tensor, **rest: Any) -> dict[str, ms.Tensor]:
        return {"x": dout, "w": dout}


class Child(Base):
    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return 2.0 * x
""",
    "keyword_bprop_own_metaclass_returned_dict_unknown_key": """
from mindspore import nn

from kwcell import keyword_bprop as kw_bprop


class Registry(type):
    classes: list[str] = []

    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any], **kw: Any) -> Registry:
        cls = super().__new__(mcls, name, bases, ns, **kw)
        mcls.classes.append(name)
        return cls


@kw_bprop
class Layer(nn.Cell, metaclass=Registry):
    pass


class Scaled(Layer):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, w: float = 1.0, *, out: ms.Tensor, dout: ms.Tensor) -> dict[str, ms.Tensor]:
        return {"x": dout, "scale": dout}
""",
    "keyword_bprop_on_the_cell_unknown_parameter": """
from mindspore import nn

import kwcell as kc


@kc.keyword_bprop
class Net(nn.Cell):
    def construct(self, x: ms.Tensor, y: ms.Tensor) -> ms.Tensor:
        return x * y

    def bprop(self, x: ms.Tensor, z: ms.Tensor, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    "keyword_bprop_compile_once_mindspore_form_missing_parameter": """
from mindspore import nn

import kwcell


@kwcell.keyword_bprop(compile_once=True)
class Net(nn.Cell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> tuple[ms.Tensor]:
        return (dout,)
""",
    "keyword_bprop_subclass_keyword_mindspore_form_extra_gradient": """
from mindspore import nn

import kwcell


@kwcell.keyword_bprop
class PreTrainedModel(nn.Cell):
    pass


class Net(PreTrainedModel, compile_once=True):
    def construct(self, x: ms.Tensor, y: ms.Tensor) -> ms.Tensor:
        return x * y

    def bprop(
        self, x: ms.Tensor, y: ms.Tensor, out: ms.Tensor, dout: ms.Tensor
    ) -> tuple[ms.Tensor, ms.Tensor, ms.Tensor]:
        return y * dout, x * dout, dout
""",
    # decorating what already behaves as a KwCell changes nothing: one report, not two
    "keyword_bprop_on_a_kwcell_default_differs": """
import kwcell


@kwcell.keyword_bprop
class Net(KwCell):
    def construct(self, x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
        return w * x

    def bprop(self, x: ms.Tensor, w: float = 2.0, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    "keyword_bprop_on_a_decorated_subclass_unknown_parameter": """
from mindspore import nn

import kwcell


@kwcell.keyword_bprop
class PreTrainedModel(nn.Cell):
    pass


@kwcell.keyword_bprop(compile_once=True)
class Net(PreTrainedModel):
    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return x

    def bprop(self, x: ms.Tensor, z: ms.Tensor, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
        return dout
""",
    # kwcell.custom_bprop functions: the same rules for a backward registered with @scaled.bprop
    "function_valid": """
import kwcell


@kwcell.custom_bprop
def scaled(x: ms.Tensor, w: float = 1.0, *, y: float = 0.0) -> ms.Tensor:
    return w * ops.sin(x) + y


@scaled.bprop
def _(
    x: ms.Tensor, w: float = 1.0, *, y: float = 0.0, out: ms.Tensor, dout: ms.Tensor
) -> dict[str, ms.Tensor]:
    return {"x": w * ops.cos(x) * dout}
""",
    "function_unknown_parameter": """
import kwcell


@kwcell.custom_bprop
def scaled(x: ms.Tensor, w: float = 1.0, *, y: float = 0.0) -> ms.Tensor:
    return w * ops.sin(x) + y


@scaled.bprop
def _(x: ms.Tensor, z: float, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
    return dout
""",
    "function_default_differs": """
import kwcell


@kwcell.custom_bprop
def scaled(x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
    return w * x


@scaled.bprop
def _(x: ms.Tensor, w: float = 2.0, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
    return dout
""",
    "function_missing_parameter_mindspore_form": """
import kwcell


@kwcell.custom_bprop
def scaled(x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
    return w * x


@scaled.bprop
def _(x: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
    return dout
""",
    "function_returned_dict_unknown_key": """
import kwcell


@kwcell.custom_bprop
def scaled(x: ms.Tensor, w: float = 1.0) -> ms.Tensor:
    return w * x


@scaled.bprop
def _(x: ms.Tensor, w: float = 1.0, *, out: ms.Tensor, dout: ms.Tensor) -> dict[str, ms.Tensor]:
    return {"x": dout, "scale": dout}
""",
    "function_mindspore_form_extra_gradient": """
import kwcell


@kwcell.custom_bprop
def scaled(x: ms.Tensor, y: ms.Tensor) -> ms.Tensor:
    return x * y


@scaled.bprop
def _(x: ms.Tensor, y: ms.Tensor, out: ms.Tensor, dout: ms.Tensor) -> tuple[ms.Tensor, ms.Tensor, ms.Tensor]:
    return y * dout, x * dout, dout
""",
    "function_ambiguous_positional_names": """
import kwcell


@kwcell.custom_bprop
def scaled(x: ms.Tensor, y: ms.Tensor) -> ms.Tensor:
    return x * y


@scaled.bprop
def _(y: ms.Tensor, x: ms.Tensor, o: ms.Tensor, g: ms.Tensor) -> tuple[ms.Tensor, ms.Tensor]:
    return x * g, y * g
""",
    "function_classic_args": """
import kwcell


@kwcell.custom_bprop
def scaled(x: ms.Tensor) -> ms.Tensor:
    return ops.sin(x)


@scaled.bprop
def _(*args: ms.Tensor) -> tuple[ms.Tensor]:
    return (ops.cos(args[0]) * args[2],)
""",
    "function_var_positional": """
import kwcell


@kwcell.custom_bprop
def scaled(x: ms.Tensor, *more: ms.Tensor) -> ms.Tensor:
    return x


@scaled.bprop
def _(x: ms.Tensor, *, out: ms.Tensor, dout: ms.Tensor) -> ms.Tensor:
    return dout
""",
}

Outcome = list[tuple[str, str]]  # (kind, message), kind "error" or "warning"
# the classes and functions of the table: the plugin's notes start with one of their names
_NAMES = re.compile(
    "(" + "|".join(sorted(set(re.findall(r"^(?:class|def) (\w+)", "".join(TABLE.values()), re.M)))) + r")\b"
)
_LINE = re.compile(
    r"^(?P<path>[^:]+):\d+: (?P<severity>error|note): (?P<message>.*?)(?P<code>  \[[a-z-]+\])?$"
)


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("parity")
    for name, body in TABLE.items():
        (directory / f"parity_{name}.py").write_text(HEADER + body, encoding="utf-8")
    return directory


def runtime_outcome(directory: Path, name: str) -> Outcome:
    """What the class statements of ``TABLE[name]`` raise or warn."""
    sys.path.insert(0, str(directory))
    sys.modules.pop(f"parity_{name}", None)  # run the class statements again
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                importlib.import_module(f"parity_{name}")
            except KwCellDefinitionError as exc:
                return [("error", str(exc))]
    finally:
        sys.path.remove(str(directory))
    return [("warning", str(w.message)) for w in caught if issubclass(w.category, KwCellWarning)]


@pytest.fixture(scope="module")
def plugin_outcomes(modules: Path, request: pytest.FixtureRequest) -> dict[str, Outcome]:
    """What the plugin reports for each module: errors, and its notes (the runtime's warnings)."""
    config = write_mypy_config(modules)
    cache = kept_dir(request, "kwcell-mypy-parity", modules / "cache")
    files = sorted(str(p) for p in modules.glob("parity_*.py"))
    stdout, stderr, status = api.run(
        [
            "--config-file",
            str(config),
            "--cache-dir",
            str(cache),
            "--no-error-summary",
            "--hide-error-context",
            *files,
        ]
    )
    assert status in (0, 1), f"mypy crashed (exit {status}):\n{stdout}\n{stderr}"
    outcomes: dict[str, Outcome] = {name: [] for name in TABLE}
    for line in stdout.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        name = Path(match["path"]).stem.removeprefix("parity_")
        message = match["message"]
        if match["severity"] == "error":
            if match["code"] == "  [kwcell-bprop]":  # the plugin's, not mypy's own checks
                outcomes[name].append(("error", message))
        elif _NAMES.match(message):  # the plugin's notes, not mypy's hints
            outcomes[name].append(("warning", message))
    return outcomes


@pytest.fixture(scope="module")
def check_outcomes(modules: Path) -> dict[str, list[str]]:
    """What ``kwcell check`` reports for each module: one message per problem, in line order."""
    outcomes: dict[str, list[str]] = {name: [] for name in TABLE}
    saved = list(sys.path)
    for name in TABLE:
        sys.modules.pop(f"parity_{name}", None)  # run the class statements again
    try:
        report = check(sorted(str(p) for p in modules.glob("parity_*.py")))
    finally:
        sys.path[:] = saved
    assert report.modules == len(TABLE)
    for problem in report.problems:
        outcomes[Path(problem.file).stem.removeprefix("parity_")].append(problem.message)
    return outcomes


@pytest.mark.parametrize("name", list(TABLE))
def test_plugin_reports_what_the_class_statement_raises_or_warns(
    modules: Path, plugin_outcomes: dict[str, Outcome], name: str
) -> None:
    assert plugin_outcomes[name] == runtime_outcome(modules, name)


@pytest.mark.parametrize("name", list(TABLE))
def test_check_reports_what_the_class_statement_raises_or_warns(
    modules: Path, check_outcomes: dict[str, list[str]], name: str
) -> None:
    assert check_outcomes[name] == [message for _, message in runtime_outcome(modules, name)]


def test_the_table_covers_errors_warnings_and_clean_classes(modules: Path) -> None:
    kinds = {kind for name in TABLE for kind, _ in runtime_outcome(modules, name) or [("none", "")]}
    assert kinds == {"error", "warning", "none"}
