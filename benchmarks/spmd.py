"""loom's many-device work against its peers, in one script with three sections (all by default):

    python benchmarks/spmd.py                      # every section at full size
    python benchmarks/spmd.py --quick              # every section, small
    python benchmarks/spmd.py --partitioning       # only the partitioner vs XLA
    python benchmarks/spmd.py --local --distributed --sizes-mib 1 --repeat 5

Each run writes one record, benchmarks/results/spmd-YYYYMMDD-HHMM.json, with a key per section run.

1. `--partitioning` (8 fake CPU devices): for every program of the sharded-program corpus
   (tests/transforms/spmd_corpus), the bytes per device moved by loom's partitioned program and
   by XLA's compiled one, counted the same way (each collective once; all_reduce 2(n-1)/n V,
   all_gather (n-1)/n x result, reduce_scatter (n-1) x result, all_to_all (n-1)/n V,
   collective_permute V); JAX lowers and XLA compiles each program in this run. Then the
   partitioning time of a deep MLP on a 2 x 4 mesh (about 2,000 StableHLO ops at `--layers 480`,
   the layers' weights alternately column- and row-split): loom's parse + partition of JAX's text
   against JAX's lower + XLA's compile of the same function.
2. `--local`: collectives between partitions as threads in one process (loom.runtime.local), a
   float32 operand of each size per partition, against a numpy copy of the same bytes:
   - `all_reduce` / `all_gather` / `reduce_scatter`: the ThreadCommunicator's collective, every
     partition in one group, run by persistent threads (one per partition) on one communicator; a
     round is timed from the moment the last thread enters the collective to the moment the last
     one has its result (each thread stamps both; the last round's result is dropped before the
     next round, so the communicator may hand its array out again). `..., from the release`: the
     same rounds timed by the benchmark's thread from its release of the threads (a barrier) to
     their return to it, which adds waking the threads twice, as no collective in a program does.
   - `numpy copy`: the bytes the collective moves, copied by numpy in one thread into new arrays:
     for each of the N partitions, the bytes it moves by the counting convention of section 1
     (per device, each collective once: all_reduce 2(N-1)/N x V, all_gather (N-1)/N x result =
     (N-1) x V, reduce_scatter (N-1) x result = (N-1)/N x V; V the operand), taken from the other
     partitions' operands. The bar: the collective takes no longer than this copy (its ratio <= 1).
   - `numpy copy, reused`: the same copy into arrays allocated once (no page faults): the copy
     alone, a stricter bar than the target's.
   - `run_spmd all_reduce`: the all_reduce as a per-device program run by run_spmd (the round
     includes starting the threads and the call into the program).
3. `--distributed`: loom's path, a per-device program with one collective (`stablehlo.all_reduce`
   with an add reducer, `stablehlo.all_gather`, `stablehlo.reduce_scatter`, over all partitions,
   as JAX's shard_map lowering writes them) run by `loom.runtime.distributed.run_partitioned` (the
   compiled program, the collective kernel, the TorchCommunicator, torch.distributed with gloo on
   127.0.0.1), against the torch.distributed call made directly on preallocated tensors. The
   direct all_reduce is in place, so loom's runs with its argument donated (`donate_argnums`: the
   caller does not read it again), which it then reduces in place too (both operands are restored
   before each call, untimed); an operand the program or its caller still reads is copied first
   (checked once per size, not timed). The size is the
   operand's, per process (float32). A third contender, the control, is the direct call once
   more on tensors of its own: its ratio to the first says how far two runs of one and the same
   call differ in this run (on two busy cores, by up to ~10% at 1 MiB), which a ratio of loom's
   must be read against. Each timed call starts after a barrier; the calls of the contenders
   take turns (and which goes first rotates), so a change in the machine's load hits all; a
   call's time is the slowest process's. Warm-up calls are not timed. `--distributed-repeat`
   rounds (60) are timed at the largest size, more at smaller ones (`rounds_at`). The ratio is loom's median over
   torch's; "paired" is the median of the rounds' own ratios (each loom call against the torch
   call next to it), which a drift in the machine's load moves less; it is printed with its 95%
   bootstrap interval (the rounds resampled), and so is the control's. The bar (loom at most 10%
   over torch) is shown met in a cell when the upper end of loom's interval is at most 1.10; the
   control's interval says whether the run resolves differences of that size at all. "loom alone"
   is loom's own work per call: the same run_partitioned with the torch.distributed calls it makes
   replaced by ones that return at once (median of 2,000 calls, the slowest process's).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import socket
import statistics
import sys
import threading
import time
from typing import Any

import numpy as np

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"  # before jax is imported (section 1)

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT), str(ROOT / "tests" / "transforms"),
                str(ROOT / "tests" / "transforms" / "spmd_corpus")]

from bench_common import cpu_name, fmt, load_average, spread, write_record  # noqa: E402

MIB = 1 << 20
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")


# 1. The partitioner against XLA's ------------------------------------------------------------

def _mesh(shape, names):
    import jax
    return jax.make_mesh(shape, names, devices=jax.devices()[:int(np.prod(shape))],
                         axis_types=(jax.sharding.AxisType.Auto,) * len(shape))


def communication() -> list[dict]:
    import jax
    from generate import PROGRAMS, _inputs, count_hlo_bytes
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P
    from spmd_run import collective_bytes

    import loom
    from loom.sharding.partitioning import partition
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
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P
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
    import jax
    from generate import count_hlo_bytes
    from spmd_run import collective_bytes

    import loom
    from loom.sharding.partitioning import partition
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


def partitioning(layers: int, repeat: int) -> dict:
    import jax
    print(f"== partitioning: loom vs XLA (jax {jax.__version__}, 8 fake CPU devices)")
    print("communication per device (loom vs XLA):")
    rows = communication()
    more = [r["program"] for r in rows if r["loom_bytes"] > r["xla_bytes"]]
    print(f"  loom moves no more than XLA on {len(rows) - len(more)} of {len(rows)} programs; more on: {more}")
    print("partitioning time:")
    return {"communication": rows, "partitioning_time": timing(layers, repeat)}


# 2. Collectives of the one-process mesh --------------------------------------------------------

RENDEZVOUS = "rendezvous alone"
SUM = "numpy sum of the operands, one thread"
FLOOR = "one reducer's floor (rendezvous + the sum)"


def time_collective(n: int, elements: int, repeat: int, call: str) -> tuple[list[float], list[float]]:
    """Seconds per round of `call` (one of COLLECTIVES, or RENDEZVOUS) among n persistent threads:
    from the last thread's entry into the collective to the last one's return (each thread stamps
    both), and from the benchmark's release of the threads to their return to it."""
    from loom.runtime.local import ThreadCommunicator
    comm = ThreadCommunicator(n, timeout=60)
    operands = [np.full(elements, p + 1, np.float32) for p in range(n)]
    start, done = threading.Barrier(n + 1), threading.Barrier(n + 1)
    results: list = [None] * n
    entered = [[0.0] * (repeat + 1) for _ in range(n)]
    left = [[0.0] * (repeat + 1) for _ in range(n)]

    def worker(p: int) -> None:
        for i in range(repeat + 1):  # one warm-up round
            results[p] = None  # the last round's result freed before the next (as the copy's are)
            start.wait()
            entered[p][i] = time.perf_counter()
            if call == "all_reduce":
                results[p] = comm.all_reduce(p, operands[p], range(n), "sum")
            elif call == "reduce_scatter":
                results[p] = comm.reduce_scatter(p, operands[p], range(n), 0, "sum")
            elif call == RENDEZVOUS:  # the members meet and are let go, nothing reduced or moved
                comm.combine(p, range(n), operands[p], (RENDEZVOUS,), lambda deposits: None)
            else:
                results[p] = comm.all_gather(p, operands[p], range(n), 0)
            left[p][i] = time.perf_counter()
            done.wait()

    threads = [threading.Thread(target=worker, args=(p,), daemon=True) for p in range(n)]
    for t in threads:
        t.start()
    released = []
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        start.wait()
        done.wait()
        released.append(time.perf_counter() - t0)
    for t in threads:
        t.join()
    expected = n * (n + 1) / 2 if call in ("all_reduce", "reduce_scatter") else None
    if expected is not None and not all(float(r[0]) == expected and float(r[-1]) == expected for r in results):
        raise AssertionError(f"{call} gave a wrong sum")
    joined = [max(left[p][i] for p in range(n)) - max(entered[p][i] for p in range(n)) for i in range(repeat + 1)]
    return joined[1:], released[1:]


