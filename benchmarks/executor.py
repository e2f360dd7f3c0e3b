"""The compiled executor against its peers, in one run.

    python benchmarks/executor.py                       # all three parts
    python benchmarks/executor.py --matmul-size 1024    # smaller matmuls on a slow machine
    python benchmarks/executor.py --blas-threads 1      # OpenBLAS threads (set before numpy loads)
    python benchmarks/executor.py --quick               # small sizes, few rounds (a smoke run)

(a) A chain of 1000 small elementwise ops (add, multiply, subtract, maximum on 16x16 float32,
    one op consuming the previous result and one of three inputs), exported from JAX: loom's
    compiled executor vs the same numpy calls written out by hand (straight-line code, no loop)
    vs jax.jit on CPU. Per-op overhead is (loom - numpy) / 1000.
(b) A chain of matmuls (x @ w1 @ w2 @ w3 @ w4), float32 N x N: loom vs bare numpy.
(c) An MLP forward pass exported from JAX (784-512-512-10, relu, log_softmax) at batch 1 and 256:
    loom vs jax.jit.
(d) loom.jit's per-call overhead on a small function vs jax.jit's.

Contenders run round-robin (one call each per round), so a change in the machine's load affects
all alike; each row gives the median and the minimum over the rounds, after warm-up. The run
writes benchmarks/results/executor-DATE.json with every round's time (`loom bench report`).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable

if __name__ == "__main__" and "--blas-threads" in sys.argv:  # must precede the first numpy import
    _n = sys.argv[sys.argv.index("--blas-threads") + 1]
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = _n

import numpy as np  # noqa: E402
from bench_common import Record, cpu_name, fmt, load_average  # noqa: E402

import loom.ir  # noqa: E402
from loom.runtime.executable import compile as loom_compile  # noqa: E402


def machine() -> str:
    cpu = cpu_name()
    import jax
    blas = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    load = load_average()
    return (f"{cpu}, {os.cpu_count()} cores, load average {load:.1f}, Python {platform.python_version()}, "
            f"numpy {np.__version__} (OpenBLAS threads: {blas}), jax {jax.__version__}")


RECORD = Record("executor", {})


def race(case: str, contenders: dict[str, Callable[[], object]], repeat: int, number: int = 1,
         ) -> dict[str, tuple[float, float]]:
    """{name: (median, min) seconds per call}, the contenders run round-robin; every round's time
    per call goes to RECORD under `case`."""
    for fn in contenders.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, fn in contenders.items():
            t = time.perf_counter()
            for _ in range(number):
                fn()
            times[name].append((time.perf_counter() - t) / number)
    RECORD.add_all(case, times)
    return {name: (statistics.median(ts), min(ts)) for name, ts in times.items()}


def lower(fn, *args) -> str:
    import jax
    return jax.jit(fn).lower(*args).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)


# (a) ------------------------------------------------------------------------------------------------

CHAIN = ("add", "multiply", "subtract", "maximum")


def elementwise_chain(n_ops: int, repeat: int) -> dict:
    import jax
    import jax.numpy as jnp
    rs = np.random.RandomState(0)
    a = rs.uniform(0.5, 0.9, (16, 16)).astype(np.float32)
    b = rs.uniform(-1, 1, (16, 16)).astype(np.float32)
    c = rs.uniform(-1, 1, (16, 16)).astype(np.float32)
    jax_ops = {"add": jnp.add, "multiply": jnp.multiply, "subtract": jnp.subtract, "maximum": jnp.maximum}

    def chain(a, b, c):
        y, inputs = a, (a, b, c)
        for i in range(n_ops):
            y = jax_ops[CHAIN[i % 4]](y, inputs[i % 3])
        return y

    text = lower(chain, a, b, c)
    module = loom.ir.parse(text)
    n_module_ops = sum(1 for op in module.walk() if op.name.startswith("stablehlo."))
    exe = loom_compile(module)

    # The same numpy calls, written out as straight-line code.
    lines = ["def numpy_chain(a, b, c):", "    y = a"]
    names = ("a", "b", "c")
    for i in range(n_ops):
        lines.append(f"    y = np.{CHAIN[i % 4]}(y, {names[i % 3]})")
    lines.append("    return y")
    scope: dict = {"np": np}
    exec("\n".join(lines), scope)
    numpy_chain = scope["numpy_chain"]
    # The same with the functions bound to global names first (`add = np.add`), as loom's
    # generated code does: what remains between it and loom is loom's per-call cost.
    bound = {f"np_{name}": getattr(np, name) for name in CHAIN}
    exec("\n".join(lines).replace("def numpy_chain", "def bound_chain").replace("np.", "np_"), bound)
    bound_chain = bound["bound_chain"]

    jitted = jax.jit(chain)
    jitted(a, b, c).block_until_ready()
    expected = numpy_chain(a, b, c)
    assert np.allclose(exe(a, b, c), expected, rtol=1e-5, atol=1e-5)
    assert np.allclose(np.asarray(jitted(a, b, c)), expected, rtol=1e-4, atol=1e-4)

    times = race(f"(a) chain of {n_ops} elementwise ops",
                 {"loom": lambda: exe(a, b, c), "numpy": lambda: numpy_chain(a, b, c),
                  "numpy_bound": lambda: bound_chain(a, b, c),
                  "jax": lambda: jitted(a, b, c).block_until_ready()}, repeat, number=5)
    return {"n": n_ops, "module_ops": n_module_ops, **times}


# (b) ------------------------------------------------------------------------------------------------

def matmul_chain(size: int, depth: int, repeat: int) -> dict:
    rs = np.random.RandomState(1)
    x = rs.randn(size, size).astype(np.float32)
    ws = [(rs.randn(size, size) / np.sqrt(size)).astype(np.float32) for _ in range(depth)]

    def chain(x, *ws):
        for w in ws:
            x = x @ w
        return x

    exe = loom_compile(lower(chain, x, *ws))

    def bare(x, *ws):
        for w in ws:
            x = np.matmul(x, w)
        return x

    assert np.allclose(exe(x, *ws), bare(x, *ws), rtol=1e-3, atol=1e-3)
    times = race(f"(b) {depth} matmuls of {size}x{size}", {"loom": lambda: exe(x, *ws),
                                                              "numpy": lambda: bare(x, *ws)}, repeat)
    return {"size": size, "depth": depth, **times}


# (c) ------------------------------------------------------------------------------------------------

def mlp(batch: int, repeat: int) -> dict:
    import jax
    rs = np.random.RandomState(2)
    sizes = (784, 512, 512, 10)
    params = []
    for m, n in zip(sizes[:-1], sizes[1:]):
        params += [(rs.randn(m, n) / np.sqrt(m)).astype(np.float32), (rs.randn(n) * 0.1).astype(np.float32)]
    x = rs.randn(batch, sizes[0]).astype(np.float32)

    def forward(x, w1, b1, w2, b2, w3, b3):
        h = jax.nn.relu(x @ w1 + b1)
        h = jax.nn.relu(h @ w2 + b2)
        return jax.nn.log_softmax(h @ w3 + b3)

    def by_hand(x, w1, b1, w2, b2, w3, b3):  # the same computation written directly in numpy
        h = np.maximum(x @ w1 + b1, 0)
        h = np.maximum(h @ w2 + b2, 0)
        z = h @ w3 + b3
        z = z - z.max(axis=-1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))

    exe = loom_compile(lower(forward, x, *params))
    jitted = jax.jit(forward)
    assert np.allclose(exe(x, *params), np.asarray(jitted(x, *params)), rtol=1e-4, atol=1e-4)
    assert np.allclose(exe(x, *params), by_hand(x, *params), rtol=1e-4, atol=1e-4)
    number = 20 if batch < 16 else 2
    times = race(f"(c) MLP forward, batch {batch}", {"loom": lambda: exe(x, *params),
                                                      "numpy": lambda: by_hand(x, *params),
                  "jax": lambda: jitted(x, *params).block_until_ready()}, repeat, number)
    return {"batch": batch, **times}


def jit_overhead(repeat: int) -> dict:
    """Steady-state cost of calling a jitted small function (x * y + 1 on float32[4]): loom.jit with
    numpy arrays, loom.jit with torch tensors (torch backend, CPU), jax.jit with jax arrays and with
    numpy arrays."""
    import jax
    import jax.numpy as jnp

    import loom
    x = np.ones(4, np.float32)
    y = np.full(4, 2.0, np.float32)

    def f(a, b):
        return a * b + 1.0

    lf, jf = loom.jit(f), jax.jit(f)
    jx, jy = jnp.asarray(x), jnp.asarray(y)
    contenders = {"loom.jit (numpy arrays)": lambda: lf(x, y),
                  "jax.jit (jax arrays)": lambda: jf(jx, jy).block_until_ready(),
                  "jax.jit (numpy arrays)": lambda: jf(x, y).block_until_ready()}
    try:
        import torch
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        contenders["loom.jit (torch tensors)"] = lambda: lf(tx, ty)
    except ImportError:
        pass
    np.testing.assert_allclose(np.asarray(lf(x, y)), np.asarray(jf(jx, jy)))
    return race("(d) jitted call overhead", contenders, repeat, number=2000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", type=int, default=1000)
    parser.add_argument("--matmul-size", type=int, default=2048)
    parser.add_argument("--matmul-depth", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--blas-threads", type=int, default=None, help="OPENBLAS_NUM_THREADS for this run")
    parser.add_argument("--quick", action="store_true", help="200 ops, 512x512 matmuls, 5 rounds (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.ops, args.matmul_size, args.repeat = 200, 512, 5
    RECORD.settings = {key: value for key, value in vars(args).items() if key != "quick"}
    print(f"machine: {machine()}")

    r = elementwise_chain(args.ops, args.repeat)
    print(f"\n(a) chain of {r['n']} elementwise ops on float32[16,16] ({r['module_ops']} StableHLO ops in the module)")
    labels = {"loom": "loom", "numpy": "numpy (np.add(...) written out)",
              "numpy_bound": "numpy (names pre-bound)", "jax": "jax.jit"}
    for name, label in labels.items():
        med, best = r[name]
        print(f"  {label:32s} {fmt(med):>10s} per call (min {fmt(best)}), {med / r['n'] * 1e6:.3f} us per op")
    for peer in ("numpy", "numpy_bound"):
        overhead = (r["loom"][0] - r[peer][0]) / r["n"]
        overhead_min = (r["loom"][1] - r[peer][1]) / r["n"]
        print(f"  loom per-op overhead over {labels[peer]}: {overhead * 1e6:+.3f} us "
              f"(from minima {overhead_min * 1e6:+.3f} us); loom/numpy = {r['loom'][0] / r[peer][0]:.3f}x")
    print(f"  loom/jax = {r['loom'][0] / r['jax'][0]:.1f}x")
    for peer in ("numpy", "numpy_bound", "jax"):
        RECORD.ratio(f"(a) chain of {r['n']} elementwise ops", "loom", peer)

    r = matmul_chain(args.matmul_size, args.matmul_depth, max(5, args.repeat // 2))
    print(f"\n(b) chain of {r['depth']} matmuls, float32[{r['size']},{r['size']}]")
    for name in ("loom", "numpy"):
        med, best = r[name]
        gflops = 2 * r["size"] ** 3 * r["depth"] / med / 1e9
        print(f"  {name:6s} {fmt(med):>10s} per call (min {fmt(best)}), {gflops:.1f} GFLOP/s")
    print(f"  loom/numpy = {r['loom'][0] / r['numpy'][0]:.3f}x (from minima {r['loom'][1] / r['numpy'][1]:.3f}x)")
    RECORD.ratio(f"(b) {r['depth']} matmuls of {r['size']}x{r['size']}", "loom", "numpy")

    print("\n(c) MLP forward 784-512-512-10 (relu, log_softmax), exported from JAX; numpy: written by hand")
    for batch in (1, 256):
        r = mlp(batch, args.repeat)
        (lm, lb), (nm, nb), (jm, jb) = r["loom"], r["numpy"], r["jax"]
        print(f"  batch {batch:4d}: loom {fmt(lm)} (min {fmt(lb)}), numpy {fmt(nm)} (min {fmt(nb)}), "
              f"jax.jit {fmt(jm)} (min {fmt(jb)})")
        print(f"              loom/jax = {lm / jm:.2f}x (minima {lb / jb:.2f}x), loom/numpy = {lm / nm:.2f}x "
              f"(minima {lb / nb:.2f}x)")
        for peer in ("numpy", "jax"):
            RECORD.ratio(f"(c) MLP forward, batch {batch}", "loom", peer)

    r = jit_overhead(max(5, args.repeat // 3))
    print("\n(d) jitted call overhead: x * y + 1 on float32[4], steady state")
    for name, (med, best) in r.items():
        print(f"  {name:28s} {fmt(med):>10s} per call (min {fmt(best)})")
    jax_med = r["jax.jit (jax arrays)"][0]
    print(f"  loom (numpy arrays) / jax (jax arrays) = {r['loom.jit (numpy arrays)'][0] / jax_med:.2f}x")
    RECORD.ratio("(d) jitted call overhead", "loom.jit (numpy arrays)", "jax.jit (jax arrays)")
    RECORD.write()


if __name__ == "__main__":
    main()
