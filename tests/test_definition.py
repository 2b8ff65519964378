"""Malformed definitions fail when the class statement runs (for MindSpore's own bprop forms:
a warning then, the error at the gradient; see test_mindspore_forms.py), with a message that
names the class, the method and the parameter, and shows the expected signature."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kwcell import KwCell, KwCellDefinitionError, KwCellWarning

EXPECTED = "expected e.g. bprop(self, x, w=1.0, *, out, dout)"


def test_definition_error_is_a_type_error() -> None:
    assert issubclass(KwCellDefinitionError, TypeError)


def test_unknown_bprop_parameter() -> None:
    with pytest.raises(
        KwCellDefinitionError,
        match=re.escape(
            "Net.bprop: parameter 'z' is not a parameter of construct(self, x, w=1.0); " + EXPECTED
        ),
    ):

        class Net(KwCell):
            def construct(self, x: Any, w: Any = 1.0) -> Any:
                return x * w

            def bprop(self, x: Any, z: Any, *, out: Any, dout: Any) -> Any:
                return dout


def test_construct_parameter_missing_from_bprop() -> None:
    with pytest.raises(
        KwCellDefinitionError,
        match=re.escape(
            "Net.bprop: construct parameter 'w' is missing from bprop; name it, or add '**kwargs' "
            "to receive the inputs bprop does not name; " + EXPECTED
        ),
    ):

        class Net(KwCell):
            def construct(self, x: Any, w: Any = 1.0) -> Any:
                return x * w

            def bprop(self, x: Any, *, out: Any, dout: Any) -> Any:
                return dout


@pytest.mark.parametrize("missing", ["out", "dout"])
def test_missing_out_or_dout(missing: str) -> None:
    with pytest.raises(
        KwCellDefinitionError, match=re.escape(f"Net.bprop: missing parameter '{missing}'; " + EXPECTED)
    ):
        if missing == "out":

            class Net(KwCell):
                def construct(self, x: Any, w: Any = 1.0) -> Any:
                    return x * w

                def bprop(self, x: Any, w: Any, *, dout: Any) -> Any:
                    return dout

        else:

            class Net(KwCell):  # type: ignore[no-redef]
                def construct(self, x: Any, w: Any = 1.0) -> Any:
                    return x * w

                def bprop(self, x: Any, w: Any, *, out: Any) -> Any:
                    return out


@pytest.mark.parametrize("name", ["out", "dout"])
def test_construct_parameter_named_out_or_dout(name: str) -> None:
    namespace: dict[str, Any] = {}
    source = f"""
class Net(KwCell):
    def construct(self, x, {name}):
        return x

    def bprop(self, *args):
        return args[-1]
"""
    with pytest.raises(
        KwCellDefinitionError,
        match=re.escape(
            f"Net.construct: parameter '{name}' in construct(self, x, {name}) clashes with bprop's "
            f"'{name}' argument"
        ),
    ):
        exec(source, {"KwCell": KwCell}, namespace)


def test_bprop_default_differs() -> None:
    with pytest.raises(
        KwCellDefinitionError,
        match=re.escape(
            "Net.bprop: parameter 'w' has default 2.0 but construct gives it default 1.0; bprop always "
            "receives the value construct got, so drop the default or make it match; " + EXPECTED
        ),
    ):

        class Net(KwCell):
            def construct(self, x: Any, w: Any = 1.0) -> Any:
                return x * w

            def bprop(self, x: Any, w: Any = 2.0, *, out: Any, dout: Any) -> Any:
                return dout


def test_bprop_default_where_construct_has_none() -> None:
    with pytest.raises(
        KwCellDefinitionError,
        match=re.escape("Net.bprop: parameter 'x' has default 0.0 but construct gives it no default"),
    ):

        class Net(KwCell):
            def construct(self, x: Any, w: Any = 1.0) -> Any:
                return x * w

            def bprop(self, x: Any = 0.0, w: Any = 1.0, *, out: Any, dout: Any) -> Any:
                return dout


@pytest.mark.parametrize(("stars", "name"), [("*", "args"), ("**", "kwargs")])
def test_var_args_in_construct_with_bprop(stars: str, name: str) -> None:
    namespace: dict[str, Any] = {}
    source = f"""
class Net(KwCell):
    def construct(self, x, {stars}{name}):
        return x

    def bprop(self, x, *, out, dout):
        return {{"x": dout}}
"""
    with pytest.raises(
        KwCellDefinitionError,
        match=re.escape(
            f"Net.construct: parameter '{stars}{name}' in construct(self, x, {stars}{name}) cannot be "
            "used with a bprop that names its inputs: bprop needs one gradient per named input"
        ),
    ):
        exec(source, {"KwCell": KwCell}, namespace)


def test_var_positional_mixed_with_named_bprop_parameters() -> None:
    with pytest.raises(
        KwCellDefinitionError,
        match=re.escape(
            "Net.bprop: '*rest' can only be used alone, as MindSpore's classic bprop(self, *rest)"
        ),
    ):

        class Net(KwCell):
            def construct(self, x: Any, w: Any = 1.0) -> Any:
                return x * w

            def bprop(self, x: Any, *rest: Any) -> Any:
                return rest[-1]


def test_reserved_parameter_name() -> None:
    with pytest.raises(
        KwCellDefinitionError,
        match=re.escape(
            "Net.construct: parameter '_kwcell_core' in construct(self, x, _kwcell_core) uses a name"
        ),
    ):

        class Net(KwCell):
            def construct(self, x: Any, _kwcell_core: Any) -> Any:
                return x

            def bprop(self, x: Any, _kwcell_core: Any, out: Any, dout: Any) -> Any:
                return dout


def test_wrong_tuple_length_literal_is_caught_at_class_creation() -> None:
    """kwcell's own forms (here keyword-only out/dout) fail when the class is created."""
    with pytest.raises(
        KwCellDefinitionError,
        match=r"Net\.bprop \(line \d+\): returns 3 gradients, expected 2, one per construct parameter in "
        r"this order: \(x, w\)",
    ):

        class Net(KwCell):
            def construct(self, x: Any, w: Any = 1.0) -> Any:
                return x * w

            def bprop(self, x: Any, w: Any, *, out: Any, dout: Any) -> Any:
                return dout, dout, dout


