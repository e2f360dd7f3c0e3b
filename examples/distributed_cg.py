"""Conjugate gradient on a matrix sharded over a mesh, differentiated with respect to the right-hand side:

    LOOM_NUM_CPU_DEVICES=4 python examples/distributed_cg.py     # one process, a thread per device
    torchrun --nproc-per-node 4 examples/distributed_cg.py       # one process per device (gloo)

The solver is a `lax.while_loop` that stops when the residual norm falls below `tol * |b|` (or
after `--max-iter` iterations): a trip count that depends on the data. The symmetric positive
definite matrix A (n x n) and the vectors b and c are split by rows over a 1-d mesh of all the
devices (`loom.device_put` with `NamedSharding(mesh, P("rows", ...))`); `loom.jit` traces the
global program and loom partitions it: each iteration gathers the search direction for its rows'
matmul, and the residual norm that decides whether to go on is reduced across the mesh (one scalar
all_reduce), so every device takes the same trip count. The loss is c . x(b); its gradient with
respect to b (`loom.grad`) runs the loop backward on every device, each with its own stacks.

Checks, in float64 (exit status 1 when one fails): the solution, the trip count and the gradient
equal the single-device run's; the solution solves A x = b; the gradient is the analytic one
(for SPD A, d(c . x)/db = A^-1 c, up to the solver's tolerance) and matches central finite
differences of the single-device solver along random directions.
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
from loom import lax
from loom.runtime.distributed import local_shard, run_partitioned
from loom.sharding import NamedSharding, P
from loom.sharding.partitioning import partition


def cg(a: Any, b: Any, tol: float, max_iter: int) -> tuple[Any, Any]:
    """x with |A x - b| <= tol |b| (A symmetric positive definite), and the iterations taken."""
    stop = (tol * tol) * (b * b).sum()  # compare squared norms: no sqrt in the loop

    def cond(state):
        _, _, _, rr, k = state
        return (rr > stop) & (k < max_iter)

    def body(state):
        x, r, p, rr, k = state
        ap = a @ p
        alpha = rr / (p * ap).sum()
        x = x + alpha * p
        r = r - alpha * ap
        rr_next = (r * r).sum()
        return x, r, r + (rr_next / rr) * p, rr_next, k + 1

    x, _, _, _, k = lax.while_loop(cond, body, (lnp.zeros_like(b), b, b, (b * b).sum(), lnp.int32(0)))
    return x, k


def make_functions(tol: float, max_iter: int):
    def solve(a: Any, b: Any) -> tuple[Any, Any]:
        return cg(a, b, tol, max_iter)

    def loss(a: Any, b: Any, c: Any) -> Any:
        return (c * cg(a, b, tol, max_iter)[0]).sum()

    def solve_and_grad(a: Any, b: Any, c: Any) -> tuple[Any, Any, Any]:
        x, k = solve(a, b)
        return x, k, loom.grad(loss, argnums=1)(a, b, c)
    return solve_and_grad, loss


def problem(n: int, condition: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random SPD matrix with eigenvalues spread over [1, condition], b and c."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    a = (q * np.geomspace(1.0, condition, n)) @ q.T
    return (a + a.T) / 2, rng.standard_normal(n), rng.standard_normal(n)


def shardings(mesh: Any) -> tuple[NamedSharding, NamedSharding]:
    return NamedSharding(mesh, P("rows", None)), NamedSharding(mesh, P("rows"))


def run_in_process(fun: Any, devices: int, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[Any, ...]:
    """The sharded jit on a mesh of this process's CPU devices; global results."""
    mesh = loom.make_mesh((devices,), ("rows",))
    matrix, vector = shardings(mesh)
    sharded = loom.jit(fun, in_shardings=(matrix, vector, vector), out_shardings=(vector, NamedSharding(mesh, P()),
                                                                                    vector))
    args = loom.device_put(a, matrix), loom.device_put(b, vector), loom.device_put(c, vector)
    return tuple(np.asarray(v) for v in sharded(*args))


