"""SPMD partitioning: loom's partitioned programs against XLA's, in one run (8 fake CPU devices).

    python benchmarks/spmd_partitioning.py                 # the corpus, then a ~2,000-op program
    python benchmarks/spmd_partitioning.py --layers 200 --repeat 5
    python benchmarks/spmd_partitioning.py --quick         # the corpus, then a 40-layer program once

1. Communication: for every program of the sharded-program corpus (tests/transforms/spmd_corpus),
   the bytes per device moved by loom's partitioned program and by XLA's compiled one, counted
   the same way (each collective once; all_reduce 2(n-1)/n V, all_gather (n-1)/n x result,
   reduce_scatter (n-1) x result, all_to_all (n-1)/n V, collective_permute V). JAX lowers and XLA
   compiles each program here, in this run.
2. Partitioning time of a deep MLP on a 2 x 4 mesh (about 2,000 StableHLO ops, the layers'
   weights alternately column- and row-split): loom's parse + partition of JAX's text against
   JAX's lower + XLA's compile of the same function.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import sys
import time

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "transforms"), str(ROOT / "tests" / "transforms" / "spmd_corpus")]

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from bench_common import cpu_name, spread, write_record  # noqa: E402
from generate import PROGRAMS, _inputs, count_hlo_bytes  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402
from spmd_run import collective_bytes  # noqa: E402

import loom  # noqa: E402
from loom.sharding.partitioning import partition  # noqa: E402


def _mesh(shape, names):
    return jax.make_mesh(shape, names, devices=jax.devices()[:int(np.prod(shape))],
                         axis_types=(jax.sharding.AxisType.Auto,) * len(shape))


def communication() -> list[dict]:
    rows = []
    rng = np.random.default_rng(0)
    for name, fn, (shape, names), args, out_specs in PROGRAMS:
        mesh = _mesh(shape, names)
        ins = tuple(NamedSharding(mesh, spec) for _, _, spec in args)
        outs = jax.tree.map(lambda s, m=mesh: NamedSharding(m, s), out_specs, is_leaf=lambda s: isinstance(s, P))
        with jax.set_mesh(mesh):
            lowered = jax.jit(fn, in_shardings=ins, out_shardings=outs).lower(*_inputs(rng, args, name))
            text = lowered.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
            xla = count_hlo_bytes(lowered.compile().as_text(), dict(zip(names, shape)))
        ours = collective_bytes(partition(loom.ir.parse(text)))
        rows.append({"program": name, "loom_bytes": ours, "xla_bytes": xla})
        print(f"  {name:28s} loom {ours:8.0f} B   XLA {xla:8.0f} B   {'ok' if ours <= xla else 'MORE'}")
    return rows


def deep_mlp(layers: int):
    """A residual MLP of `layers` layers (an even number) over a 2 x 4 mesh (Megatron: columns
    then rows), the batch split by x."""
    mesh = _mesh((2, 4), ("x", "y"))
    d = 64
    def f(x, *ws):
        for w_columns, w_rows in zip(ws[::2], ws[1::2]):
            x = x + 0.5 * jnp.tanh(jnp.tanh(x @ w_columns) @ w_rows)
        return jnp.sum(x * x)
    specs = [P("x", None)] + [P(None, "y") if i % 2 == 0 else P("y", None) for i in range(layers)]
    shapes = [(16, d)] + [(d, 2 * d) if i % 2 == 0 else (2 * d, d) for i in range(layers)]
    args = [np.ones(s, np.float32) for s in shapes]
    jf = jax.jit(f, in_shardings=tuple(NamedSharding(mesh, s) for s in specs), out_shardings=NamedSharding(mesh, P()))
    return jf, args


def timing(layers: int, repeat: int) -> dict:
    jf, args = deep_mlp(layers)
    text = jf.lower(*args).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
    n_ops = sum(1 for op in loom.ir.parse(text).walk()) - 1
    loom_times, xla_times = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        local = partition(loom.ir.parse(text))
        loom_times.append(time.perf_counter() - start)
        jax.clear_caches()
        start = time.perf_counter()
        compiled = jf.lower(*args).compile()
        xla_times.append(time.perf_counter() - start)
    loom_bytes = collective_bytes(local)
    xla_bytes = count_hlo_bytes(compiled.as_text(), {"x": 2, "y": 4})
    ours, theirs = spread(loom_times), spread(xla_times)
    print(f"  {n_ops} ops: loom parse + partition {ours['median']:.3f} s ({ours['min']:.3f}-{ours['max']:.3f}), "
          f"JAX lower + XLA compile {theirs['median']:.3f} s ({theirs['min']:.3f}-{theirs['max']:.3f}); "
          f"XLA / loom {theirs['median'] / ours['median']:.2f}x")
    print(f"  communication: loom {loom_bytes:.0f} B, XLA {xla_bytes:.0f} B per device")
    return {"ops": n_ops, "layers": layers, "loom_seconds": loom_times, "xla_seconds": xla_times,
            "loom_bytes": loom_bytes, "xla_bytes": xla_bytes}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=480, help="layers of the timed MLP (about 4 ops each)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="a 40-layer program, timed once")
    args = ap.parse_args()
    if args.quick:
        args.layers, args.repeat = 40, 1
    print(f"machine: {platform.machine()} {cpu_name()}, {os.cpu_count()} CPUs; jax {jax.__version__}")
    print("communication per device (loom vs XLA):")
    rows = communication()
    more = [r["program"] for r in rows if r["loom_bytes"] > r["xla_bytes"]]
    print(f"  loom moves no more than XLA on {len(rows) - len(more)} of {len(rows)} programs; more on: {more}")
    print("partitioning time:")
    t = timing(args.layers, args.repeat)
    path = write_record("spmd_partitioning", {"communication": rows, "partitioning_time": t})
    print(f"record: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
