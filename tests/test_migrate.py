"""``python -m kwcell migrate``: the codemod on source strings (output compared exactly), the
command line, and (slow) a rewrite of this suite's own nn.Cell bprop cells, run afterwards."""

from __future__ import annotations

import ast
import difflib
import os
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import kwcell
from kwcell._cli import main
from kwcell._migrate import FileMigration, Note, migrate_source
from tests.conftest import SLOW_HERE

ROOT = Path(__file__).resolve().parent.parent
BPROP = """\
    def construct(self, x):
        return x * 2

    def bprop(self, x, out, dout):
        return (dout * 2,)
"""


def _src(text: str) -> str:
    return textwrap.dedent(text).replace("<BPROP>\n", BPROP)


def _migrate(before: str) -> FileMigration:
    return migrate_source(_src(before))


# -- every way of importing nn.Cell ---------------------------------------------------------
IMPORTS = {
    "from mindspore import nn": "nn.Cell",
    "import mindspore.nn as nn": "nn.Cell",
    "import mindspore as ms": "ms.nn.Cell",
    "import mindspore": "mindspore.nn.Cell",
    "import mindspore.nn": "mindspore.nn.Cell",
    "from mindspore.nn import Cell": "Cell",
    "from mindspore.nn import Cell as C": "C",
    "from mindspore import nn as msnn": "msnn.Cell",
    "from mindspore.nn.cell import Cell": "Cell",
    "from mindspore.nn import *": "Cell",
    "from mindspore import *": "nn.Cell",
}


@pytest.mark.parametrize(("imports", "base"), IMPORTS.items(), ids=list(IMPORTS))
def test_every_import_of_nn_cell_is_switched(imports: str, base: str) -> None:
    template = _src(
        """\
        import numpy as np
        {imports}{added}

        SCALE = 2  # a comment that stays


        class Net({base}):  # so does this one
        <BPROP>
        """
    )
    before = template.format(imports=imports, added="", base=base)
    after = template.format(imports=imports, added="\nfrom kwcell import KwCell", base="KwCell")
    result = migrate_source(before)
    assert result.after == after
    assert result.switched == (Note(7, "Net", f"{base} -> KwCell"),)
    assert result.problems == ()


def test_the_file_is_otherwise_byte_identical_crlf_comments_and_odd_spacing() -> None:
    before = (
        b"# -*- coding: utf-8 -*-\r\n"
        b"from mindspore import nn   # nn\r\n"
        b"\r\n"
        b"class Net( nn.Cell ,  ):   # odd spacing stays\r\n"
        b"    def bprop(self, x, out, dout):  # \xc3\xa9\r\n"
        b"        return (dout,)\r\n"
    )
    result = migrate_source(before)
    assert result.after.encode(result.encoding) == (
        b"# -*- coding: utf-8 -*-\r\n"
        b"from mindspore import nn   # nn\r\n"
        b"from kwcell import KwCell\r\n"
        b"\r\n"
        b"class Net( KwCell ,  ):   # odd spacing stays\r\n"
        b"    def bprop(self, x, out, dout):  # \xc3\xa9\r\n"
        b"        return (dout,)\r\n"
    )


