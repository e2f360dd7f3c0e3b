"""Collective matmul measured on real processes: a sequence-parallel transformer MLP, undecomposed
against decomposed + scheduled, on 2 and 4 processes (gloo over a throttled loopback), with the
simulator's predictions.

Per device: x (seq/N x hidden) is all-gathered along the sequence into the first matmul (w1,
hidden x ffn/N), gelu, the second matmul (w2, ffn/N x hidden), and the result reduce-scattered
along the sequence. The programs: loom.shard_map -> loom.jit -> loom.sharding.partition, then
`decompose-collective-matmul{mode=on}` and `schedule-latency-hiding` for the decomposed one (also
reported: decomposed with synchronous permutes, the two-way loops, `bidirectional=true`, and the
two loops fused into one, `fuse=true`: each block of x through both matmuls as it arrives). Each
of N processes (bench_common.spawn_ranks, gloo on 127.0.0.1, one intra-op thread each: torch's
and numpy's BLAS pools, reported) runs its partition; a step is timed from a barrier to its end,
the step time is the slowest rank's. Also measured on the same processes: the compute alone (the
per-device MLP on gathered input), the all_gather and the reduce_scatter alone (their sum: the
communication alone), the link (a ring permute of one shard, with the CPU time it takes, and of 4
bytes), a dot alone and beside a transfer in flight, the shard's permute beside a thread computing
dots, and loom.sim.calibrate's probes. Every figure is timed once per round, round-robin with the
programs (`--steps` rounds), so that a change of the machine's load touches all alike; the tables
give medians with [min .. max].

The MLP's width (ffn) is chosen on the processes so that the communication takes `--comm-ratio`
of the compute: the collectives and the compute at a trial width timed in 7 interleaved rounds,
then again at the width that gives, and snapped to WIDTHS (about sqrt(2) apart), so that runs whose
measured ratios differ by less than ~20% run the same program; `--ffn` fixes it (one per world:
a record's `sizes` rerun its programs).

The link: as root with `unshare` and `tc` (iproute2; the `tbf` qdisc), the script re-runs itself
inside a private network namespace whose loopback is throttled:

    unshare -n sh -c 'ip link set lo up; tc qdisc add dev lo root tbf rate 2gbit burst 512kb latency 100ms; ...'

Elsewhere it says what is missing and runs on the plain loopback.

Predictions: `loom.sim.simulate` of every program on a Machine describing the rig, calibrated in
the same processes: N devices on this machine's C cores (`cores`: compute of ranks running at
once shares them) and one medium, the loopback's tbf bucket, which meters every transfer in flight
(topology "shared"). Peak FLOP/s, memory bandwidth and per-op overhead by loom.sim.calibrate (a
1024^3 matmul, a 64 MiB copy, small numpy calls) on each rank alone (the slowest rank's), slowed
by what the ranks measured together lose beyond the modelled time-slicing (`shared_rates`); the
medium's bandwidth and latency from the timed ring permutes (N shards through the bucket at once);
each collective's own bandwidth (`collective_bandwidth`: gloo's reduce_scatter moves its bytes
~2.5x slower than the permutes) from its time through the cost model's algorithm
(loom.sim.calibrate.effective_bandwidth); and the share of a core a transfer keeps busy
(`transfer_cpu`, the permute's CPU time over its time): compute and the transfers it overlaps
share the cores, both slowed alike (loom.sim.cost.transfer_slowdown). The same programs are also
simulated with the share found from the shard's permute timed beside a thread computing against
alone instead (loom.sim.calibrate.transfer_cpu_from_slowdown), with transfers needing no CPU, and
on the medium alone (every collective at the permutes' rate, transfers needing no CPU): the
effect of each term; the measured slowdowns of a dot beside a transfer and of a permute beside
compute check the shared cores' one factor.

    python benchmarks/overlap.py [--quick] [--plot] [--rate 2gbit] [--worlds 2 4] [--steps 15] [--ffn F ...]

`--plot` records one more step of each program on the processes (the communicator's measured
spans: compute between collectives, collectives and sends on the link lanes) and draws the three
timelines (undecomposed, decomposed, fused) as a PNG with matplotlib, next to their Chrome traces.
Writes a JSON record through bench_common.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]
from bench_common import RESULTS, Record, fmt, load_average, spawn_ranks, time_rounds  # noqa: E402

SHOWN = ("undecomposed", "decomposed + scheduled", "decomposed, fused + scheduled")  # the programs --plot draws
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

# The activations' sizes; the MLP's width (ffn) is chosen on the processes, from a measurement of
# the link and of a dot, so that the communication takes `--comm-ratio` of the compute (the time a
# machine under other load computes changes from run to run, so no fixed width gives a ratio).
SIZES = {"seq": 1024, "hidden": 1024}
QUICK_SIZES = {"seq": 512, "hidden": 512}


# The programs ------------------------------------------------------------------------------------

def mlp_program(world: int, seq: int, hidden: int, ffn: int) -> Any:
    """The partitioned (per-device) program of the sequence-parallel MLP."""
    import loom
    from loom.sharding import Mesh, NamedSharding, P
    from loom.sharding.partitioning import partition
    mesh = Mesh(np.arange(world), ("x",))
    specs = (P("x", None), P(None, "x"), P("x", None))

    def mlp(x, w1, w2):
        h = loom.nn.gelu(loom.lax.all_gather(x, "x", axis=0, tiled=True) @ w1)
        return loom.lax.psum_scatter(h @ w2, "x", scatter_dimension=0, tiled=True)

    body = loom.shard_map(mlp, mesh=mesh, in_specs=specs, out_specs=P("x", None))
    s = lambda spec: NamedSharding(mesh, spec)  # noqa: E731
    jitted = loom.jit(body, in_shardings=tuple(s(p) for p in specs), out_shardings=s(P("x", None)))
    shapes = [(seq, hidden), (hidden, ffn), (ffn, hidden)]
    return partition(jitted.lower(*[np.zeros(sh, np.float32) for sh in shapes]).module)


PIPELINES = {"undecomposed": "", "decomposed, synchronous": "decompose-collective-matmul{mode=on}",
             "decomposed + scheduled": "decompose-collective-matmul{mode=on},schedule-latency-hiding",
             "decomposed two-way + scheduled":
                 "decompose-collective-matmul{mode=on bidirectional=true},schedule-latency-hiding",
             "decomposed, fused + scheduled": "decompose-collective-matmul{mode=on fuse=true},schedule-latency-hiding"}
FUSED = "decomposed, fused + scheduled"


def variants(world: int, sizes: dict[str, int]) -> dict[str, Any]:
    import loom
    from loom.rewrite.pass_manager import PassManager
    base = mlp_program(world, **sizes)
    out = {}
    for name, pipeline in PIPELINES.items():
        m = loom.ir.parse(str(base))
        if pipeline:
            PassManager.parse(f"builtin.module({pipeline})").run(m)
        m.verify()
        out[name] = m
    return out


def local_args(rank: int, world: int, seq: int, hidden: int, ffn: int) -> list[np.ndarray]:
    rng = np.random.default_rng(1000 + rank)
    return [(rng.standard_normal(s) / np.sqrt(hidden)).astype(np.float32)
            for s in ((seq // world, hidden), (hidden, ffn // world), (ffn // world, hidden))]


# One process -----------------------------------------------------------------------------------

def _timed(comm: Any, fn: Any, steps: int, cpu: list[float] | None = None) -> list[float]:
    """`steps` runs of `fn`, each from a barrier; `cpu` collects this process's CPU time (every
    thread's) within each run."""
    times = []
    for _ in range(steps):
        comm.barrier()
        t, c = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - t)
        if cpu is not None:
            cpu.append(time.process_time() - c)
    return times


