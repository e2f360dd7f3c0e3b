"""loom.runtime.distributed: partitioned programs over many processes on torch.distributed (gloo on
127.0.0.1). The processes are started by tests/runtime/distributed_worker.py; every wait there is
bounded. Oracle: numpy computing the StableHLO spec's semantics of each collective from every
rank's operand."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from distributed_worker import (
    SPMD_CORPUS,
    collective_cases,
    free_port,
    global_operands,
    in_place_expected,
    launch,
    operand,
    own_group,
    program_groups,
    program_inputs,
)
from support.paths import EXAMPLES, ROOT

from loom.runtime.distributed import (
    DistributedError,
    _reduce_op,
    assemble_shards,
    initialize,
    local_shard,
    shard_index,
    to_torch,
)
from loom.sharding import Mesh, NamedSharding, P

torch = pytest.importorskip("torch")

_UFUNCS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum, "and": np.logical_and,
           "or": np.logical_or, "xor": np.logical_xor}


def _reduce(xs: list[np.ndarray], reduction: str) -> np.ndarray:
    """The members' operands reduced in group order (exact for the operands the cases use)."""
    ufunc = _UFUNCS[reduction]
    if reduction in ("and", "or", "xor") and xs[0].dtype != np.bool_:
        ufunc = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[reduction]
    out = xs[0]
    for x in xs[1:]:
        out = ufunc(out, x).astype(xs[0].dtype)
    return out


def _expected(rank: int, world: int, case: int, method: str, kw: dict) -> np.ndarray:
    """What `rank` gets from collective case `case`, per the spec."""
    x = {r: operand(r, case, kw["dtype"]) for r in range(world)}
    if method == "collective_permute":
        sources = [s for s, t in kw["pairs"] if t == rank]
        return x[sources[0]] if sources else np.zeros_like(x[rank])
    group = own_group(kw["groups"], rank)
    xs, i, n = [x[m] for m in group], group.index(rank), len(group)
    if method == "all_reduce":
        return _reduce(xs, kw["reduction"])
    if method == "all_gather":
        return np.concatenate(xs, axis=kw["dim"])
    if method == "reduce_scatter":
        return np.split(_reduce(xs, kw["reduction"]), n, axis=kw["dim"])[i]
    if method == "all_to_all":
        return np.concatenate([np.split(m, n, axis=kw["split_dim"])[i] for m in xs], axis=kw["concat_dim"])
    if method == "collective_broadcast":
        return xs[0]
    raise AssertionError(method)


@pytest.mark.parametrize("world", [2, 4])
def test_every_collective_matches_the_spec(world):
    outcomes = launch("collectives", world)
    cases = collective_cases(world)
    for rank in range(world):
        assert outcomes[rank][0] == "ok", outcomes[rank]
        got = outcomes[rank][1]
        for i, (name, method, kw) in enumerate(cases):
            want = _expected(rank, world, i, method, kw)
            assert got[name].dtype == want.dtype and got[name].shape == want.shape, (rank, name, got[name].dtype)
            np.testing.assert_array_equal(got[name], want, err_msg=f"rank {rank}: {name}")
        assert got["torch_tensor"] == ("Tensor", "torch.bfloat16", [world * (world + 1) / 2] * 3)
        assert got["reuse"] == (True, True, 2.0 * world, 3.0 * world)