# -- which classes ---------------------------------------------------------------------------
CASES = {
    "mixin_before_the_cell_base": (
        """\
        from mindspore import nn


        class Mixin:
            pass


        class Net(Mixin, nn.Cell):
        <BPROP>
        """,
        """\
        from mindspore import nn
        from kwcell import KwCell


        class Mixin:
            pass


        class Net(Mixin, KwCell):
        <BPROP>
        """,
    ),
    "bprop_from_a_mixin_of_the_file": (
        """\
        from mindspore import nn


        class BpropMixin:
            def bprop(self, x, out, dout):
                return (dout,)


        class Net(BpropMixin, nn.Cell):
            def construct(self, x):
                return x
        """,
        """\
        from mindspore import nn
        from kwcell import KwCell


        class BpropMixin:
            def bprop(self, x, out, dout):
                return (dout,)


        class Net(BpropMixin, KwCell):
            def construct(self, x):
                return x
        """,
    ),
    "a_subclass_of_a_switched_class_needs_nothing": (
        """\
        from mindspore import nn


        class Net(nn.Cell):
        <BPROP>


        class Faster(Net):
            def construct(self, x):
                return x + x
        """,
        """\
        from mindspore import nn
        from kwcell import KwCell


        class Net(KwCell):
        <BPROP>


        class Faster(Net):
            def construct(self, x):
                return x + x
        """,
    ),
    "a_shared_base_is_switched_for_its_bprop_subclass": (
        """\
        from mindspore import nn


        class Base(nn.Cell):
            def __init__(self):
                super().__init__()
                self.scale = 2.0


        class Net(Base):
        <BPROP>
        """,
        """\
        from mindspore import nn
        from kwcell import KwCell


        class Base(KwCell):
            def __init__(self):
                super().__init__()
                self.scale = 2.0


        class Net(Base):
        <BPROP>
        """,
    ),
    "bprop_assigned_in_the_body_and_after_the_class": (
        """\
        from mindspore import nn


        def _shared_bprop(self, x, out, dout):
            return (dout,)


        class Shared(nn.Cell):
            bprop = _shared_bprop


        class Later(nn.Cell):
            def construct(self, x):
                return x


        Later.bprop = _shared_bprop


        class PerInstance(nn.Cell):
            def __init__(self):
                super().__init__()
                self.bprop = _shared_bprop.__get__(self)
        """,
        """\
        from mindspore import nn
        from kwcell import KwCell


        def _shared_bprop(self, x, out, dout):
            return (dout,)


        class Shared(KwCell):
            bprop = _shared_bprop


        class Later(KwCell):
            def construct(self, x):
                return x


        Later.bprop = _shared_bprop


        class PerInstance(KwCell):
            def __init__(self):
                super().__init__()
                self.bprop = _shared_bprop.__get__(self)
        """,
    ),
    "bprop_under_if_in_the_body": (
        """\
        import sys

        from mindspore import nn


        class Net(nn.Cell):
            if sys.platform:
                def bprop(self, x, out, dout):
                    return (dout,)
        """,
        """\
        import sys

        from mindspore import nn
        from kwcell import KwCell


        class Net(KwCell):
            if sys.platform:
                def bprop(self, x, out, dout):
                    return (dout,)
        """,
    ),
    "nested_classes_and_classes_in_test_functions": (
        """\
        import mindspore as ms


        class Outer(ms.nn.Cell):
            class Inner(ms.nn.Cell):
                def bprop(self, x, out, dout):
                    return (dout,)

            def construct(self, x):
                return x


        def test_something():
            from mindspore import nn as local_nn

            class Net(local_nn.Cell):
                bprop = None

            class Plain(local_nn.Cell):
                def construct(self, x):
                    return x

            return Net, Plain
        """,
        """\
        import mindspore as ms
        from kwcell import KwCell


        class Outer(ms.nn.Cell):
            class Inner(KwCell):
                def bprop(self, x, out, dout):
                    return (dout,)

            def construct(self, x):
                return x


        def test_something():
            from mindspore import nn as local_nn

            class Net(KwCell):
                bprop = None

            class Plain(local_nn.Cell):
                def construct(self, x):
                    return x

            return Net, Plain
        """,
    ),
    "metaclass_abc_abcmeta_combines_with_kwcell": (
        """\
        import abc

        from mindspore import nn


        class Net(nn.Cell, metaclass=abc.ABCMeta):
        <BPROP>
        """,
        """\
        import abc

        from mindspore import nn
        from kwcell import KwCell


        class Net(KwCell, metaclass=abc.ABCMeta):
        <BPROP>
        """,
    ),
}


@pytest.mark.parametrize(("before", "after"), CASES.values(), ids=list(CASES))
def test_switches_exactly_the_bases_that_need_it(before: str, after: str) -> None:
    result = _migrate(before)
    assert result.after == _src(after)
    assert result.problems == ()


def test_switched_classes_are_reported_by_qualified_name() -> None:
    result = _migrate(CASES["nested_classes_and_classes_in_test_functions"][0])
    assert result.switched == (
        Note(5, "Outer.Inner", "ms.nn.Cell -> KwCell"),
        Note(16, "test_something.<locals>.Net", "local_nn.Cell -> KwCell"),
    )


