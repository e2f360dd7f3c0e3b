"""Reverse mode through a data-dependent while loop: a dynamic RNN, loom vs its peers, in one run.

    python benchmarks/control_flow.py                    # hidden 256, batch 32, lengths 100 and 1000
    python benchmarks/control_flow.py --rounds 3 --lengths 100,400 --threads 2
    python benchmarks/control_flow.py --quick            # lengths 50 and 100, 5 rounds (a smoke run)

The model is an RNN cell h = tanh(x_t U + h W + b) (hidden 256, batch 32, inputs of width 256)
run for a number of steps chosen by the data (an integer input, 100 to 1000), with the loss
sum(h_T ** 2); the gradient is taken w.r.t. W, U and b.

- loom: `lax.while_loop(lambda s: s[0] < length, ...)`, the trip count is data; forward with
  `loom.jit`, forward plus backward with `loom.grad` (the backward loop pops the saved values).
- JAX: JAX cannot differentiate a while loop, so `lax.scan` over the fixed maximum length (1000)
  with steps past `length` masked out (`jnp.where(t < length, new, h)`), jitted; this is what a
  JAX user writes. Its time per step divides by the data length, as loom's does.
- PyTorch eager: a Python loop of `length` steps, `loss.backward()`.

Every contender gets the same number of threads (`--threads`, default 1: the BLAS of numpy and
torch, and XLA's CPU thread pool), so a shared machine's load does not favour one of them.
Time per step = time of one call / length. Contenders run round-robin (one call each per round)
and each row gives the median over the rounds. Then the peak saved bytes of loom's backward for
each memory policy (save_all, checkpoint = every ceil(sqrt(n)) iterations, offload), counted by the
stack kernels, at the longest length. The run writes benchmarks/results/control_flow-DATE.json.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable

if __name__ == "__main__":  # thread counts must be set before numpy, torch and jax load
    _threads = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv else "1"
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = _threads
    if _threads == "1":
        # XLA's one flag for this: Eigen's intra-op thread pool off (every token of XLA_FLAGS
        # needs its `--`; a bare `name=value` is silently dropped)
        os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false"

import numpy as np  # noqa: E402
from bench_common import Record, cpu_name  # noqa: E402

import loom  # noqa: E402
import loom.numpy as lnp  # noqa: E402
from loom import lax  # noqa: E402

HIDDEN, BATCH, MAX_LEN = 256, 32, 1000


def machine() -> str:
    cpu = cpu_name()
    return f"{cpu}, {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}"


def loom_functions(policy: str = "save_all") -> tuple[Callable, Callable]:
    def loss(w, u, b, xs, h0, length):
        def body(s):
            i, h = s
            return i + 1, lnp.tanh(xs[i] @ u + h @ w + b)
        _, h = lax.while_loop(lambda s: s[0] < length, body, (np.int32(0), h0), policy=policy)
        return lnp.sum(h * h)
    return loom.jit(loss), loom.grad(loss, argnums=(0, 1, 2))


def jax_functions() -> tuple[Callable, Callable]:
    import jax
    import jax.numpy as jnp

    def loss(w, u, b, xs, h0, length):
        def step(h, tx):
            t, x = tx
            new = jnp.tanh(x @ u + h @ w + b)
            return jnp.where(t < length, new, h), None
        h, _ = jax.lax.scan(step, h0, (jnp.arange(MAX_LEN), xs))
        return jnp.sum(h * h)
    return jax.jit(loss), jax.jit(jax.grad(loss, argnums=(0, 1, 2)))


def torch_functions() -> tuple[Callable, Callable]:
    import torch

    def forward(w, u, b, xs, h0, length):
        h = h0
        for i in range(int(length)):
            h = torch.tanh(xs[i] @ u + h @ w + b)
        return (h * h).sum()

    def fwd(w, u, b, xs, h0, length):
        with torch.no_grad():
            return forward(w, u, b, xs, h0, length)

    def fwd_bwd(w, u, b, xs, h0, length):
        for p in (w, u, b):
            p.grad = None
        loss = forward(w, u, b, xs, h0, length)
        loss.backward()
        return w.grad, u.grad, b.grad
    return fwd, fwd_bwd


def data(seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    w = (rng.normal(size=(HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32)
    u = (rng.normal(size=(HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32)
    b = (rng.normal(size=HIDDEN) * 0.1).astype(np.float32)
    xs = rng.normal(size=(MAX_LEN, BATCH, HIDDEN)).astype(np.float32)
    h0 = np.zeros((BATCH, HIDDEN), np.float32)
    return w, u, b, xs, h0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lengths", default="100,1000")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="lengths 50 and 100, 5 rounds (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.lengths, args.rounds = "50,100", 5
    lengths = [int(n) for n in args.lengths.split(",")]

    import jax
    import torch
    torch.set_num_threads(args.threads)
    w, u, b, xs, h0 = data()
    loom_fwd, loom_grad = loom_functions()
    jax_fwd, jax_grad = jax_functions()
    torch_fwd, torch_grad = torch_functions()
    tw, tu, tb = (torch.tensor(a, requires_grad=True) for a in (w, u, b))
    txs, th0 = torch.tensor(xs), torch.tensor(h0)
    jw, ju, jb, jxs, jh0 = map(jax.numpy.asarray, (w, u, b, xs, h0))

    def contenders(n: int) -> dict[str, Callable[[], object]]:
        length = np.int32(n)
        return {
            "loom fwd": lambda: loom_fwd(w, u, b, xs, h0, length),
            "jax fwd (scan to 1000)": lambda: jax_fwd(jw, ju, jb, jxs, jh0, length).block_until_ready(),
            "torch eager fwd": lambda: torch_fwd(tw, tu, tb, txs, th0, n),
            "loom fwd+bwd": lambda: loom_grad(w, u, b, xs, h0, length),
            "jax fwd+bwd (scan to 1000)": lambda: [g.block_until_ready() for g in jax_grad(jw, ju, jb, jxs, jh0,
                                                                                            length)],
            "torch eager fwd+bwd": lambda: torch_grad(tw, tu, tb, txs, th0, n),
        }

    # the three gradients agree (the float32 programs differ only in rounding)
    n0 = lengths[0]
    lg = loom_grad(w, u, b, xs, h0, np.int32(n0))
    jg = jax_grad(jw, ju, jb, jxs, jh0, np.int32(n0))
    pg = torch_grad(tw, tu, tb, txs, th0, n0)
    for a, c, d in zip(lg, jg, pg):
        scale = float(np.max(np.abs(np.asarray(c)))) + 1e-30
        assert np.max(np.abs(np.asarray(a) - np.asarray(c))) / scale < 1e-3
        assert np.max(np.abs(np.asarray(a) - d.numpy())) / scale < 1e-3

    print(f"dynamic RNN, hidden {HIDDEN}, batch {BATCH}, float32; machine: {machine()}")
    print(f"numpy {np.__version__}, jax {jax.__version__}, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads)")
    print(f"{'length':>6}  {'contender':<28} {'ms/step':>9} {'ms/call':>10}")
    results: dict[tuple[int, str], float] = {}
    record = Record("control_flow", {"hidden": HIDDEN, "batch": BATCH, "max_len": MAX_LEN, "lengths": lengths,
                                     "rounds": args.rounds, "threads": args.threads})
    for n in lengths:
        fns = contenders(n)
        for fn in fns.values():  # warm-up (compilation)
            fn()
        times: dict[str, list[float]] = {k: [] for k in fns}
        for _ in range(args.rounds):
            for name, fn in fns.items():
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
        for name, ts in times.items():
            med = statistics.median(ts)
            results[(n, name)] = med
            print(f"{n:>6}  {name:<28} {med / n * 1e3:>9.4f} {med * 1e3:>10.2f}")
        case = f"length {n}"
        record.add_all(case, times)
        for mode in ("fwd", "fwd+bwd"):
            record.ratio(case, f"loom {mode}", f"jax {mode} (scan to 1000)")
            record.ratio(case, f"loom {mode}", f"torch eager {mode}")
        ratio = results[(n, "loom fwd+bwd")] / results[(n, "jax fwd+bwd (scan to 1000)")]
        ratio_t = results[(n, "loom fwd+bwd")] / results[(n, "torch eager fwd+bwd")]
        print(f"{n:>6}  loom fwd+bwd / jax scan fwd+bwd = {ratio:.2f}x; loom / torch eager = {ratio_t:.2f}x")

    n = max(lengths)
    saved = {}
    print(f"\npeak saved bytes of loom's backward at length {n} (stack kernels' count):")
    for policy in ("save_all", "checkpoint", "offload"):
        _, g = loom_functions(policy)
        g(w, u, b, xs, h0, np.int32(n))  # compile
        lax.reset_saved_bytes()
        t0 = time.perf_counter()
        grads = g(w, u, b, xs, h0, np.int32(n))
        dt = time.perf_counter() - t0
        peak = lax.peak_saved_bytes()
        same = all(np.array_equal(a, c) for a, c in zip(grads, loom_grad(w, u, b, xs, h0, np.int32(n))))
        print(f"  {policy:<11} {peak / 2**20:>9.2f} MiB   fwd+bwd {dt * 1e3:8.1f} ms   gradients identical: {same}")
        saved[policy] = {"peak_saved_bytes": peak, "gradients_identical": same}
        record.add(f"memory policy, length {n}", f"loom fwd+bwd, {policy}", [dt], peak_saved_bytes=peak)
    record.write(memory_policies=saved)


if __name__ == "__main__":
    main()
