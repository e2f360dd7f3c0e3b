"""The asynchronous collectives on both runtimes. Oracles: the same program with synchronous
permutes (the unscheduled decomposed program) and the undecomposed one, run on the in-process
mesh; numpy for what a permute delivers.

In process: the start returns before the peers arrive and the done waits; under a `LinkModel`
the measured timeline shows a scheduled program's transfers overlapping its compute, and a
synchronous program's never (asserted on the spans, never on wall-clock durations); each link
carries one transfer at a time, for the model's time; a partition that fails before its start
makes the others' done fail naming it. On processes (gloo, 2 ranks, `launch` of
distributed_worker.py, every wait bounded): the scheduled programs give the in-process values bit
for bit, a start returns before the peer posts its receive, the communicator records a send's
span around the compute between its start and its done, and a rank that dies makes the other's
done fail naming it."""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

import numpy as np
import pytest

import loom
from loom.ir.core import Operation
from loom.rewrite.pass_manager import PassManager
from loom.runtime.communicator import current
from loom.runtime.local import LinkModel, ThreadCommunicator, _run, run_spmd
from loom.sharding import Mesh, NamedSharding, P
from loom.sharding.partitioning import partition
from loom.sim.timeline import Timeline

F32 = np.float32
PAIRS_2 = ((0, 1), (1, 0))


# Programs --------------------------------------------------------------------------------------

def matmul_program(n: int, pattern: str, m: int = 4, k: int = 6, c: int = 2) -> Operation:
    """a @ b partitioned over n devices: `all_gather` (a split by rows, b by columns and gathered)
    or `reduce_scatter` (both split along the contraction, the result scattered by rows)."""
    mesh = Mesh(np.arange(n), ("x",))
    if pattern == "all_gather":
        specs, out, shapes = [P("x", None), P(None, "x")], P("x", None), [(m * n, k), (k, c * n)]
    else:
        specs, out, shapes = [P(None, "x"), P("x", None)], P("x", None), [(m * n, k * n), (k * n, c * n)]
    s = lambda spec: NamedSharding(mesh, spec)  # noqa: E731
    jitted = loom.jit(lambda a, b: a @ b, in_shardings=tuple(s(p) for p in specs), out_shardings=s(out))
    return partition(jitted.lower(*[np.zeros(sh, F32) for sh in shapes]).module)


def transformed(module: Operation, pipeline: str) -> Operation:
    out = loom.ir.parse(str(module))
    if pipeline:
        PassManager.parse(f"builtin.module({pipeline})").run(out)
    out.verify()
    return out


DECOMPOSE = "decompose-collective-matmul{mode=on}"
SCHEDULE = "decompose-collective-matmul{mode=on},schedule-latency-hiding"


def local_args(module: Operation, n: int, seed: int = 0) -> list[list[np.ndarray]]:
    """Random per-device arguments of the module's local types."""
    func = next(op for op in module.walk() if op.name == "func.func")
    types = func.get_attr("function_type").value.inputs
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(tuple(t.shape)).astype(F32) for t in types] for _ in range(n)]


# In process -------------------------------------------------------------------------------------

@pytest.mark.parametrize("bidirectional", [False, True], ids=["ring", "bidirectional"])
@pytest.mark.parametrize("pattern", ["all_gather", "reduce_scatter"])
def test_scheduled_programs_give_the_synchronous_values_on_both_executors(pattern, bidirectional):
    n = 4
    module = matmul_program(n, pattern)
    options = "mode=on bidirectional=true" if bidirectional else "mode=on"
    sync = transformed(module, f"decompose-collective-matmul{{{options}}}")
    scheduled = transformed(sync, "schedule-latency-hiding")
    args = local_args(module, n)
    want = run_spmd(sync, args)
    undecomposed = run_spmd(module, args)
    for executor in ("compiled", "interpreter"):
        for link in (None, LinkModel(latency=1e-4, bandwidth=1e9)):
            got = run_spmd(scheduled, args, executor=executor, link=link)
            for w, g, u in zip(want, got, undecomposed):
                np.testing.assert_array_equal(g[0], w[0])
                np.testing.assert_allclose(g[0], u[0], rtol=1e-5, atol=1e-5)


def _permute_runners(body):
    return [lambda *a, p=p: body(p, current().communicator, *a) for p in range(2)]


def test_a_start_returns_before_the_peer_arrives_and_the_done_waits():
    started = threading.Event()
    seen: dict[int, Any] = {}

    def body(p: int, comm: ThreadCommunicator, x: np.ndarray):
        if p == 1:
            # partition 0's start must return without partition 1 having started: were it to
            # block, this bounded wait would fail
            seen["started first"] = started.wait(10)
        transfer = comm.collective_permute_start(p, x, PAIRS_2)
        if p == 0:
            started.set()
        return transfer.wait()

    xs = [np.full(3, 10.0 + p, F32) for p in range(2)]
    outs = _run(_permute_runners(body), [[x] for x in xs], timeout=10)
    assert seen["started first"] is True
    np.testing.assert_array_equal(outs[0][0], xs[1])
    np.testing.assert_array_equal(outs[1][0], xs[0])


