"""Data parallel on MindSpore's own engine: ``msrun`` with 2 CPU workers over loopback.

Runs the ``msrun`` command of docs/guides/training.md as written (virtualenv activated,
``GLOG_v=3``), with only the port, log directory and output directory replaced; each rank
trains the KwCell network of examples/data_parallel.py on its half of the batch with
all-reduced (averaged) gradients and saves its parameters. The run must end with the guide's
``OK: both ranks ...`` line, both ranks must end equal, and equal to one process training on
the full batch.

Marked slow (about 20 s per mode, two MindSpore processes each): ``.ci/run`` runs it.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "data_parallel.py"
TIMEOUT = 180  # seconds; msrun waits for its workers (--join=True), so a hang must be cut off
ACTIVATE = ". .venv/bin/activate && "
OK_LINE = "OK: both ranks ended with the same parameters after 5 steps"


def _guide_msrun_command() -> str:
    """The training guide's line that runs examples/data_parallel.py under msrun."""
    text = (ROOT / "docs" / "guides" / "training.md").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if "msrun " in line and line.startswith(". .venv")]
    assert len(lines) == 1, "the guide shows one msrun command, starting with '. .venv/bin/activate && '"
    return lines[0]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _run(cmd: list[str], log: Path) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    with log.open("w") as out:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            code = proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # msrun, its scheduler and workers: our own session
            proc.wait()
            pytest.fail(f"{' '.join(cmd)} did not finish in {TIMEOUT}s; see {log}")
    output = log.read_text()
    assert code == 0, f"{' '.join(cmd)} exited {code}:\n{output[-4000:]}"
    return output


@pytest.mark.slow
@pytest.mark.parametrize("exec_mode", ["pynative", "graph"])
def test_guide_msrun_command_two_ranks_equal_full_batch(exec_mode: str, tmp_path: Path) -> None:
    command = _guide_msrun_command()
    assert command.startswith(ACTIVATE + "GLOG_v=3 msrun ")
    # this interpreter's virtualenv (in CI and for developers: .venv in the checkout)
    activate = Path(sys.executable).parent / "activate"
    assert activate.exists(), f"{sys.executable} is not in a virtualenv"
    out = tmp_path / "out"
    command = ". " + shlex.quote(str(activate)) + " && " + command.removeprefix(ACTIVATE)
    command = re.sub(r"--master_port=\d+", f"--master_port={_free_port()}", command)
    command = re.sub(r"--log_dir=\S+", f"--log_dir={shlex.quote(str(tmp_path / 'logs'))}", command)
    command = re.sub(r"--out \S+", f"--out {shlex.quote(str(out))}", command)
    mode_args = ["--graph"] if exec_mode == "graph" else []
    console = _run(["bash", "-c", command + "".join(f" {a}" for a in mode_args)], tmp_path / "msrun.log")
    assert OK_LINE in console.splitlines(), console[-4000:]
    # GLOG_v=3: MindSpore's warnings are gone, so the result is easy to find
    assert "[WARNING]" not in console, console[-4000:]
    worker_logs = "".join((tmp_path / "logs" / f"worker_{r}.log").read_text() for r in (0, 1))
    assert "rank 0 step 4 loss" in worker_logs
    assert "rank 1 step 4 loss" in worker_logs

    _run([sys.executable, str(EXAMPLE), "--single", "--out", str(out), *mode_args], tmp_path / "single.log")

    rank0, rank1, single = (np.load(out / f"{name}.npz") for name in ("rank0", "rank1", "single"))
    assert (
        sorted(rank0.files)
        == sorted(single.files)
        == ["dense1.bias", "dense1.weight", "dense2.bias", "dense2.weight"]
    )
    for name in single.files:
        np.testing.assert_array_equal(rank0[name], rank1[name], err_msg=name)
        np.testing.assert_allclose(rank0[name], single[name], rtol=1e-5, atol=1e-6, err_msg=name)
    # training moved the parameters (so equality above is not equality of the initial weights)
    initial = np.random.default_rng(0)
    initial.normal(size=(32, 4))
    w1 = initial.normal(0.0, 0.5, (8, 4)).astype(np.float32)
    assert not np.allclose(single["dense1.weight"], w1, atol=1e-3)
