"""loom's front end against jax.jit on CPU, in one run.

    python benchmarks/frontend.py                 # all three parts
    python benchmarks/frontend.py --profile       # and a cProfile of loom's trace+compile (part a)
    python benchmarks/frontend.py --repeat 3      # fewer rounds on a slow machine
    python benchmarks/frontend.py --quick         # 100 layers, 5 rounds, fewer calls (a smoke run)

(a) Trace + compile of a 2000-op function (500 residual layers `x = tanh(x @ w + b) + x` on
    16x16 float32: dot_general, add, tanh, add per layer, and one broadcast of b): loom's first
    call of `loom.jit(f)` (trace, pass pipeline, executor code generation, one run) against
    `jax.jit(f).lower(...).compile()` with JAX's caches cleared, and JAX's whole first call. A
    fresh function object each round, so no tracing cache helps either side. (A purely
    elementwise 2000-op chain is no fair test: XLA's CPU compile time explodes on it, 10 s for 200
    ops and 36 s for 400; see NOTES.md.)
(b) Steady-state call overhead of a jitted small function (`x * 2.0 + 1.0` on a float32[4]),
    microseconds per call; JAX's result waited for (`block_until_ready`).
(c) Time per training step of examples/digits_mlp.py (64-64-10 MLP, batch 32, value_and_grad
    and an SGD update under jit), loom against JAX, same initial weights and batch.

Contenders run round-robin, so a change in the machine's load affects both alike; each row gives
the median and the minimum over the rounds. Ratios are loom / JAX (below 1: loom is faster). The
run writes benchmarks/results/frontend-DATE.json with every round's time (`loom bench report`).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import os
import platform
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from bench_common import Record, cpu_name, fmt, load_average  # noqa: E402

import loom
import loom.numpy as lnp

ROOT = Path(__file__).resolve().parent.parent
RECORD = Record("frontend", {})


def machine() -> str:
    cpu = cpu_name()
    import jax
    load = load_average()
    return (f"{cpu}, {os.cpu_count()} cores, load average {load:.1f}, Python {platform.python_version()}, "
            f"numpy {np.__version__}, jax {jax.__version__}")


def row(name: str, loom_times: list[float], peer_times: list[float], peer: str = "JAX") -> None:
    """Print and record one comparison (the raw times go to RECORD under the case `name`)."""
    RECORD.add(name, "loom", loom_times)
    RECORD.add(name, peer, peer_times)
    RECORD.ratio(name, "loom", peer)
    lm, lmin = statistics.median(loom_times), min(loom_times)
    pm, pmin = statistics.median(peer_times), min(peer_times)
    print(f"  {name:<44} loom {fmt(lm):>9} (min {fmt(lmin):>9})   {peer} {fmt(pm):>9} (min {fmt(pmin):>9})   "
          f"loom/{peer} {lm / pm:5.2f}x")


# --- (a) trace + compile -----------------------------------------------------------------------


LAYERS = 500


def make_chain(xp: object) -> Callable:
    """A fresh function of 4 * LAYERS + 1 ops, written against `xp`."""
    def chain(x, w, b):
        for _ in range(LAYERS):
            x = xp.tanh(x @ w + b) + x
        return x
    return chain


def count_ops(module: object) -> int:
    n = 0
    for op in module.walk():  # type: ignore[attr-defined]
        n += op.name.startswith("stablehlo.")
    return n


def bench_compile(repeat: int, profile: bool) -> None:
    import jax
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 16)) * 0.05).astype(np.float32)
    b = (rng.standard_normal(16) * 0.01).astype(np.float32)
    args = (x, w, b)
    lowered = loom.jit(make_chain(lnp)).lower(*args)
    n_loom = count_ops(lowered.module)
    jax_text = jax.jit(make_chain(jax.numpy)).lower(*args).as_text()
    n_jax = sum(1 for line in jax_text.splitlines() if " = stablehlo." in line)
    print(f"(a) trace + compile of a {4 * LAYERS + 1}-op function ({LAYERS} residual tanh layers; {n_loom} "
          f"stablehlo ops in loom's module, {n_jax} in JAX's, which broadcasts b twice in every layer), 16x16 float32")
    first, lower_t, compile_t, jax_compile, jax_first = [], [], [], [], []
    for _ in range(repeat):
        f = make_chain(lnp)
        t = time.perf_counter()
        out = loom.jit(f)(*args)
        first.append(time.perf_counter() - t)
        f = make_chain(lnp)
        t = time.perf_counter()
        low = loom.jit(f).lower(*args)
        t1 = time.perf_counter()
        low.compile()
        t2 = time.perf_counter()
        lower_t.append(t1 - t)
        compile_t.append(t2 - t1)
        jax.clear_caches()
        g = make_chain(jax.numpy)
        t = time.perf_counter()
        jax.jit(g).lower(*args).compile()
        jax_compile.append(time.perf_counter() - t)
        jax.clear_caches()
        g = make_chain(jax.numpy)
        t = time.perf_counter()
        expected = jax.jit(g)(*args).block_until_ready()
        jax_first.append(time.perf_counter() - t)
    np.testing.assert_allclose(out, np.asarray(expected), rtol=1e-4, atol=1e-4)
    row("first call (loom) / lower+compile (JAX)", first, jax_compile)
    row("first call, both", first, jax_first)
    print(f"  loom's parts: trace + pipeline {fmt(statistics.median(lower_t))}, executor code generation "
          f"{fmt(statistics.median(compile_t))}")
    if profile:
        f = make_chain(lnp)
        profiler = cProfile.Profile()
        profiler.enable()
        loom.jit(f)(*args)
        profiler.disable()
        print("  cProfile of loom's first call (top 25 by cumulative time):")
        stats = pstats.Stats(profiler, stream=sys.stdout)
        stats.sort_stats("cumulative").print_stats(25)
        stats.sort_stats("tottime").print_stats(15)


# --- (b) call overhead -------------------------------------------------------------------------


def bench_calls(repeat: int, number: int) -> None:
    import jax
    x = np.arange(4, dtype=np.float32)
    f_loom = loom.jit(lambda v: v * 2.0 + 1.0)
    f_jax = jax.jit(lambda v: v * 2.0 + 1.0)
    np.testing.assert_array_equal(f_loom(x), np.asarray(f_jax(x)))
    jx = jax.device_put(x)
    contenders = {"loom": lambda: f_loom(x), "jax_numpy_in": lambda: f_jax(x).block_until_ready(),
                  "jax_device_in": lambda: f_jax(jx).block_until_ready()}
    times: dict[str, list[float]] = {k: [] for k in contenders}
    for fn in contenders.values():
        for _ in range(100):
            fn()
    for _ in range(repeat):
        for name, fn in contenders.items():
            t = time.perf_counter()
            for _ in range(number):
                fn()
            times[name].append((time.perf_counter() - t) / number)
    print(f"(b) steady-state call of a jitted small function (x * 2.0 + 1.0, float32[4]), {number} calls per round")
    row("numpy array in, numpy array out (JAX: host->device)", times["loom"], times["jax_numpy_in"])
    row("JAX given an array already on its device", times["loom"], times["jax_device_in"])


# --- (c) training step -------------------------------------------------------------------------


def load_example() -> object:
    spec = importlib.util.spec_from_file_location("digits_mlp", ROOT / "examples" / "digits_mlp.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["digits_mlp"] = module
    spec.loader.exec_module(module)
    return module


def bench_training(repeat: int, number: int) -> None:
    import jax
    import jax.numpy as jnp
    digits = load_example()
    x_train, y_train, _, _ = digits.load_digits(0)
    batch = x_train[:32], np.eye(10, dtype=np.float32)[y_train[:32]]
    params = digits.init_params(loom.random, loom.random.PRNGKey(0))
    step_loom = digits.make_step(lnp, loom.jit, loom.value_and_grad, 0.2)
    step_jax = digits.make_step(jnp, jax.jit, jax.value_and_grad, 0.2)
    state = {"loom": dict(params), "jax": {k: jnp.asarray(v) for k, v in params.items()}}
    jbatch = tuple(jnp.asarray(b) for b in batch)

    def run_loom() -> None:
        state["loom"], loss = step_loom(state["loom"], *batch)

    def run_jax() -> None:
        state["jax"], loss = step_jax(state["jax"], *jbatch)
        loss.block_until_ready()

    _, l0 = step_loom(params, *batch)
    _, j0 = step_jax({k: jnp.asarray(v) for k, v in params.items()}, *jbatch)
    np.testing.assert_allclose(float(l0), float(j0), rtol=1e-5)
    times: dict[str, list[float]] = {"loom": [], "jax": []}
    for fn in (run_loom, run_jax):
        for _ in range(20):
            fn()
    for _ in range(repeat):
        for name, fn in (("loom", run_loom), ("jax", run_jax)):
            t = time.perf_counter()
            for _ in range(number):
                fn()
            times[name].append((time.perf_counter() - t) / number)
    print(f"(c) one training step of examples/digits_mlp.py (64-64-10 MLP, batch 32, value_and_grad + SGD under "
          f"jit), {number} steps per round")
    row("time per step", times["loom"], times["jax"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds per measurement")
    parser.add_argument("--calls", type=int, default=2000, help="calls per round in (b)")
    parser.add_argument("--steps", type=int, default=200, help="training steps per round in (c)")
    parser.add_argument("--profile", action="store_true", help="cProfile loom's trace+compile in (a)")
    parser.add_argument("--only", choices=["a", "b", "c"], help="run one part")
    parser.add_argument("--quick", action="store_true", help="100 layers in (a), 5 rounds, 200 calls, 20 steps")
    args = parser.parse_args(argv)
    global LAYERS
    if args.quick:
        LAYERS, args.repeat, args.calls, args.steps = 100, 5, 200, 20
    RECORD.settings = {"layers": LAYERS, **{k: v for k, v in vars(args).items() if k not in ("quick", "profile")}}
    import jax
    jax.config.update("jax_platforms", "cpu")
    print(f"machine: {machine()}")
    print(f"command: python benchmarks/frontend.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    if args.only in (None, "a"):
        bench_compile(args.repeat, args.profile)
    if args.only in (None, "b"):
        bench_calls(args.repeat, args.calls)
    if args.only in (None, "c"):
        bench_training(args.repeat, args.steps)
    RECORD.write()


if __name__ == "__main__":
    main()
