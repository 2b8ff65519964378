"""A griffe extension for the API pages: the signatures users get in their editor.

mkdocstrings reads kwcell's source statically (no MindSpore needed). Left alone it would show
the implementations' ``Any`` annotations for ``kwcell.grad`` and ``kwcell.value_and_grad``
(their typed overloads live in ``kwcell/_typing.pyi``, which ``kwcell/__init__.py`` imports
for type checkers), private type-variable names (``_P``, ``_R``, ``_C``) and private anchors
(``#kwcell._grad.grad``). This extension, loaded by mkdocs.yml:

- gives ``kwcell._grad.grad``/``value_and_grad`` the overloads of ``kwcell/_typing.pyi`` and
  points the public names ``kwcell.grad``/``kwcell.value_and_grad`` at them, so the pages
  document ``::: kwcell.grad`` under a public anchor;
- spells the type variables ``P``, ``R`` and ``C`` and the private aliases out
  (``Position`` is ``int | str``; ``_Weights`` is ``Sequence[Parameter]``);
- for overloaded functions, shows only the overloads (``overloads_only`` in mkdocs.yml), each
  with the docstring of the implementation.

tests/test_site.py checks the rendered pages: no ``Any`` in these signatures, no private name.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

#: Private names in annotations, and what the pages say instead.
RENAMES = {
    r"\b_P\b": "P",
    r"\b_R\b": "R",
    r"\b_R_co\b": "R",
    r"\b_C\b": "C",
    r"\b_F\b": "F",
    r"\b_Weights\b": "Sequence[Parameter]",
    r"\bPosition\b": "int | str",
}
#: Public names whose overloads are in kwcell/_typing.pyi, implemented in kwcell/_grad.py.
TYPED_IN_STUB = ("grad", "value_and_grad")


def _public(annotation: Any) -> Any:
    if annotation is None:
        return None
    text = str(annotation)
    for pattern, new in RENAMES.items():
        text = re.sub(pattern, new, text)
    return text


def _clean(function: griffe.Function) -> None:
    for parameter in function.parameters:
        parameter.annotation = _public(parameter.annotation)
    function.returns = _public(function.returns)


def _typed_from_overloads(function: griffe.Function) -> None:
    """The implementation's parameter and return types, which the API page's tables show, from
    its overloads: each parameter as the last overload that has it types it (the catch-all, for
    grad), the return as the overloads' returns together (the last one's when there are more
    than two, for grad's seven)."""
    overloads = function.overloads or []
    if not overloads:
        return
    for parameter in function.parameters:
        typed = [o.parameters[parameter.name] for o in overloads if parameter.name in o.parameters]
        if typed:
            parameter.annotation = typed[-1].annotation
    returns = list(dict.fromkeys(str(o.returns) for o in overloads))
    function.returns = returns[-1] if len(returns) > 2 else " | ".join(returns)


class KwcellTypes(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name != "kwcell":
            return
        stub, grad = pkg["_typing"], pkg["_grad"]
        for name in TYPED_IN_STUB:
            implementation = grad[name]
            overloads = list(stub.overloads[name])
            if not overloads:
                msg = f"kwcell/_typing.pyi has no overloads of {name}: update docs/_ext/griffe_kwcell.py"
                raise RuntimeError(msg)
            implementation.overloads = overloads
            pkg.set_member(name, griffe.Alias(name, implementation, parent=pkg))
        for module in ("_grad", "_functional", "_decorate"):
            for member in pkg[module].members.values():
                functions = [member] if isinstance(member, griffe.Function) else []
                if isinstance(member, griffe.Class):  # CustomBprop.bprop
                    functions = [m for m in member.members.values() if isinstance(m, griffe.Function)]
                for function in functions:
                    for overload in function.overloads or ():
                        _clean(overload)
                    _typed_from_overloads(function)
                    _clean(function)