UNCHANGED = {
    "no_bprop": """\
        from mindspore import nn


        class Net(nn.Cell):
            def construct(self, x):
                return x
        """,
    "already_kwcell": """\
        from kwcell import KwCell


        class Net(KwCell):
        <BPROP>
        """,
    "a_cell_that_is_not_mindspores": """\
        class Cell:
            pass


        class Net(Cell):
        <BPROP>
        """,
    "nn_is_a_parameter_not_mindspore": """\
        def make(nn):
            class Net(nn.Cell):
                bprop = None

            return Net
        """,
}


@pytest.mark.parametrize("before", UNCHANGED.values(), ids=list(UNCHANGED))
def test_leaves_alone_what_is_not_an_nn_cell_bprop_cell(before: str) -> None:
    result = _migrate(before)
    assert not result.changed
    assert result.switched == result.problems == ()


# -- what it cannot switch -------------------------------------------------------------------
def test_a_metaclass_of_its_own_is_reported_with_the_decorator() -> None:
    before = _src(
        """\
        from mindspore import nn


        class Registry(type):
            pass


        class Net(nn.Cell, metaclass=Registry):
        <BPROP>
        """
    )
    result = migrate_source(before)
    assert not result.changed
    assert result.problems == (
        Note(
            8,
            "Net",
            "not switched: metaclass=Registry cannot be combined with KwCell's metaclass; keep nn.Cell "
            "and decorate the class with @kwcell.keyword_bprop instead (KwCell's behaviour, bases and "
            "metaclass unchanged)",
        ),
    )


def test_a_metaclass_on_a_subclass_keeps_the_base_unswitched() -> None:
    result = _migrate(
        """\
        from mindspore import nn


        class Base(nn.Cell):
            pass


        class Net(Base, metaclass=type("Meta", (type,), {})):
        <BPROP>
        """
    )
    assert not result.changed
    (problem,) = result.problems
    assert problem.name == "Base"
    assert problem.message.startswith(
        'not switched: the metaclass=type("Meta", (type,), {}) of its subclass Net, line 8, cannot be '
        "combined with KwCell's metaclass; keep nn.Cell and decorate the class with @kwcell.keyword_bprop"
    )


def test_a_metaclass_derived_from_kwcellmeta_is_no_conflict() -> None:
    result = _migrate(
        """\
        from kwcell import KwCellMeta
        from mindspore import nn


        class Meta(KwCellMeta):
            pass


        class Net(nn.Cell, metaclass=Meta):
        <BPROP>
        """
    )
    assert result.problems == ()
    assert "class Net(KwCell, metaclass=Meta):" in result.after
    assert "from kwcell import KwCell, KwCellMeta\n" in result.after


def test_a_static_bprop_is_reported_not_switched() -> None:
    result = _migrate(
        """\
        from mindspore import nn


        class Net(nn.Cell):
            @staticmethod
            def bprop(x, out, dout):
                return (dout,)
        """
    )
    assert not result.changed
    assert result.problems == (
        Note(
            4,
            "Net",
            "not switched: its bprop is a staticmethod, which KwCell refuses: MindSpore calls bprop as a "
            "method of the cell, with self first; remove @staticmethod, write bprop(self, ...) and run "
            "migrate again",
        ),
    )


def test_a_name_kwcell_that_means_something_else_is_reported() -> None:
    result = _migrate(
        """\
        from mindspore import nn

        KwCell = None


        class Net(nn.Cell):
        <BPROP>
        """
    )
    assert not result.changed
    assert result.problems == (
        Note(
            6,
            "Net",
            "not switched: the name 'KwCell' already means something else in this file (line 3); "
            "rename that, or switch the base by hand to kwcell.KwCell",
        ),
    )


def test_not_python_raises_syntax_error_with_the_line() -> None:
    with pytest.raises(SyntaxError, match="cannot parse") as info:
        migrate_source("import mindspore\n\nclass (:\n")
    assert info.value.lineno == 3


