"""ThreadCommunicator's two algorithms of all_reduce and reduce_scatter: below SLICED_REDUCE_MIN
elements the member that arrives last reduces every operand once, into one read-only array the
group's members share (an all_reduce's result; a reduce_scatter's member gets its piece of it);
from it up each member reduces its share. Both give numpy's reduction in group order; an error or a
stall in the reducing member reaches the others, naming it, within the timeout."""

from __future__ import annotations

import functools
import threading
import time

import numpy as np
import pytest
from runtime.test_local_mesh import in_threads

from loom.runtime import local
from loom.runtime.communicator import CollectiveError
from loom.runtime.local import REDUCE_CHUNK, SLICED_REDUCE_MIN, ThreadCommunicator

SIZES = {"one reducer": REDUCE_CHUNK * 2 + 3, "sliced": SLICED_REDUCE_MIN + 5}
GROUPS = {"all 4": [[0, 1, 2, 3]], "pairs": [[0, 2], [1, 3]], "3 and 1": [[3, 0, 1], [2]]}


def operands(n: int, size: int, dtype: type, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return [rng.standard_normal(size).astype(dtype) for _ in range(n)]
    return [rng.integers(-3, 4, size).astype(dtype) for _ in range(n)]


@pytest.mark.parametrize("size", sorted(SIZES), ids=str)
@pytest.mark.parametrize("grouping", sorted(GROUPS))
@pytest.mark.parametrize(("reduction", "ufunc", "dtype"), [("sum", np.add, np.float32), ("max", np.maximum, np.float32),
                                                           ("prod", np.multiply, np.int32)])
def test_both_algorithms_reduce_in_group_order(size, grouping, reduction, ufunc, dtype):
    groups = GROUPS[grouping]
    xs = operands(4, SIZES[size], dtype)
    comm = ThreadCommunicator(4, timeout=30)

    def body(p):
        group = next(g for g in groups if p in g)
        return comm.all_reduce(p, xs[p], group, reduction)

    outs, errors = in_threads(4, body, timeout=30)
    assert not errors, errors
    for p in range(4):
        group = next(g for g in groups if p in g)
        want = functools.reduce(ufunc, [xs[q] for q in group])  # ((x_g0 op x_g1) op x_g2), bit for bit
        np.testing.assert_array_equal(outs[p], want, err_msg=f"partition {p}")
        assert not any(np.shares_memory(outs[p], x) for x in xs)
        others = [q for q in range(4) if q != p]
        if size == "one reducer":  # one array per group, which nobody writes into
            assert not outs[p].flags.writeable
            assert all((outs[q] is outs[p]) == (q in group) for q in others)
            assert not any(np.shares_memory(outs[p], outs[q]) for q in others if q not in group)
        else:
            assert not any(np.shares_memory(outs[p], outs[q]) for q in others)


@pytest.mark.parametrize("size", sorted(SIZES), ids=str)
@pytest.mark.parametrize("grouping", sorted(GROUPS))
@pytest.mark.parametrize(("reduction", "ufunc", "dtype"), [("sum", np.add, np.float32), ("min", np.minimum, np.int64)])
def test_reduce_scatter_of_both_algorithms_reduces_in_group_order(size, grouping, reduction, ufunc, dtype):
    """Each member's piece along dimension 1 of (2, 12 k) operands: numpy's reduction of that
    piece of every operand in group order. Sliced, in an array of its own; below, a read-only
    piece of the sum the group shares."""
    groups = GROUPS[grouping]
    xs = [x.reshape(2, -1) for x in operands(4, 24 * (SIZES[size] // 24 + 1), dtype, seed=3)]
    comm = ThreadCommunicator(4, timeout=30)

    def body(p):
        group = next(g for g in groups if p in g)
        return comm.reduce_scatter(p, xs[p], group, 1, reduction)

    outs, errors = in_threads(4, body, timeout=30)
    assert not errors, errors
    for p in range(4):
        group = next(g for g in groups if p in g)
        want = np.split(functools.reduce(ufunc, [xs[q] for q in group]), len(group), axis=1)[group.index(p)]
        np.testing.assert_array_equal(outs[p], want, err_msg=f"partition {p}")
        assert not any(np.shares_memory(outs[p], o) for o in [*xs, *(outs[q] for q in range(4) if q != p)])
        if size == "sliced":
            assert outs[p].flags.writeable and outs[p].base is None
        else:
            assert not outs[p].flags.writeable
            assert all((outs[q].base is outs[p].base) == (q in group) for q in range(4))


@pytest.mark.parametrize("shape", [(), (3, 5)])
def test_small_operands_and_scalars(shape):
    xs = [np.full(shape, p + 0.5, np.float64) for p in range(3)]
    comm = ThreadCommunicator(3, timeout=30)
    outs, errors = in_threads(3, lambda p: comm.all_reduce(p, xs[p], range(3), "sum"))
    assert not errors, errors
    for p in range(3):
        assert outs[p].shape == shape and outs[p].dtype == np.float64
        np.testing.assert_array_equal(outs[p], (xs[0] + xs[1]) + xs[2])


@pytest.mark.parametrize("call", ["all_reduce", "reduce_scatter"])
@pytest.mark.parametrize(("size", "reducers"), [(SIZES["one reducer"], 1), (SIZES["sliced"], 4)])
def test_one_member_reduces_below_the_sliced_size(monkeypatch, call, size, reducers):
    threads = set()
    reduce_into = local._reduce_into

    def counted(*args, **kwargs):
        threads.add(threading.current_thread().name)
        return reduce_into(*args, **kwargs)

    monkeypatch.setattr(local, "_reduce_into", counted)
    xs = operands(4, size + (-size) % 4, np.float32)
    comm = ThreadCommunicator(4, timeout=30)
    outs, errors = in_threads(4, lambda p: getattr(comm, call)(p, xs[p], range(4), *(("sum",) if call == "all_reduce"
                                                                                     else (0, "sum"))))
    assert not errors, errors
    assert len(threads) == reducers
    want = ((xs[0] + xs[1]) + xs[2]) + xs[3]
    np.testing.assert_array_equal(outs[2], want if call == "all_reduce" else np.split(want, 4)[2])


def _last_arrives_after_the_others(comm: ThreadCommunicator, n: int, call):
    """Run call(p) in n threads, partition n - 1 only once the others wait in the collective."""
    def body(p):
        if p == n - 1:
            deadline = time.monotonic() + 10
            while len(comm._waiting) < n - 1 and time.monotonic() < deadline:
                time.sleep(0.005)
        return call(p)

    return in_threads(n, body, timeout=30)


def test_an_error_in_the_reducing_member_names_it_in_the_others(monkeypatch):
    def broken(*args, **kwargs):
        raise MemoryError("no room for the sum")

    monkeypatch.setattr(local, "_reduce_into", broken)
    comm = ThreadCommunicator(3, timeout=30)
    xs = operands(3, 100, np.float32)
    _, errors = _last_arrives_after_the_others(comm, 3, lambda p: comm.all_reduce(p, xs[p], range(3), "sum"))
    assert isinstance(errors[2], MemoryError)
    for p in (0, 1):
        assert isinstance(errors[p], CollectiveError) and errors[p].partition == 2
        assert "partition 2 failed while combining the operands: MemoryError: no room for the sum" in str(errors[p])


def test_a_stalled_reducing_member_times_the_others_out(monkeypatch):
    reduce_into = local._reduce_into

    def slow(*args, **kwargs):
        time.sleep(1.0)
        return reduce_into(*args, **kwargs)

    monkeypatch.setattr(local, "_reduce_into", slow)
    comm = ThreadCommunicator(2, timeout=0.2)
    xs = operands(2, 100, np.float32)
    start = time.monotonic()
    outs, errors = _last_arrives_after_the_others(comm, 2, lambda p: comm.all_reduce(p, xs[p], range(2), "sum"))
    assert time.monotonic() - start < 5
    assert isinstance(errors[0], CollectiveError) and errors[0].partition == 1
    assert "partition 1 did not combine the operands within 0.2 s" in str(errors[0])
    np.testing.assert_array_equal(outs[1], xs[0] + xs[1])  # the reducing member itself completes


@pytest.mark.parametrize("size", sorted(SIZES), ids=str)
def test_donated_operands_hold_the_sum_when_sliced_and_stay_unwritten_below(size):
    """Every member donates. Sliced, the reduction goes through a scratch array, REDUCE_CHUNK
    elements at a time, and each operand becomes its member's result; below, the one shared result
    is written once and the operands are left as they were."""
    xs = operands(3, SIZES[size], np.float32, seed=2)
    held = [x.copy() for x in xs]
    comm = ThreadCommunicator(3, timeout=30)

    def body(p):
        return comm.all_reduce(p, xs[p], range(3), "sum", in_place=True)

    outs, errors = in_threads(3, body, timeout=30)
    assert not errors, errors
    for p in range(3):
        assert (outs[p] is xs[p]) == (size == "sliced")
        np.testing.assert_array_equal(outs[p], (held[0] + held[1]) + held[2])
        if size == "one reducer":
            np.testing.assert_array_equal(xs[p], held[p])
