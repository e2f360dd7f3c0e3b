"""Placed programs partitioned by device (loom.transforms.mpmd_partition) and run by
loom.runtime.mpmd: one thread per device in process, and one gloo process per device (processes
started by tests/runtime/mpmd_worker.py, every wait bounded). The single-device program is the
oracle, bit for bit (the per-device programs run the same ops on the same values); gradients are
checked against the single-device gradient and float64 finite differences."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from mpmd_programs import four_stages, operands, pipeline, pipeline_loss, three_devices

import loom
from loom.runtime.communicator import PartitionError
from loom.runtime.mpmd import MPMDProgram
from loom.transforms.mpmd_partition import partition


def program(f, *args, parallel_iterations=10, executor="compiled"):
    return MPMDProgram(partition(loom.jit(f).lower(*args).module, parallel_iterations=parallel_iterations), executor)


def assert_bitwise_equal(got, want) -> None:
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes(), (g, w)


@pytest.mark.parametrize("executor", ["compiled", "interpreter"])
@pytest.mark.parametrize("trips", [0, 1, 3, 7])
def test_a_data_dependent_loop_on_two_devices_matches_one_device(trips: int, executor: str) -> None:
    x, _ = operands()
    n = np.int32(trips)
    got = program(pipeline, x, n, executor=executor)(x, n, timeout=20)
    assert_bitwise_equal(got, loom.jit(pipeline)(x, n))
    assert int(got[0]) == trips


def test_mpmd_program_traces_partitions_and_runs_a_placed_function() -> None:
    from loom.frontend.placement import mpmd_program
    x, n = operands()
    prog = mpmd_program(pipeline, x, n, parallel_iterations=3)
    assert prog.num_devices == 2
    assert_bitwise_equal(prog(x, n, link_latency=1e-3), loom.jit(pipeline)(x, n))


def test_the_trip_count_may_differ_run_to_run_and_depends_on_data() -> None:
    x, _ = operands()
    prog = program(pipeline, x, np.int32(40))
    counts = set()
    for scale, offset in ((1.0, 0.0), (0.0, 0.0), (1.0, 1.0), (-1.0, -1.0)):  # the predicate reads the data
        y = (x * scale + offset).astype(np.float32)
        got = prog(y, np.int32(40), timeout=20)
        assert_bitwise_equal(got, loom.jit(pipeline)(y, np.int32(40)))
        counts.add(int(got[0]))
    assert len(counts) == 4 and 0 in counts and 40 not in counts


@pytest.mark.parametrize("trips", [0, 1, 4])
def test_four_stages_on_four_devices_with_the_predicate_on_the_last(trips: int) -> None:
    x, _ = operands()
    n = np.int32(trips)
    got = program(four_stages, x, n, parallel_iterations=2)(x, n, timeout=20)
    assert_bitwise_equal(got, loom.jit(four_stages)(x, n))
    assert int(got[0]) == trips


@pytest.mark.parametrize("trips", [0, 1, 4])
def test_three_devices_with_conds_in_the_loop_a_nested_loop_and_a_decision_sent_across(trips: int) -> None:
    x, _ = operands()
    n = np.int32(trips)
    got = program(three_devices, x, n)(x, n, timeout=20)
    assert_bitwise_equal(got, loom.jit(three_devices)(x, n))


def test_both_branches_of_a_cross_device_conditional_are_taken_over_the_iterations() -> None:
    """The data make the decision sent from device 0 to device 2 go both ways across iterations,
    so each device skips its untaken side in some iteration and nothing waits for it."""
    x, _ = operands()
    decisions = []

    def record(c):
        h = c[1]
        return (c[0] < 6) & (h.sum() > -1e9)
    import loom.numpy as lnp
    from loom import lax

    def f(x):
        def body(c):
            i, h, acc = c
            with loom.placement(0):
                h = lnp.tanh(h * -1.7 + 0.05)
                i = i + 1
            with loom.placement(0):
                acc = lax.cond(h.sum() > 0, lambda a: _on(1, lambda: a + 1.0), lambda a: _on(1, lambda: a * 0.5),
                               acc)
            return i, h, acc
        return lax.while_loop(record, body, (lnp.int32(0), x, lnp.zeros_like(x)))

    prog = program(f, x)
    got = prog(x, timeout=20)
    assert_bitwise_equal(got, loom.jit(f)(x))
    h = x.astype(np.float64)
    for _ in range(6):
        h = np.tanh(h * -1.7 + 0.05)
        decisions.append(h.sum() > 0)
    assert any(decisions) and not all(decisions)
    # device 1 received one decision per iteration, and device 0 sent nothing it did not receive
    recvs = [e for e in prog.events if e[0] == 1 and e[1] == "recv"]
    sends = [e for e in prog.events if e[0] == 0 and e[1] == "send"]
    assert sorted(e[2:] for e in recvs) == sorted(e[2:] for e in sends)


def _on(device, f):
    with loom.placement(device):
        return f()


@pytest.mark.parametrize("parallel", [1, 3])
@pytest.mark.parametrize("trips", [0, 1, 3])
def test_a_loop_nested_in_a_loop_both_spanning_two_devices(trips: int, parallel: int) -> None:
    """The inner loop's transfers carry both counters; its trip count depends on the outer
    iteration and on the data, and it is decided on device 1 while the outer one is on device 0."""
    import loom.numpy as lnp
    from loom import lax

    def f(x, n):
        def outer(c):
            i, h = c

            def inner(s):
                j, g = s
                with loom.placement(0):
                    g = lnp.tanh(g + 0.1)
                with loom.placement(1):
                    g = g * 1.5
                    j = j + 1
                return j, g
            _, h = lax.while_loop(lambda s: _on(1, lambda: (s[0] < i + 1) & (s[1].sum() < 50.0)), inner,
                                  (lnp.int32(0), h))
            with loom.placement(0):
                i = i + 1
            return i, h
        return lax.while_loop(lambda c: _on(0, lambda: c[0] < n), outer, (lnp.int32(0), x))

    x = np.linspace(-1, 1, 4).astype(np.float32)
    prog = program(f, x, np.int32(trips), parallel_iterations=parallel)
    assert_bitwise_equal(prog(x, np.int32(trips), timeout=20), loom.jit(f)(x, np.int32(trips)))
    inner = {e[3] for e in prog.events if e[1] == "recv" and len(e[3]) == 2}  # tagged (outer, inner)
    # outer iteration i runs i + 1 inner iterations: i + 2 inner predicates, the last one false
    assert inner == {(i, j) for i in range(trips) for j in range(i + 2)}


@pytest.mark.parametrize("k", [0, 1, 2])
def test_a_switch_whose_branches_live_on_three_devices_runs_from_its_printed_text(k: int) -> None:
    import loom.numpy as lnp
    from loom import lax

    def f(x, k):
        def body(c):
            i, h = c
            with loom.placement(0):
                index = (i + k) % 3
            h = lax.switch(index, [lambda v: _on(1, lambda: v * 2.0), lambda v: _on(2, lambda: v - 1.0),
                                   lambda v: _on(0, lambda: lnp.sin(v))], h)
            with loom.placement(0):
                i = i + 1
            return i, h
        return lax.while_loop(lambda c: _on(0, lambda: c[0] < 5), body, (lnp.int32(0), x))

    x = np.linspace(0, 1, 4).astype(np.float32)
    text = str(partition(loom.jit(f).lower(x, np.int32(k)).module))
    got = MPMDProgram(text)(x, np.int32(k), timeout=20)
    assert_bitwise_equal(got, loom.jit(f)(x, np.int32(k)))


def test_the_gradient_through_the_partitioned_loop_matches_one_device_and_finite_differences() -> None:
    loom.config.update("enable_x64", True)
    try:
        x, n = operands(n=5, dtype=np.float64)
        g = loom.grad(pipeline_loss)
        got, = program(g, x, n)(x, n, timeout=20)
        assert_bitwise_equal((got,), loom.jit(g)(x, n))
        eps = 1e-6
        fd = np.array([(float(loom.jit(pipeline_loss)(x + eps * e, n)) - float(loom.jit(pipeline_loss)(x - eps * e, n)))
                       / (2 * eps) for e in np.eye(len(x))])
        np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)
    finally:
        loom.config.update("enable_x64", False)


def test_a_device_that_fails_inside_the_loop_stops_the_others_with_an_error_naming_it() -> None:
    x, _ = operands()
    prog = program(three_devices, x, np.int32(20))

    def failing(*args):
        raise RuntimeError("device 2 broke")
    prog._runners[2] = failing
    with pytest.raises(PartitionError, match=r"partition 2 of 3 failed: RuntimeError: device 2 broke \(partitions "
                                             r"\[0, 1\] stopped as a consequence\)") as info:
        prog(x, np.int32(20), timeout=20)
    assert info.value.partition == 2


def test_a_receive_that_never_comes_times_out_naming_the_device_and_the_op() -> None:
    x, _ = operands()
    prog = program(pipeline, x, np.int32(3))

    def stall(event):  # device 0 stalls in its first iteration, past device 1's patience
        if event == (0, "iteration", 0, (0,)):
            time.sleep(1.0)
    with pytest.raises(PartitionError, match=r"device 1 at mpmd.recv from device 0 channel \d+ iteration \[0\]: "
                                             r"device 0 did not send within 0.5 s"):
        prog(x, np.int32(3), timeout=0.5, on_event=stall)


def _gated_run(parallel: int) -> tuple[bool, list]:
    """Run the pipeline with device 1 held at the start of its iteration 0 until device 0 starts
    iteration 1 (at most 2 s); whether device 0 got there, and the events in order."""
    x, _ = operands()
    prog = program(pipeline, x, np.int32(4), parallel_iterations=parallel)
    ahead, went_ahead = threading.Event(), []

    def on_event(event):
        if event == (0, "iteration", 0, (1,)):
            ahead.set()
        if event == (1, "iteration", 0, (0,)):
            went_ahead.append(ahead.wait(2.0))
    got = prog(x, np.int32(4), timeout=20, on_event=on_event)
    assert_bitwise_equal(got, loom.jit(pipeline)(x, np.int32(4)))
    return went_ahead == [True], prog.events


def test_parallel_iterations_let_a_device_run_an_iteration_ahead_of_its_successor() -> None:
    went_ahead, events = _gated_run(parallel=2)
    assert went_ahead
    order = [e for e in events if e[1] in ("iteration", "recv")]
    # device 0 opened iteration 1 before device 1, in its iteration 0, received device 0's stage
    opened_0 = order.index((1, "iteration", 0, (0,)))
    stage = next(k for k, e in enumerate(order) if k > opened_0 and e[:2] == (1, "recv") and e[3] == (0,))
    assert order.index((0, "iteration", 0, (1,))) < stage
    # and never more than 2 iterations apart: device 0 opens i only after device 1 opened i - 1
    opened = [(e[0], e[3][0]) for e in events if e[1] == "iteration"]
    for i in range(1, 4):
        assert opened.index((1, i - 1)) < opened.index((0, i))


def test_one_parallel_iteration_keeps_the_devices_in_step() -> None:
    went_ahead, events = _gated_run(parallel=1)
    assert not went_ahead
    opened = [(e[0], e[3][0]) for e in events if e[1] == "iteration"]
    for i in range(1, 4):  # nobody opens iteration i before everybody opened i - 1... and i itself
        assert opened.index((1, i - 1)) < opened.index((0, i)) and opened.index((0, i - 1)) < opened.index((1, i))
    # device 1 received the stage of iteration i - 1 before device 0 opened iteration i
    order = [e for e in events if e[1] in ("iteration", "recv")]
    for i in range(1, 4):
        got = next(k for k, e in enumerate(order) if e[0] == 1 and e[1] == "recv" and e[3] == (i - 1,))
        assert got < order.index((0, "iteration", 0, (i,)))


def test_the_example_pipeline_and_its_gradient_equal_the_single_device_run() -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("RANK", None)
    done = subprocess.run([sys.executable, str(root / "examples" / "mpmd_loop.py"), "--width", "16", "--steps", "12"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert "on 2 threads" in done.stdout
    assert "result equals the single-device run: True" in done.stdout
    assert "gradient equals the single-device gradient: True" in done.stdout


torch = pytest.importorskip("torch")


@pytest.mark.parametrize("world", [2, 3, 4])
def test_on_gloo_processes_the_partitioned_programs_match_one_device(world: int) -> None:
    from mpmd_worker import launch
    x, _ = operands()
    outcomes = launch("programs", world, deadline_s=120)
    for rank in range(world):
        assert outcomes[rank][0] == "ok", outcomes[rank]
        got = outcomes[rank][1]
        if world == 2:
            for n in (0, 1, 5, 20):
                assert_bitwise_equal(got[f"pipeline{n}"], loom.jit(pipeline)(x, np.int32(n)))
            assert_bitwise_equal(got["grad"], loom.jit(loom.grad(pipeline_loss))(x, np.int32(4)))
        elif world == 3:
            for n in (0, 3):
                assert_bitwise_equal(got[f"three{n}"], loom.jit(three_devices)(x, np.int32(n)))
        else:
            for n in (0, 4):
                assert_bitwise_equal(got[f"four{n}"], loom.jit(four_stages)(x, np.int32(n)))


def test_a_process_killed_mid_loop_makes_the_others_fail_naming_it() -> None:
    from mpmd_worker import launch
    victim, world = 1, 3
    outcomes = launch("killed_mid_loop", world, timeout_s=10, deadline_s=90, expect_exit=frozenset({victim}))
    for rank in set(range(world)) - {victim}:
        kind, value = outcomes[rank][0], outcomes[rank][1]
        assert kind == "ok", outcomes[rank]
        message = value["message"]
        # a rank waiting on the victim names it; one waiting on a peer that failed names that one
        assert f"rank {victim} stopped" in message or "failed" in message, message
        assert any(op in message for op in ("mpmd.recv", "mpmd.send", "mpmd.iteration")), message
        assert value["seconds"] < 30, value
    assert any(f"rank {victim} stopped" in outcomes[r][1]["message"] for r in set(range(world)) - {victim})


def test_on_gloo_processes_a_decider_that_sends_no_predicate_is_named() -> None:
    from mpmd_worker import launch
    outcomes = launch("undecided", 2, deadline_s=90)
    assert all(outcomes[r][0] == "ok" for r in range(2)), outcomes
    decider, other = outcomes[0][1], outcomes[1][1]
    assert "rank 0 at mpmd.iteration 0 of loop 0" in decider["message"], decider
    assert "sent rank 1 no message" in decider["message"] and decider["blamed"] == 0, decider
    assert "rank 0" in other["message"] and other["blamed"] == 0, other
    assert decider["seconds"] < 15 and other["seconds"] < 30, outcomes


def test_on_gloo_processes_a_device_runs_at_most_parallel_iterations_ahead() -> None:
    from mpmd_worker import launch
    outcomes = launch("window", 2, deadline_s=90)
    assert all(outcomes[r][0] == "ok" for r in range(2)), outcomes
    for parallel in (1, 2, 4):
        begun, stall_end = outcomes[0][1][parallel], outcomes[1][1][parallel]
        assert len(begun) > parallel, begun
        # iteration i waits for the peer to start i - parallel + 1: the first parallel - 1 go ahead
        assert all(t < stall_end for t in begun[:parallel - 1]), (parallel, begun, stall_end)
        assert all(t >= stall_end for t in begun[parallel - 1:]), (parallel, begun, stall_end)
        # the time blocked on the transport: rank 0 waited out the stall, rank 1 found its messages sent
        assert outcomes[0][1]["waited"][parallel] > 1.0, outcomes[0][1]["waited"]
        assert outcomes[1][1]["waited"][parallel] < 0.5, outcomes[1][1]["waited"]