def _program_expected(rank: int, world: int) -> list[np.ndarray]:
    """What each result of distributed_worker.collective_program is on `rank`, per the spec."""
    g = {k: own_group(v, rank) for k, v in program_groups(world).items()}
    x, y, z = (list(v) for v in zip(*[program_inputs(r) for r in range(world)]))

    def members(values, group):
        return [values[m] for m in group]
    rows, cols, everyone = g["rows"], g["cols"], g["all"]
    subtracted = members(x, rows)[0]
    for v in members(x, rows)[1:]:
        subtracted = subtracted - v
    return [
        _reduce(members(x, everyone), "sum"),
        _reduce(members(x, rows), "max"),
        np.concatenate(members(x, rows), axis=1),
        np.split(_reduce(members(x, cols), "sum"), len(cols), axis=0)[cols.index(rank)],
        np.concatenate([np.split(m, world, axis=1)[rank] for m in x], axis=0),
        x[(rank - 1) % world],
        x[cols[0]],
        np.array(rank, np.uint32),
        np.concatenate(members(y, cols), axis=0),
        _reduce(z, "or"),
        subtracted,
    ]


@pytest.mark.parametrize("world", [2, 4])
def test_a_hand_written_program_with_every_collective_matches_the_spec(world):
    outcomes = launch("program", world)
    for rank in range(world):
        assert outcomes[rank][0] == "ok", outcomes[rank]
        want = _program_expected(rank, world)
        # compiled for torch's CPU, the f32 all_reduces, all_gather, reduce_scatter and permute and the
        # bf16 all_gather reach torch.distributed as tensors; the rest (i1, a reducer of its own,
        # all_to_all, broadcast) take the host path. With 2 processes the columns' groups have one
        # member: their reduce_scatter and bf16 all_gather need no transfer.
        assert outcomes[rank][1].pop("tensors sent as they are") == (6 if world == 4 else 4)
        for executor, got in outcomes[rank][1].items():
            assert len(got) == len(want)
            for i, (a, b) in enumerate(zip(got, want)):
                assert a.dtype == b.dtype and a.shape == b.shape, (rank, executor, i, a.dtype, a.shape)
                np.testing.assert_array_equal(a, b, err_msg=f"rank {rank}, {executor}, result {i}")


def test_an_all_reduce_reduces_in_place_only_into_operands_the_program_gives_up():
    """A value read after its all_reduce, and an argument the caller holds, keep their values; an
    argument given up (donated) holds the all_reduce's result."""
    outcomes = launch("in_place", 2)
    for rank in range(2):
        assert outcomes[rank][0] == "ok", outcomes[rank]
        got = outcomes[rank][1]
        want = in_place_expected(rank, 2)
        for results in (got["held"], got["donated"]):
            for i, (a, b) in enumerate(zip(results, want, strict=True)):
                np.testing.assert_array_equal(a, b, err_msg=f"rank {rank}, result {i}")
        assert got["held_unchanged"] and got["donated_reused"], got


@pytest.mark.parametrize("world", [2, 4])
def test_a_partitioned_program_runs_on_global_values(world):
    """loom.jit with shardings, the partitioner, DistributedExecutable: every process gets the
    global result."""
    outcomes = launch("global", world)
    a, b = global_operands()
    for rank in range(world):
        assert outcomes[rank][0] == "ok", outcomes[rank]
        got = outcomes[rank][1]["result"]
        assert got.shape == (4, 4) and got.dtype == np.float32
        np.testing.assert_allclose(got, np.exp(a) @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("world", "scenario", "victim"), [(4, "killed", 1), (2, "killed_rank0", 0)])
def test_a_killed_rank_makes_the_others_fail_naming_it(world, scenario, victim):
    timeout_s = 3.0
    outcomes = launch(scenario, world, timeout_s=timeout_s, deadline_s=60, expect_exit=frozenset({victim}))
    for rank in set(range(world)) - {victim}:
        kind, value = outcomes[rank][0], outcomes[rank][1]
        assert kind == "ok", outcomes[rank]
        assert value["missing"] == [victim], value["message"]
        assert f"rank {victim} stopped" in value["message"] and "all_reduce among ranks" in value["message"]
        if scenario == "killed":  # run by a program: the op is named
            assert "'stablehlo.all_reduce'" in value["message"]
        assert f"rank {rank}:" in value["message"]
        # within the timeout and the liveness check (1 s); rank 0, which hosts the store, also waits
        # for the others' diagnosis (their timeout) before raising
        assert value["seconds"] < (2 * timeout_s if rank == 0 else timeout_s) + 3, value


