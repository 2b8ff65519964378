"""Data-parallel training of a network with a KwCell, on MindSpore's own distributed engine.

Two processes on one CPU machine, over loopback, from the repository root with the
virtualenv active (msrun starts each worker with the ``python`` found on ``PATH``)::

    . .venv/bin/activate && GLOG_v=3 msrun --worker_num=2 --local_worker_num=2 \\
        --master_addr=127.0.0.1 --master_port=8118 --join=True --log_dir=/tmp/kwcell_dp_logs \\
        examples/data_parallel.py --out /tmp/kwcell_dp

``GLOG_v=3`` keeps MindSpore to its errors. The run succeeded when it ends with the line
``OK: both ranks ended with the same parameters ...``: after training, the ranks all-reduce
their parameters and each one checks that it holds the average (``FAILED: ...`` and exit
status 1 otherwise).

Each rank trains on its half of every batch; ``TrainOneStepCell`` all-reduces (averages) the
gradients, so both ranks end with the same parameters as one process training on the full
batch (``python examples/data_parallel.py --single --out DIR``). Every rank writes its final
parameters to ``DIR/rank<N>.npz`` (``DIR/single.npz`` for ``--single``).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

from kwcell import KwCell


class SurrogateTanh(KwCell):
    """``beta * tanh(alpha * x)``, trained through a surrogate gradient."""

    def construct(self, x: Tensor, alpha: float = 1.0, beta: float = 1.0) -> Tensor:
        return beta * ops.tanh(alpha * x)

    def bprop(self, x: Tensor, alpha: float = 1.0, beta: float = 1.0, *, out: Tensor, dout: Tensor) -> Any:
        u = alpha * x
        return {"x": dout * beta * alpha / (1.0 + u * u)}


class Net(nn.Cell):
    def __init__(self, rng: np.random.Generator) -> None:
        super().__init__()
        w1 = rng.normal(0.0, 0.5, (8, 4)).astype(np.float32)
        w2 = rng.normal(0.0, 0.5, (1, 8)).astype(np.float32)
        self.dense1 = nn.Dense(4, 8, weight_init=Tensor(w1), bias_init="zeros")
        self.act = SurrogateTanh()
        self.dense2 = nn.Dense(8, 1, weight_init=Tensor(w2), bias_init="zeros")

    def construct(self, x: Tensor) -> Tensor:
        out: Tensor = self.dense2(self.act(self.dense1(x), beta=0.5, alpha=2.0))
        return out


def _check_ranks_agree(net: nn.Cell, rank: int, size: int, steps: int) -> None:
    """All-reduce the parameters: equal on every rank exactly when each holds the average."""
    mine = np.concatenate([p.asnumpy().ravel() for p in net.trainable_params()])
    total = ops.AllReduce(ops.ReduceOp.SUM)(Tensor(mine)).asnumpy()
    gap = float(np.max(np.abs(mine - total / size)))
    if gap > 1e-6:
        print(f"FAILED: rank {rank} differs from the average of {size} ranks by {gap:g}", flush=True)
        raise SystemExit(1)
    if rank == 0:
        ranks = "both ranks" if size == 2 else f"all {size} ranks"
        print(f"OK: {ranks} ended with the same parameters after {steps} steps", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory for the final parameters (npz)")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--single", action="store_true", help="one process, full batch (the reference)")
    parser.add_argument("--graph", action="store_true", help="GRAPH_MODE instead of PYNATIVE")
    args = parser.parse_args()
    ms.set_context(mode=ms.GRAPH_MODE if args.graph else ms.PYNATIVE_MODE)

    rank, size = 0, 1
    if not args.single:
        from mindspore.communication import get_group_size, get_rank, init

        init()
        rank, size = get_rank(), get_group_size()
        ms.set_auto_parallel_context(
            parallel_mode=ms.ParallelMode.DATA_PARALLEL,
            gradients_mean=True,
        )

    rng = np.random.default_rng(0)  # the same data and initial weights on every rank
    x = rng.normal(size=(32, 4)).astype(np.float32)
    y = np.sin(x @ np.array([0.5, -1.0, 0.8, 0.3], np.float32))[:, None]
    net = Net(rng)
    shard = slice(rank * len(x) // size, (rank + 1) * len(x) // size)  # this rank's half of the batch
    data, label = Tensor(x[shard]), Tensor(y[shard])

    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    step.set_train()
    for i in range(args.steps):
        loss = step(data, label)
        print(f"rank {rank} step {i} loss {float(loss.asnumpy()):.6f}", flush=True)

    if not args.single:
        _check_ranks_agree(net, rank, size, args.steps)
    os.makedirs(args.out, exist_ok=True)
    name = "single" if args.single else f"rank{rank}"
    np.savez(os.path.join(args.out, f"{name}.npz"), **{p.name: p.asnumpy() for p in net.trainable_params()})


if __name__ == "__main__":
    main()
