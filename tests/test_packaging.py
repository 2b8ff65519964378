"""Ready to publish: ``python -m build`` makes an sdist and a wheel that ``twine check`` accepts,
and each installs into a clean virtualenv as a working kwcell with its typing files.

"Working" means: the installed ``kwcell`` command (the entry of ``.pre-commit-hooks.yaml``)
checks a clean and a bad module with the right exit status, and examples/gradcheck_demo.py
runs against the installed package (not the checkout) in PYNATIVE and GRAPH_MODE.

Marked slow: each clean virtualenv installs MindSpore, a minute or two each once its wheel is
in the wheelhouse that ``.ci/run`` keeps in ``$KWCELL_CI_CACHE/wheels``. ``.ci/run`` runs it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def _run(args: list[str], timeout: int = 900, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(
        args, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env, check=False
    )
    return result


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (
        f"{' '.join(result.args)}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout


def _wheelhouse(python: str, artifact: Path) -> list[str]:
    """pip options that install ``artifact``'s dependencies from a local wheelhouse.

    With ``KWCELL_CI_CACHE`` set (``.ci/run`` sets it) the wheels are downloaded once into
    ``$KWCELL_CI_CACHE/wheels`` and reused by later runs (MindSpore's wheel is large, and pip's
    own cache may be off); without it, pip downloads as usual.
    """
    cache = os.environ.get("KWCELL_CI_CACHE")
    if not cache:
        return []
    wheels = Path(cache) / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    # the artifact's dependencies, and what building the sdist needs ([build-system] requires)
    build = re.search(r"^requires = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert build is not None
    build_requires = re.findall(r'"([^"]+)"', build.group(1))
    download = [python, "-m", "pip", "download", "-q", "-d", str(wheels), "-f", str(wheels)]
    _ok(_run([*download, *build_requires, "wheel", str(artifact)], 1800))
    for own in wheels.glob("kwcell-*"):
        own.unlink()  # the artifact under test is installed from dist/, never from the cache
    return ["--no-index", "--find-links", str(wheels)]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    _ok(_run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)]))
    sdists, wheels = sorted(out.glob("kwcell-*.tar.gz")), sorted(out.glob("kwcell-*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, sorted(p.name for p in out.iterdir())
    return {"sdist": sdists[0], "wheel": wheels[0]}


def test_twine_accepts_both(dist: dict[str, Path]) -> None:
    output = _ok(_run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.values())]))
    assert output.count("PASSED") == 2, output


def test_wheel_holds_the_typing_files_and_the_supported_pythons(dist: dict[str, Path]) -> None:
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = set(wheel.namelist())
        metadata = next(wheel.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
        entry_points = next(
            wheel.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt")
        )
    assert {"kwcell/py.typed", "kwcell/_typing.pyi", "kwcell/mypy.py", "kwcell/__main__.py"} <= names
    # The MindSpore stubs are a distribution of their own (stubs/), so that installing kwcell
    # never changes how a type checker sees MindSpore in code that does not use kwcell.
    assert not any("-stubs/" in n for n in names), "the kwcell wheel ships no MindSpore stubs"
    assert "Requires-Python: <3.13,>=3.10" in metadata
    # on 3.13, pip then stops at Requires-Python ("Package 'kwcell' requires a different
    # Python: 3.13.0 not in '<3.13,>=3.10'") instead of "No matching distribution for mindspore"
    assert 'Requires-Dist: mindspore<2.11,>=2.7; python_version < "3.13"' in metadata
    assert 'Requires-Dist: numpy<2,>=1.22; python_version < "3.13"' in metadata
    assert "kwcell = kwcell._cli:main" in entry_points
    with tarfile.open(dist["sdist"]) as sdist:
        members = sdist.getnames()
    assert any(m.endswith("/kwcell/py.typed") for m in members)
    assert any(m.endswith("/README.md") for m in members)


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_installs_into_a_clean_venv_and_works(kind: str, dist: dict[str, Path], tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    python = str(bin_dir / "python")
    _ok(_run([python, "-m", "pip", "install", "-q", *_wheelhouse(python, dist[kind]), str(dist[kind])], 1800))

    # the typing files, where a type checker looks for them: next to the installed package
    where = _ok(
        _run([python, "-c", "import kwcell, os; print(os.path.dirname(kwcell.__file__))"], cwd=tmp_path)
    )
    package = Path(where.strip())
    assert package.is_relative_to(env_dir), package  # not the checkout
    assert (package / "py.typed").is_file() and (package / "_typing.pyi").is_file()
    assert not list(package.parent.glob("*-stubs")), "installing kwcell adds no stub packages"

    # the pre-commit hook's entry, as pre-commit runs it: entry + file names, from the repo root
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    entry = re.search(r"^  entry: (.+)$", hooks, re.MULTILINE)
    assert entry is not None
    command, *args = entry.group(1).split()
    hook = [str(bin_dir / command), *args]
    good = _run([*hook, "tests/fixtures/checkpkg/good.py"])
    assert re.fullmatch(r"kwcell check: no problems \(\d+ cells? checked in 1 module\)", good.stdout.strip())
    assert good.returncode == 0, good.stderr
    bad = _run([*hook, "tests/fixtures/checkpkg/kw_bad.py"])
    assert "KW001: UnknownName.bprop" in bad.stdout and bad.returncode == 1, bad.stdout + bad.stderr

    # a real gradient check in both modes, with the installed kwcell (the example's directory
    # is on sys.path, the checkout is not)
    demo = _ok(_run([python, str(ROOT / "examples" / "gradcheck_demo.py")], cwd=tmp_path))
    assert demo.splitlines()[-1].startswith("OK: "), demo
