"""A mesh of devices in one process: one thread per partition.

    outs = run_spmd(per_device_module, [[x0], [x1], [x2], [x3]])   # outs[p]: partition p's results

Each partition runs the same per-device program on its own arguments, in its own thread, with its
partition id and a `ThreadCommunicator` installed (`spmd_context`); the collective kernels meet in
the communicator. numpy releases the GIL in large operations, so the partitions really run in
parallel. The compiled program is compiled once and shared by all threads (its generated code
keeps no state between calls); the interpreter, which keeps its environment on itself, gets one
instance per thread.

A collective is a rendezvous: each member of the group deposits its operand, waits (on one
condition variable, with a deadline) until every member has, and computes its own result from
all operands into a new array. An all_gather's result, and an all_reduce's below
`SLICED_REDUCE_MIN` elements, is the same for every member: the member that arrives last computes
it once, into one read-only array they all get, while the others wait. A reduce_scatter below that
size is reduced whole by the member that arrives last too, and each member gets its piece of that
array. Larger reductions are shared: each member reduces a slice of every operand (an all_reduce
whose operand the program never reads again, `loom.runtime.executable.dead_operand_collectives`,
into that operand). A member that fails, finishes its program without joining, calls a different
collective, or does not arrive in time makes the others raise a `CollectiveError` naming it; when
every running partition waits for one that waits too (mismatched groups), the deadlock is reported
at once.
`run_spmd` then raises a `PartitionError` naming the partition that failed first.

On a mesh of torch devices (`run_spmd(..., devices=...)`, or a `MeshExecutable` whose mesh holds
them: GPUs, or torch's CPU) each partition's program is compiled for its device and the
collectives run between the devices (loom.runtime.device_mesh).

`MeshExecutable(partitioned_module, mesh)` runs the output of `loom.sharding.partition` on global
values: each argument is split by its `sdy.sharding` (uneven dimensions padded with zeros up to
the local type), and each result assembled into a `ShardedArray` of its `loom.global_type`.

    exe = MeshExecutable(partitioned, loom.make_mesh((2, 4), ("data", "model")))
    y = exe(x, w)                  # y.sharding, y.addressable_shards, np.asarray(y)

Asynchronous collectives (loom.dialects.comm): a `collective_permute_start` deposits its operand
and returns; the partition's transfer thread waits for the round and delivers what the partition
receives, which the `collective_permute_done` waits for. With a `LinkModel` every transfer, sync
or async, takes its latency + bytes / bandwidth of wall time on a link (the transfer threads, or a
thread blocked in a synchronous collective, wait it out; compute is never slowed), so overlap
shows in wall time and in the measured timeline (`timeline=`: "compute" spans and the transfers
of each partition's "link+" / "link-").
"""

from __future__ import annotations

import math
import queue
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from loom.backend.common import dtype_of, shape_of
from loom.backend.interpreter import functions_of
from loom.ir.core import Operation
from loom.runtime.communicator import (
    REDUCTION_UFUNCS,
    CollectiveError,
    PartitionError,
    Transfer,
    spmd_context,
)
from loom.runtime.devices import ShardedArray, host_array, is_tensor
from loom.runtime.executable import Interpreted, compile_partition
from loom.sharding import Mesh, NamedSharding, shard_slices

# How long a partition waits for its peers at a collective before giving up (seconds).
DEFAULT_TIMEOUT = 120.0
# all_reduce and reduce_scatter of operands of at least this many elements (4 MiB of float32)
# reduce in slices, each member its own share of every operand: the work is spread over the
# members at the cost of waking each one more. A smaller one is reduced by the member that arrives
# last while the others wait (one wake-up each): below this size waking the members costs more
# than the work they would share.
SLICED_REDUCE_MIN = 1 << 20
# A reduction into donated operands only accumulates this many elements at a time in a scratch
# array (256 KiB of float32, which stays in the cache).
REDUCE_CHUNK = 1 << 16
# Results of at least this many bytes come from arrays the partition's earlier results of the same
# shape and dtype left behind once nothing holds them: a fresh large array costs a page fault (and
# the kernel's zeroing) per page, since the allocator gives freed ones back to the system.
REUSE_MIN_BYTES = 1 << 20


@dataclass(frozen=True)
class LinkModel:
    """A ring link of the in-process mesh: each transfer over it takes `latency` + bytes /
    `bandwidth` seconds of wall time (bandwidth in bytes/s per direction). Each partition has two
    links, to the next partition ("link+") and to the previous one ("link-"); one link carries one
    transfer at a time. The time passes on the transfer threads (and on the threads waiting for a
    synchronous collective): the compute threads run on, unslowed."""

    latency: float
    bandwidth: float

    def __post_init__(self) -> None:
        if self.latency < 0 or self.bandwidth <= 0:
            raise ValueError(f"LinkModel needs latency >= 0 and bandwidth > 0, got {self.latency}, {self.bandwidth}")

    def seconds(self, nbytes: int) -> float:
        return self.latency + nbytes / self.bandwidth


class _Round:
    """One collective call of one group: the members' deposits, how many have read them, and
    when the last deposit came (clock seconds)."""

    __slots__ = ("signature", "first", "values", "read", "full_at", "last", "done", "error")

    def __init__(self, signature: tuple, first: int) -> None:
        self.signature = signature
        self.first = first
        self.values: dict[int, Any] = {}
        self.read = 0
        self.full_at = 0.0
        self.last = first  # the member whose deposit completed the round
        self.done = False  # (a combining round) the last member's work is over
        self.error: str | None = None  # (a combining round) the error that work raised


