"""What each process of tests/runtime/test_distributed.py runs, and the launcher that starts them.

`launch(scenario, world)` starts `world` processes (torch.multiprocessing, forkserver: they fork
from a server that imported loom and torch once), each joining a gloo process group on 127.0.0.1
at a free port and running `SCENARIOS[scenario](rank, world)`; it returns each rank's outcome,
("ok", value) or ("error", type name, message, seconds into the scenario), and fails, never hangs,
when a process neither reports nor exits within the deadline.
"""

from __future__ import annotations

import math
import os
import pathlib
import queue
import socket
import time
import traceback
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

SHAPE = (4, 8)  # splits into 2 and 4 pieces along either dimension

# (dtype, reduction) pairs the reductions are checked with: torch's own reductions, and the ones
# gathered and reduced with numpy (max/min of wide unsigned integers, 8-bit floats)
REDUCTION_CASES = [("float32", "sum"), ("float32", "max"), ("bfloat16", "sum"), ("int8", "prod"), ("int32", "min"),
                   ("bool", "and"), ("bool", "or"), ("bool", "xor"), ("int64", "xor"), ("uint32", "max"),
                   ("uint32", "sum"), ("float8_e4m3fn", "sum"), ("complex64", "sum"), ("float16", "min")]


def groups_of(world: int) -> dict[str, list[list[int]]]:
    """Partition-id groups: the whole world, and for 4 processes the rows and columns of a 2x2 mesh
    (1-D and 2-D groups), also listed out of rank order."""
    if world == 2:
        return {"all": [[0, 1]], "reversed": [[1, 0]]}
    return {"all": [[0, 1, 2, 3]], "rows": [[0, 1], [2, 3]], "cols": [[0, 2], [1, 3]],
            "reversed_rows": [[1, 0], [3, 2]], "shuffled": [[2, 0, 3, 1]], "singletons": [[0], [1], [2], [3]]}


def permutations_of(world: int) -> dict[str, list[tuple[int, int]]]:
    pairs = {"ring": [(i, (i + 1) % world) for i in range(world)], "swap01": [(0, 1), (1, 0)]}
    if world == 4:
        pairs["partial_and_self"] = [(0, 3), (2, 2), (3, 1)]  # 0 gets zeros, 2 keeps its own
    return pairs


def dtype(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name, None) or name)