def test_unknown_dict_key_literal_is_caught_at_class_creation() -> None:
    with pytest.raises(
        KwCellDefinitionError,
        match=r"Net\.bprop \(line \d+\): returns a gradient for 'y', which is not a parameter of construct; "
        r"expected names: \(x, w\)",
    ):

        class Net(KwCell):
            def construct(self, x: Any, w: Any = 1.0) -> Any:
                return x * w

            def bprop(self, x: Any, w: Any, out: Any, dout: Any) -> Any:
                return {"y": dout}


def test_bprop_decorator_is_rejected() -> None:
    def deco(fn: Any) -> Any:
        return fn

    with pytest.raises(
        KwCellDefinitionError, match=re.escape("Net.bprop: decorators on bprop are not supported")
    ):

        class Net(KwCell):
            def construct(self, x: Any) -> Any:
                return x

            @deco
            def bprop(self, x: Any, *, out: Any, dout: Any) -> Any:
                return dout


def test_classic_and_named_forms_are_accepted() -> None:
    class Classic(KwCell):
        def construct(self, x: Any, w: Any = 1.0) -> Any:
            return x * w

        def bprop(self, x: Any, w: Any, out: Any, dout: Any) -> Any:
            return dout * w, None

    class VarArgs(KwCell):
        def construct(self, x: Any, w: Any = 1.0) -> Any:
            return x * w

        def bprop(self, *args: Any) -> Any:
            return args[-1] * args[1], None

    class KwargsForm(KwCell):
        def construct(self, x: Any, w: Any = 1.0) -> Any:
            return x * w

        def bprop(self, x: Any, *, out: Any, dout: Any, **kwargs: Any) -> Any:
            return dout * kwargs["w"]

    for cls in (Classic, VarArgs, KwargsForm):
        # MindSpore treats any cell with a ``bprop`` attribute as a custom-bprop cell: the
        # visible instance must not show it MindSpore (the hidden core carries it); users see
        # the class's function, as on nn.Cell.
        assert getattr(cls(), "has_bprop") is False, "the visible cell must not show a bprop"  # noqa: B009
        assert cls.bprop is cls.__dict__["bprop"].fn


def test_class_without_bprop_is_a_plain_cell() -> None:
    class Plain(KwCell):
        def construct(self, x: Any, w: Any = 1.0) -> Any:
            return x * w

    net = Plain()
    assert type(net).construct is Plain.__dict__["construct"].fn
    assert net(3.0, w=2.0) == 6.0


def test_construct_without_self_names_the_real_mistake() -> None:
    with pytest.raises(
        KwCellDefinitionError,
        match=re.escape(
            "Net.construct: its first parameter 'x' receives the cell itself, but bprop treats 'x' as "
            "an input; did you forget 'self'? write construct(self, x, w)"
        ),
    ):

        class Net(KwCell):
            def construct(x: Any, w: Any) -> Any:
                return x * w

            def bprop(self, x: Any, w: Any, out: Any, dout: Any) -> Any:
                return dout * w, dout * x


def test_bprop_without_self_names_the_real_mistake() -> None:
    with pytest.warns(
        KwCellWarning,
        match=re.escape(
            "Net.bprop: its first parameter 'x' receives the cell itself (MindSpore calls bprop as a "
            "method); did you forget 'self'? write bprop(self, x, out, dout)"
        ),
    ):

        class Net(KwCell):
            def construct(self, x: Any) -> Any:
                return x * 2

            def bprop(x: Any, out: Any, dout: Any) -> Any:
                return (dout * 2,)


@pytest.mark.parametrize("decorator", [staticmethod, classmethod])
def test_static_or_class_method_bprop_names_the_real_mistake(decorator: Any) -> None:
    kind = decorator.__name__
    with pytest.raises(
        KwCellDefinitionError,
        match=re.escape(
            f"Net.bprop is a {kind}: MindSpore calls bprop as a method of the cell, with self first; "
            f"remove @{kind} and write bprop(self, ...)"
        ),
    ):

        class Net(KwCell):
            def construct(self, x: Any) -> Any:
                return x * 2

            bprop = decorator(lambda x, out, dout: (dout * 2,))


def test_var_args_construct_with_mindspore_form_bprop_is_left_as_nn_cell() -> None:
    """construct(self, *inputs) has no names to match: the cell stays exactly an nn.Cell."""

    class Passthrough(KwCell):
        def construct(self, *inputs: Any) -> Any:
            return inputs[0] * inputs[1]

        def bprop(self, *args: Any) -> Any:
            return args[-1] * args[1], args[-1] * args[0]

    assert Passthrough.bprop is Passthrough.__dict__["bprop"].fn
    assert getattr(Passthrough(), "has_bprop") is True  # noqa: B009 - MindSpore's own flag
