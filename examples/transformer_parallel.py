"""A transformer block (attention + MLP) trained with tensor and data parallelism on a 2x2 mesh,
checked against the same steps on one device:

    LOOM_NUM_CPU_DEVICES=4 python examples/transformer_parallel.py     # one process, a thread per device
    torchrun --nproc-per-node 4 examples/transformer_parallel.py       # one process per device

The block is pre-norm, `h = x + attention(norm(x))`, `out = h + mlp(norm(h))`, with causal
multi-head attention, fitted to a fixed random teacher of the same form. Megatron's layout over
the mesh axis "model": the query, key and value projections split by columns (each device holds
whole heads), the output projection by rows; the MLP's first matrix by columns, its second by
rows; the batch is split over "data". `loom.jit(step, in_shardings=..., out_shardings=...)`
traces one training step (loss and gradients by `loom.value_and_grad`, then SGD) to the global
program with shardings, which loom partitions: an all_reduce over "model" after each row-split
matmul, all_reduces over "data" for the gradients. In one process the jitted step runs its
partitions on a mesh of CPU devices (one thread each); under torchrun every process runs its own
partition (`loom.distributed.run_partitioned`) on its own shards. Either way the example runs
the same steps on one device too and prints whether the losses and the trained parameters equal
that run's (exit status 1 when they do not).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np

import loom
import loom.distributed
import loom.numpy as lnp
from loom.nn import softmax
from loom.runtime.distributed import local_shard, run_partitioned
from loom.sharding import NamedSharding, P
from loom.sharding.partitioning import partition

Params = tuple[Any, ...]  # gain, wq, wk, wv, wo, w1, w2
PARAM_SPECS = (P(), P(None, "model"), P(None, "model"), P(None, "model"), P("model", None), P(None, "model"),
               P("model", None))
DATA_SPEC = P("data", None, None)


def norm(x: Any, gain: Any) -> Any:
    mean = lnp.mean(x, axis=-1, keepdims=True)
    var = lnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / lnp.sqrt(var + 1e-5) * gain


def attention(x: Any, wq: Any, wk: Any, wv: Any, wo: Any, heads: int) -> Any:
    b, t, d = x.shape
    def split(v: Any) -> Any:
        return v.reshape(b, t, heads, d // heads)
    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    scores = lnp.einsum("bthd,bshd->bhts", q, k) / np.sqrt(d // heads)
    scores = lnp.where(lnp.tril(lnp.ones((t, t), bool)), scores, -1e9)
    return lnp.einsum("bhts,bshd->bthd", softmax(scores, axis=-1), v).reshape(b, t, d) @ wo


def block(params: Params, x: Any, heads: int) -> Any:
    gain, wq, wk, wv, wo, w1, w2 = params
    h = x + attention(norm(x, gain), wq, wk, wv, wo, heads)
    return h + lnp.maximum(norm(h, gain) @ w1, 0.0) @ w2


def make_step(lr: float, heads: int):
    def loss_fn(params: Params, x: Any, y: Any) -> Any:
        return lnp.mean((block(params, x, heads) - y) ** 2)

    def step(params: Params, x: Any, y: Any) -> tuple[Params, Any]:
        loss, grads = loom.value_and_grad(loss_fn)(params, x, y)
        return tuple(p - lr * g for p, g in zip(params, grads)), loss
    return step


def init(args: argparse.Namespace, seed: int) -> Params:
    rng = np.random.default_rng(seed)
    d, hidden = args.dim, args.hidden
    def matrix(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(np.float32)
    return (np.ones(d, np.float32), matrix(d, d), matrix(d, d), matrix(d, d), matrix(d, d), matrix(d, hidden),
            matrix(hidden, d))


def batch(args: argparse.Namespace, step: int, teacher: Params) -> tuple[np.ndarray, np.ndarray]:
    """The global batch of a step (the same in every process): inputs and the teacher's outputs."""
    x = np.random.default_rng((args.seed, step)).standard_normal((args.batch, args.seq, args.dim)).astype(np.float32)
    return x, np.asarray(loom.jit(lambda p, v: block(p, v, args.heads))(teacher, x))


def train(args: argparse.Namespace, step_fn: Any) -> tuple[list[float], Params]:
    """`args.steps` steps of `step_fn(params, x, y)` from the initial parameters."""
    teacher, params = init(args, args.seed + 1), init(args, args.seed)
    losses = []
    for i in range(args.steps):
        params, loss = step_fn(params, *batch(args, i, teacher))
        losses.append(float(np.asarray(loss)))
    return losses, params


