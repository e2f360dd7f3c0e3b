"""A two-stage pipeline loop on two devices, placed with `loom.placement`:

    python examples/mpmd_loop.py                          # in one process: one thread per device
    torchrun --nproc-per-node 2 examples/mpmd_loop.py     # one process per device (gloo)

Stage 1, on device 0, is a recurrent cell h <- tanh(h W1 + x_t) over a sequence whose length is
data (the loop also stops early when h saturates); stage 2, on device 1, reads each h and
accumulates tanh(h W2). `loom.frontend.placement.mpmd_program` traces the function, cuts it into
one program per device (a send / recv pair for every value that crosses devices, each device with
its own copy of the loop, the predicate sent from device 0 to device 1 every iteration) and
compiles it. With `--parallel-iterations` above 1, device 0 runs ahead into the next iterations
while device 1 is still on earlier ones. The gradient of a loss of the result with respect to
both weights goes back through the partitioned loop the same way. Each run is compared, bit for
bit, with the same function run whole on one device.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import loom
import loom.distributed
import loom.numpy as lnp
from loom import lax
from loom.frontend.placement import mpmd_program


def two_stages(w1, w2, xs, length):
    def cond(c):
        t, h, _ = c
        with loom.placement(0):
            return (t < length) & (lnp.abs(h).max() < 0.999)

    def body(c):
        t, h, acc = c
        with loom.placement(0):
            h = lnp.tanh(h @ w1 + xs[t])
            t = t + 1
        with loom.placement(1):
            acc = acc + lnp.tanh(h @ w2)
        return t, h, acc

    with loom.placement(0):  # xs: (steps, width), or (steps, batch, width) for a batch of sequences
        h0 = lnp.zeros(xs.shape[1:], xs.dtype)
    with loom.placement(1):
        acc0 = lnp.zeros((*xs.shape[1:-1], w2.shape[1]), xs.dtype)
    t, _, acc = lax.while_loop(cond, body, (lnp.int32(0), h0, acc0))
    return t, acc


def loss(w1, w2, xs, length):
    _, acc = two_stages(w1, w2, xs, length)
    with loom.placement(1):
        return (acc * acc).sum()


def inputs(width: int, steps: int, seed: int, batch: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The weights and a sequence of `steps` inputs (of `batch` rows each when given)."""
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((width, width)) * 0.5 / np.sqrt(width)).astype(np.float32)
    w2 = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
    xs = (rng.standard_normal((steps, width) if batch is None else (steps, batch, width)) * 0.3).astype(np.float32)
    return w1, w2, xs


def same(a, b) -> bool:
    return all(np.asarray(x).tobytes() == np.asarray(y).tobytes() for x, y in zip(a, b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--steps", type=int, default=50, help="the sequence's length (the loop may stop earlier)")
    ap.add_argument("--parallel-iterations", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds any receive may wait")
    args = ap.parse_args()
    w1, w2, xs = inputs(args.width, args.steps, args.seed)
    length = np.int32(args.steps)
    forward = mpmd_program(two_stages, w1, w2, xs, length, parallel_iterations=args.parallel_iterations)
    backward = mpmd_program(loom.grad(loss, argnums=(0, 1)), w1, w2, xs, length,
                            parallel_iterations=args.parallel_iterations)
    distributed = "RANK" in os.environ
    if distributed:
        loom.distributed.initialize(timeout_s=args.timeout)
    start = time.perf_counter()
    if distributed:
        got = forward.run_processes(w1, w2, xs, length, timeout=args.timeout)
        grads = backward.run_processes(w1, w2, xs, length, timeout=args.timeout)
    else:
        got = forward(w1, w2, xs, length, timeout=args.timeout)
        grads = backward(w1, w2, xs, length, timeout=args.timeout)
    seconds = time.perf_counter() - start
    want = loom.jit(two_stages)(w1, w2, xs, length)
    want_grads = loom.jit(loom.grad(loss, argnums=(0, 1)))(w1, w2, xs, length)
    if distributed:
        rank = loom.distributed.process_index()
        loom.distributed.shutdown()
        if rank != 0:
            return
    where = "2 processes (gloo)" if distributed else "2 threads"
    print(f"{int(got[0])} iterations on {where}, parallel_iterations={args.parallel_iterations}: "
          f"{seconds * 1e3:.1f} ms for the loop and its gradient")
    print(f"result equals the single-device run: {same(got, want)}")
    print(f"gradient equals the single-device gradient: {same(grads, want_grads)}")
    if not (same(got, want) and same(grads, want_grads)):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