def test_a_rank_stuck_elsewhere_is_named_and_the_others_fail_within_the_timeout():
    timeout_s = 3.0
    outcomes = launch("stuck", 4, timeout_s=timeout_s, deadline_s=60)
    for rank in (0, 2, 3):
        value = outcomes[rank][1]
        assert value["missing"] == [1], value["message"]
        assert "rank 1 is alive but has not reached it" in value["message"], value["message"]
        assert value["seconds"] < (2 * timeout_s if rank == 0 else timeout_s) + 3  # as for a killed rank


def test_mismatched_programs_are_refused_on_every_rank():
    outcomes = launch("mismatch", 4)
    for rank in range(4):
        kind, name, message = outcomes[rank][:3]
        assert (kind, name) == ("error", "DistributedError"), outcomes[rank]
        assert f"rank {rank}: the processes do not all run the same program" in message
        assert "rank 3 runs program" in message


def test_a_program_for_another_number_of_partitions_is_refused():
    outcomes = launch("partitions", 2)
    for rank in range(2):
        assert outcomes[rank][:2] == ("error", "DistributedError"), outcomes[rank]
        assert "the program has 4 partitions (mhlo.num_partitions) but 2 processes run it" in outcomes[rank][2]


def test_an_incomplete_environment_names_the_missing_variable(monkeypatch):
    for name in ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"):
        monkeypatch.setenv(name, {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1", "WORLD_SIZE": "2"}.get(name, "0"))
    for name in ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"):
        with monkeypatch.context() as m:
            m.delenv(name)
            with pytest.raises(DistributedError, match=f"the environment variable {name} is not set"):
                initialize()
    with pytest.raises(DistributedError, match=r"process id \(RANK\) 5 is not in \[0, 2\)"):
        initialize(process_id=5)
    with pytest.raises(DistributedError, match="is not 'host:port'"):
        initialize("127.0.0.1")


def test_shards_split_and_assemble_as_the_sharding_says():
    mesh = Mesh(np.arange(4).reshape(2, 2), ("data", "model"))
    x = np.arange(5 * 6, dtype=np.float32).reshape(5, 6)
    for spec in (P("data", "model"), P(None, ("data", "model")), P("model"), P()):
        s = NamedSharding(mesh, spec)
        shards = [local_shard(x, s, p) for p in range(4)]
        assert all(sh.shape == s.shard_shape(x.shape) for sh in shards)
        np.testing.assert_array_equal(assemble_shards(shards, s, x.shape), x)
    # partition 3 is mesh position (1, 1): the second half of the rows (3 of 5, padded to 3)
    s = NamedSharding(mesh, P("data", "model"))
    assert shard_index(s, x.shape, 3) == (slice(3, 5), slice(3, 6))
    np.testing.assert_array_equal(local_shard(x, s, 3), np.vstack([x[3:5, 3:6], np.zeros((1, 3), np.float32)]))


@pytest.mark.slow  # four processes under torchrun: about 25 s on a loaded 2-core machine
def test_tensor_parallel_example_under_torchrun_matches_one_process(tmp_path):
    """examples/tensor_parallel.py on a 2x2 mesh of 4 processes gives the loss curve of the same
    steps run in one process."""
    sizes = ["--steps", "4", "--batch", "8", "--dim", "4", "--hidden", "8", "--timeout", "60"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    curves = {}
    for mode, launcher in [("single", [sys.executable]), ("torchrun", [
            sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "4"])]:
        out = tmp_path / f"{mode}.json"
        cmd = [*launcher, str(EXAMPLES / "tensor_parallel.py"), *sizes, "--losses-out", str(out)]
        cmd += ["--single"] if mode == "single" else []
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        curves[mode] = json.loads(out.read_text())
        assert "step   3  loss" in done.stdout
    assert len(curves["torchrun"]) == 4
    np.testing.assert_allclose(curves["torchrun"], curves["single"], rtol=1e-5)


@pytest.mark.slow  # four processes under two torchrun agents: about 10-25 s on a loaded 2-core machine
def test_tensor_parallel_example_over_two_nodes_matches_one_process(tmp_path):
    """Two machines, as torchrun starts them: two agents (node ranks 0 and 1, a static rendezvous at
    node 0's address), two processes each, so that a process's RANK and LOCAL_RANK differ and the
    store lives in another agent. examples/tensor_parallel.py, unchanged, gives the loss curve of
    the same steps in one process."""
    sizes = ["--steps", "4", "--batch", "8", "--dim", "4", "--hidden", "8", "--timeout", "60"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    single = tmp_path / "single.json"
    done = subprocess.run([sys.executable, str(EXAMPLES / "tensor_parallel.py"), *sizes, "--single",
                           "--losses-out", str(single)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    port = free_port()
    nodes = [subprocess.Popen([sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--node-rank", str(node),
                               "--nproc-per-node", "2", "--master-addr", "127.0.0.1", "--master-port", str(port),
                               str(EXAMPLES / "tensor_parallel.py"), *sizes, "--losses-out",
                               str(tmp_path / f"node{node}.json")],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for node in (0, 1)]
    outputs = []
    try:
        for node in nodes:
            outputs.append(node.communicate(timeout=300)[0])
    finally:
        for node in nodes:
            if node.poll() is None:
                node.kill()
                node.communicate()
    for node, out in zip(nodes, outputs, strict=True):
        assert node.returncode == 0, out[-3000:]
    assert "step   3  loss" in outputs[0] and "loss" not in outputs[1]  # global rank 0 runs on node 0 only
    curve = json.loads((tmp_path / "node0.json").read_text())
    assert len(curve) == 4
    np.testing.assert_allclose(curve, json.loads(single.read_text()), rtol=1e-5)


@pytest.mark.parametrize("name", ["float32", "bool", "int8", "uint32", "bfloat16", "float8_e4m3fn", "complex64"])
def test_arrays_reach_torch_without_a_copy(name):
    """A contiguous array and its tensor share memory (the tensor has the array's bits, as the
    dtype torch has for them)."""
    from distributed_worker import dtype
    x = operand(0, 0, name)
    t = to_torch(x)
    assert t.data_ptr() == x.__array_interface__["data"][0] and tuple(t.shape) == x.shape
    assert t.element_size() == x.dtype.itemsize
    assert str(t.dtype) == {"uint32": "torch.int32", "float8_e4m3fn": "torch.uint8"}.get(name, f"torch.{name}")
    assert np.asarray(x).dtype == dtype(name)


def test_reductions_torch_lacks_are_gathered_and_reduced_with_numpy():
    """None: gathered and reduced with numpy (max/min of wide unsigned integers, 8-bit floats,
    bitwise reductions on NCCL); booleans' and/or are min/max on either backend."""
    import ml_dtypes
    from torch.distributed import ReduceOp
    cases = [("uint32", "max", "gloo", None), ("uint32", "sum", "gloo", ReduceOp.SUM),
             (ml_dtypes.float8_e4m3fn, "sum", "gloo", None), ("int32", "xor", "gloo", ReduceOp.BXOR),
             ("int32", "xor", "nccl", None), ("bool", "and", "nccl", ReduceOp.MIN),
             ("bool", "or", "gloo", ReduceOp.MAX), ("bool", "xor", "nccl", None),
             ("bfloat16", "prod", "nccl", ReduceOp.PRODUCT)]
    for dt, reduction, backend, want in cases:
        dt = np.dtype(ml_dtypes.bfloat16) if dt == "bfloat16" else np.dtype(dt)
        assert _reduce_op(dt, reduction, backend) == want, (dt, reduction, backend)
    with pytest.raises(DistributedError, match="reduction 'xor' of float32 values"):
        _reduce_op(np.dtype(np.float32), "xor", "gloo")


@pytest.mark.slow  # eight processes, then four, on a 2-core machine: about 25 s
def test_the_sharded_corpus_gives_jax_values_with_a_process_per_device():
    """The suite of sharded programs JAX lowers on 8 fake devices (tests/transforms/spmd_corpus:
    Megatron MLP, 2-D-mesh training steps, layer norm, cross-entropy over a split vocabulary,
    embeddings, reductions, sort and top_k, while and cond on sharded data, shard_map with every
    collective, ...), each partitioned and run with one partition per gloo process (8 processes
    for the programs on 8-device meshes, 4 for those on 4): JAX's values (the same programs run
    on threads in test_spmd_partition)."""
    import json
    import math
    programs = json.loads((SPMD_CORPUS / "programs.json").read_text())
    values = np.load(SPMD_CORPUS / "values.npz")
    assert len(programs) >= 40
    checked = 0
    for world in sorted({math.prod(r["mesh"].values()) for r in programs}, reverse=True):
        outcomes = launch("corpus", world, timeout_s=120.0, deadline_s=600.0)
        for rank in range(world):
            assert outcomes[rank][0] == "ok", (world, outcomes[rank])
        got = outcomes[0][1]
        for record in programs:
            if math.prod(record["mesh"].values()) != world:
                continue
            name = record["name"]
            assert len(got[name]) == record["num_outputs"], name
            for i, g in enumerate(got[name]):
                np.testing.assert_allclose(g, values[f"{name}/out{i}"], rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name} result {i}")
            checked += 1
    assert checked == len(programs)


def test_the_heartbeat_stops_before_the_interpreter_finalizes():
    """A process that ends without `shutdown()` has its heartbeat thread stopped by an exit
    handler, before the interpreter finalizes: a daemon thread still inside a store call then
    would be ended from within C++ and abort the process. (Exit handlers run last-registered first:
    the check, registered before `initialize`, runs after the heartbeat's.)"""
    code = f"""
import atexit, threading
import loom.distributed
from loom.runtime import distributed
def check():
    beats = [t for t in threading.enumerate() if t.name.startswith("loom-heartbeat")]
    print("heartbeat alive" if beats else "heartbeat stopped", flush=True)
atexit.register(check)
loom.distributed.initialize("127.0.0.1:{free_port()}", 1, 0, timeout_s=30)
assert [t for t in threading.enumerate() if t.name.startswith("loom-heartbeat")]
"""
    assert _last_line_printed(code) == "heartbeat stopped"


def _last_line_printed(code: str) -> str:
    """The last line a fresh interpreter running `code` prints (it must exit with 0)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_shutdown_lets_go_of_the_programs_and_the_communicator():
    """After `shutdown()` nothing of loom's holds the communicator (the programs run keep it, and it
    the process groups): the groups go with the run, not with the interpreter's exit."""
    code = f"""
import gc, weakref
import numpy as np
import loom.distributed
from loom.runtime import distributed
loom.distributed.initialize("127.0.0.1:{free_port()}", 1, 0, timeout_s=30)
text = '''func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %0 = "stablehlo.all_reduce"(%x) <{{replica_groups = dense<[[0]]> : tensor<1x1xi64>}}> ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }}) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}}'''
(y,) = distributed.run_partitioned(text, [np.arange(4, dtype=np.float32)])
assert y.tolist() == [0.0, 1.0, 2.0, 3.0]
comm = weakref.ref(distributed.communicator())
assert distributed._PROGRAMS
loom.distributed.shutdown()
gc.collect()
print("released" if not distributed._PROGRAMS and comm() is None else "held", flush=True)
"""
    assert _last_line_printed(code) == "released"