class _ThreadTransfer:
    """A `collective_permute_start` in flight on its partition's transfer thread."""

    __slots__ = ("comm", "me", "done", "value", "error", "bound", "round")

    def __init__(self, comm: ThreadCommunicator, me: int, bound: float, round: tuple) -> None:
        self.comm, self.me = comm, me
        self.done = threading.Event()
        self.value: np.ndarray | None = None
        self.error: BaseException | None = None
        self.bound = bound  # seconds a wait may take: the rendezvous timeout and the link times
        self.round = round  # (round, group, description): what a partition waiting here waits for

    def wait(self) -> np.ndarray:
        self.comm._enter(self.me)
        try:
            return self.result()
        finally:
            self.comm._leave(self.me)

    def result(self) -> np.ndarray:
        """`wait()` without marking the partition's time (a synchronous permute marks it). While
        it waits, the partition counts as waiting for the transfer's round: when every running
        partition waits for a round that lacks a member, the deadlock is reported at once."""
        comm = self.comm
        if not self.done.is_set():
            with comm._cond:
                comm._waiting[self.me] = self.round
                comm._cond.notify_all()  # the others look for a deadlock again
            try:
                self.done.wait(self.bound)
            finally:
                with comm._cond:
                    comm._waiting.pop(self.me, None)
        if not self.done.is_set():
            raise CollectiveError(f"partition {self.me}: a collective_permute did not complete within "
                                  f"{self.bound:g} s", self.me)
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]


def _describe(signature: tuple) -> str:
    return signature[0] + "".join(f" {s}" for s in signature[1:])


class _Call:
    """Which collective call a partition is at, for error messages: made into text only when one
    is raised (formatting shapes and dtypes took a fifth of a small collective's time)."""

    __slots__ = ("signature", "seq", "group")

    def __init__(self, signature: tuple, seq: int, group: tuple[int, ...]) -> None:
        self.signature, self.seq, self.group = signature, seq, group

    def __str__(self) -> str:
        return f"{_describe(self.signature)} (call {self.seq} over partitions {list(self.group)})"