# -- the import --------------------------------------------------------------------------------
IMPORT_CASES = {
    "after_future_docstring_and_the_last_import": (
        '''\
        """Doc."""

        from __future__ import annotations

        import numpy as np
        from mindspore import nn

        # helpers
        X = np.ones(3)


        class Net(nn.Cell):
        <BPROP>
        ''',
        '''\
        """Doc."""

        from __future__ import annotations

        import numpy as np
        from mindspore import nn
        from kwcell import KwCell

        # helpers
        X = np.ones(3)


        class Net(KwCell):
        <BPROP>
        ''',
    ),
    "only_imports_before_the_first_switched_class_count": (
        """\
        import pytest

        ms = pytest.importorskip("mindspore")
        from mindspore import nn


        class Net(nn.Cell):
        <BPROP>


        import numpy as np
        """,
        """\
        import pytest

        ms = pytest.importorskip("mindspore")
        from mindspore import nn
        from kwcell import KwCell


        class Net(KwCell):
        <BPROP>


        import numpy as np
        """,
    ),
    "after_the_docstring_when_nn_is_imported_locally": (
        '''\
        """Doc."""


        def make():
            from mindspore import nn

            class Net(nn.Cell):
                bprop = None

            return Net
        ''',
        '''\
        """Doc."""

        from kwcell import KwCell


        def make():
            from mindspore import nn

            class Net(KwCell):
                bprop = None

            return Net
        ''',
    ),
    "already_imported_no_duplicate": (
        """\
        from kwcell import KwCell
        from mindspore import nn


        class Net(nn.Cell):
        <BPROP>
        """,
        """\
        from kwcell import KwCell
        from mindspore import nn


        class Net(KwCell):
        <BPROP>
        """,
    ),
    "imported_under_another_name": (
        """\
        from kwcell import KwCell as Kw
        from mindspore import nn


        class Net(nn.Cell):
        <BPROP>
        """,
        """\
        from kwcell import KwCell as Kw
        from mindspore import nn


        class Net(Kw):
        <BPROP>
        """,
    ),
    "added_to_an_existing_kwcell_import_in_order": (
        """\
        from kwcell import GradcheckError, explain
        from mindspore import nn


        class Net(nn.Cell):
        <BPROP>
        """,
        """\
        from kwcell import GradcheckError, KwCell, explain
        from mindspore import nn


        class Net(KwCell):
        <BPROP>
        """,
    ),
    "added_to_a_parenthesized_kwcell_import": (
        """\
        from kwcell import (
            KwCellWarning,
            explain,  # used below
        )
        from mindspore import nn


        class Net(nn.Cell):
        <BPROP>
        """,
        """\
        from kwcell import (
            KwCell,
            KwCellWarning,
            explain,  # used below
        )
        from mindspore import nn


        class Net(KwCell):
        <BPROP>
        """,
    ),
    "added_at_the_end_of_a_kwcell_import": (
        """\
        from kwcell import GradcheckError
        from mindspore import nn


        class Net(nn.Cell):
        <BPROP>
        """,
        """\
        from kwcell import GradcheckError, KwCell
        from mindspore import nn


        class Net(KwCell):
        <BPROP>
        """,
    ),
}


@pytest.mark.parametrize(("before", "after"), IMPORT_CASES.values(), ids=list(IMPORT_CASES))
def test_kwcell_is_imported_once_in_the_right_place(before: str, after: str) -> None:
    assert _migrate(before).after == _src(after)


def test_an_import_left_unused_is_noted() -> None:
    result = _migrate(
        """\
        from mindspore import nn, ops
        from mindspore.nn import Cell


        class Net(Cell):
        <BPROP>


        class Plain(nn.Cell):
            pass
        """
    )
    assert result.notes == (
        Note(
            2,
            "Cell",
            "'Cell' is no longer used (its uses were the bases switched to KwCell); remove the import",
        ),
    )


# -- the command line --------------------------------------------------------------------------
NET = _src(
    """\
    from mindspore import nn


    class Net(nn.Cell):
    <BPROP>
    """
)
META = _src(
    """\
    from mindspore import nn


    class Net(nn.Cell, metaclass=type):
        pass


    class Bad(nn.Cell, metaclass=object):
    <BPROP>
    """
)


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / ".hidden").mkdir()
    (tmp_path / "pkg" / "net.py").write_text(NET, encoding="utf-8")
    (tmp_path / "pkg" / "sub" / "other.py").write_text(NET.replace("Net", "Other"), encoding="utf-8")
    (tmp_path / "pkg" / ".hidden" / "skipped.py").write_text(NET, encoding="utf-8")
    (tmp_path / "pkg" / "notes.txt").write_text(NET, encoding="utf-8")
    return tmp_path / "pkg"


