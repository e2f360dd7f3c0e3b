"""decompose-collective-matmul's running time on a 10,000-op partitioned program, against the
partitioning step that makes that program (loom's `partition`) and, unless --quick, JAX's lower +
XLA's compile of the same function (8 fake CPU devices; XLA's compile runs its own SPMD
partitioner, windowed-einsum decisions included, and every other pass, so it is the whole
compile, not one pass).

    python benchmarks/overlap_pass.py            # 182 blocks (~10,000 ops), 7 rounds, XLA peer
    python benchmarks/overlap_pass.py --quick    # the same program, 3 rounds, no XLA peer

The program: `blocks` pre-norm, sequence-parallel MLP blocks (layer norm, x @ w1, tanh-GELU,
@ w2, residual; x split by rows over the mesh's "y" axis of 4, w1 by columns, w2 by rows) on a
2 x 4 mesh, lowered by JAX and partitioned by loom: each block is ~55 ops with two candidates, an
all_gather feeding a dot and a dot feeding a reduce_scatter. Timed, each round on a fresh copy:
the pass alone (mode=on; mode=auto with threshold-bytes=0, which prices every candidate with the
cost model) and with the pass manager's verifier after it, and `partition` of the annotated
program. The target is under 1 s for the pass.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from bench_common import Record, cpu_name, fmt, load_average  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import loom  # noqa: E402
from loom.rewrite.pass_manager import PassManager  # noqa: E402
from loom.sharding.partitioning import partition  # noqa: E402

D = 64


def program(blocks: int):
    """The jitted function and its arguments (see the module's doc)."""
    mesh = jax.make_mesh((2, 4), ("x", "y"), devices=jax.devices()[:8],
                         axis_types=(jax.sharding.AxisType.Auto,) * 2)

    def f(x, *ws):
        for w1, w2, g in zip(ws[::3], ws[1::3], ws[2::3]):
            mu = jnp.mean(x, axis=-1, keepdims=True)
            var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
            h = (x - mu) * jax.lax.rsqrt(var + 1e-5) * g
            x = x + jax.nn.gelu(h @ w1, approximate=True) @ w2
        return x

    specs = [P("y", None)] + [P(None, "y"), P("y", None), P()] * blocks
    shapes = [(32, D)] + [(D, 4 * D), (4 * D, D), (D,)] * blocks
    jf = jax.jit(f, in_shardings=tuple(NamedSharding(mesh, s) for s in specs),
                 out_shardings=NamedSharding(mesh, P("y", None)))
    return jf, [np.ones(s, np.float32) for s in shapes]


def timed(fn, prepare, repeat: int) -> list[float]:
    """`fn(prepare())` `repeat` times, only `fn` timed."""
    times = []
    for _ in range(repeat):
        arg = prepare()
        start = time.perf_counter()
        fn(arg)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=182, help="MLP blocks (about 55 partitioned ops each)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="3 rounds, no XLA peer (a smoke run)")
    args = ap.parse_args()
    repeat = 3 if args.quick else args.repeat
    print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs, load {load_average():.1f}; jax {jax.__version__}")

    jf, inputs = program(args.blocks)
    text = jf.lower(*inputs).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
    annotated = loom.ir.parse(text)
    partitioned_text = str(partition(loom.ir.parse(text)))
    partitioned = loom.ir.parse(partitioned_text)
    names = [op.name for op in partitioned.walk()]
    n_ops = len(names) - 1
    candidates = names.count("stablehlo.all_gather") + names.count("stablehlo.reduce_scatter")
    print(f"program: {args.blocks} blocks, {n_ops} partitioned ops, {candidates} candidates "
          f"(all_gather / reduce_scatter next to a dot)")

    fresh = lambda: loom.ir.parse(partitioned_text)  # noqa: E731
    contenders = {
        "pass mode=on": (PassManager.parse("builtin.module(decompose-collective-matmul{mode=on})", verify=False).run,
                         fresh),
        "pass mode=on + verify": (PassManager.parse("builtin.module(decompose-collective-matmul{mode=on})").run,
                                  fresh),
        "pass mode=auto (cost model)": (PassManager.parse(
            "builtin.module(decompose-collective-matmul{mode=auto threshold-bytes=0})", verify=False).run, fresh),
        "loom partition": (partition, lambda: annotated.clone()),
    }
    times = {name: timed(fn, prepare, repeat) for name, (fn, prepare) in contenders.items()}
    out = fresh()
    contenders["pass mode=on"][0](out)
    left = sum(op.name in ("stablehlo.all_gather", "stablehlo.reduce_scatter") for op in out.walk())
    loops = sum(op.name == "stablehlo.while" for op in out.walk())
    auto = fresh()
    contenders["pass mode=auto (cost model)"][0](auto)
    auto_loops = sum(op.name == "stablehlo.while" for op in auto.walk())
    print(f"mode=on: {loops} loops, {left} candidates left, {sum(1 for _ in out.walk()) - 1} ops; "
          f"mode=auto on h200: {auto_loops} loops (these dots are too small to hide a transfer)")
    if not args.quick:
        def xla_compile(_):
            jax.clear_caches()
            jf.lower(*inputs).compile()
        times["JAX lower + XLA compile"] = timed(xla_compile, lambda: None, min(repeat, 3))

    case = f"{n_ops}-op program"
    record = Record("overlap_pass", {"blocks": args.blocks, "ops": n_ops, "candidates": candidates,
                                     "repeat": repeat, "quick": args.quick, "loops_mode_on": loops,
                                     "loops_mode_auto_h200": auto_loops})
    record.add_all(case, times)
    for name, ts in times.items():
        print(f"  {name:30s} median {fmt(record.median(case, name))} "
              f"({fmt(min(ts))} - {fmt(max(ts))}, {len(ts)} rounds)")
    for peer in [p for p in ("loom partition", "JAX lower + XLA compile") if p in times]:
        print(f"  {peer} / pass mode=on: {record.ratio(case, 'pass mode=on', peer):.2f}x")
    verdict = "under" if record.median(case, "pass mode=on") < 1.0 else "OVER"
    print(f"  pass time {verdict} the 1 s target")
    record.write()


if __name__ == "__main__":
    main()
