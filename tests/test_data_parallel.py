"""Data parallel on MindSpore's own engine: ``msrun`` with 2 CPU workers over loopback.

Launches examples/data_parallel.py under ``msrun --worker_num=2 --local_worker_num=2``; each
rank trains the KwCell network on its half of the batch with all-reduced (averaged)
gradients and saves its parameters. Both ranks must end equal, and equal to one process
training on the full batch.
"""

from __future__ import annotations

import os
import shutil
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
MSRUN = shutil.which("msrun", path=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _run(cmd: list[str], log: Path) -> None:
    # msrun starts its workers with the ``python`` found on PATH: make it this interpreter.
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
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
    assert code == 0, f"{' '.join(cmd)} exited {code}:\n{log.read_text()[-4000:]}"


@pytest.mark.skipif(MSRUN is None, reason="msrun (installed with MindSpore) is not on PATH")
@pytest.mark.parametrize("exec_mode", ["pynative", "graph"])
def test_two_rank_data_parallel_equals_full_batch(exec_mode: str, tmp_path: Path) -> None:
    assert MSRUN is not None
    out = tmp_path / "out"
    mode_args = ["--graph"] if exec_mode == "graph" else []
    _run(
        [
            MSRUN,
            "--worker_num=2",
            "--local_worker_num=2",
            "--master_addr=127.0.0.1",
            f"--master_port={_free_port()}",
            "--join=True",
            f"--log_dir={tmp_path / 'logs'}",
            str(EXAMPLE),
            "--out",
            str(out),
            *mode_args,
        ],
        tmp_path / "msrun.log",
    )
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
