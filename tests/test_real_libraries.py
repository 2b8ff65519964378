"""``kwcell check`` and ``kwcell migrate`` on real libraries from the package registry (marker
``libraries``).

mindone 0.5.0 and mindformers 2.1.0, installed with ``pip install --no-deps`` beside what their
imports need (``.ci/requirements-libraries.txt``, every package pinned), in a virtualenv of their
own: ``.ci/run`` creates it (cached in ``$KWCELL_CI_CACHE``) and runs this module with its
Python. The commands run as a user runs them, in subprocesses, on the installed packages and on
copies of them, with kwcell from this checkout first on ``PYTHONPATH``:

- ``python -m kwcell check PACKAGE --format json``: stdout is one JSON document; the bprop cells
  are found and reported with the codes their definitions earn (mindone's I-BERT bprops are
  broken upstream: KW104, KW007, KW101, KW009); subpackages whose extras are not installed
  (torch, cv2, hyper_parallel...) are KW901 reports, and the walk goes on.
- ``python -m kwcell migrate --diff PACKAGE`` on a copy: the diff changes class base lines and
  adds one import per file, nothing else; the report names each class switched or left alone,
  with the reason; nothing is written; the whole tree in under 30 s.
- ``python -m kwcell migrate`` on a copy, written: the migrated package imports and checks as
  the original did, and mindformers' CrossEntropyLoss (its _LogSoftmax and _NLLLoss bprop cells,
  now KwCells) gives the same gradients as before, in PYNATIVE and GRAPH_MODE.

docs/guides/adopting.md walks through the mindone run: its output excerpts are checked here
against the real output.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata, util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.doc_blocks import ROOT, Block, parse

pytestmark = pytest.mark.libraries

VERSIONS = {"mindone": "0.5.0", "mindformers": "2.1.0"}
# `migrate` over the whole installed tree, wall clock: the goal for mindone on 2 cores
# (measured: mindone 1,729 files in about 3 s, mindformers 544 in about 2 s).
MIGRATE_BUDGET_S = 30.0
# `check` imports the whole package, MindSpore included (measured: mindone about 11 s,
# mindformers about 4 s).
CHECK_BUDGET_S = 90.0

ADOPTING = ROOT / "docs" / "guides" / "adopting.md"


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def _run(args: list[str], cwd: Path, pythonpath: Sequence[Path] = ()) -> Run:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in [*pythonpath, ROOT]))
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    seconds = time.perf_counter() - start
    what = "python -c GRADIENT" if args[0] == "-c" else "python " + " ".join(args)
    print(f"{what} (in {cwd.name}): {seconds:.1f} s")  # shown with -rA or -s
    return Run(result.returncode, result.stdout, result.stderr, seconds)


def _installed(name: str) -> Path:
    spec = util.find_spec(name)
    assert spec is not None and spec.origin is not None, f"{name} is not installed"
    return Path(spec.origin).parent


def _below_site_packages(path: str) -> str:
    """``mindone/...`` from wherever the package is installed (the path ``check`` prints)."""
    return re.sub(r"^.*?site-packages/", "", path)


def test_the_pinned_versions_are_installed() -> None:
    for name, version in VERSIONS.items():
        assert metadata.version(name) == version
    assert metadata.version("mindspore") == "2.10.0"
    # why both are installed without the dependencies they declare (docs/guides/adopting.md)
    assert "transformers==4.57.1" in (metadata.requires("mindone") or [])
    assert {"transformers>=5.3.0", "mindspore~=2.11.0"} <= set(metadata.requires("mindformers") or [])
    assert metadata.version("numpy").startswith("1.")


# -- kwcell check ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """``kwcell check NAME --format json`` of each library, parsed. Run in an empty directory:
    mindformers writes its log under ``./output``."""
    reports = {}
    for name in VERSIONS:
        run = _run(
            ["-m", "kwcell", "check", name, "--format", "json"], tmp_path_factory.mktemp(f"check-{name}")
        )
        assert run.returncode == 1, run.stderr[-3000:]  # problems found, no crash
        assert run.seconds < CHECK_BUDGET_S
        reports[name] = json.loads(run.stdout)  # the whole of stdout is the JSON document
    return reports


def _not_imported(report: dict[str, Any]) -> dict[str, str]:
    """``{module: reason}`` of the KW901 reports."""
    found = {}
    for p in report["problems"]:
        if p["code"] == "KW901":
            match = re.fullmatch(r"cannot import (\S+): (.*)", p["message"])
            assert match, p
            # a path in the reason, from the library's own directory (installed or a copy)
            found[match[1]] = re.sub(r"/\S+?/(?=(mindone|mindformers)/)", "", match[2])
    return found


def _missing_extras(report: dict[str, Any]) -> set[str]:
    return {
        m[1]
        for reason in _not_imported(report).values()
        if (m := re.match(r"ModuleNotFoundError: No module named '([^'.]+)", reason))
    }


def _cells(report: dict[str, Any]) -> list[tuple[str, int, str, str]]:
    return [
        (_below_site_packages(p["file"]), p["line"], p["code"], p["class"])
        for p in report["problems"]
        if p["code"] != "KW901"
    ]


QUANT = "mindone/transformers/models/ibert/quant_modules.py"
IBERT = "mindone.transformers.models.ibert.quant_modules"


def test_check_mindone_reports_the_broken_ibert_bprops(checked: dict[str, dict[str, Any]]) -> None:
    report = checked["mindone"]
    # I-BERT's bprops, ported from PyTorch autograd Functions, take (ctx, x, grad_output): MindSpore
    # passes every input of construct, then out and dout. Right reports of real bugs.
    assert _cells(report) == [
        (QUANT, 630, "KW104", f"{IBERT}.SymmetricQuantFunction"),
        (QUANT, 640, "KW007", f"{IBERT}.SymmetricQuantFunction"),
        (QUANT, 724, "KW101", f"{IBERT}.FixedPointMul"),
        (QUANT, 776, "KW104", f"{IBERT}.FixedPointMul"),
        (QUANT, 780, "KW007", f"{IBERT}.FixedPointMul"),
        (QUANT, 780, "KW009", f"{IBERT}.FixedPointMul"),
    ]
    messages = [p["message"] for p in report["problems"] if p["code"] != "KW901"]
    assert messages[0].startswith(
        "SymmetricQuantFunction.bprop takes 3 positional parameter(s) (x, out, grad_output) but MindSpore "
        "passes 6: the inputs of construct(ctx, x, k, percentile_mode, scale), then out, dout; derive "
        "SymmetricQuantFunction from kwcell.KwCell"
    )
    # the two I-BERT cells above, floor_ste, round_ste, ZeroParamWrapper, MultiplierProcessor
    assert report["cells_checked"] == 6
    assert report["modules_checked"] > 1500  # 1,585 measured: the walk goes past every failure
    assert report["summary"] == (
        f"kwcell check: {len(report['problems'])} problems "
        f"({report['cells_checked']} cells checked in {report['modules_checked']} modules)"
    )
    not_imported = _not_imported(report)
    # the package and the subpackage of the cells import; what does not is an optional extra
    assert "mindone" not in not_imported and "mindone.transformers" not in not_imported
    assert {"torch", "cv2", "nltk", "librosa"} <= _missing_extras(report)
    assert all(module.startswith("mindone.") for module in not_imported)


def test_check_mindformers_finds_its_loss_cells_and_nothing_wrong(checked: dict[str, dict[str, Any]]) -> None:
    report = checked["mindformers"]
    # _LogSoftmax and _NLLLoss, in mindformers/core/loss/loss.py and again in
    # mindformers/parallel_core/training_graph/loss_func.py: positional bprops that fit construct
    assert report["cells_checked"] == 4
    assert _cells(report) == []
    assert report["modules_checked"] > 400  # 471 measured
    # what is not imported needs packages outside mindformers' import: hyper_parallel (for
    # MindSpore 2.11), torch (weight converters), mindspore_gs (quantization)
    assert _missing_extras(report) == {"hyper_parallel", "torch", "mindspore_gs"}
    assert all(module.startswith("mindformers.") for module in _not_imported(report))


def test_no_keyword_call_of_a_bprop_cell_in_either_library(checked: dict[str, dict[str, Any]]) -> None:
    """KW105, the static call-site check: every call of these cells is positional."""
    for report in checked.values():
        assert not [p for p in report["problems"] if p["code"] == "KW105"]


# -- kwcell migrate --diff --------------------------------------------------------------------


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding a copy of each installed package, as a checkout of it would."""
    root = tmp_path_factory.mktemp("copies")
    for name in VERSIONS:
        shutil.copytree(_installed(name), root / name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture(scope="module")
def diffs(copies: Path) -> dict[str, Run]:
    return {name: _run(["-m", "kwcell", "migrate", "--diff", name], copies) for name in VERSIONS}


SWITCHED = {
    "mindone": [
        "mindone/models/modules/parallel/param_wrapper.py:9: ZeroParamWrapper: nn.Cell -> KwCell",
        f"{QUANT}:600: SymmetricQuantFunction: ms.nn.Cell -> KwCell",
        f"{QUANT}:643: floor_ste: ms.nn.Cell -> KwCell",
        f"{QUANT}:655: round_ste: ms.nn.Cell -> KwCell",
        f"{QUANT}:701: FixedPointMul: ms.nn.Cell -> KwCell",
        "mindone/transformers/models/phimoe/modeling_phimoe.py:440: MultiplierProcessor: nn.Cell -> KwCell",
    ],
    "mindformers": [
        "mindformers/core/loss/loss.py:39: _LogSoftmax: nn.Cell -> KwCell",
        "mindformers/core/loss/loss.py:99: _NLLLoss: nn.Cell -> KwCell",
        "mindformers/parallel_core/training_graph/loss_func.py:68: _LogSoftmax: nn.Cell -> KwCell",
        "mindformers/parallel_core/training_graph/loss_func.py:126: _NLLLoss: nn.Cell -> KwCell",
    ],
}
LEFT_ALONE = {
    "mindone": [
        "mindone/models/nerfacc/scan.py:230: _ExclusiveProd: not switched: its bprop is a staticmethod, "
        "which KwCell refuses: MindSpore calls bprop as a method of the cell, with self first; remove "
        "@staticmethod, write bprop(self, ...) and run migrate again",
    ],
    "mindformers": [],
}
SUMMARY = {
    "mindone": (
        "kwcell migrate: would switch 6 classes in 3 files, 1 problem (1729 files read; nothing written)"
    ),
    "mindformers": "kwcell migrate: would switch 4 classes in 2 files (544 files read; nothing written)",
}


@pytest.mark.parametrize("name", sorted(VERSIONS))
def test_migrate_diff_lists_each_cell_switched_or_left_alone(diffs: dict[str, Run], name: str) -> None:
    run = diffs[name]
    lines = run.stderr.splitlines()
    by_file = sorted([*SWITCHED[name], *LEFT_ALONE[name]], key=lambda line: line.split(":")[0])
    assert [line for line in lines if ": note: " not in line] == [*by_file, SUMMARY[name]]
    # a class left alone is an exit status of 1 (something to do by hand)
    assert run.returncode == (1 if LEFT_ALONE[name] else 0)
    assert run.seconds < MIGRATE_BUDGET_S


def _changes(diff: str) -> dict[str, tuple[list[str], list[str]]]:
    """``{file: (removed lines, added lines)}`` of a unified diff."""
    changes: dict[str, tuple[list[str], list[str]]] = {}
    file = ""
    for line in diff.splitlines():
        if line.startswith("--- "):
            file = line[4:]
            changes[file] = ([], [])
        elif line.startswith("+++ "):
            assert line[4:] == file
        elif line.startswith(("-", "+")):
            changes[file][line.startswith("+")].append(line[1:])
    return changes


@pytest.mark.parametrize("name", sorted(VERSIONS))
def test_migrate_diff_changes_class_bases_and_one_import_per_file(
    diffs: dict[str, Run], copies: Path, name: str
) -> None:
    switched = []
    changes = _changes(diffs[name].stdout)
    for file, (removed, added) in changes.items():
        # one import added per file, after its imports (before its first class)
        assert [line for line in added if not line.startswith("class ")] == ["from kwcell import KwCell"]
        assert added[0] == "from kwcell import KwCell"
        # each line removed is a class statement whose base is nn.Cell (however spelled), and
        # the line added for it is the same with KwCell
        bases = [re.fullmatch(r"class (\w+)\((nn\.Cell|ms\.nn\.Cell)\):", line) for line in removed]
        assert all(bases), removed
        assert added[1:] == [f"class {m[1]}(KwCell):" for m in bases if m]
        switched += [(file, m[1]) for m in bases if m]
    assert switched == [(line.split(":")[0], line.split(": ")[1]) for line in SWITCHED[name]]
    # --diff writes nothing
    for file in changes:
        assert (copies / file).read_bytes() == (_installed(name).parent / file).read_bytes()


# -- kwcell migrate, written: the library still imports, checks and differentiates the same ------


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("migrated")
    for name in VERSIONS:
        shutil.copytree(_installed(name), root / name, ignore=shutil.ignore_patterns("__pycache__"))
    run = _run(["-m", "kwcell", "migrate", *VERSIONS], root)
    assert run.returncode == 1  # mindone's _ExclusiveProd, left alone
    assert run.stdout.splitlines()[-1] == (
        "kwcell migrate: switched 10 classes in 5 files, 1 problem (2273 files read)"
    )
    return root


def test_migrated_libraries_import_and_check_as_before(
    migrated: Path, checked: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    for name in VERSIONS:
        run = _run(["-m", "kwcell", "check", name, "--format", "json"], tmp_path, pythonpath=[migrated])
        report = json.loads(run.stdout)
        files = {p["file"] for p in report["problems"]}
        assert all(f.startswith(str(migrated)) for f in files), files  # the migrated copy was checked
        # the same modules import (no import broken by the rewrite), the same cells are found
        assert _not_imported(report) == _not_imported(checked[name])
        assert report["cells_checked"] == checked[name]["cells_checked"]
        if name == "mindformers":
            assert _cells(report) == []
            continue
        # I-BERT's cells, now KwCells: KwCell takes defaults (KW101) and short returns (KW007); its
        # bprops still take the wrong number of parameters, which MindSpore's positional form
        # reports when the gradient runs, as on nn.Cell (KW104), and FixedPointMul's bprop still
        # reads what construct sets (KW009). Lines are one further down (the import).
        assert [(line, code, cls) for _, line, code, cls in _cells(report)] == [
            (601, "KW104", f"{IBERT}.SymmetricQuantFunction"),
            (702, "KW009", f"{IBERT}.FixedPointMul"),
            (702, "KW104", f"{IBERT}.FixedPointMul"),
        ]
        deferred = "(MindSpore's bprop form: the gradient of {} will raise this error)"
        kw104 = [p["message"] for p in report["problems"] if p["code"] == "KW104"]
        cells = ["SymmetricQuantFunction", "FixedPointMul"]
        assert len(kw104) == len(cells)
        assert all(m.endswith(deferred.format(c)) for m, c in zip(kw104, cells, strict=True))


GRADIENT = """
import json, sys
import mindspore as ms
import numpy as np
from mindformers.core.loss.loss import CrossEntropyLoss, _LogSoftmax, _NLLLoss
import kwcell

logits = ms.Tensor(np.linspace(-2.0, 3.0, 12, dtype=np.float32).reshape(3, 4))
label = ms.Tensor(np.array([1, 3, 0], np.int32))
mask = ms.Tensor(np.array([1.0, 1.0, 0.0], np.float32))
out = {"kwcell": [c.__name__ for c in (_LogSoftmax, _NLLLoss) if issubclass(c, kwcell.KwCell)]}
for mode in ("PYNATIVE_MODE", "GRAPH_MODE"):
    ms.set_context(mode=getattr(ms, mode))
    out[mode] = ms.grad(CrossEntropyLoss())(logits, label, mask).asnumpy().tolist()
print(json.dumps(out))
"""


def test_migrated_mindformers_loss_gives_the_same_gradients(migrated: Path, tmp_path: Path) -> None:
    """CrossEntropyLoss calls _LogSoftmax and _NLLLoss positionally, and their bprops (names of
    their own: ``bprop(self, logits, label, _, dout)``) are read by position on a KwCell as on
    nn.Cell: the same gradient, in both modes, before and after the rewrite."""
    before = _run(["-c", GRADIENT], tmp_path)
    after = _run(["-c", GRADIENT], tmp_path, pythonpath=[migrated])
    assert before.returncode == after.returncode == 0, after.stderr[-3000:]
    old, new = json.loads(before.stdout.splitlines()[-1]), json.loads(after.stdout.splitlines()[-1])
    assert (old["kwcell"], new["kwcell"]) == ([], ["_LogSoftmax", "_NLLLoss"])
    # softmax - one_hot, masked, over the unmasked count: what the bprops compute
    logits = np.linspace(-2.0, 3.0, 12).reshape(3, 4)
    softmax = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    expected = (softmax - np.eye(4)[[1, 3, 0]]) * np.array([[1.0], [1.0], [0.0]]) / 2
    for mode in ("PYNATIVE_MODE", "GRAPH_MODE"):
        assert new[mode] == old[mode]
        np.testing.assert_allclose(new[mode], expected, atol=1e-6)


# -- the walk-through in docs/guides/adopting.md ------------------------------------------------


def _walkthrough() -> list[Block]:
    """The blocks of the "Migrating a real library" section."""
    text = ADOPTING.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(text) if line.startswith("## Migrating a real library"))
    end = next((i for i in range(start + 1, len(text)) if text[i].startswith("## ")), len(text))
    return [b for b in parse(ADOPTING) if start < b.line <= end]


def test_walkthrough_install_commands_are_what_ci_runs() -> None:
    """The walk-through's install commands, with its ``.venv-libs`` as .ci/run's ``"$libs"``,
    are lines of the step of .ci/run that runs this module."""
    install = next(b for b in _walkthrough() if b.lang == "bash" and "pip install" in b.code)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line.split("#")[0].strip() for line in install.code.splitlines()]
    assert commands[:3] == [
        "python3.11 -m venv .venv-libs",
        ".venv-libs/bin/pip install --no-deps -r .ci/requirements-libraries.txt",
        ".venv-libs/bin/pip install --no-deps .",
    ]
    for command in commands[:3]:
        assert command.replace(".venv-libs", '"$libs"') in ci, command


def test_walkthrough_excerpts_are_real_output(
    checked: dict[str, dict[str, Any]], diffs: dict[str, Run]
) -> None:
    blocks = _walkthrough()
    check_lines = {
        f"{_below_site_packages(p['file'])}:{p['line']}: {p['code']}: {p['message']}"
        for p in checked["mindone"]["problems"]
    } | {checked["mindone"]["summary"]}
    report_lines = set(diffs["mindone"].stderr.splitlines())
    diff = diffs["mindone"].stdout
    seen = set()
    for block in blocks:
        lines = [line for line in block.code.splitlines() if line.strip() not in ("", "...")]
        if block.lang == "text" and lines and ": KW" in lines[0]:
            for line in lines:
                assert _below_site_packages(line) in check_lines, line
            seen.add("check")
        elif block.lang == "text" and lines and "-> KwCell" in block.code:
            for line in lines:
                assert line in report_lines, line
            seen.add("report")
        elif block.lang == "diff":
            # each run of lines between "..." is a contiguous part of the real diff
            for part in re.split(r"^\.\.\.\n", block.code, flags=re.MULTILINE):
                assert part.strip("\n") in diff, part
            seen.add("diff")
    assert seen == {"check", "report", "diff"}
