"""Training an MLP block with data x model parallelism on a 2x2 mesh, one process per device:

    torchrun --nproc-per-node 4 examples/tensor_parallel.py        # the loss curve, printed by rank 0
    python examples/tensor_parallel.py --single                     # the same steps in one process

The block is `x + relu(x @ w1 + b1) @ w2 + b2`, fitted to a fixed random teacher of the same form.
The batch is split over the mesh axis "data", the hidden units over "model" (Megatron's layout:
w1 and b1 by columns, w2 by rows). `loom.jit(step, in_shardings=..., out_shardings=...)` lowers
one training step (loss and gradients by `loom.value_and_grad`, then SGD) to the global program
with shardings; `loom.sharding.partitioning.partition` makes the per-device program (an
all_reduce over "model" after the second matmul, all_reduces over "data" for the gradients); each
process runs its partition with `loom.distributed.run_partitioned` on its own shards. The
parameters stay sharded from step to step; only the loss (replicated) is read.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

import loom
import loom.distributed
import loom.numpy as lnp
from loom.runtime.distributed import local_shard, run_partitioned
from loom.sharding import NamedSharding, P
from loom.sharding.partitioning import partition

Params = tuple[Any, Any, Any, Any]  # w1, b1, w2, b2


def block(params: Params, x: Any) -> Any:
    w1, b1, w2, b2 = params
    return x + lnp.maximum(x @ w1 + b1, 0.0) @ w2 + b2


def loss_fn(params: Params, x: Any, y: Any) -> Any:
    return lnp.mean((block(params, x) - y) ** 2)


def make_step(lr: float):
    def step(params: Params, x: Any, y: Any) -> tuple[Params, Any]:
        loss, grads = loom.value_and_grad(loss_fn)(params, x, y)
        return tuple(p - lr * g for p, g in zip(params, grads)), loss
    return step


def init(dim: int, hidden: int, seed: int) -> Params:
    rng = np.random.default_rng(seed)
    return ((rng.standard_normal((dim, hidden)) / np.sqrt(dim)).astype(np.float32), np.zeros(hidden, np.float32),
            (rng.standard_normal((hidden, dim)) / np.sqrt(hidden)).astype(np.float32), np.zeros(dim, np.float32))


def batch(step: int, size: int, teacher: Params, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The global batch of a step (the same in every process): inputs and the teacher's outputs."""
    x = np.random.default_rng((seed, step)).standard_normal((size, teacher[0].shape[0])).astype(np.float32)
    w1, b1, w2, b2 = teacher
    return x, (x + np.maximum(x @ w1 + b1, 0) @ w2 + b2).astype(np.float32)


def train_single(args: argparse.Namespace) -> list[float]:
    """The same steps in one process, on one device: the reference curve."""
    teacher, params = init(args.dim, args.hidden, args.seed + 1), init(args.dim, args.hidden, args.seed)
    step = loom.jit(make_step(args.lr))
    losses = []
    for i in range(args.steps):
        params, loss = step(params, *batch(i, args.batch, teacher, args.seed))
        losses.append(float(loss))
    return losses


def train_distributed(args: argparse.Namespace) -> list[float]:
    loom.distributed.initialize(timeout_s=args.timeout)
    n, rank = loom.distributed.process_count(), loom.distributed.process_index()
    if n % 2 or args.hidden % (n // 2) or args.batch % 2:
        raise SystemExit(f"a 2 x {n // 2} mesh needs an even number of processes (got {n}), the hidden size "
                         f"({args.hidden}) divisible by {n // 2} and an even batch ({args.batch})")
    # the mesh's devices are the processes: partition p runs in the process of rank p
    mesh = loom.make_mesh((2, n // 2), ("data", "model"), devices=list(range(n)))

    def s(*spec: Any) -> NamedSharding:
        return NamedSharding(mesh, P(*spec))
    param_shardings = (s(None, "model"), s("model"), s("model", None), s())
    data_sharding = s("data", None)
    step = loom.jit(make_step(args.lr), in_shardings=(param_shardings, data_sharding, data_sharding),
                    out_shardings=(param_shardings, s()))

    teacher, params = init(args.dim, args.hidden, args.seed + 1), init(args.dim, args.hidden, args.seed)
    x, y = batch(0, args.batch, teacher, args.seed)
    program = partition(step.lower(params, x, y).module)  # the per-device program, the same in every process
    local = [local_shard(p, sh) for p, sh in zip(params, param_shardings)]
    losses = []
    for i in range(args.steps):
        x, y = batch(i, args.batch, teacher, args.seed)
        *local, loss = run_partitioned(program, [*local, local_shard(x, data_sharding), local_shard(y, data_sharding)])
        losses.append(float(loss))
    loom.distributed.shutdown()
    return losses if rank == 0 else []  # the loss is replicated: rank 0 reports it


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds any collective may take")
    ap.add_argument("--single", action="store_true", help="run the same steps in one process")
    ap.add_argument("--losses-out", help="write the loss curve (JSON) to this file")
    args = ap.parse_args()
    start = time.perf_counter()
    losses = train_single(args) if args.single else train_distributed(args)
    if not losses:  # not rank 0
        return
    for i, loss in enumerate(losses):
        print(f"step {i:3d}  loss {loss:.6f}")
    print(f"{args.steps} steps in {time.perf_counter() - start:.1f} s "
          f"({'one process' if args.single else 'one process per device'}, compiling included)")
    if args.losses_out:
        with open(args.losses_out, "w", encoding="utf-8") as f:
            json.dump(losses, f)


if __name__ == "__main__":
    main()