def test_cli_rewrites_files_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = _tree(tmp_path)
    assert main(["migrate", str(pkg)]) == 0
    out = capsys.readouterr().out
    assert (pkg / "net.py").read_text(encoding="utf-8") == migrate_source(NET).after
    assert "class Other(KwCell):" in (pkg / "sub" / "other.py").read_text(encoding="utf-8")
    assert (pkg / ".hidden" / "skipped.py").read_text(encoding="utf-8") == NET
    note = "note: 'nn' is no longer used (its uses were the bases switched to KwCell); remove the import"
    assert out.splitlines() == [
        f"{pkg / 'net.py'}:1: {note}",
        f"{pkg / 'net.py'}:4: Net: nn.Cell -> KwCell",
        f"{pkg / 'sub' / 'other.py'}:1: {note}",
        f"{pkg / 'sub' / 'other.py'}:4: Other: nn.Cell -> KwCell",
        "kwcell migrate: switched 2 classes in 2 files (2 files read)",
    ]
    # a second run finds nothing left to do
    assert main(["migrate", str(pkg)]) == 0
    assert capsys.readouterr().out == "kwcell migrate: switched 0 classes in 0 files (2 files read)\n"


def test_cli_diff_prints_the_change_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "net.py"
    path.write_text(NET, encoding="utf-8")
    assert main(["migrate", "--diff", str(path)]) == 0
    captured = capsys.readouterr()
    assert path.read_text(encoding="utf-8") == NET
    expected = difflib.unified_diff(
        NET.splitlines(keepends=True),
        migrate_source(NET).after.splitlines(keepends=True),
        fromfile=str(path),
        tofile=str(path),
    )
    assert captured.out == "".join(expected)
    assert "+from kwcell import KwCell\n" in captured.out
    assert captured.err.splitlines()[-2:] == [
        f"{path}:4: Net: nn.Cell -> KwCell",
        "kwcell migrate: would switch 1 class in 1 file (1 file read; nothing written)",
    ]


def test_cli_exits_1_for_what_it_cannot_switch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "meta.py"
    path.write_text(META, encoding="utf-8")
    broken = tmp_path / "broken.py"
    broken.write_text("class Net(nn.Cell):\n    def bprop(:\n", encoding="utf-8")
    assert main(["migrate", str(path), str(broken)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{path}:8: Bad: not switched: metaclass=object cannot be combined with")
    assert "@kwcell.keyword_bprop" in out[0]
    assert out[1].startswith(f"{broken}:2: cannot parse: ")
    assert out[2] == "kwcell migrate: switched 0 classes in 0 files, 2 problems (2 files read)"
    assert path.read_text(encoding="utf-8") == META


def test_cli_missing_path_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["migrate", str(tmp_path / "nowhere.py")])
    assert info.value.code == 2
    assert f"error: {tmp_path / 'nowhere.py'}: no such file or directory" in capsys.readouterr().err


def test_cli_without_libcst_names_the_pip_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "libcst", None)  # makes `import libcst` raise ImportError
    with pytest.raises(SystemExit) as info:
        main(["migrate", str(tmp_path)])
    assert info.value.code == 2
    assert capsys.readouterr().err.endswith(
        "error: this command needs libcst, which is not installed; "
        "install it with: pip install 'kwcell[migrate]'\n"
    )


def test_cli_help_describes_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "migrate" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["migrate", "--help"])
    text = capsys.readouterr().out
    assert "Switch the nn.Cell base of every bprop cell to KwCell" in text
    assert "--diff" in text and "@kwcell.keyword_bprop" in text