def sharded_step(args: argparse.Namespace, mesh: Any) -> Any:
    params = tuple(NamedSharding(mesh, s) for s in PARAM_SPECS)
    data = NamedSharding(mesh, DATA_SPEC)
    return loom.jit(make_step(args.lr, args.heads), in_shardings=(params, data, data),
                    out_shardings=(params, NamedSharding(mesh, P())))


def check_sizes(args: argparse.Namespace, data: int, model: int) -> None:
    if args.heads % model or args.dim % args.heads or args.hidden % model or args.batch % data:
        raise SystemExit(f"a {data} x {model} mesh needs heads ({args.heads}) and hidden ({args.hidden}) divisible "
                         f"by {model}, dim ({args.dim}) by heads and the batch ({args.batch}) by {data}")


# losses, parameters, their shardings, rank, the mesh's shape
Run = tuple[list[float], Params, list[Any] | None, int, tuple[int, int]]


def run_in_process(args: argparse.Namespace) -> Run:
    """The jitted sharded step on a 2x2 mesh of this process's CPU devices; global parameters."""
    check_sizes(args, 2, 2)
    losses, params = train(args, sharded_step(args, loom.make_mesh((2, 2), ("data", "model"))))
    return losses, tuple(np.asarray(p) for p in params), None, 0, (2, 2)


def run_distributed(args: argparse.Namespace) -> Run:
    """This process's partition of the step on a 2 x n/2 mesh of processes; its own parameter
    shards (and their shardings, to cut the reference's)."""
    loom.distributed.initialize(timeout_s=args.timeout)
    n, rank = loom.distributed.process_count(), loom.distributed.process_index()
    if n % 2:
        raise SystemExit(f"a 2 x n/2 mesh needs an even number of processes (got {n})")
    check_sizes(args, 2, n // 2)
    # the mesh's devices are the processes: partition p runs in the process of rank p
    mesh = loom.make_mesh((2, n // 2), ("data", "model"), devices=list(range(n)))
    param_shardings = [NamedSharding(mesh, s) for s in PARAM_SPECS]
    data = NamedSharding(mesh, DATA_SPEC)
    teacher = init(args, args.seed + 1)
    program = partition(sharded_step(args, mesh).lower(init(args, args.seed), *batch(args, 0, teacher)).module)

    def step(params: Params, x: np.ndarray, y: np.ndarray) -> tuple[Params, Any]:
        *params, loss = run_partitioned(program, [*params, local_shard(x, data), local_shard(y, data)])
        return tuple(params), loss
    params = tuple(local_shard(p, s) for p, s in zip(init(args, args.seed), param_shardings))
    losses = []
    for i in range(args.steps):
        params, loss = step(params, *batch(args, i, teacher))
        losses.append(float(np.asarray(loss)))
    loom.distributed.shutdown()
    return losses, params, param_shardings, rank, (2, n // 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=8)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds any collective may take (torchrun)")
    args = ap.parse_args()
    start = time.perf_counter()
    distributed = "WORLD_SIZE" in os.environ  # started by torchrun
    losses, params, shardings, rank, shape = (run_distributed if distributed else run_in_process)(args)
    mode = "one process per device" if distributed else "one process, a thread per device"
    seconds = time.perf_counter() - start
    single_losses, single_params = train(args, loom.jit(make_step(args.lr, args.heads)))
    if shardings is not None:  # this process holds shards: compare with the reference's
        single_params = tuple(local_shard(np.asarray(p), s, rank) for p, s in zip(single_params, shardings))
    loss_gap = float(np.max(np.abs(np.subtract(losses, single_losses))))
    param_gap = max(float(np.max(np.abs(np.asarray(p) - np.asarray(q)))) for p, q in zip(params, single_params))
    same = np.allclose(losses, single_losses, rtol=1e-4, atol=1e-6) and all(
        np.allclose(np.asarray(p), np.asarray(q), rtol=1e-4, atol=1e-5) for p, q in zip(params, single_params))
    if rank == 0 or not same:
        for i, (loss, single) in enumerate(zip(losses, single_losses)):
            print(f"step {i:3d}  loss {loss:.6f}  (one device {single:.6f})")
        print(f"{args.steps} steps on a {shape[0]}x{shape[1]} mesh in {seconds:.1f} s ({mode}, compiling included)")
        print(f"{'equals' if same else 'DIFFERS FROM'} the single-device run: largest difference "
              f"{loss_gap:.2e} in the losses, {param_gap:.2e} in the parameters")
    raise SystemExit(0 if same else 1)


if __name__ == "__main__":
    main()