def time_run_spmd(n: int, elements: int, repeat: int) -> list[float]:
    t = f"tensor<{elements}xf32>"
    groups = f"dense<[{list(range(n))}]> : tensor<1x{n}xi64>"
    text = f'''"builtin.module"() ({{
  "func.func"() <{{function_type = ({t}) -> {t}, sym_name = "main"}}> ({{
  ^bb0(%x: {t}):
    %0 = "stablehlo.all_reduce"(%x) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = {groups}, use_global_device_ids}}> ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }}) : ({t}) -> {t}
    "func.return"(%0) : ({t}) -> ()
  }}) : () -> ()
}}) {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} : () -> ()
'''  # noqa: E501
    from loom.ir import parse
    from loom.runtime.local import run_spmd
    module = parse(text)
    args = [[np.full(elements, p + 1, np.float32)] for p in range(n)]
    times = []
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        run_spmd(module, args)
        times.append(time.perf_counter() - t0)
    return times[1:]


def moved_elements(call: str, n: int, elements: int) -> int:
    """The elements one partition moves in `call` over n partitions of `elements`-element operands,
    by section 1's convention: all_reduce 2(n-1)/n V, all_gather (n-1)/n x result, reduce_scatter
    (n-1) x result."""
    return {"all_reduce": 2 * (n - 1) * elements // n, "all_gather": (n - 1) * elements,
            "reduce_scatter": (n - 1) * (elements // n)}[call]


def time_copy(n: int, elements: int, repeat: int, call: str, reused: bool = False) -> list[float]:
    """Seconds to copy, in one thread, the bytes `call` moves (`moved_elements`) for each of n
    partitions, from the other partitions' operands, into new arrays (or, `reused`, into arrays
    allocated once)."""
    operands = [np.full(elements, p + 1, np.float32) for p in range(n)]
    size = moved_elements(call, n, elements)
    sources = []  # per partition: the pieces of the others' operands it copies (views)
    for p in range(n):
        pieces, left = [], size
        for q in [*range(p + 1, n), *range(p)]:
            pieces.append(operands[q][:min(left, elements)])
            left -= len(pieces[-1])
        sources.append([piece for piece in pieces if len(piece)])
    targets = [np.empty(size, np.float32) for _ in range(n)] if reused else None
    times = []
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        outs = targets if targets is not None else [np.empty(size, np.float32) for _ in range(n)]
        for pieces, out in zip(sources, outs):
            np.concatenate(pieces, out=out)
        times.append(time.perf_counter() - t0)
        del outs
    return times[1:]


def time_sum(n: int, elements: int, repeat: int) -> list[float]:
    """Seconds to sum the n partitions' operands into one new array in one thread (numpy, in
    group order): the reduction an all_reduce or a reduce_scatter must do, on whichever threads."""
    operands = [np.full(elements, p + 1, np.float32) for p in range(n)]
    times = []
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        out = np.add(operands[0], operands[1])
        for x in operands[2:]:
            np.add(out, x, out=out)
        times.append(time.perf_counter() - t0)
        del out
    return times[1:]


def local(sizes_mib: list[float], partitions: list[int], repeat: int) -> list[dict]:
    print("== local: collectives in one process (threads) vs a numpy copy of the bytes they move (per partition: "
          "all_reduce 2(N-1)/N V, all_gather (N-1) V, reduce_scatter (N-1)/N V)")
    print(f"median of {repeat} rounds (min-max)")
    cases = []
    for mib in sizes_mib:
        elements = int(mib * MIB) // 4
        for n in partitions:
            timings, over_copy = {}, {}
            for call in COLLECTIVES:
                timings[call], timings[f"{call}, from the release"] = time_collective(n, elements, repeat, call)
                timings[f"numpy copy ({call} bytes)"] = time_copy(n, elements, repeat, call)
                timings[f"numpy copy, reused ({call})"] = time_copy(n, elements, repeat, call, reused=True)
            timings["run_spmd all_reduce"] = time_run_spmd(n, elements, repeat)
            # what every collective of the mesh pays before it moves a byte: the threads' meeting
            timings[RENDEZVOUS], _ = time_collective(n, elements, repeat, RENDEZVOUS)
            timings[SUM] = time_sum(n, elements, repeat)
            stats = {k: spread(v) for k, v in timings.items()}
            for call in COLLECTIVES:
                over_copy[call] = stats[call]["median"] / stats[f"numpy copy ({call} bytes)"]["median"]
                over_copy[f"{call} over the reused copy"] = (stats[call]["median"]
                                                             / stats[f"numpy copy, reused ({call})"]["median"])
                over_copy[f"{call}, from the release"] = (stats[f"{call}, from the release"]["median"]
                                                          / stats[f"numpy copy ({call} bytes)"]["median"])
            over_copy["run_spmd all_reduce"] = (stats["run_spmd all_reduce"]["median"]
                                                / stats["numpy copy (all_reduce bytes)"]["median"])
            for call in COLLECTIVES:
                for k in (RENDEZVOUS, SUM):
                    over_copy[f"{k} over the {call} copy"] = (stats[k]["median"]
                                                              / stats[f"numpy copy ({call} bytes)"]["median"])
            # the least a reduction by one member takes: the meeting, then the sum in one thread
            over_copy[FLOOR] = ((stats[RENDEZVOUS]["median"] + stats[SUM]["median"])
                                / stats["numpy copy (reduce_scatter bytes)"]["median"])
            print(f"\n{mib:g} MiB per partition, {n} partitions:")
            for k, s in stats.items():
                ratio = f"  {over_copy[k]:5.2f}x its numpy copy" if k in over_copy else ""
                if f"{k} over the reused copy" in over_copy:
                    ratio += f", {over_copy[f'{k} over the reused copy']:5.2f}x the reused copy"
                if k in (RENDEZVOUS, SUM):
                    ratio = "  " + ", ".join(f"{over_copy[f'{k} over the {call} copy']:.2f}x the {call} copy"
                                             for call in COLLECTIVES)
                print(f"  {k:<34} {fmt(s['median']):>10}  ({fmt(s['min'])} - {fmt(s['max'])}){ratio}")
            print(f"  {FLOOR}: {over_copy[FLOOR]:.2f}x the reduce_scatter copy")
            cases.append({"mib": mib, "partitions": n, "seconds": timings, "median_spread": stats,
                          "over_copy": over_copy})
            sys.stdout.flush()
    return cases


# 3. Collectives over torch.distributed ---------------------------------------------------------

WIDTH = 256  # operands are (rows, 256) float32
REDUCER = ('({\n  ^bb0(%lhs: tensor<f32>, %rhs: tensor<f32>):\n'
           '    %r = "stablehlo.add"(%lhs, %rhs) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
           '    "stablehlo.return"(%r) : (tensor<f32>) -> ()\n  })')


def program(collective: str, rows: int, n: int) -> str:
    """The per-device program: one collective over all `n` partitions on a (rows, 256) operand."""
    t = f"tensor<{rows}x{WIDTH}xf32>"
    out = {"all_reduce": t, "all_gather": f"tensor<{rows * n}x{WIDTH}xf32>",
           "reduce_scatter": f"tensor<{rows // n}x{WIDTH}xf32>"}[collective]
    groups = (f"channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = "
              f"dense<[[{', '.join(map(str, range(n)))}]]> : tensor<1x{n}xi64>, use_global_device_ids")
    attrs = {"all_reduce": groups, "all_gather": f"all_gather_dim = 0 : i64, {groups}",
             "reduce_scatter": f"scatter_dimension = 0 : i64, {groups}"}[collective]
    region = "" if collective == "all_gather" else REDUCER
    return (f'"builtin.module"() ({{\n"func.func"() <{{function_type = ({t}) -> {out}, sym_name = "main"}}> ({{\n'
            f"^bb0(%arg0: {t}):\n  %0 = \"stablehlo.{collective}\"(%arg0) <{{{attrs}}}> {region} : ({t}) -> {out}\n"
            f'  "func.return"(%0) : ({out}) -> ()\n}}) : () -> ()\n}}) {{mhlo.num_partitions = {n} : i32, '
            "mhlo.num_replicas = 1 : i32} : () -> ()\n")


def _direct(collective: str, x: Any, n: int) -> Any:
    """The torch.distributed call on preallocated tensors."""
    import torch
    import torch.distributed as dist
    if collective == "all_reduce":
        return lambda: dist.all_reduce(x)
    if collective == "all_gather":
        out = torch.empty((x.shape[0] * n,) + tuple(x.shape[1:]), dtype=x.dtype)
        return lambda: dist.all_gather_single(out, x)
    out = torch.empty((x.shape[0] // n,) + tuple(x.shape[1:]), dtype=x.dtype)
    return lambda: dist.reduce_scatter_single(out, x)


def _check(collective: str, got: np.ndarray, x: np.ndarray, n: int) -> None:
    """loom's result is torch.distributed's (made here out of place, from a copy)."""
    import torch
    import torch.distributed as dist
    t = torch.from_numpy(x.copy())
    if collective == "all_reduce":
        dist.all_reduce(t)
        want = t
    elif collective == "all_gather":
        want = torch.empty((x.shape[0] * n, x.shape[1]))
        dist.all_gather_single(want, t)
    else:
        want = torch.empty((x.shape[0] // n, x.shape[1]))
        dist.reduce_scatter_single(want, t)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6, err_msg=collective)


CONTENDERS = ("loom", "torch.distributed", "torch.distributed, again")
CONTROL = CONTENDERS[2]  # the direct call once more: how far two runs of one contender differ here
_TRANSPORT_CALLS = ("all_reduce", "all_gather_single", "all_gather_into_tensor", "reduce_scatter_single",
                    "reduce_scatter_tensor")


def _loom_alone(text: str, operand: np.ndarray, donate: tuple, calls: int = 2000) -> float:
    """The median seconds of loom's own work per call of `text`: run_partitioned with the
    torch.distributed calls it makes replaced by ones that return at once (no transfer, no wait)."""
    import torch.distributed as dist

    from loom.runtime.distributed import run_partitioned
    saved = {name: getattr(dist, name) for name in _TRANSPORT_CALLS if hasattr(dist, name)}
    times = []
    try:
        for name in saved:
            setattr(dist, name, lambda *args, **kwargs: None)
        for _ in range(calls):
            start = time.perf_counter()
            run_partitioned(text, [operand], donate_argnums=donate)
            times.append(time.perf_counter() - start)
    finally:
        for name, fn in saved.items():
            setattr(dist, name, fn)
    return statistics.median(times[calls // 4:])


def paired_interval(a: list[float], b: list[float], resamples: int = 4000) -> tuple[float, float, float]:
    """The median of the rounds' own ratios a[i] / b[i] and its 95% bootstrap interval (the
    rounds resampled with replacement, a fixed seed: the same timings give the same interval)."""
    ratios = np.asarray(a) / np.asarray(b)
    picks = np.random.default_rng(0).integers(0, len(ratios), (resamples, len(ratios)))
    low, high = np.percentile(np.median(ratios[picks], axis=1), [2.5, 97.5])
    return float(np.median(ratios)), float(low), float(high)


def rounds_at(mib: float, sizes_mib: list[float], repeat: int) -> int:
    """Timed rounds of the distributed calls at `mib`: `repeat` at the largest size and as many
    more at smaller ones as make up the same bytes (at most 16x): a 1 MiB call takes a few
    milliseconds, spread several-fold by the scheduling of the processes, and its median needs
    more rounds than a 16 MiB one's to settle."""
    return repeat * min(16, max(1, round(max(sizes_mib) / mib)))


def _worker(rank: int, n: int, port: int, sizes_mib: list[float], repeat: int, warmup: int, results: Any) -> None:
    import torch
    import torch.distributed as dist

    from loom.runtime.distributed import communicator, initialize, run_partitioned, shutdown
    torch.set_num_threads(1)
    initialize(f"127.0.0.1:{port}", n, rank, timeout_s=300)
    comm = communicator()
    out: dict[str, dict[str, list[float]]] = {}
    for mib in sizes_mib:
        rows = int(mib * 2**20) // (4 * WIDTH)
        x = np.random.default_rng(rank).standard_normal((rows, WIDTH)).astype(np.float32)
        for collective in COLLECTIVES:
            text = program(collective, rows, n)
            operands = {name: x.copy() for name in CONTENDERS}
            _check(collective, run_partitioned(text, [x])[0], x, n)  # an argument the caller holds: copied
            _check(collective, run_partitioned(text, [x.copy()], donate_argnums=(0,))[0], x, n)
            # torch's all_reduce overwrites its tensor: loom's is given its argument to overwrite too,
            # and both get the operand back before each call (untimed): sums of sums would overflow
            donate = (0,) if collective == "all_reduce" else ()
            contenders = {"loom": lambda text=text, b=operands["loom"], d=donate: run_partitioned(text, [b],
                                                                                                 donate_argnums=d),
                          "torch.distributed": _direct(collective, torch.from_numpy(operands["torch.distributed"]), n),
                          CONTROL: _direct(collective, torch.from_numpy(operands[CONTROL]), n)}
            times: dict[str, list[float]] = {name: [] for name in contenders}
            for i in range(warmup + rounds_at(mib, sizes_mib, repeat)):
                order = list(contenders.items())
                for name, call in order[i % 3:] + order[:i % 3]:  # who goes first rotates
                    if donate:
                        np.copyto(operands[name], x)
                    comm.barrier()
                    start = time.perf_counter()
                    call()
                    if i >= warmup:
                        times[name].append(time.perf_counter() - start)
            slowest = torch.tensor([times[name] for name in contenders], dtype=torch.float64)
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
            key = f"{collective}/{mib:g}MiB"
            out[key] = {name: slowest[i].tolist() for i, name in enumerate(contenders)}
            own = torch.tensor([_loom_alone(text, operands["loom"], donate)], dtype=torch.float64)
            dist.all_reduce(own, op=dist.ReduceOp.MAX)
            out[key]["loom alone"] = [float(own)]
    if rank == 0:
        results.put(out)
    comm.barrier()
    shutdown()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(n: int, sizes_mib: list[float], repeat: int, warmup: int, timeout_s: float) -> dict[str, Any]:
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs = mp.start_processes(_worker, args=(n, _free_port(), sizes_mib, repeat, warmup, results), nprocs=n,
                               join=False, start_method="spawn").processes
    try:
        return results.get(timeout=timeout_s)
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()


def distributed(processes: list[int], sizes_mib: list[float], repeat: int, warmup: int,
                timeout_s: float) -> dict[str, Any]:
    print("== distributed: loom's collectives vs the same torch.distributed call (gloo, 127.0.0.1)")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    rows, controls = [], []
    payload: dict[str, Any] = {"setup": {"repeat": repeat, "warmup": warmup, "backend": "gloo", "dtype": "float32",
                                         "operand_mib_per_process": sizes_mib,
                                         "rounds": {f"{mib:g}MiB": rounds_at(mib, sizes_mib, repeat)
                                                    for mib in sizes_mib}},
                               "results": {}}
    print(f"{'processes':>9} {'collective':>14} {'size':>7} {'loom median':>12} {'torch median':>13} "
          f"{'ratio':>6} {'paired [95% interval]':>22} {'control [95% interval]':>22} {'loom alone':>10}")
    for n in processes:
        res = run(n, sizes_mib, repeat, warmup, timeout_s)
        for key, by in res.items():
            collective, size = key.split("/")
            loom_s, torch_s, again_s = (spread(by[name]) for name in CONTENDERS)
            ratio = loom_s["median"] / torch_s["median"]
            paired = paired_interval(by["loom"], by["torch.distributed"])
            control = paired_interval(by[CONTROL], by["torch.distributed"])
            alone = by["loom alone"][0]
            payload["results"][f"{n}/{key}"] = {"processes": n, "collective": collective, "size": size,
                                                **{name: by[name] for name in CONTENDERS},
                                                "loom_spread": loom_s, "torch_spread": torch_s,
                                                "control_spread": again_s,
                                                "ratio_of_medians": ratio,
                                                "ratio_of_minima": loom_s["min"] / torch_s["min"],
                                                "median_of_round_ratios": paired[0],
                                                "median_of_round_ratios_95": paired[1:],
                                                "control_median_of_round_ratios": control[0],
                                                "control_median_of_round_ratios_95": control[1:],
                                                "control_ratio_of_medians": again_s["median"] / torch_s["median"],
                                                "loom_alone_seconds": alone,
                                                "loom_alone_over_torch": alone / torch_s["median"]}
            rows.append(paired)
            controls.append(control)
            print(f"{n:>9} {collective:>14} {size:>7} {fmt(loom_s['median']):>12} {fmt(torch_s['median']):>13} "
                  f"{ratio:>6.3f} {paired[0]:>6.3f} [{paired[1]:.3f}, {paired[2]:.3f}] "
                  f"{control[0]:>6.3f} [{control[1]:.3f}, {control[2]:.3f}] {fmt(alone):>10}", flush=True)
    payload["worst_paired_upper_95"] = max(hi for _, _, hi in rows)
    payload["median_paired"] = statistics.median(med for med, _, _ in rows)
    payload["control_widest_95"] = [min(lo for _, lo, _ in controls), max(hi for _, _, hi in controls)]
    payload["bar_shown_met"] = payload["worst_paired_upper_95"] <= 1.10
    print(f"paired ratio (loom / torch.distributed): median of the cells {payload['median_paired']:.3f}, "
          f"highest upper end of a 95% interval {payload['worst_paired_upper_95']:.3f} (bar: 1.10, "
          f"{'shown met in every cell' if payload['bar_shown_met'] else 'not shown met'}); the control's "
          f"intervals (torch.distributed / itself) span {payload['control_widest_95'][0]:.3f}"
          f"-{payload['control_widest_95'][1]:.3f}")
    return payload


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitioning", action="store_true", help="section 1 (with none named: all three)")
    ap.add_argument("--local", action="store_true", help="section 2")
    ap.add_argument("--distributed", action="store_true", help="section 3")
    ap.add_argument("--layers", type=int, default=480, help="layers of the timed MLP (about 4 ops each)")
    ap.add_argument("--partition-repeat", type=int, default=3, help="timed partitionings (default 3)")
    ap.add_argument("--sizes-mib", type=float, nargs="+", default=[1, 16], help="collective operand sizes")
    ap.add_argument("--partitions", type=int, nargs="+", default=[4, 8], help="threads of the local mesh")
    ap.add_argument("--processes", type=int, nargs="+", default=[2, 4], help="processes of the gloo runs")
    ap.add_argument("--repeat", type=int, default=15, help="timed rounds per collective (default 15)")
    ap.add_argument("--distributed-repeat", type=int, default=60,
                    help="timed rounds per distributed call at the largest size (default 60; more at smaller ones)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed rounds of the distributed calls")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds a distributed run may take")
    ap.add_argument("--no-record", action="store_true", help="print only; write no JSON record")
    ap.add_argument("--quick", action="store_true",
                    help="a 40-layer program timed once; 1 MiB, 8 threads, 2 processes, 5 rounds")
    args = ap.parse_args(argv)
    if args.quick:
        args.layers, args.partition_repeat, args.sizes_mib = 40, 1, [1.0]
        args.partitions, args.processes, args.repeat, args.warmup = [8], [2], 5, 1
        args.distributed_repeat = 5
    every = not (args.partitioning or args.local or args.distributed)
    print(f"machine: {platform.machine()} {cpu_name()}, {os.cpu_count()} CPUs, load average {load_average():.2f}")
    payload: dict[str, Any] = {"quick": args.quick}
    if every or args.partitioning:
        payload["partitioning"] = partitioning(args.layers, args.partition_repeat)
    if every or args.local:
        payload["local"] = {"repeat": args.repeat, "cases": local(args.sizes_mib, args.partitions, args.repeat)}
    if every or args.distributed:
        payload["distributed"] = distributed(args.processes, args.sizes_mib, args.distributed_repeat, args.warmup,
                                             args.timeout)
    if not args.no_record:
        print(f"record: {write_record('spmd', payload).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