def operand(rank: int, case: int, name: str = "float32", shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    """Rank `rank`'s operand for case `case`: small integers (exact in every float type, so sums do
    not depend on the order of reduction), or full-range values for unsigned integers."""
    rng = np.random.default_rng(1000 * case + rank)
    dt = dtype(name)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind == "u" and dt.itemsize > 1:
        return rng.integers(0, np.iinfo(dt).max, shape, dtype=np.uint64).astype(dt)
    if dt.kind == "c":
        return (rng.integers(-3, 4, shape) + 1j * rng.integers(-3, 4, shape)).astype(dt)
    low, high = (1, 3) if name == "int8" else (-4, 5)  # products of int8 stay small
    return rng.integers(low, high, shape).astype(dt)


def collective_cases(world: int) -> list[tuple[str, str, dict[str, Any]]]:
    """(case name, communicator method, its arguments but `me` and `x`), one list for every rank,
    each rank passing its own group."""
    cases: list[tuple[str, str, dict[str, Any]]] = []
    for gname, groups in groups_of(world).items():
        for dt, red in REDUCTION_CASES:
            cases.append((f"all_reduce/{gname}/{dt}/{red}", "all_reduce", {"groups": groups, "reduction": red,
                                                                          "dtype": dt}))
        for d in (0, 1):
            cases.append((f"all_gather/{gname}/dim{d}", "all_gather",
                          {"groups": groups, "dim": d, "dtype": "bfloat16"}))
            cases.append((f"reduce_scatter/{gname}/dim{d}", "reduce_scatter",
                          {"groups": groups, "dim": d, "reduction": "sum", "dtype": "float32"}))
        cases.append((f"reduce_scatter/{gname}/uint32_max", "reduce_scatter",
                      {"groups": groups, "dim": 1, "reduction": "max", "dtype": "uint32"}))
        for s, c in ((0, 1), (1, 0), (1, 1)):
            cases.append((f"all_to_all/{gname}/split{s}_concat{c}", "all_to_all",
                          {"groups": groups, "split_dim": s, "concat_dim": c, "dtype": "int32"}))
        cases.append((f"collective_broadcast/{gname}", "collective_broadcast", {"groups": groups, "dtype": "bool"}))
    for pname, pairs in permutations_of(world).items():
        cases.append((f"collective_permute/{pname}", "collective_permute", {"pairs": pairs, "dtype": "float16"}))
    return cases


def own_group(groups: list[list[int]], rank: int) -> list[int]:
    return next(g for g in groups if rank in g)


# Scenarios: what each process runs -------------------------------------------------------------------

def scenario_collectives(rank: int, world: int) -> dict[str, Any]:
    """Every communicator method on every case; the results by case name (the test compares them
    with numpy computing the spec's semantics)."""
    import torch

    from loom.runtime.distributed import communicator
    comm = communicator()
    out: dict[str, Any] = {}
    for i, (name, method, kw) in enumerate(collective_cases(world)):
        kw = dict(kw)
        x = operand(rank, i, kw.pop("dtype"))
        if "groups" in kw:
            kw["group"] = own_group(kw.pop("groups"), rank)
        out[name] = getattr(comm, method)(rank, x, **kw)
    # a result array nothing holds any more is reused for the next result of its shape; one still
    # held is not (the results above, all held, are checked by the test). gloo's worker thread
    # drops its reference to a finished call's tensors a little after the call returns: a barrier
    # in between, and a few tries.
    x, everyone = np.ones(1000, np.float32), list(range(world))

    def address(a: np.ndarray) -> int:  # (not a.ctypes: its object keeps the array until collected)
        return a.__array_interface__["data"][0]
    for _ in range(5):
        first = comm.all_reduce(rank, x, everyone, "sum")
        first_address = address(first)
        del first
        comm.barrier()
        again = comm.all_reduce(rank, 2 * x, everyone, "sum")
        reused = comm.all_gather_object(address(again) == first_address)
        if all(reused):
            break
    held = comm.all_reduce(rank, 3 * x, everyone, "sum")
    out["reuse"] = (all(reused), address(held) != address(again), float(again[0]), float(held[0]))
    # torch tensors in, torch tensors out (bfloat16 on the CPU)
    t = torch.full((3,), float(rank + 1), dtype=torch.bfloat16)
    r = comm.all_reduce(rank, t, list(range(world)), "sum")
    out["torch_tensor"] = (type(r).__name__, str(r.dtype), r.float().tolist())
    return out


def scenario_killed(rank: int, world: int, victim: int = 1) -> dict[str, Any]:
    """Rank `victim` exits abruptly before the second run of a program with one all_reduce; the
    others report how theirs failed."""
    from loom.runtime.distributed import CollectiveError, run_partitioned
    text = all_reduce_program(world)
    run_partitioned(text, [np.ones(4, np.float32)])
    if rank == victim:
        os._exit(17)
    start = time.monotonic()
    try:
        run_partitioned(text, [np.ones(4, np.float32)])
    except CollectiveError as e:
        return {"seconds": time.monotonic() - start, "message": str(e), "missing": e.missing}
    return {"seconds": time.monotonic() - start, "message": "no error", "missing": []}


def scenario_killed_rank0(rank: int, world: int) -> dict[str, Any]:
    return scenario_killed(rank, world, victim=0)


def scenario_stuck(rank: int, world: int) -> dict[str, Any]:
    """Rank 1 is alive but elsewhere (sleeping) while the others enter a collective."""
    from loom.runtime.distributed import _STATE, CollectiveError, communicator
    comm = communicator()
    if rank == 1:
        time.sleep(_STATE.timeout_s + 3)
        return {"message": "slept"}
    start = time.monotonic()
    try:
        comm.all_gather(rank, np.ones(4, np.float32), list(range(world)), 0)
    except CollectiveError as e:
        return {"seconds": time.monotonic() - start, "message": str(e), "missing": e.missing}
    return {"seconds": time.monotonic() - start, "message": "no error", "missing": []}


def program_groups(world: int) -> dict[str, list[list[int]]]:
    """The groups the hand-written program uses: all partitions, and the rows and columns of a
    (world/2) x 2 mesh, as JAX writes the groups of a collective over one mesh axis."""
    from support.spmd_programs import mesh_groups
    shape = (world // 2, 2)
    return {"all": [list(range(world))], "rows": mesh_groups(shape, [1]), "cols": mesh_groups(shape, [0])}


def collective_program(world: int) -> str:
    """A per-device program (generic MLIR, as JAX's shard_map lowering writes collectives) with one
    of every collective over 1-D and 2-D groups, on f32, bf16 and i1 operands."""
    from support.spmd_programs import CHANNEL, binary_reducer, groups_attr, ids, module, tensor
    g = program_groups(world)
    nc = len(g["cols"][0])
    f32, bf16, i1, u32 = tensor((4, 8), "f32"), tensor((4, 8), "bf16"), tensor((4, 8), "i1"), "tensor<ui32>"
    gathered, scattered = tensor((4, 16), "f32"), tensor((4 // nc, 8), "f32")
    a2a, bf_gathered = tensor((4 * world, 8 // world), "f32"), tensor((4 * nc, 8), "bf16")
    ring = ids([[i, (i + 1) % world] for i in range(world)])
    types = [f32, f32, gathered, scattered, a2a, f32, f32, u32, bf_gathered, i1, f32]
    body = [
        f'%0 = "stablehlo.all_reduce"(%arg0) <{{{groups_attr(g["all"])}}}> {binary_reducer("add", "f32")} : '
        f"({f32}) -> {f32}",
        f'%1 = "stablehlo.all_reduce"(%arg0) <{{{groups_attr(g["rows"])}}}> {binary_reducer("maximum", "f32")} : '
        f"({f32}) -> {f32}",
        f'%2 = "stablehlo.all_gather"(%arg0) <{{all_gather_dim = 1 : i64, {groups_attr(g["rows"])}}}> : '
        f"({f32}) -> {gathered}",
        f'%3 = "stablehlo.reduce_scatter"(%arg0) <{{scatter_dimension = 0 : i64, {groups_attr(g["cols"])}}}> '
        f'{binary_reducer("add", "f32")} : ({f32}) -> {scattered}',
        f'%4 = "stablehlo.all_to_all"(%arg0) <{{{groups_attr(g["all"], global_ids=False)}, concat_dimension = 0 : i64, '
        f"split_count = {world} : i64, split_dimension = 1 : i64}}> : ({f32}) -> {a2a}",
        f'%5 = "stablehlo.collective_permute"(%arg0) <{{{CHANNEL}, source_target_pairs = {ring}}}> : ({f32}) -> {f32}',
        f'%6 = "stablehlo.collective_broadcast"(%arg0) <{{{CHANNEL}, replica_groups = {ids(g["cols"])}}}> : '
        f"({f32}) -> {f32}",
        f'%7 = "stablehlo.partition_id"() : () -> {u32}',
        f'%8 = "stablehlo.all_gather"(%arg1) <{{all_gather_dim = 0 : i64, {groups_attr(g["cols"])}}}> : '
        f"({bf16}) -> {bf_gathered}",
        f'%9 = "stablehlo.all_reduce"(%arg2) <{{{groups_attr(g["all"])}}}> {binary_reducer("or", "i1")} : '
        f"({i1}) -> {i1}",
        f'%10 = "stablehlo.all_reduce"(%arg0) <{{{groups_attr(g["rows"])}}}> {binary_reducer("subtract", "f32")} : '
        f"({f32}) -> {f32}",
        f'"func.return"({", ".join(f"%{i}" for i in range(len(types)))}) : ({", ".join(types)}) -> ()',
    ]
    return module(world, [f32, bf16, i1], types, body)


def program_inputs(rank: int) -> list[np.ndarray]:
    return [operand(rank, 0, "float32"), operand(rank, 1, "bfloat16"), operand(rank, 2, "bool")]


def scenario_program(rank: int, world: int) -> dict[str, Any]:
    """The hand-written program, by both executors, and compiled for torch's CPU (its tensors
    handed to torch.distributed as they are where their dtype allows: "tensors sent as they are"
    counts those collectives)."""
    import torch

    from loom.backend.torch_kernels import to_numpy
    from loom.runtime.distributed import communicator, run_partitioned
    text = collective_program(world)
    out: dict[str, Any] = {executor: run_partitioned(text, program_inputs(rank), executor=executor)
                           for executor in ("compiled", "interpreter")}
    comm, native = communicator(), []
    plain = comm._native
    comm._native = lambda x: native.append(plain(x)) or native[-1]  # type: ignore[method-assign]
    try:
        on_torch = run_partitioned(text, program_inputs(rank), device=torch.device("cpu"))
    finally:
        del comm._native
    assert all(isinstance(r, torch.Tensor) for r in on_torch)
    out["compiled on torch"] = [to_numpy(r) for r in on_torch]
    out["tensors sent as they are"] = sum(n is not None for n in native)
    return out


def global_operands() -> tuple[np.ndarray, np.ndarray]:
    """a (4 x 6) and b (6 x 4) for `scenario_global`."""
    rng = np.random.default_rng(7)
    return rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal((6, 4)).astype(np.float32)


def scenario_global(rank: int, world: int) -> dict[str, Any]:
    """`exp(a) @ b` lowered by loom.jit with shardings, partitioned, and run on global values."""
    import loom
    from loom.runtime.distributed import DistributedExecutable
    from loom.sharding import NamedSharding, P
    from loom.sharding.partitioning import partition
    mesh = loom.make_mesh((2, world // 2), ("data", "model"), devices=list(range(world)))
    f = loom.jit(lambda a, b: loom.numpy.exp(a) @ b,
                 in_shardings=(NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P(None, "model"))),
                 out_shardings=NamedSharding(mesh, P("data", "model")))
    a, b = global_operands()
    run = DistributedExecutable(partition(f.lower(a, b).module))
    return {"result": run(a, b)}


SPMD_CORPUS = pathlib.Path(__file__).parents[1] / "transforms" / "spmd_corpus"


def scenario_corpus(rank: int, world: int) -> dict[str, Any]:
    """Every program of the sharded corpus (lowered by JAX on 8 fake devices) whose mesh has `world`
    devices, partitioned and run with one partition per process on JAX's inputs; rank 0 returns
    every result."""
    import json

    import loom
    from loom.runtime.distributed import DistributedExecutable
    from loom.sharding.partitioning import partition
    programs = json.loads((SPMD_CORPUS / "programs.json").read_text())
    values = np.load(SPMD_CORPUS / "values.npz")
    out: dict[str, list[np.ndarray]] = {}
    for record in programs:
        name = record["name"]
        if math.prod(record["mesh"].values()) != world:
            continue
        run = DistributedExecutable(partition(loom.ir.parse(record["text"])))
        got = run(*[values[f"{name}/in{i}"] for i in range(record["num_inputs"])])
        if rank == 0:
            out[name] = [np.asarray(g) for g in (got if isinstance(got, (tuple, list)) else [got])]
    return out


ALL_REDUCE_PROGRAM = """
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "stablehlo.%OP%"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.all_reduce"(%0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        replica_groups = dense<[[%IDS%]]> : tensor<1x%N%xi64>, use_global_device_ids}> ({
      ^bb0(%lhs: tensor<f32>, %rhs: tensor<f32>):
        %r = "stablehlo.add"(%lhs, %rhs) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%r) : (tensor<f32>) -> ()
      }) : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%1) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = %N% : i32, mhlo.num_replicas = 1 : i32} : () -> ()
"""


def all_reduce_program(world: int, op: str = "negate", partitions: int | None = None) -> str:
    """`all_reduce(op(x))` over all partitions, for `partitions` (default `world`) partitions."""
    n = partitions or world
    text = ALL_REDUCE_PROGRAM.replace("%OP%", op).replace("%N%", str(n))
    return text.replace("%IDS%", ", ".join(map(str, range(n))))


def scenario_mismatch(rank: int, world: int) -> dict[str, Any]:
    """The last rank runs another program (a different op); every rank must refuse to start."""
    from loom.runtime.distributed import run_partitioned
    text = all_reduce_program(world, "exponential" if rank == world - 1 else "negate")
    return {"result": run_partitioned(text, [np.ones(4, np.float32)])}


def scenario_partitions(rank: int, world: int) -> dict[str, Any]:
    """A program written for more partitions than there are processes."""
    from loom.runtime.distributed import run_partitioned
    text = all_reduce_program(world, partitions=2 * world)
    return {"result": run_partitioned(text, [np.ones(4, np.float32)])}


IN_PLACE_ELEMENTS = 1 << 15  # large enough for the in-process mesh's sliced all_reduce


def in_place_program(world: int) -> str:
    """Three all_reduces (sums over all partitions) of x: of y = x * x, which is read again after
    it (z = y + sum(y): must be copied); of w = -x, never read again (reduced in place); of the
    argument x, which the caller holds (copied, unless donated: then in place)."""
    from support.spmd_programs import binary_reducer, groups_attr, module, tensor
    t = tensor((IN_PLACE_ELEMENTS,), "f32")
    total = f'<{{{groups_attr([list(range(world))])}}}> {binary_reducer("add", "f32")} : ({t}) -> {t}'
    return module(world, [t], [t, t, t], [
        f'%y = "stablehlo.multiply"(%arg0, %arg0) : ({t}, {t}) -> {t}',
        f'%a = "stablehlo.all_reduce"(%y) {total}',
        f'%z = "stablehlo.add"(%y, %a) : ({t}, {t}) -> {t}',
        f'%w = "stablehlo.negate"(%arg0) : ({t}) -> {t}',
        f'%b = "stablehlo.all_reduce"(%w) {total}',
        f'%c = "stablehlo.all_reduce"(%arg0) {total}',
        f'"func.return"(%z, %b, %c) : ({t}, {t}, {t}) -> ()',
    ])


def in_place_operand(rank: int) -> np.ndarray:
    """Small integers: every sum is exact in any order."""
    return (np.arange(IN_PLACE_ELEMENTS) % 5 + rank).astype(np.float32)


def in_place_expected(rank: int, world: int) -> list[np.ndarray]:
    """`in_place_program`'s results on `rank`, by numpy."""
    xs = [in_place_operand(r) for r in range(world)]
    squares = sum(x * x for x in xs)
    return [xs[rank] * xs[rank] + squares, -sum(xs), sum(xs)]


def scenario_in_place(rank: int, world: int) -> dict[str, Any]:
    """`in_place_program` with its argument held (then checked unchanged) and donated (then its
    all_reduce's result is the argument's memory)."""
    from loom.runtime.distributed import run_partitioned
    text = in_place_program(world)
    held, donated = in_place_operand(rank), in_place_operand(rank)
    kept = run_partitioned(text, [held])
    given = run_partitioned(text, [donated], donate_argnums=(0,))
    return {"held": kept, "held_unchanged": bool(np.array_equal(held, in_place_operand(rank))),
            "donated": [np.array(r) for r in given], "donated_reused": bool(np.shares_memory(given[2], donated))}


SCENARIOS: dict[str, Callable[[int, int], Any]] = {
    "collectives": scenario_collectives, "killed": scenario_killed, "killed_rank0": scenario_killed_rank0,
    "stuck": scenario_stuck, "mismatch": scenario_mismatch, "partitions": scenario_partitions,
    "program": scenario_program, "global": scenario_global, "corpus": scenario_corpus,
    "in_place": scenario_in_place,
}


def _worker(rank: int, world: int, port: int, module: str, scenario: str, timeout_s: float, results: Any) -> None:
    import importlib

    import torch

    from loom.runtime.distributed import initialize, shutdown
    torch.set_num_threads(1)
    start = time.monotonic()
    try:
        initialize(f"127.0.0.1:{port}", world, rank, timeout_s=timeout_s)
        value = importlib.import_module(module).SCENARIOS[scenario](rank, world)
        results.put((rank, ("ok", value)))
    except BaseException as e:  # reported to the parent, which asserts on it
        results.put((rank, ("error", type(e).__name__, f"{e}\n{traceback.format_exc()}", time.monotonic() - start)))
    try:
        shutdown()
    except Exception:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(scenario: str, world: int, timeout_s: float = 20.0, deadline_s: float = 90.0,
           expect_exit: frozenset[int] = frozenset(), module: str = "distributed_worker") -> dict[int, tuple]:
    """Run `scenario` (of the SCENARIOS of test helper module `module`) on `world` processes; each
    rank's outcome. Ranks in `expect_exit` are those that exit without reporting."""
    import torch.multiprocessing as mp
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["loom", "torch.distributed", module])
    results = ctx.Queue()
    procs = mp.start_processes(_worker, args=(world, free_port(), module, scenario, timeout_s, results),
                               nprocs=world, join=False, start_method="forkserver").processes
    outcomes: dict[int, tuple] = {}
    end = time.monotonic() + deadline_s
    try:
        while len(outcomes) < world - len(expect_exit) and time.monotonic() < end:
            try:
                rank, outcome = results.get(timeout=max(0.1, min(1.0, end - time.monotonic())))
                outcomes[rank] = outcome
            except queue.Empty:
                if all(not p.is_alive() for p in procs) and results.empty():
                    break
        for p in procs:
            p.join(timeout=max(0.1, end - time.monotonic()))
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
    missing = sorted(set(range(world)) - set(outcomes) - expect_exit)
    if missing:
        codes = {i: p.exitcode for i, p in enumerate(procs)}
        raise AssertionError(f"{scenario}: ranks {missing} reported nothing within {deadline_s} s (exit codes {codes})")
    return outcomes
