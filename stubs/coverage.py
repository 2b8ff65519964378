"""Print how much of MindSpore's public API the stubs cover, as a Markdown table.

Usage: ``python stubs/coverage.py``. For each covered module: its public names (``__all__``),
how many the stubs in ``stubs/mindspore-stubs`` define, and how many of those are written by
hand in ``stubs/handwritten`` (precise types) rather than generated (runtime signatures, ``Any``
types). The Tensor row counts Tensor's public methods and attributes.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import HANDWRITTEN, OUTPUT, class_names, defined_names, public_names, stub_path

MODULES = (
    "mindspore",
    "mindspore.nn",
    "mindspore.ops",
    "mindspore.dataset",
    "mindspore.train",
    "mindspore.communication",
    "mindspore.common.initializer",
)


def _tree(root: Path, module: str) -> ast.Module:
    path = root / stub_path(module)
    return (
        ast.parse(path.read_text(encoding="utf-8")) if path.exists() else ast.Module(body=[], type_ignores=[])
    )


def _tensor_names(root: Path) -> set[str]:
    for node in _tree(root, "mindspore.common.tensor").body:
        if isinstance(node, ast.ClassDef) and node.name == "Tensor":
            return class_names(node)
    return set()


def rows() -> list[tuple[str, int, int, int]]:
    """``(name, public, stubbed, by hand)`` for each covered module and for Tensor."""
    table: list[tuple[str, int, int, int]] = []
    for module in MODULES:
        names = set(public_names(importlib.import_module(module)))
        stubbed = names & defined_names(_tree(OUTPUT, module))
        by_hand = names & defined_names(_tree(HANDWRITTEN, module))
        table.append((module, len(names), len(stubbed), len(by_hand)))
    from mindspore import Tensor

    names = {n for n in dir(Tensor) if not n.startswith("_")}
    table.append(
        (
            "Tensor methods and attributes",
            len(names),
            len(names & _tensor_names(OUTPUT)),
            len(names & _tensor_names(HANDWRITTEN)),
        )
    )
    return table


def main() -> None:
    import mindspore

    print(f"Stub coverage of MindSpore {mindspore.__version__} (`python stubs/coverage.py`):\n")
    print("| module | public names | stubbed | precise (by hand) |")
    print("|---|---|---|---|")
    for name, public, stubbed, by_hand in rows():
        print(f"| `{name}` | {public} | {stubbed} ({100 * stubbed / public:.0f}%) | {by_hand} |")


if __name__ == "__main__":
    main()