def test_a_partition_that_fails_before_its_start_is_named_at_the_others_done():
    def body(p: int, comm: ThreadCommunicator, x: np.ndarray):
        if p == 1:
            raise ValueError("boom")
        return comm.collective_permute_start(p, x, PAIRS_2).wait()

    with pytest.raises(loom.runtime.communicator.PartitionError, match=r"partition 1 of 2 failed: ValueError: boom"):
        _run(_permute_runners(body), [[np.ones(2, F32)]] * 2, timeout=10)
    comm = ThreadCommunicator(2, timeout=10)
    comm.fail(1, "ValueError: boom")
    with pytest.raises(loom.runtime.communicator.CollectiveError, match=r"partition 1 failed: ValueError: boom") as e:
        comm.collective_permute_start(0, np.ones(2, F32), PAIRS_2).wait()
    assert e.value.partition == 1
    comm.close()


def _overlap(a: list, b: list) -> float:
    """Seconds during which a span of `a` and a span of `b` both run."""
    return sum(max(0.0, min(x.end, y.end) - max(x.start, y.start)) for x in a for y in b)


def _links(timeline: Timeline, device: int) -> list:
    return timeline.spans(device, "link+") + timeline.spans(device, "link-")


def test_under_the_link_model_a_scheduled_program_overlaps_transfers_with_compute():
    n, latency = 2, 0.05
    module = matmul_program(n, "all_gather", m=192, k=384, c=192)  # each step's dot takes milliseconds
    args = local_args(module, n)
    link = LinkModel(latency=latency, bandwidth=1e12)
    timelines = {}
    for name, pipeline in (("sync", DECOMPOSE), ("scheduled", SCHEDULE)):
        timelines[name] = tl = Timeline(name)
        out = run_spmd(transformed(module, pipeline), args, link=link, timeline=tl)
        for want, got in zip(run_spmd(module, args), out):
            np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-4)
        for d in range(n):
            assert tl.spans(d, "compute") and _links(tl, d)
    # synchronous permutes: a device computes only when its transfers are over
    sync = timelines["sync"]
    assert all(_overlap(sync.spans(d, "compute"), _links(sync, d)) == 0 for d in range(n))
    # scheduled: the device whose start completes the rendezvous computes its dot while its shard
    # is on the link (the others may reach their start earlier, and wait for it)
    scheduled = timelines["scheduled"]
    overlaps = [_overlap(scheduled.spans(d, "compute"), _links(scheduled, d)) for d in range(n)]
    assert max(overlaps) > 0, overlaps


def test_each_link_carries_one_transfer_at_a_time_for_the_models_time(tmp_path):
    n = 4
    module = matmul_program(n, "all_gather")
    link = LinkModel(latency=2e-3, bandwidth=1e6)
    tl = Timeline()
    run_spmd(transformed(module, SCHEDULE), local_args(module, n), link=link, timeline=tl)
    for d in range(n):
        spans = _links(tl, d)
        assert len(spans) == n - 1  # the shard goes around the ring: N - 1 transfers per device
        for lane in ("link+", "link-"):
            ordered = tl.spans(d, lane)
            assert all(a.end <= b.start + 1e-9 for a, b in zip(ordered, ordered[1:]))
        for s in spans:
            assert s.duration == pytest.approx(link.seconds(s.args["bytes"]))
    trace = json.loads(tl.write_chrome(tmp_path / "trace.json").read_text())
    threads = {(e["pid"], e["args"]["name"]) for e in trace["traceEvents"] if e["name"] == "thread_name"}
    assert {(d, "compute") for d in range(n)} <= threads
    assert any(lane in ("link+", "link-") for _, lane in threads)


def test_synchronous_collectives_take_the_link_models_time_on_the_ring():
    n = 4
    module = matmul_program(n, "all_gather")  # an all_gather of b's column blocks
    link = LinkModel(latency=1e-3, bandwidth=1e6)
    tl = Timeline()
    run_spmd(module, local_args(module, n), link=link, timeline=tl)
    for d in range(n):
        spans = tl.spans(d, "link+")
        assert len(spans) == n - 1 and all(s.name == "all_gather" for s in spans)
        assert all(a.end == pytest.approx(b.start) for a, b in zip(spans, spans[1:]))  # hop after hop
        assert _overlap(tl.spans(d, "compute"), spans) == 0


# On processes (gloo) ----------------------------------------------------------------------------

def _store():
    import torch.distributed as dist
    return dist.distributed_c10d._get_default_store()