def test_migrate_imports_no_mindspore(tmp_path: Path) -> None:
    path = tmp_path / "net.py"
    path.write_text(NET, encoding="utf-8")
    code = (
        "import sys; from kwcell._cli import main; rc = main(['migrate', sys.argv[1]]); "
        "assert 'mindspore' not in sys.modules, 'mindspore imported'; sys.exit(rc)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "class Net(KwCell):" in path.read_text(encoding="utf-8")


# -- done when: this suite's own nn.Cell bprop cells, rewritten, import and pass (slow) ----------
def _scan(path: Path) -> list[tuple[int, str, bool]]:
    """``(line, qualname, static bprop)`` of each class that names ``...nn.Cell`` as a base and has
    a ``bprop`` in its body, or whose subclass in the file has one. Written independently of the
    codemod (plain ``ast``, names matched as text), to say what it should switch."""
    classes: list[tuple[ast.ClassDef, str]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                classes.append((child, prefix + child.name))
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                walk(child, f"{prefix}{child.name}.<locals>.")
            else:
                walk(child, prefix)

    walk(ast.parse(path.read_text(encoding="utf-8")), "")

    def bprop(node: ast.ClassDef) -> ast.stmt | None:
        for stmt in node.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == "bprop":
                return stmt
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "bprop" for t in stmt.targets
            ):
                return stmt
        return None

    def has_bprop(node: ast.ClassDef) -> bool:
        subclasses = [c for c, _ in classes if any(ast.unparse(b) == node.name for b in c.bases)]
        return bprop(node) is not None or any(has_bprop(c) for c in subclasses)

    found = []
    for node, qualname in classes:
        if any("keyword_bprop" in ast.unparse(d) for d in node.decorator_list):
            continue  # KwCell's behaviour already, bases and metaclass kept
        if any(ast.unparse(b).endswith("nn.Cell") for b in node.bases) and has_bprop(node):
            own = bprop(node)
            static = isinstance(own, ast.FunctionDef) and any(
                ast.unparse(d) == "staticmethod" for d in own.decorator_list
            )
            found.append((node.lineno, qualname, static))
    return found


def _importers(helper: str, tests: Path) -> list[Path]:
    """The test modules that import ``tests/<helper>.py``."""
    found = []
    for path in sorted(tests.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                names = {a.name for a in node.names}
                if (module in ("tests", ".") and helper in names) or module in (
                    f"tests.{helper}",
                    f".{helper}",
                ):
                    found.append(path)
                    break
    return found


# Tests that pin a behaviour of the nn.Cell cell itself, which the rewrite changes by design:
# the failure MindSpore gives that cell no longer happens (it now works like its KwCell twin),
# or the KwCell twin's own outcome replaces it. Each with what its failure must say.
_ZOO_NOW_WORKING = [
    "varargs_bare_return_helper",
    "varargs_index_picking_used_inputs",
    "tuple_output_one_used_outer",
    "used_bprop_inputs_varargs",
    "varargs_bare_or_tuple_world1",
    "varargs_bare_or_tuple_world4",
    "float_default_omitted_by_caller",
    "keyword_only_construct_default",
    "bprop_reads_frozen_parameter",
    "list_return",
]
POP_ERROR = "The pop index out of range"
NN_CELL_PINS = {
    # gradcheck of a plain nn.Cell's weights is PYNATIVE-only because MindSpore's graphs refuse
    # Parameters in its bprop; migrated to KwCell, the graph check works
    "test_gradcheck.py::test_plain_cell_weights_pynative": "DID NOT RAISE",
    **{
        f"test_zoo.py::test_zoo_cell_matches_nn_cell[{how}-{case}]": "DID NOT RAISE"
        for case in _ZOO_NOW_WORKING
        for how in ("graph", "jit")
    },
    # GRAPH_MODE cannot keep Python state: the cell now fails as its KwCell twin does
    **{
        f"test_zoo.py::test_zoo_cell_matches_nn_cell[{how}-state_stashed_by_construct]": POP_ERROR
        for how in ("graph", "jit")
    },
    "test_gradcheck.py::test_plain_cell_keyword_call_misbinding_is_caught[pynative]": "DID NOT RAISE",
    "test_gradcheck.py::test_plain_cell_keyword_call_misbinding_is_caught[graph]": "DID NOT RAISE",
    "test_inputs.py::test_tuple_first_works_where_nn_cell_fails_in_pynative": "DID NOT RAISE",
    "test_jit_outside.py::test_replaced_construct_in_graph_mode_where_nn_cell_cannot": "DID NOT RAISE",
    "test_jit_outside.py::test_bprop_reading_parameters_is_refused_by_nn_cell_in_graph_mode": "DID NOT RAISE",
    # nn.Cell raises here; the rewritten cell returns the gradients
    "test_ms_parity.py::test_bprop_reading_parameters_in_graph_mode_is_a_documented_difference": (
        "is RuntimeError"
    ),
    # explain() on a plain nn.Cell says it is not a KwCell; it now explains a KwCell
    "test_explain.py::test_classes_without_kwcell_bprop": "kwcell.explain(",
    # a KwCell turns bprop's None into zeros itself: no None for gradcheck to read in a graph
    "test_gradcheck.py::test_none_for_a_used_input_fails_with_its_finite_difference[graph]": (
        "(bprop gave None: read as zeros)"
    ),
}


@pytest.mark.slow
def test_rewritten_suite_cells_import_and_pass(tmp_path: Path) -> None:
    """Copies the suite, runs ``kwcell migrate`` on every ``tests/*.py`` that defines nn.Cell
    bprop cells, checks each change line by line, then runs pytest on the rewritten files and on
    the test modules that import the rewritten helpers."""
    shutil.copytree(ROOT / "tests", tmp_path / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)  # the suite's pytest options (markers, -m 'not slow')
    tests = tmp_path / "tests"
    expected = {p: _scan(p) for p in sorted(tests.glob("*.py"))}
    # The contract test asserts plain MindSpore's behaviour: it is never migrated.
    expected = {
        p: classes for p, classes in expected.items() if classes and p.name != "test_mindspore_contract.py"
    }
    assert tests / "test_zoo.py" in expected and tests / "training_nets.py" in expected
    before = {p: p.read_text(encoding="utf-8") for p in expected}

    targets = [str(p.relative_to(tmp_path)) for p in expected]
    run = subprocess.run(
        [sys.executable, "-m", "kwcell", "migrate", *targets],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(kwcell.__file__).parent.parent)},
        timeout=300,
        check=False,
    )
    statics = [(p, c) for p, classes in expected.items() for c in classes if c[2]]
    assert run.returncode == (1 if statics else 0), run.stdout + run.stderr
    report = [line for line in run.stdout.splitlines() if ": note: " not in line]
    want = [
        f"{p.relative_to(tmp_path)}:{line}: {name}: "
        + ("not switched: its bprop is a staticmethod" if static else "nn.Cell -> KwCell")
        for p, classes in expected.items()
        for line, name, static in classes
    ]
    assert [r[: len(w)] for r, w in zip(report, want, strict=False)] == want, run.stdout
    assert len(report) == len(want) + 1 and report[-1].startswith("kwcell migrate: switched "), run.stdout

    for path, classes in expected.items():
        old, new = before[path].splitlines(), path.read_text(encoding="utf-8").splitlines()
        switched = {line for line, _, static in classes if not static}
        changed = []
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if op == "equal":
                continue
            if op == "insert" and new[j1:j2] == ["from kwcell import KwCell"]:
                continue
            assert op == "replace" and i2 - i1 == j2 - j1, (path.name, old[i1:i2], new[j1:j2])
            for k in range(i2 - i1):
                if old[i1 + k].startswith("from kwcell import"):
                    assert new[j1 + k].startswith("from kwcell import") and "KwCell" in new[j1 + k]
                    continue
                assert new[j1 + k] == old[i1 + k].replace("nn.Cell", "KwCell"), (path.name, i1 + k + 1)
                changed.append(i1 + k + 1)
        assert set(changed) == switched, path.name

    modules = {p for p in expected if p.name.startswith("test_")}
    for helper in (p for p in expected if not p.name.startswith("test_")):
        modules.update(_importers(helper.stem, tests))
    xml = tmp_path / "results.xml"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}"]
        + [str(p.relative_to(tmp_path)) for p in sorted(modules)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(tmp_path), str(Path(kwcell.__file__).parent.parent)]),
            "GLOG_v": "3",
        },
        timeout=1200,
        check=False,
    )
    assert xml.exists(), result.stdout[-3000:] + result.stderr[-3000:]
    failed: dict[str, str] = {}
    ran = 0
    for case in ET.parse(xml).getroot().iter("testcase"):
        ran += 1
        for outcome in [*case.iter("failure"), *case.iter("error")]:
            test_id = f"{case.get('classname', '').split('.')[-1]}.py::{case.get('name')}"
            failed[test_id] = (outcome.get("message") or "") + (outcome.text or "")
    assert ran > 300, result.stdout[-3000:]
    # the migrated suite runs the default selection: the pins of tests it leaves to the slow
    # run (tests/conftest.py's SLOW_HERE) are not expected
    pins = {
        test_id: says
        for test_id, says in NN_CELL_PINS.items()
        if not any(f"tests/{test_id}".startswith(prefix) for prefix in SLOW_HERE)
    }
    assert sorted(failed) == sorted(pins), result.stdout[-5000:]
    for test_id, says in pins.items():
        assert says in failed[test_id], (test_id, failed[test_id][-2000:])