def _process(rank: int, port: int, world: int, sizes: dict[str, int], steps: int, ratio: float, traced: bool,
             results: Any) -> None:
    out = measure(rank, world, port, sizes, steps, ratio, traced)  # every rank gathers every rank's figures
    if rank == 0:
        results.put(out)


def mlp_compute() -> Any:
    """The per-device MLP on gathered input (loom.jit): the compute of the program, alone."""
    import loom
    return loom.jit(lambda x, w1, w2: loom.nn.gelu(x @ w1) @ w2)


# The widths (per device) the MLP's is chosen from: about sqrt(2) apart, so that two runs whose
# measured ratios differ by less than ~20% most often run the same program
WIDTHS = sorted({int(round(256 * 2 ** (k / 2) / 64)) * 64 for k in range(-4, 11)})


def width(comm: Any, rank: int, world: int, seq: int, hidden: int, ratio: float, rounds: int = 7) -> int:
    """The ffn (one of WIDTHS per device) for which the MLP's communication takes `ratio` of its
    compute: the all_gather and reduce_scatter and the compute at a trial width, warmed up, then
    timed in `rounds` interleaved rounds (every rank at once; medians), then again at the width
    that gives (the compute is not quite linear in the width). Rank 0's choice is everyone's."""
    group = list(range(world))
    x, partial = np.ones((seq // world, hidden), np.float32), np.ones((seq, hidden), np.float32)
    compute = mlp_compute()
    local = 512
    for _ in range(2):
        xg, w1, w2 = (np.ones(s, np.float32) for s in ((seq, hidden), (hidden, local), (local, hidden)))
        fns = {"communication": lambda: (comm.all_gather(rank, x, group, 0),
                                         comm.reduce_scatter(rank, partial, group, 0, "sum")),
               "compute": lambda xg=xg, w1=w1, w2=w2: np.asarray(compute(xg, w1, w2))}
        t = time_rounds(fns, rounds, comm.barrier)
        wanted = local * statistics.median(t["communication"]) / (ratio * statistics.median(t["compute"]))
        local = min(WIDTHS, key=lambda w: abs(np.log(w / wanted)))
    return world * comm.all_gather_object(local, "agreeing on the width")[0]


def calibration_probes(n: int = 1024, copy_bytes: int = 64 << 20) -> dict[str, float]:
    """loom.sim.calibrate's figures, one measurement each: a matmul's FLOP/s, a copy's B/s, one
    small numpy call's seconds."""
    from loom.sim import calibrate
    return {"peak_flops": calibrate.measure_compute(n=n, repeats=1),
            "memory_bandwidth": calibrate.measure_memory(nbytes=copy_bytes, repeats=1),
            "op_overhead": calibrate.measure_op_overhead(calls=1000, repeats=1)}


def measure(rank: int, world: int, port: int, sizes: dict[str, int], steps: int, ratio: float,
            traced: bool) -> dict[str, Any]:
    """Every program, the compute alone, each collective alone, the link and loom.sim.calibrate's
    probes, in `steps` rounds (round-robin, so that a change of the machine's load touches every
    figure alike); the slowest rank's time per step, and every rank's calibration."""
    import torch
    torch.set_num_threads(1)
    from loom.runtime.distributed import PartitionedProgram, communicator, initialize, shutdown
    from loom.sim.calibrate import computing
    from loom.sim.timeline import Timeline
    initialize(f"127.0.0.1:{port}", world, rank, timeout_s=300)
    comm = communicator()
    group = list(range(world))
    sizes = {**sizes, "ffn": sizes.get("ffn") or width(comm, rank, world, sizes["seq"], sizes["hidden"], ratio)}
    args = local_args(rank, world, **sizes)
    programs = {name: PartitionedProgram(m) for name, m in variants(world, sizes).items()}
    outputs = {name: p(args)[0] for name, p in programs.items()}  # also the warm-up
    ref = outputs["undecomposed"]
    values = {name: float(np.max(np.abs(o - ref))) for name, o in outputs.items()}
    # the compute alone: the per-device MLP on the gathered input; the communication alone: the
    # all_gather and the reduce_scatter of the program's sizes, each timed; the link: a ring permute
    # of one shard (every rank sending) and of 4 bytes, with the CPU time they take
    xg = np.concatenate([args[0]] * world)
    compute = mlp_compute()
    partial = np.ones((sizes["seq"], sizes["hidden"]), np.float32)
    ring = [(p, (p + 1) % world) for p in range(world)]
    tiny = np.ones(1, np.float32)
    timed = {**{name: (lambda p=p: p(args)) for name, p in programs.items()},
             "compute": lambda: np.asarray(compute(xg, args[1], args[2])),
             "all_gather": lambda: comm.all_gather(rank, args[0], group, 0),
             "reduce_scatter": lambda: comm.reduce_scatter(rank, partial, group, 0, "sum"),
             "permute shard": lambda: comm.collective_permute(rank, args[0], ring),
             "permute 4 bytes": lambda: comm.collective_permute(rank, tiny, ring)}
    # a dot beside a transfer: the dot timed alone, and while a permute of the unreduced result
    # (longer than the dot) is in flight: how much a transfer's CPU slows the compute it overlaps
    a, b = np.ones((sizes["seq"] // world, sizes["hidden"]), np.float32), np.ones((sizes["hidden"], 256), np.float32)
    beside: list[float] = []

    def dot_beside_a_transfer() -> None:
        transfer = comm.collective_permute_start(rank, partial, ring)
        t = time.perf_counter()
        np.matmul(a, b)
        beside.append(time.perf_counter() - t)
        transfer.wait()

    # and the other way round: a shard's permute while a thread computes dots (the simulator
    # assumes a transfer's rate does not depend on the compute beside it)
    permute_beside: list[float] = []

    def permute_beside_compute() -> None:
        with computing():
            t = time.perf_counter()
            comm.collective_permute(rank, args[0], ring)
            permute_beside.append(time.perf_counter() - t)

    timed |= {"dot": lambda: np.matmul(a, b), "dot beside a transfer": dot_beside_a_transfer,
              "permute shard beside compute": permute_beside_compute}
    for fn in timed.values():
        fn()
    beside.clear()
    permute_beside.clear()
    times: dict[str, list[float]] = {name: [] for name in timed}
    cpu: dict[str, list[float]] = {"permute shard": []}
    # loom.sim.calibrate's probes: every rank at once each round (how fast the ranks compute
    # together), and one rank alone on the cores each round in turn (the figures of one process on a
    # core, which the simulator shares among the ranks), the others waiting at the barrier
    calibration: dict[str, list[dict[str, float]]] = {"alone": [], "together": []}
    for step in range(steps):
        for name, fn in timed.items():
            times[name] += _timed(comm, fn, 1, cpu.get(name))
        comm.barrier()
        calibration["together"].append(calibration_probes())
        comm.barrier()
        if step % world == rank:
            calibration["alone"].append(calibration_probes())
        comm.barrier()
    for turn in range(steps, world):  # fewer rounds than ranks: the others' turns alone
        if turn == rank:
            calibration["alone"].append(calibration_probes())
        comm.barrier()
    times["communication"] = [g + r for g, r in zip(times["all_gather"], times["reduce_scatter"])]
    times["dot beside a transfer"], times["permute shard beside compute"] = beside, permute_beside
    # what a transfer takes of a core while in flight (the simulator's transfer_cpu)
    transfer_cpu = sum(cpu["permute shard"]) / sum(times["permute shard"])
    # one more step of each shown program with the communicator recording its spans (every
    # process reads the same monotonic clock: rank 0's reading is the origin)
    traces = {}
    for name in SHOWN if traced else ():
        timeline = Timeline(name)
        comm.barrier()
        origin = comm.all_gather_object(time.perf_counter(), "the trace's origin")[0]
        comm.record(timeline, origin)
        programs[name](args)
        comm.record(None)
        comm.barrier()  # the sends' completions are in
        traces[name] = [(d, lane, sp.name, sp.start, sp.end) for d in timeline.devices() for lane in timeline.lanes(d)
                        for sp in timeline.spans(d, lane)]
    medians = {how: {k: statistics.median(c[k] for c in runs) for k in runs[0]} for how, runs in calibration.items()}
    everyone = comm.all_gather_object((times, traces, medians, transfer_cpu), "gathering the timings")
    threads = threads_per_process()
    shutdown()
    # a step takes as long as its slowest rank
    steps_max = {name: [max(r[name][i] for r, *_ in everyone) for i in range(len(times[name]))] for name in times}
    spans = {name: [sp for _, t, *_ in everyone for sp in t[name]] for name in traces}
    # the slowest rank's figures: a step waits for it
    machine = {how: {k: min(c[how][k] for _, _, c, _ in everyone) for k in ("peak_flops", "memory_bandwidth")}
               | {"op_overhead": max(c[how]["op_overhead"] for _, _, c, _ in everyone)} for how in calibration}
    return {"times": steps_max, "max_abs_difference": values, "sizes": sizes, "traces": spans, "calibration": machine,
            "threads": threads, "transfer_cpu_share": statistics.mean(u for *_, u in everyone)}


def threads_per_process() -> dict[str, Any]:
    """The intra-op threads this process computes with (torch's, and numpy's BLAS pools): one each,
    so that N processes on C cores time-slice N threads, not N times the cores."""
    import torch
    try:
        from threadpoolctl import threadpool_info
        pools = {f"{p['internal_api']} ({p['user_api']})": p["num_threads"] for p in threadpool_info()}
    except ImportError:
        pools = {"numpy's BLAS": f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"}
    return {"torch": torch.get_num_threads(), **pools}


def launch(world: int, sizes: dict[str, int], steps: int, ratio: float, traced: bool) -> dict[str, Any]:
    return spawn_ranks(_process, world, (world, sizes, steps, ratio, traced), deadline_s=1800)


# The simulator -------------------------------------------------------------------------------------

def calibrated_machine(world: int, sizes: dict[str, int], out: dict[str, Any], calibrated: bool = True) -> Any:
    """This rig as the processes measured it: `world` processes sharing this machine's cores
    (compute, memory and per-op overhead of one process alone, by loom.sim.calibrate) and one
    metered medium, the loopback's tbf bucket, which every transfer in flight shares: its
    bandwidth is the ring permute's (every rank sending a shard at once) world · shard bytes over
    its time past the latency (the 4-byte permute's). `calibrated`: also each collective's own
    bandwidth (the all_gather's and the reduce_scatter's times through the cost model's algorithm,
    loom.sim.calibrate.effective_bandwidth) and the share of a core a transfer keeps busy (the
    shard's permute's CPU time over its time); without, the medium's bandwidth for every
    collective and transfers that need no CPU."""
    from loom.sim.calibrate import effective_bandwidth
    from loom.sim.machine import Machine
    times = out["times"]
    shard = sizes["seq"] // world * sizes["hidden"] * 4
    # a loaded run's 4-byte permutes can take longer than its shard's or a collective's (n - 1)
    # steps: the latency is then capped at half of the quickest, leaving every transfer's bytes time
    quickest = min(statistics.median(times["permute shard"]),
                   *(statistics.median(times[kind]) / (world - 1) for kind in ("all_gather", "reduce_scatter")))
    latency = min(statistics.median(times["permute 4 bytes"]), quickest / 2)
    machine = Machine(name=f"this machine, {world} processes on {CORES} cores (calibrated)", link_bandwidth=1.0,
                      link_latency=latency, topology="shared", topology_shape=(world,), cores=CORES,
                      **shared_rates(world, out["calibration"]))
    bandwidth = effective_bandwidth("collective_permute", shard, world, statistics.median(times["permute shard"]),
                                    machine)
    machine = machine.with_(link_bandwidth=bandwidth)
    if not calibrated:
        return machine.with_(name=machine.name.replace("(calibrated)", "(the medium's rate for every collective)"))
    rates = {kind: effective_bandwidth(kind, world * shard, world, statistics.median(times[kind]), machine)
             for kind in ("all_gather", "reduce_scatter")}
    return machine.with_(collective_bandwidth=rates, transfer_cpu=min(out["transfer_cpu_share"], 0.9))


def paired_slowdown(times: dict[str, list[float]], slower: str, than: str) -> float:
    """The median over the rounds of `slower`'s time over `than`'s in the same round (timed moments
    apart: a loaded machine's drift from round to round weighs on both alike)."""
    return statistics.median(s / t for s, t in zip(times[slower], times[than]))


def shared_rates(world: int, calibration: dict[str, dict[str, float]]) -> dict[str, float]:
    """One process's rates (alone), slowed by what ranks computing at once lose beyond the cores'
    time-slicing that the simulator models (world / CORES): memory bandwidth and caches, which
    the cores alone miss (2 processes on 2 cores measured 1.6x slower together than alone). Each
    probe's own measured ratio, never below the modelled sharing (4 ranks time-slicing short
    probes can each catch a core alone)."""
    alone, together = calibration["alone"], calibration["together"]
    modelled = max(1.0, world / CORES)
    slower = {"peak_flops": alone["peak_flops"] / together["peak_flops"],
              "memory_bandwidth": alone["memory_bandwidth"] / together["memory_bandwidth"],
              "op_overhead": together["op_overhead"] / alone["op_overhead"]}
    beyond = {k: max(1.0, r / modelled) for k, r in slower.items()}
    return {"peak_flops": alone["peak_flops"] / beyond["peak_flops"],
            "memory_bandwidth": alone["memory_bandwidth"] / beyond["memory_bandwidth"],
            "op_overhead": alone["op_overhead"] * beyond["op_overhead"]}


# The plot ------------------------------------------------------------------------------------------

def plot(world: int, traces: dict[str, list[tuple]], path: Path) -> Path | None:
    """The measured timelines of one step of each shown program on the processes, as a PNG (and
    Chrome traces)."""
    from loom.sim.timeline import Timeline, draw_png
    timelines = {}
    for name, spans in traces.items():
        tl = timelines[f"{name}: one step on {world} gloo processes, measured"] = Timeline(
            f"{name}, measured on {world} processes")
        for span in spans:
            tl.add(*span)
        slug = "-".join(word for word in re.split(r"[^a-z0-9]+", name) if word)
        tl.write_chrome(path.with_name(f"{path.stem}-{slug}-trace.json"))
    try:
        draw_png(timelines, path)
    except ImportError as e:
        print(f"--plot: {e}; wrote the Chrome traces only")
        return None
    print(f"plot: {path}")
    return path


# Running ----------------------------------------------------------------------------------------------

def throttle_available() -> str | None:
    """None when the loopback can be throttled here, else what is missing."""
    missing = [tool for tool in ("unshare", "tc", "ip") if shutil.which(tool) is None]
    if missing:
        return f"the tools {', '.join(missing)} (util-linux, iproute2)"
    if os.geteuid() != 0:
        return "root (unshare -n and tc need it)"
    return None


def run(args: argparse.Namespace) -> int:
    sizes_of = QUICK_SIZES if args.quick else SIZES
    widths = dict(zip(args.worlds, args.ffn * len(args.worlds) if len(args.ffn) == 1 else args.ffn))
    steps = args.steps or (3 if args.quick else 15)
    record = Record("overlap", {"worlds": args.worlds, "sizes": sizes_of, "ffn": widths, "comm_ratio": args.comm_ratio,
                                "steps": steps, "quick": args.quick,
                                "link": f"tbf rate {args.rate} burst {args.burst}" if args.inside else "unthrottled"})
    predictions, derived = {}, {}
    from loom.sim import simulate
    from loom.sim.calibrate import transfer_cpu_from_slowdown
    from loom.sim.cost import transfer_slowdown
    for world in args.worlds:
        out = launch(world, {**sizes_of, "ffn": widths.get(world, 0)}, steps, args.comm_ratio or (world - 1) / world,
                     args.plot)
        times, sizes = out["times"], out["sizes"]
        case = f"{world} processes"
        for name, ts in times.items():
            record.add(case, name, ts)
        after = statistics.median(times["decomposed + scheduled"])
        compute, comm = statistics.median(times["compute"]), statistics.median(times["communication"])
        ideal = max(compute, comm)
        speedup = record.ratio(case, "decomposed + scheduled", "undecomposed")
        two_way = record.ratio(case, "decomposed two-way + scheduled", "undecomposed")
        fused = record.ratio(case, FUSED, "undecomposed")
        fused_step = statistics.median(times[FUSED])
        programs = variants(world, sizes)
        # the simulator on the rig as calibrated; with the transfers' CPU from the permute beside
        # compute instead of its CPU time (the model's inverse); with transfers that need no CPU
        # (compute and transfers not sharing the cores); and on the medium alone (every collective
        # at the permutes' rate)
        calibrated = calibrated_machine(world, sizes, out)
        probe = transfer_cpu_from_slowdown(paired_slowdown(times, "permute shard beside compute", "permute shard"),
                                           world, calibrated)
        machines = {"calibrated": calibrated, "permute probe": calibrated.with_(transfer_cpu=probe),
                    "no transfer CPU": calibrated.with_(transfer_cpu=0.0),
                    "medium only": calibrated_machine(world, sizes, out, calibrated=False)}
        sims = {how: {name: simulate(m, machine) for name, m in programs.items()} for how, machine in machines.items()}
        errors = {how: {name: p.step_time / statistics.median(times[name]) - 1 for name, p in sim.items()}
                  for how, sim in sims.items()}
        machine, predicted = machines["calibrated"], sims["calibrated"]
        # which half of the model is off: the undecomposed program's compute and communication
        # (synchronous: they add up) against the measured compute alone and communication alone
        split = {"compute": predicted["undecomposed"].compute_time,
                 "communication": predicted["undecomposed"].communication_time}
        alone, together = out["calibration"]["alone"], out["calibration"]["together"]
        steps_of = {how: {name: p.step_time for name, p in sim.items()} for how, sim in sims.items()}
        predictions[case] = {"machine": machine.to_json(), "machine_medium_only": machines["medium only"].to_json(),
                             "predicted_step": steps_of["calibrated"], "predicted_steps": steps_of,
                             "predicted_undecomposed": split, "calibration_every_rank_at_once": together}
        derived[case] = {"sizes": sizes, "speedup": speedup, "speedup_two_way": two_way, "compute": compute,
                         "communication": comm,
                         "max_compute_communication": ideal, "decomposed_over_max": after / ideal,
                         "speedup_fused": fused, "fused_over_max": fused_step / ideal,
                         "simulator_error_fused": errors["calibrated"][FUSED],
                         "simulator_error_undecomposed": errors["calibrated"]["undecomposed"],
                         "simulator_error_decomposed": errors["calibrated"]["decomposed + scheduled"],
                         "simulator_errors": errors,
                         "max_abs_difference": out["max_abs_difference"], "threads": out["threads"],
                         "compute_sharing_measured": alone["peak_flops"] / together["peak_flops"],
                         "transfer_cpu_share": out["transfer_cpu_share"],
                         "dot_beside_a_transfer_slowdown": paired_slowdown(times, "dot beside a transfer", "dot"),
                         "transfer_slowdown_simulated": transfer_slowdown(machine, world),
                         "permute_beside_compute_slowdown": paired_slowdown(times, "permute shard beside compute",
                                                                            "permute shard")}
        print(f"\n{case} on {CORES} cores ({sizes}, {steps} steps; load {load_average():.1f}; "
              f"intra-op threads per process {out['threads']})")
        for name, ts in times.items():
            print(f"  {name:30s} median {fmt(statistics.median(ts)):>10s}  [{fmt(min(ts))} .. {fmt(max(ts))}]")
        print(f"  speedup {speedup:.2f}x (two-way {two_way:.2f}x); "
              f"decomposed / max(compute, communication) = {after / ideal:.2f}")
        print(f"  fused (the two loops as one): speedup {fused:.2f}x; fused / max(compute, communication) = "
              f"{fused_step / ideal:.2f}; simulator {100 * errors['calibrated'][FUSED]:+.0f}%")
        sharing = max(1.0, world / CORES) * alone["peak_flops"] / machine.peak_flops
        rates = ", ".join(f"{kind} {rate / 1e6:.0f} MB/s" for kind, rate in machine.collective_bandwidth)
        print(f"  calibrated: {alone['peak_flops']:.3g} FLOP/s a process alone, "
              f"{together['peak_flops']:.3g} every rank at once ({alone['peak_flops'] / together['peak_flops']:.2f}x "
              f"slower; the simulator's sharing: {sharing:.2f}x); the medium "
              f"{machine.link_bandwidth / 1e6:.0f} MB/s ({rates}), latency {fmt(machine.link_latency)}; moving bytes "
              f"keeps {100 * machine.transfer_cpu:.0f}% of a core busy per rank by its CPU time "
              f"({100 * machines['permute probe'].transfer_cpu:.0f}% by the permute beside compute): compute and "
              f"transfers overlapping {transfer_slowdown(machine, world):.2f}x slower)")
        beside = derived[case]["dot_beside_a_transfer_slowdown"]
        slower = derived[case]["permute_beside_compute_slowdown"]
        print(f"  a dot beside a transfer measured {beside:.2f}x slower than alone, a permute beside compute "
              f"{slower:.2f}x (the simulator: both {transfer_slowdown(machine, world):.2f}x)")
        for name, t in split.items():
            m = statistics.median(times[name])
            print(f"  simulator: {name} alone {fmt(t)} (measured {fmt(m)}, {100 * (t / m - 1):+.0f}%)")
        for name in programs:
            others = "; ".join(f"{how} {100 * e[name]:+.0f}%" for how, e in errors.items() if how != "calibrated")
            print(f"  simulator: {name:30s} {fmt(predicted[name].step_time)} (measured "
                  f"{fmt(statistics.median(times[name]))}, {100 * errors['calibrated'][name]:+.0f}%; {others})")
        print(f"  values: largest |decomposed - undecomposed| = {out['max_abs_difference']}")
        if args.plot:
            stamp = time.strftime("%Y%m%d-%H%M")
            RESULTS.mkdir(exist_ok=True)
            plot(world, out["traces"], RESULTS / f"overlap-{world}p-{stamp}.png")
    record.write(derived=derived, predictions=predictions)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, 3 steps")
    ap.add_argument("--plot", action="store_true",
                    help="draw the undecomposed, decomposed and fused timelines (matplotlib)")
    ap.add_argument("--worlds", type=int, nargs="+", default=[2, 4], choices=[2, 4])
    ap.add_argument("--comm-ratio", type=float, default=0.0,
                    help="communication / compute the MLP's width is chosen for (default (N - 1) / N on N "
                         "processes: the ring loop overlaps N - 1 of its N dots with a transfer)")
    ap.add_argument("--ffn", type=int, nargs="+", default=[0],
                    help="the MLP's width, one for all --worlds or one per world (default: chosen by --comm-ratio; "
                         "a record's derived sizes rerun the same programs)")
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--rate", default="2gbit", help="the loopback's tbf rate")
    ap.add_argument("--burst", default="512kb")
    ap.add_argument("--unthrottled", action="store_true", help="run on the plain loopback")
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)  # already in the namespace
    args = ap.parse_args(argv)
    if len(args.ffn) not in (1, len(args.worlds)):
        ap.error(f"--ffn: give one width or one per world ({len(args.worlds)}), got {args.ffn}")
    if args.inside or args.unthrottled:
        return run(args)
    missing = throttle_available()
    if missing is not None:
        print(f"throttling the loopback needs {missing}; running unthrottled")
        return run(args)
    inner = [sys.executable, str(Path(__file__).resolve()), "--inside", *(argv if argv is not None else sys.argv[1:])]
    setup = (f"ip link set lo up && tc qdisc add dev lo root tbf rate {args.rate} burst {args.burst} latency 100ms && "
             f"exec {' '.join(_quote(w) for w in inner)}")
    print(f"unshare -n: loopback throttled to {args.rate} (tbf burst {args.burst})")
    return subprocess.run(["unshare", "-n", "sh", "-c", setup], timeout=datetime.timedelta(hours=1).seconds).returncode


def _quote(word: str) -> str:
    import shlex
    return shlex.quote(word)


if __name__ == "__main__":
    sys.exit(main())