def scenario_async(rank: int, world: int) -> dict[str, Any]:
    """The scheduled programs; and a start that returns before the peer posts its
    receive (rank 1 starts only once rank 0 says its start returned; bounded)."""
    from loom.runtime.distributed import communicator, run_partitioned
    out: dict[str, Any] = {}
    for pattern in ("all_gather", "reduce_scatter"):
        module = matmul_program(world, pattern)
        scheduled = transformed(module, SCHEDULE)
        args = local_args(module, world)[rank]
        out[pattern] = run_partitioned(str(scheduled), args)[0]
    comm, store = communicator(), _store()
    x = np.full(5, 100.0 + rank, F32)
    if rank == 1:
        store.wait(["rank0-started"], __import__("datetime").timedelta(seconds=10))
    transfer = comm.collective_permute_start(rank, x, [(p, (p + 1) % world) for p in range(world)])
    if rank == 0:
        store.set("rank0-started", "1")
    out["permuted"] = transfer.wait()
    # the communicator's measured spans of one run of the scheduled all-gather program
    timeline = Timeline()
    comm.record(timeline)
    module = matmul_program(world, "all_gather")
    run_partitioned(str(transformed(module, SCHEDULE)), local_args(module, world)[rank])
    comm.record(None)
    out["spans"] = {lane: [(s.name, s.start, s.end) for s in timeline.spans(rank, lane)]
                    for lane in timeline.lanes(rank)}
    return out


def scenario_async_killed(rank: int, world: int) -> dict[str, Any]:
    """Rank 1 exits after a first run of the scheduled program; rank 0's second run fails."""
    from loom.runtime.distributed import CollectiveError, run_partitioned
    module = matmul_program(world, "all_gather")
    text = str(transformed(module, SCHEDULE))
    args = local_args(module, world)[rank]
    run_partitioned(text, args)
    if rank == 1:
        os._exit(17)
    start = time.monotonic()
    try:
        run_partitioned(text, args)
    except CollectiveError as e:
        return {"seconds": time.monotonic() - start, "message": str(e), "missing": e.missing}
    return {"seconds": time.monotonic() - start, "message": "no error", "missing": []}


SCENARIOS = {"async": scenario_async, "async_killed": scenario_async_killed}


def test_async_permutes_on_two_gloo_processes_give_the_in_process_values():
    pytest.importorskip("torch")
    from distributed_worker import launch
    world = 2
    outcomes = launch("async", world, module="test_async_collectives")
    for pattern in ("all_gather", "reduce_scatter"):
        module = matmul_program(world, pattern)
        want = run_spmd(transformed(module, DECOMPOSE), local_args(module, world))
        for rank in range(world):
            assert outcomes[rank][0] == "ok", outcomes[rank]
            np.testing.assert_array_equal(outcomes[rank][1][pattern], want[rank][0])
    for rank in range(world):
        np.testing.assert_array_equal(outcomes[rank][1]["permuted"], np.full(5, 100.0 + (rank - 1) % world, F32))
        spans = outcomes[rank][1]["spans"]
        assert set(spans) == {"compute", "link+"}, spans
        # the loop's one permute: a send from its start to its done, with the step's dot computed
        # in between (the compute span that the send's span holds)
        (send,) = [s for s in spans["link+"] if s[0].startswith("collective_permute")]
        assert send[0] == f"collective_permute {rank}->{(rank - 1) % world}"
        assert any(send[1] <= c[1] and c[2] <= send[2] for c in spans["compute"]), spans


def test_a_dead_rank_makes_the_others_done_fail_naming_it():
    pytest.importorskip("torch")
    from distributed_worker import launch
    timeout_s, victim = 3.0, 1
    outcomes = launch("async_killed", 2, timeout_s=timeout_s, deadline_s=60, module="test_async_collectives",
                      expect_exit=frozenset({victim}))
    kind, value = outcomes[0][0], outcomes[0][1]
    assert kind == "ok", outcomes[0]
    assert value["missing"] == [victim], value["message"]
    assert f"rank {victim} stopped" in value["message"] and "collective_permute" in value["message"]
    assert value["seconds"] < 2 * timeout_s + 10, value


def test_mesh_executable_runs_with_a_link_model_and_records_a_timeline():
    from loom.runtime.local import MeshExecutable
    n = 4
    module = matmul_program(n, "reduce_scatter")
    mesh = Mesh(np.arange(n), ("x",))
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4 * n, 6 * n)).astype(F32), rng.standard_normal((6 * n, 2 * n)).astype(F32)
    want = np.asarray(MeshExecutable(module, mesh)(a, b))
    tl = Timeline()
    got = MeshExecutable(transformed(module, SCHEDULE), mesh, link=LinkModel(1e-4, 1e9))(a, b, timeline=tl)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(want, a @ b, rtol=1e-4, atol=1e-4)
    assert tl.devices() == list(range(n)) and all(_links(tl, d) for d in range(n))


def test_partitions_waiting_at_a_done_and_at_a_collective_for_each_other_are_a_deadlock():
    # partitions 0 and 1 wait at the done of a permute that partition 2 never starts; partition 2
    # waits at an all_gather with partition 1, which never comes: reported at once, not at the
    # timeout (the wait here is 60 s)
    def body(p: int, comm: ThreadCommunicator, x: np.ndarray):
        if p == 2:
            return comm.all_gather(p, x, (1, 2), 0)
        return comm.collective_permute_start(p, x, ((0, 1), (1, 2), (2, 0))).wait()

    runners = [lambda *a, p=p: body(p, current().communicator, *a) for p in range(3)]
    with pytest.raises(loom.runtime.communicator.PartitionError, match="deadlock"):
        _run(runners, [[np.ones(2, F32)]] * 3, timeout=60)