class ThreadCommunicator:
    """The `Communicator` of `num_partitions` threads in one process (see the module docstring).
    `timeout`: seconds a member waits for the rest of its group. `link`: a `LinkModel` that makes
    every transfer take its time. `timeline`: where the partitions' spans go (`add(device, lane,
    name, start, end)`, seconds from `origin`, a `time.perf_counter()` reading): "compute" (the
    partition's thread between communicator calls) and "link+" / "link-" (the transfers of the
    partition's links)."""

    def __init__(self, num_partitions: int, timeout: float = DEFAULT_TIMEOUT, link: LinkModel | None = None,
                 timeline: Any = None, origin: float | None = None) -> None:
        if num_partitions < 1:
            raise ValueError(f"num_partitions must be positive, got {num_partitions}")
        self.num_partitions = num_partitions
        self.timeout = float(timeout)
        self.link = link
        self.timeline = timeline
        self.origin = time.perf_counter() if origin is None else origin
        self._link_free: dict[tuple[int, str], float] = {}  # (partition, lane) -> when its link is free
        self._resumed = [0.0] * num_partitions  # when each partition's thread last left a collective
        self._full_at = [0.0] * num_partitions  # when each partition's last round had every deposit
        self._transfer_queues: list[queue.SimpleQueue | None] = [None] * num_partitions
        self._record_lock = threading.Lock()
        self._cond = threading.Condition()
        self._rounds: dict[tuple, _Round] = {}
        self._calls: list[Counter[tuple[int, ...]]] = [Counter() for _ in range(num_partitions)]  # calls per group
        self._failed: dict[int, str] = {}
        self._finished: set[int] = set()
        self._waiting: dict[int, tuple[_Round, tuple[int, ...], _Call]] = {}
        # the last two large results (`_reusable`): per partition (touched by its own thread only),
        # and shared by a group's members (all_gather), by group
        self._spare: list[dict[tuple, list[np.ndarray]]] = [{} for _ in range(num_partitions)]
        self._shared_spare: dict[tuple, list[np.ndarray]] = {}

    # Partition life cycle ----------------------------------------------------------------------
    def fail(self, partition: int, reason: str) -> None:
        """Partition `partition` stopped with an error: its peers stop waiting for it."""
        with self._cond:
            self._failed.setdefault(partition, reason)
            self._cond.notify_all()

    def finish(self, partition: int) -> None:
        """Partition `partition` ended its program: a peer still waiting for it is in error."""
        with self._cond:
            self._finished.add(partition)
            self._cond.notify_all()

    # The rendezvous -----------------------------------------------------------------------------
    def exchange(self, me: int, group: Sequence[int], value: Any, signature: tuple) -> list:
        """Deposit `value` for this call of `group` and return every member's, in group order.
        Members must call with equal `signature`s (the collective and its static arguments)."""
        group = self._member(me, group, signature)
        with self._cond:
            try:
                return self._exchange(me, group, value, signature)
            except CollectiveError as e:
                self._give_up(me, e)
                raise

    def _member(self, me: int, group: Sequence[int], signature: tuple) -> tuple[int, ...]:
        """`group` as a tuple, once `me` is found in it."""
        group = tuple(group)
        if me not in group:
            raise CollectiveError(f"partition {me} calls {_describe(signature)} over partitions {list(group)}, "
                                  "a group it is not in", me)
        return group

    def _give_up(self, me: int, error: CollectiveError) -> None:
        """(Holding the lock.) Partition `me` leaves a collective with `error`: its peers stop
        waiting for it."""
        self._failed.setdefault(me, str(error))
        self._cond.notify_all()

    def _exchange(self, me: int, group: tuple[int, ...], value: Any, signature: tuple) -> list:
        return self._collect(me, group, *self._deposit(me, group, value, signature))

    def combine(self, me: int, group: Sequence[int], value: Any, signature: tuple,
                work: Callable[[list], None]) -> None:
        """A rendezvous whose member that arrives last runs `work` on every member's deposit (in
        group order) while the others wait, then releases them: each waiting member wakes once.
        The deposits hold where `work` writes each member's result. An error in `work` raises
        there, and in the others a `CollectiveError` naming that member."""
        group = self._member(me, group, signature)
        with self._cond:
            try:
                key, rnd, what = self._deposit(me, group, value, signature, notify=False)
                if len(rnd.values) < len(group):
                    self._wait(me, group, rnd, what, ready=lambda: rnd.done)
                    self._full_at[me] = rnd.full_at
                    if rnd.error is not None:
                        raise CollectiveError(f"partition {me} at {what}: partition {rnd.last} failed while "
                                              f"combining the operands: {rnd.error}", rnd.last)
                    return
                del self._rounds[key]  # complete: nobody looks it up again
                self._full_at[me] = rnd.full_at
            except CollectiveError as e:
                self._give_up(me, e)
                raise
        try:
            work([rnd.values[p] for p in group])
        except BaseException as e:
            rnd.error = f"{type(e).__name__}: {e}"
            raise
        finally:
            with self._cond:
                rnd.done = True
                self._cond.notify_all()

    def _deposit(self, me: int, group: tuple[int, ...], value: Any, signature: tuple,
                 notify: bool = True) -> tuple[tuple, _Round, _Call]:
        """Put `value` in this partition's next round over `group` (without waiting); its key,
        round and description. `notify`: wake the waiting members when the round is complete."""
        seq = self._calls[me][group]
        self._calls[me][group] = seq + 1
        key = (group, seq)
        rnd = self._rounds.get(key)
        if rnd is None:
            rnd = self._rounds[key] = _Round(signature, me)
        elif rnd.signature != signature:
            raise CollectiveError(f"partition {me} calls {_describe(signature)} as collective call {seq} over "
                                  f"partitions {list(group)}, but partition {rnd.first} calls "
                                  f"{_describe(rnd.signature)}", me)
        rnd.values[me] = value
        if len(rnd.values) == len(group):
            rnd.full_at = time.perf_counter()
            rnd.last = me
            if notify:
                self._cond.notify_all()
        return key, rnd, _Call(signature, seq, group)

    def _collect(self, me: int, group: tuple[int, ...], key: tuple, rnd: _Round, what: _Call,
                 transfer_thread: bool = False) -> list:
        """Every member's deposit in the round, once all are there. On a transfer thread the wait
        takes no part in deadlock detection (the partition's own thread may be computing)."""
        if len(rnd.values) < len(group):
            self._wait(me, group, rnd, what, register=not transfer_thread)
        values = [rnd.values[p] for p in group]
        if not transfer_thread:
            self._full_at[me] = rnd.full_at
        rnd.read += 1
        if rnd.read == len(group):
            del self._rounds[key]
        return values

    def _wait(self, me: int, group: tuple[int, ...], rnd: _Round, what: _Call, register: bool = True,
              ready: Callable[[], bool] | None = None) -> None:
        """Wait until every member has deposited (or `ready()`, once they have)."""
        deadline = time.monotonic() + self.timeout
        if register:
            self._waiting[me] = (rnd, group, what)
        try:
            while len(rnd.values) < len(group) or (ready is not None and not ready()):
                missing = [p for p in group if p not in rnd.values]
                for p in missing:
                    if p in self._failed:
                        raise CollectiveError(f"partition {me} at {what}: partition {p} failed: {self._failed[p]}", p)
                    if p in self._finished:
                        raise CollectiveError(f"partition {me} at {what}: partition {p} finished its program "
                                              "without joining", p)
                if self._deadlocked():
                    waits = "; ".join(f"partition {p} waits at {w[2]}" for p, w in sorted(self._waiting.items()))
                    raise CollectiveError(f"partition {me} at {what}: deadlock, the partitions wait for each other "
                                          f"(mismatched collectives or groups): {waits}")
                remaining = deadline - time.monotonic()
                if remaining <= 0 and not missing:
                    raise CollectiveError(f"partition {me} at {what}: partition {rnd.last} did not combine the "
                                          f"operands within {self.timeout:g} s", rnd.last)
                if remaining <= 0:
                    raise CollectiveError(f"partition {me} at {what}: partition(s) {missing} did not join within "
                                          f"{self.timeout:g} s", missing[0])
                self._cond.wait(remaining)
        finally:
            if register:
                del self._waiting[me]

    def _deadlocked(self) -> bool:
        """Every partition still running waits at a collective that lacks a member."""
        if len(self._waiting) + len(self._finished) + len(self._failed) < self.num_partitions:
            return False  # some partition runs (the common case, checked without building sets)
        running = set(range(self.num_partitions)) - self._finished - set(self._failed)
        return running <= self._waiting.keys() and \
            all(len(r.values) < len(g) for r, g, _ in self._waiting.values())

    # Time: the link model and the timeline -----------------------------------------------------
    def _clock(self) -> float:
        return time.perf_counter() - self.origin

    def _record(self, device: int, lane: str, name: str, start: float, end: float, **args: Any) -> None:
        if self.timeline is not None and end > start:
            with self._record_lock:
                self.timeline.add(device, lane, name, start, end, **args)

    def begin(self, me: int) -> None:
        """Partition `me`'s thread starts its program now."""
        self._resumed[me] = self._clock()

    def _enter(self, me: int) -> None:
        """Partition `me`'s thread reaches a collective: it computed since it last left one."""
        if self.timeline is not None:
            self._record(me, "compute", "compute", self._resumed[me], self._clock())

    def _leave(self, me: int) -> None:
        if self.timeline is not None:
            self._resumed[me] = self._clock()

    def _occupy(self, device: int, lane: str, ready: float, nbytes: int, name: str) -> float:
        """Book `device`'s link `lane` for a transfer of `nbytes` that can start at `ready` (clock
        seconds): after the link's previous transfer. The time it ends."""
        assert self.link is not None
        with self._record_lock:
            begin = max(ready, self._link_free.get((device, lane), 0.0))
            end = self._link_free[(device, lane)] = begin + self.link.seconds(nbytes)
        self._record(device, lane, name, begin, end, bytes=nbytes)
        return end

    def _sleep_until(self, end: float) -> None:
        remaining = end - self._clock()
        if remaining > 0:
            time.sleep(remaining)

    def _ring(self, me: int, name: str, hops: int, hop_bytes: int) -> None:
        """Under the link model, a synchronous collective over a ring: `hops` transfers of
        `hop_bytes` one after another on this partition's link+ (the caller waits for them)."""
        if self.link is None or hops == 0:
            return
        end = self._full_at[me] - self.origin  # the transfers start once every member is there
        for _ in range(hops):
            end = self._occupy(me, "link+", end, hop_bytes, name)
        self._sleep_until(end)

    def _lane(self, source: int, target: int) -> str:
        """The link of `source` a transfer to `target` takes (a partition beyond the neighbours:
        counted as one hop on link+)."""
        n = self.num_partitions
        return "link-" if target == (source - 1) % n and target != (source + 1) % n else "link+"

    # The collectives ----------------------------------------------------------------------------
    def _result(self, me: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """An uninitialized array for partition `me`'s result: a large one is an earlier result of
        the same shape and dtype that nothing else holds any more, if there is one (two are kept:
        a program may still hold the last result when it asks for the next)."""
        return _reusable(self._spare[me], (), shape, dtype)

    def _shared_result(self, group: tuple[int, ...], shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """An uninitialized array for a result every member of `group` gets, reused as `_result`'s
        are once no member holds it. Rounds of one group run one after another, so one member at a
        time asks for it."""
        return _reusable(self._shared_spare, group, shape, dtype)

    def all_reduce(self, me: int, x: np.ndarray, group: Sequence[int], reduction: str,
                   in_place: bool = False) -> np.ndarray:
        self._enter(me)
        x = np.asarray(x)
        n = len(group)
        out = self._all_reduce(me, x, group, reduction, in_place)
        self._ring(me, "all_reduce", 2 * (n - 1), x.nbytes // n)
        self._leave(me)
        return out

    def _all_reduce(self, me: int, x: np.ndarray, group: Sequence[int], reduction: str,
                    in_place: bool) -> np.ndarray:
        ufunc = REDUCTION_UFUNCS[reduction]
        signature = ("all_reduce", reduction, x.shape, x.dtype)
        if x.size < SLICED_REDUCE_MIN:
            # The last member to arrive reduces every operand once, into one read-only array
            # every member gets: it writes the bytes of one result, not N.
            return self._once(me, group, x, signature, lambda xs: self._reduce_once(tuple(group), ufunc, xs))
        # An operand the program never reads again (in place) is its member's result, read before
        # it is written.
        own = in_place and x.flags.writeable and x.flags.c_contiguous
        out = x if own else self._result(me, x.shape, x.dtype)
        # Each member reduces one slice of every operand straight into every member's result,
        # then all wait until every slice is written (nobody reads an operand or writes a result
        # after that): each member reads about 2x its operand and writes 1x, whatever the group
        # size; only the slice's own member reads and writes a slice.
        deposits = self.exchange(me, group, (x, out), signature)
        n, pos = len(deposits), list(group).index(me)
        lo, hi = x.size * pos // n, x.size * (pos + 1) // n
        _reduce_into(ufunc, [o.reshape(-1)[lo:hi] for o, _ in deposits], [r.reshape(-1)[lo:hi] for _, r in deposits],
                     [r is o for o, r in deposits])
        self.exchange(me, group, None, ("all_reduce (slices written)",))
        return out

    def all_gather(self, me: int, x: np.ndarray, group: Sequence[int], dim: int) -> np.ndarray:
        self._enter(me)
        x = np.asarray(x)
        out = self._once(me, group, x, ("all_gather", dim, x.dtype),
                         lambda xs: self._gather_once(tuple(group), xs, dim))
        self._ring(me, "all_gather", len(group) - 1, x.nbytes)
        self._leave(me)
        return out

    def _once(self, me: int, group: Sequence[int], x: np.ndarray, signature: tuple,
              compute: Callable[[list[np.ndarray]], np.ndarray]) -> np.ndarray:
        """A result that is the same for every member: the member that arrives last computes it
        once from the operands (in group order), into one read-only array that every member gets.
        The members hold the same values, so writing them once is enough (N times fewer bytes than
        a copy each), and nothing writes into a collective's result (a program's values are never
        overwritten; the dead-operand all_reduce checks `writeable`; results handed back to a
        caller are copied when they are not writeable)."""
        got: list[np.ndarray] = []  # where the member that computes puts the result

        def work(deposits: list) -> None:
            out = compute([operand for operand, _ in deposits])
            out.flags.writeable = False
            for _, member_got in deposits:
                member_got.append(out)
        self.combine(me, group, (x, got), signature, work)
        return got[0]

    def _gather_once(self, group: tuple[int, ...], operands: list[np.ndarray], dim: int) -> np.ndarray:
        """The operands concatenated along `dim` into a new array for the group to share."""
        shape = list(operands[0].shape)
        shape[dim] = sum(x.shape[dim] for x in operands)
        return np.concatenate(operands, axis=dim, out=self._shared_result(group, tuple(shape), operands[0].dtype))

    def _reduce_once(self, group: tuple[int, ...], ufunc: np.ufunc, operands: list[np.ndarray]) -> np.ndarray:
        """The operands reduced in group order into a new array for the group to share."""
        out = self._shared_result(group, operands[0].shape, operands[0].dtype)
        _reduce_into(ufunc, operands, [out])
        return out

    def reduce_scatter(self, me: int, x: np.ndarray, group: Sequence[int], dim: int, reduction: str) -> np.ndarray:
        self._enter(me)
        ufunc = REDUCTION_UFUNCS[reduction]
        x = np.asarray(x)
        n, pos = len(group), list(group).index(me)
        piece = _piece(x, dim, n, pos)  # (the split is checked before the rendezvous)
        signature = ("reduce_scatter", reduction, dim, x.shape, x.dtype)
        if x.size < SLICED_REDUCE_MIN:
            # The member that arrives last reduces the operands whole, once, as all_reduce does
            # (whole-array passes: a pass per member's piece costs N^2 numpy calls); each member
            # gets its piece of that sum, read-only.
            out = _piece(self._once(me, group, x, signature, lambda xs: self._reduce_once(tuple(group), ufunc, xs)),
                         dim, n, pos)
        else:  # each member its own piece (views: no copies before the reduction)
            operands = self.exchange(me, group, x, signature)
            out = self._result(me, piece.shape, x.dtype)
            _reduce_into(ufunc, [_piece(o, dim, n, pos) for o in operands], [out])
        self._ring(me, "reduce_scatter", len(group) - 1, out.nbytes)
        self._leave(me)
        return out

    def all_to_all(self, me: int, x: np.ndarray, group: Sequence[int], split_dim: int, concat_dim: int) -> np.ndarray:
        self._enter(me)
        x = np.asarray(x)
        operands = self.exchange(me, group, x, ("all_to_all", split_dim, concat_dim, x.shape, x.dtype))
        pos = list(group).index(me)
        out = np.concatenate([_piece(o, split_dim, len(operands), pos) for o in operands], axis=concat_dim)
        self._ring(me, "all_to_all", len(group) - 1, x.nbytes // len(group))
        self._leave(me)
        return out

    def collective_permute(self, me: int, x: np.ndarray, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
        if self.link is None and self.timeline is None:  # no time to model: the rendezvous alone
            x = np.asarray(x)
            pairs = tuple((int(s), int(t)) for s, t in pairs)
            operands = self.exchange(me, range(self.num_partitions), x, ("collective_permute", pairs, x.shape,
                                                                          x.dtype))
            sources = [s for s, t in pairs if t == me]
            return np.array(operands[sources[0]]) if sources else np.zeros_like(x)
        self._enter(me)  # one span of waiting: the transfer is the link's
        out = self._permute(me, x, pairs).result()
        self._leave(me)
        return out

    def collective_permute_start(self, me: int, x: np.ndarray, pairs: Sequence[tuple[int, int]]) -> Transfer:
        self._enter(me)
        transfer = self._permute(me, x, pairs)
        self._leave(me)
        return transfer

    def all_gather_start(self, me: int, x: np.ndarray, group: Sequence[int], dim: int) -> Transfer:
        """Deposit the operand now and return; this partition's transfer thread waits for the
        group, takes the synchronous all_gather's link time, and concatenates."""
        self._enter(me)
        x, group = np.asarray(x), tuple(int(p) for p in group)
        with self._cond:
            try:
                key, rnd, what = self._deposit(me, group, x, ("all_gather", dim, x.dtype))
            except CollectiveError as e:
                self._give_up(me, e)
                raise
        hops = len(group) - 1
        link_time = hops * self.link.seconds(x.nbytes) if self.link is not None else 0.0
        transfer = _ThreadTransfer(self, me, 2 * self.timeout + link_time, (rnd, group, what))

        def move() -> np.ndarray:
            with self._cond:
                values = self._collect(me, group, key, rnd, what, transfer_thread=True)
            if self.link is not None:  # the ring's hops one after another on link+, as _ring books them
                end = rnd.full_at - self.origin
                for _ in range(hops):
                    end = self._occupy(me, "link+", end, x.nbytes, "all_gather")
                self._sleep_until(end)
            return np.concatenate(values, axis=dim)

        self._transfer_queue(me).put((move, transfer))
        self._leave(me)
        return transfer

    def _permute(self, me: int, x: np.ndarray, pairs: Sequence[tuple[int, int]]) -> _ThreadTransfer:
        """Deposit the operand now and return; this partition's transfer thread waits for the
        round, takes the link model's time, and copies what this partition receives."""
        x = np.asarray(x)
        pairs = tuple((int(s), int(t)) for s, t in pairs)
        group = tuple(range(self.num_partitions))
        with self._cond:
            try:
                key, rnd, what = self._deposit(me, group, x, ("collective_permute", pairs, x.shape, x.dtype))
            except CollectiveError as e:
                self._give_up(me, e)
                raise
        source = next((s for s, t in pairs if t == me), None)
        link_time = self.link.seconds(x.nbytes) if self.link is not None else 0.0
        transfer = _ThreadTransfer(self, me, 2 * self.timeout + self.num_partitions * link_time, (rnd, group, what))

        def move() -> np.ndarray:
            with self._cond:
                values = self._collect(me, group, key, rnd, what, transfer_thread=True)
            if source is None:
                return np.zeros_like(x)
            if self.link is not None:
                lane = self._lane(source, me)
                self._sleep_until(self._occupy(source, lane, rnd.full_at - self.origin, x.nbytes,
                                               f"collective_permute {source}->{me}"))
            elif self.timeline is not None:
                self._record(source, self._lane(source, me), f"collective_permute {source}->{me}",
                             rnd.full_at - self.origin, self._clock(), bytes=x.nbytes)
            return np.array(values[source])

        self._transfer_queue(me).put((move, transfer))
        return transfer

    def _transfer_queue(self, me: int) -> queue.SimpleQueue:
        """Partition `me`'s transfer thread (started on first use): it runs the partition's
        transfers one after another, in the order they were started."""
        q = self._transfer_queues[me]
        if q is None:
            q = self._transfer_queues[me] = queue.SimpleQueue()
            threading.Thread(target=_transfer_loop, args=(q,), name=f"loom-transfer-{me}", daemon=True).start()
        return q

    def close(self) -> None:
        """Stop the transfer threads (each after the transfers it holds)."""
        for q in self._transfer_queues:
            if q is not None:
                q.put(None)

    def collective_broadcast(self, me: int, x: np.ndarray, group: Sequence[int]) -> np.ndarray:
        self._enter(me)
        x = np.asarray(x)
        operands = self.exchange(me, group, x, ("collective_broadcast", x.shape, x.dtype))
        out = np.array(operands[0])
        self._ring(me, "collective_broadcast", len(group) - 1, x.nbytes)
        self._leave(me)
        return out


def _transfer_loop(jobs: queue.SimpleQueue) -> None:
    while True:
        job = jobs.get()
        if job is None:
            return
        move, transfer = job
        try:
            transfer.value = move()
        except BaseException as e:  # noqa: BLE001 - raised at the done
            transfer.error = e
        transfer.done.set()


def _reusable(spare: dict[tuple, list[np.ndarray]], owner: tuple, shape: tuple[int, ...],
              dtype: np.dtype) -> np.ndarray:
    """An uninitialized array of `shape` and `dtype`: below `REUSE_MIN_BYTES` a new one, else one of
    the last two that `spare` keeps for `owner`, shape and dtype that nothing else holds any more
    (made writeable again: a shared result is handed out read-only), or a new one it keeps."""
    dtype = np.dtype(dtype)
    if math.prod(shape) * dtype.itemsize < REUSE_MIN_BYTES:
        return np.empty(shape, dtype)
    kept = spare.setdefault((owner, shape, dtype), [])
    for out in kept:
        if sys.getrefcount(out) == 3:  # held by nothing else (3: the list, `out`, the call)
            out.flags.writeable = True
            return out
    out = np.empty(shape, dtype)
    kept.insert(0, out)
    del kept[2:]
    return out


def _reduce(ufunc: np.ufunc, arrays: Sequence[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
    """The elementwise reduction of `arrays` in order, into `out` (an array of their shape and
    dtype) or a new array."""
    if len(arrays) == 1:
        if out is None:
            return np.array(arrays[0])
        out[...] = arrays[0]
        return out
    if out is None:
        out = np.asarray(ufunc(arrays[0], arrays[1]))  # 0-d operands give a numpy scalar: an array again
    else:
        ufunc(arrays[0], arrays[1], out=out)
    for a in arrays[2:]:
        ufunc(out, a, out=out)
    return out


def _reduce_into(ufunc: np.ufunc, sources: Sequence[np.ndarray], targets: Sequence[np.ndarray],
                 donated: Sequence[bool] = ()) -> None:
    """The elementwise reduction of `sources` (arrays of one shape) in order, written into each of
    `targets`. `donated[i]`: target i is source i (read before it is written). The reduction
    accumulates in a target that is no source; when every target is one, in a scratch array a
    chunk of `REDUCE_CHUNK` elements at a time (which stays in the cache)."""
    fresh = [t for t, d in zip(targets, donated or [False] * len(targets)) if not d]
    if fresh:
        acc = _reduce(ufunc, sources, fresh[0])
        for t in targets:
            if t is not acc:
                t[...] = acc
        return
    sources, targets = [a.reshape(-1) for a in sources], [a.reshape(-1) for a in targets]  # (contiguous: views)
    size = sources[0].size
    scratch = np.empty(min(size, REDUCE_CHUNK), sources[0].dtype)
    for lo in range(0, size, REDUCE_CHUNK):
        hi = min(lo + REDUCE_CHUNK, size)
        acc = _reduce(ufunc, [a[lo:hi] for a in sources], scratch[:hi - lo])
        for t in targets:
            t[lo:hi] = acc


def _piece(x: np.ndarray, dim: int, n: int, pos: int) -> np.ndarray:
    """Piece `pos` of `x` cut into `n` equal pieces along `dim` (a view)."""
    dim %= x.ndim
    size, rest = divmod(x.shape[dim], n)
    if rest:
        raise ValueError(f"dimension {dim} of the operand, of size {x.shape[dim]}, does not split into {n} pieces")
    return x[(slice(None),) * dim + (slice(pos * size, (pos + 1) * size),)]


# Running a per-device program on every partition ----------------------------------------------

def _module(module_or_text: Operation | str) -> Operation:
    if isinstance(module_or_text, str):
        from loom.ir import parse
        return parse(module_or_text, allow_unregistered=True)
    return module_or_text


def _runners(module: Operation, entry: str, executor: str, n: int, devices: Sequence[Any] | None = None) -> list[Any]:
    """One callable per partition: the same compiled executable for all (its all_reduces of
    operands it never reads again reduce in place), or an interpreter each; on torch `devices`
    (loom Devices, one per partition), each partition's program compiled for its device."""
    if executor == "interpreter" and devices is None:
        return [Interpreted(module, entry) for _ in range(n)]
    if devices is not None:
        return [compile_partition(module, entry=entry, executor=executor, device=d.torch_device) for d in devices]
    return [compile_partition(module, entry=entry, executor=executor)] * n


def _torch_mesh(devices: Sequence[Any] | None) -> Sequence[Any] | None:
    """`devices` when they are torch devices (loom.runtime.device_mesh), else None (the host's)."""
    if devices is None:
        return None
    from loom.runtime.device_mesh import on_torch_devices
    return devices if on_torch_devices(devices) else None


def num_partitions_of(module: Operation) -> int | None:
    """The module's `mhlo.num_partitions` (None when absent)."""
    attr = module.get_attr("mhlo.num_partitions")
    return None if attr is None else int(attr.value)


def run_spmd(module: Operation | str, per_device_args: Sequence[Sequence[Any]], executor: str = "compiled",
             timeout: float = DEFAULT_TIMEOUT, entry: str = "main", link: LinkModel | None = None,
             timeline: Any = None, devices: Sequence[Any] | None = None) -> list[list[Any]]:
    """Run the per-device program `module` (or its text) on `len(per_device_args)` partitions,
    partition p on `per_device_args[p]`, one thread each; return each partition's results.
    `executor`: "compiled" (compiled once, shared) or "interpreter". `timeout`: seconds a
    partition waits for its peers at a collective. `link`: a `LinkModel` giving every transfer its
    time. `timeline` (a `loom.sim.timeline.Timeline`): receives each partition's measured spans,
    seconds from the start of the run (see `ThreadCommunicator`). `devices`: torch devices (loom
    Devices, one per partition, e.g. `loom.devices("cuda")`) to run partition p on the p-th, its
    arguments and results tensors there (loom.runtime.device_mesh); by default the host's numpy
    arrays. An error in a partition stops the others and raises a `PartitionError` naming it."""
    module = _module(module)
    n = len(per_device_args)
    declared = num_partitions_of(module)
    if declared is not None and declared != n:
        raise ValueError(f"the module is partitioned for {declared} partitions (mhlo.num_partitions) but "
                         f"per_device_args has arguments for {n}")
    on = _torch_mesh(devices)
    if devices is not None and len(devices) != n:
        raise ValueError(f"{len(devices)} devices for {n} partitions' arguments")
    if on is None:
        return _run(_runners(module, entry, executor, n), per_device_args, timeout, link, timeline)
    return _run(_runners(module, entry, executor, n, on), _placed(per_device_args, on), timeout, link, timeline,
                comm=_tensor_communicator(on, timeout, link, timeline))


def _placed(per_device_args: Sequence[Sequence[Any]], devices: Sequence[Any]) -> list[list[Any]]:
    """Partition p's arguments as tensors on `devices[p]`."""
    from loom.runtime.device_mesh import to_device
    return [[to_device(a, d) for a in args] for args, d in zip(per_device_args, devices)]


def _tensor_communicator(devices: Sequence[Any], timeout: float, link: LinkModel | None,
                         timeline: Any) -> ThreadCommunicator:
    from loom.runtime.device_mesh import TensorCommunicator
    if link is not None:
        raise ValueError(NO_LINK_ON_DEVICES)
    return TensorCommunicator(devices, timeout, timeline)


NO_LINK_ON_DEVICES = ("a mesh of torch devices moves its values over the devices' own links: it takes no link model "
                      "(LinkModel is for the host's mesh)")


def _run(runners: Sequence[Any], per_device_args: Sequence[Sequence[Any]], timeout: float,
         link: LinkModel | None = None, timeline: Any = None,
         comm: ThreadCommunicator | None = None) -> list[list[np.ndarray]]:
    """Run partition p's `runners[p]` on `per_device_args[p]`, one thread each, with `comm` (by
    default a new `ThreadCommunicator` over `link`, recording into `timeline`); each partition's
    results, or a `PartitionError`."""
    n = len(runners)
    comm = comm if comm is not None else ThreadCommunicator(n, timeout, link, timeline)
    results: list[list[np.ndarray] | None] = [None] * n
    errors: dict[int, BaseException] = {}

    def run(p: int) -> None:
        try:
            comm.begin(p)
            with spmd_context(p, comm):
                out = runners[p](*per_device_args[p])
            comm._enter(p)  # the last compute span
            results[p] = list(out) if isinstance(out, tuple) else [out]
            comm.finish(p)
        except BaseException as e:  # noqa: BLE001 - reported by the caller's thread
            errors[p] = e
            comm.fail(p, f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=run, args=(p,), name=f"loom-partition-{p}", daemon=True) for p in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    comm.close()
    if errors:
        p = _first_failure(errors)
        e = errors[p]
        others = sorted(set(errors) - {p})
        also = f" (partitions {others} stopped as a consequence)" if others else ""
        raise PartitionError(f"partition {p} of {n} failed: {type(e).__name__}: {e}{also}", p) from e
    return results  # type: ignore[return-value]


class _Layout:
    """How one argument or result of a partitioned program lies on the mesh: its global shape
    and dtype (`loom.global_type`), its sharding (`sdy.sharding`), each partition's index into
    the global array (clipped) and the local (padded) shape."""

    def __init__(self, attrs: Any, local_type: Any, mesh: Mesh, where: str) -> None:
        sharding = attrs.as_dict().get("sdy.sharding") if attrs is not None else None
        global_type = attrs.as_dict().get("loom.global_type") if attrs is not None else None
        if sharding is None or global_type is None:
            raise ValueError(f"{where} has no sdy.sharding and loom.global_type attributes: MeshExecutable runs "
                             "partitioned programs (loom.sharding.partition)")
        self.where = where
        self.shape = shape_of(global_type.value)
        self.dtype = dtype_of(global_type.value)
        self.local_shape = shape_of(local_type)
        if len(sharding.dims) != len(self.shape):
            raise ValueError(f"{where}: sharding {sharding} has {len(sharding.dims)} dimensions for the global type "
                             f"{global_type.value}")
        axes = [[(a.name, a.pre_size, a.size) for a in d.axes] for d in sharding.dims]
        self.indices = shard_slices(mesh.shape, axes, self.shape)
        padded = tuple(-(-n // math.prod(s or mesh.shape[a] for a, _, s in dim)) for n, dim in zip(self.shape, axes))
        if padded != self.local_shape:
            raise ValueError(f"{where}: the local type {local_type} does not match the global type "
                             f"{global_type.value} split by {sharding} (expected shape {padded})")
        try:
            self.sharding: Any = NamedSharding.from_sdy(mesh, sharding)
        except ValueError:  # sub-axes: no PartitionSpec says them
            self.sharding = sharding
        self.mesh = mesh

    def split(self, x: Any) -> list[Any]:
        """Each partition's (padded) piece of the global value `x` (the shards of a sharded array
        of this layout as they are: on a torch mesh, tensors on their devices)."""
        if isinstance(x, ShardedArray) and x.shape == self.shape and x.sharding == self.sharding:
            pieces = [s.data for s in x.addressable_shards]
            if all(tuple(p.shape) == self.local_shape for p in pieces):
                return pieces
            pieces = [host_array(p) for p in pieces]  # padded on the host (then put back on the devices)
        else:
            value = np.asarray(x)
            if value.shape != self.shape or value.dtype != self.dtype:
                raise ValueError(f"{self.where} has shape {value.shape} and dtype {value.dtype}, but the program "
                                 f"takes {self.shape} {self.dtype} (its loom.global_type)")
            pieces = [value[i] for i in self.indices]
        return [p if p.shape == self.local_shape else
                np.pad(p, [(0, want - have) for want, have in zip(self.local_shape, p.shape)]) for p in pieces]

    def assemble(self, pieces: Sequence[Any]) -> ShardedArray:
        """The global array of the partitions' (padded) pieces (numpy arrays, or tensors that stay
        on their devices)."""
        datas = [(p if is_tensor(p) else np.asarray(p))[
                     tuple(slice(0, len(range(self.shape[d])[s])) for d, s in enumerate(i))]
                 for p, i in zip(pieces, self.indices)]
        return ShardedArray.from_shard_data(self.shape, self.sharding, self.indices, datas, self.dtype,
                                            devices=self.mesh.device_list)


class MeshExecutable:
    """A partitioned program (`loom.sharding.partition`'s output: per-device types, each argument
    and result with `sdy.sharding` and `loom.global_type`) on the devices of `mesh`, partition p
    on `mesh.device_list[p]`, one thread each. Called with global values (numpy arrays or sharded
    arrays), it splits them by their shardings (padding uneven dimensions), runs, and returns
    global `ShardedArray`s (one, or a tuple for several results). Compiled once."""

    def __init__(self, module: Operation | str, mesh: Mesh, executor: str = "compiled", entry: str = "main",
                 timeout: float = DEFAULT_TIMEOUT, link: LinkModel | None = None) -> None:
        module = _module(module)
        declared = num_partitions_of(module)
        if declared is not None and declared != mesh.size:
            raise ValueError(f"the module is partitioned for {declared} partitions (mhlo.num_partitions) but the "
                             f"mesh {mesh} has {mesh.size} devices")
        func = functions_of(module).get(entry)
        if func is None:
            raise ValueError(f"no function @{entry} in the module")
        ftype = func.get_attr("function_type").value
        arg_attrs, res_attrs = func.get_attr("arg_attrs"), func.get_attr("res_attrs")
        self.inputs = [_Layout(arg_attrs[i] if arg_attrs is not None else None, t, mesh, f"argument {i} of @{entry}")
                       for i, t in enumerate(ftype.inputs)]
        self.outputs = [_Layout(res_attrs[i] if res_attrs is not None else None, t, mesh, f"result {i} of @{entry}")
                        for i, t in enumerate(ftype.results)]
        self.module, self.mesh, self.timeout, self.link = module, mesh, timeout, link
        self._devices = _torch_mesh(mesh.device_list)
        if self._devices is not None and link is not None:
            raise ValueError(NO_LINK_ON_DEVICES)
        self._runners = _runners(module, entry, executor, mesh.size, self._devices)

    def __call__(self, *args: Any, timeline: Any = None) -> Any:
        """Run on global values; `timeline` receives the run's measured spans (see `run_spmd`)."""
        if len(args) != len(self.inputs):
            raise TypeError(f"the program takes {len(self.inputs)} arguments, got {len(args)}")
        pieces = [layout.split(x) for layout, x in zip(self.inputs, args)]
        per_device = [[p[i] for p in pieces] for i in range(self.mesh.size)]
        if self._devices is None:
            outs = _run(self._runners, per_device, self.timeout, self.link, timeline)
        else:
            outs = _run(self._runners, _placed(per_device, self._devices), self.timeout, None, timeline,
                        comm=_tensor_communicator(self._devices, self.timeout, None, timeline))
        results = [layout.assemble([o[k] for o in outs]) for k, layout in enumerate(self.outputs)]
        return results[0] if len(results) == 1 else tuple(results)


def _first_failure(errors: dict[int, BaseException]) -> int:
    """The partition whose error caused the others: not a collective error blaming another
    partition that failed too."""
    for p in sorted(errors):
        e = errors[p]
        blamed = getattr(e, "partition", None)
        if not (isinstance(e, CollectiveError) and blamed is not None and blamed != p and blamed in errors):
            return p
    return min(errors)


__all__ = ["DEFAULT_TIMEOUT", "LinkModel", "MeshExecutable", "ThreadCommunicator", "run_spmd"]