def _package(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    (pkg / "layers").mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "layers" / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "base.py").write_text(
        _src(
            """\
            from mindspore import nn


            class Base(nn.Cell):
                pass


            class Unused(nn.Cell):
                pass
            """
        ),
        encoding="utf-8",
    )
    (pkg / "layers" / "act.py").write_text(
        _src(
            """\
            from ..base import Base


            class Act(Base):
            <BPROP>
            """
        ),
        encoding="utf-8",
    )
    (pkg / "layers" / "dense.py").write_text(
        _src(
            """\
            from mindspore import nn

            import pkg.base
            from other_lib import Foreign


            class Dense(nn.Dense):
            <BPROP>


            class Absolute(pkg.base.Unused):
                bprop = None


            class Elsewhere(Foreign):
            <BPROP>
            """
        ),
        encoding="utf-8",
    )
    return pkg


def test_a_base_from_another_given_file_is_switched_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pkg = _package(tmp_path)
    assert main(["migrate", str(pkg)]) == 1
    out = capsys.readouterr().out.splitlines()
    base, dense = pkg / "base.py", pkg / "layers" / "dense.py"
    assert out == [
        f"{base}:1: note: 'nn' is no longer used (its uses were the bases switched to KwCell); "
        "remove the import",
        f"{base}:4: Base: nn.Cell -> KwCell",
        f"{base}:8: Unused: nn.Cell -> KwCell",
        f"{dense}:7: Dense: not switched: it derives from mindspore.nn.Dense, a MindSpore class, not "
        "from nn.Cell itself; decorate the class with @kwcell.keyword_bprop instead",
        f"{dense}:19: note: Elsewhere (or a subclass) has a bprop and derives from other_lib.Foreign, "
        "which is not in the files given: if that is an nn.Cell, give its file to migrate as well, or "
        "decorate Elsewhere with @kwcell.keyword_bprop",
        "kwcell migrate: switched 2 classes in 1 file, 1 problem (5 files read)",
    ]
    assert "class Base(KwCell):" in base.read_text(encoding="utf-8")
    assert "class Act(Base):" in (pkg / "layers" / "act.py").read_text(encoding="utf-8")


def test_a_base_from_a_file_not_given_is_noted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    act = _package(tmp_path) / "layers" / "act.py"
    assert main(["migrate", str(act)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{act}:4: note: Act (or a subclass) has a bprop and derives from pkg.base.Base, which is not in "
        "the files given: if that is an nn.Cell, give its file to migrate as well, or decorate Act with "
        "@kwcell.keyword_bprop",
        "kwcell migrate: switched 0 classes in 0 files (1 file read)",
    ]


def test_a_class_decorated_with_keyword_bprop_is_left_alone() -> None:
    source = (
        "import kwcell\n"
        "from mindspore import nn\n\n\n"
        "@kwcell.keyword_bprop\n"
        "class Base(nn.Cell, metaclass=Meta):\n"
        "    def construct(self, x):\n"
        "        return x\n\n"
        "    def bprop(self, x, out, dout):\n"
        "        return (dout,)\n"
    )
    result = migrate_source(source)
    assert result.after == source
    assert not result.problems and not result.switched