def run_distributed(fun: Any, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[Any, ...]:
    """This process's partition on a mesh of the processes; global results (the shards gathered)."""
    from loom.runtime.distributed import communicator
    devices = loom.distributed.process_count()
    mesh = loom.make_mesh((devices,), ("rows",), devices=list(range(devices)))
    matrix, vector = shardings(mesh)
    sharded = loom.jit(fun, in_shardings=(matrix, vector, vector), out_shardings=(vector, NamedSharding(mesh, P()),
                                                                                    vector))
    program = partition(sharded.lower(a, b, c).module)
    x, k, grad = run_partitioned(program, [local_shard(a, matrix), local_shard(b, vector), local_shard(c, vector)])
    pieces = communicator().all_gather_object((np.asarray(x), np.asarray(grad)), "cg shards")
    return np.concatenate([p[0] for p in pieces]), np.asarray(k), np.concatenate([p[1] for p in pieces])


def gap(got: np.ndarray, want: np.ndarray) -> float:
    """|got - want| / |want|."""
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def finite_difference_gap(loss: Any, a: np.ndarray, b: np.ndarray, c: np.ndarray, grad: np.ndarray,
                          directions: int, seed: int, eps: float = 1e-6) -> float:
    """The largest relative gap between grad . v and (L(b + eps v) - L(b - eps v)) / 2 eps."""
    f = loom.jit(loss)
    rng = np.random.default_rng(seed + 1)
    gaps = []
    for _ in range(directions):
        v = rng.standard_normal(b.shape)
        fd = (float(f(a, b + eps * v, c)) - float(f(a, b - eps * v, c))) / (2 * eps)
        gaps.append(abs(fd - float(grad @ v)) / max(abs(fd), 1e-12))
    return max(gaps)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=64, help="the matrix's size n (a multiple of the devices)")
    ap.add_argument("--condition", type=float, default=100.0, help="the matrix's condition number")
    ap.add_argument("--tol", type=float, default=1e-10, help="stop when |r| <= tol |b|")
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--directions", type=int, default=3, help="random directions of the finite-difference check")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds any collective may take (torchrun)")
    args = ap.parse_args()
    loom.config.update("enable_x64", True)  # float64 throughout: the checks are at 1e-9
    distributed = "WORLD_SIZE" in os.environ  # started by torchrun
    if distributed:
        loom.distributed.initialize(timeout_s=args.timeout)
    devices = loom.distributed.process_count() if distributed else len(loom.devices("numpy"))
    if args.size % devices:
        raise SystemExit(f"--size {args.size} rows do not split evenly over {devices} devices")
    a, b, c = problem(args.size, args.condition, args.seed)
    solve_and_grad, loss = make_functions(args.tol, args.max_iter)
    start = time.perf_counter()
    x, k, grad = run_distributed(solve_and_grad, a, b, c) if distributed else \
        run_in_process(solve_and_grad, devices, a, b, c)
    seconds = time.perf_counter() - start
    rank = loom.distributed.process_index() if distributed else 0
    if distributed:
        loom.distributed.shutdown()
    single_x, single_k, single_grad = (np.asarray(v) for v in loom.jit(solve_and_grad)(a, b, c))
    analytic = np.linalg.solve(a, c)
    # The sharded reductions add in another order than one device does; CG amplifies rounding over
    # its iterations (its directions lose conjugacy), the backward loop more so: relative norms.
    checks = {
        "the solution and trip count equal the single-device run's":
            int(k) == int(single_k) and gap(x, single_x) < 1e-9,
        "the gradient equals the single-device gradient": gap(grad, single_grad) < 1e-7,
        "A x = b": gap(a @ x, b) <= 10 * args.tol,
        "the gradient is A^-1 c": gap(grad, analytic) < 1e-6,
        "the gradient matches finite differences":
            finite_difference_gap(loss, a, b, c, grad, args.directions, args.seed) < 1e-6,
    }
    if rank == 0 or not all(checks.values()):
        where = f"{devices} processes (gloo)" if distributed else f"{devices} threads"
        print(f"conjugate gradient, n={args.size}, condition {args.condition:g}, rows over {where}: "
              f"{int(k)} iterations, solve and gradient in {seconds:.2f} s (compiling included)")
        print(f"|Ax - b| / |b| = {gap(a @ x, b):.1e}; relative gaps to one device: {gap(x, single_x):.1e} (x), "
              f"{gap(grad, single_grad):.1e} (gradient); to A^-1 c: {gap(grad, analytic):.1e}")
        for what, ok in checks.items():
            print(f"{'ok  ' if ok else 'FAIL'} {what}")
    raise SystemExit(0 if all(checks.values()) else 1)


if __name__ == "__main__":
    main()
