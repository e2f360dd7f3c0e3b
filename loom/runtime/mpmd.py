"""Running the per-device programs of a placed program (`loom.transforms.mpmd_partition`).

    program = MPMDProgram(partitioned_module)
    outs = program(x, n)                        # in process: one thread per device
    outs = program.run_process(x, n)            # under torch.distributed: this rank's device

Every device runs its own function (`@main_device<d>`) on all of the program's arguments; the
results are gathered from the devices that hold them (`mpmd.results`). Transfers are keyed by
(sender, receiver, channel, iterations): a message waits in a mailbox until its receiver asks for
it, so a device may run ahead into later iterations; `mpmd.iteration` bounds how far (at most
`parallel` iterations of a loop in flight).

In process, `MPMDThreadCommunicator` extends the SPMD runtime's `ThreadCommunicator` (the
per-device programs may hold collectives too) with mailboxes on the same lock; threads run through
`loom.runtime.local`. Over processes (`loom.distributed.initialize`, gloo or NCCL process groups),
`StoreCommunicator` passes the messages through the process group's key-value store (TCPStore):
a message is a key, so matching by iteration needs no ordering. Every wait is bounded: a receive
whose sender failed, finished, or (over processes) stopped beating in the store raises an error
naming the device and the op (channel and iteration) it waited at; the runtime then raises a
`PartitionError` naming the device that failed first.

`events` (in process) is the order in which the devices sent, received and opened iterations:
`(device, "send" | "recv", channel, iterations)` and `(device, "iteration", loop, iterations)`;
`on_event(event)` is called by the device's thread as it happens. `link_latency` makes every
in-process message take that many seconds from its send to its receiver (a model of a slow link).
The kernels reach a runtime through the `Transfers` protocol.
"""

from __future__ import annotations

import itertools
import pickle
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from loom.backend.api import Interpreted
from loom.backend.api import compile as compile_module
from loom.dialects.mpmd import RESULTS_OF_FUNCTION
from loom.ir.core import Operation
from loom.runtime import distributed
from loom.runtime.communicator import CollectiveError, spmd_context
from loom.runtime.local import DEFAULT_TIMEOUT, ThreadCommunicator, _module
from loom.runtime.local import _run as run_threads
from loom.transforms.mpmd_partition import device_functions

Event = tuple


class Transfers(Protocol):
    """What the mpmd kernels (loom.ops.mpmd) ask of the communicator a runtime installs with
    `spmd_context`: `me` is the calling device, `key` is (channel, iterations)."""

    num_partitions: int

    def send(self, me: int, peer: int, key: tuple, value: Any) -> None:
        """Leave `value` for `peer` (does not wait for it)."""
        ...

    def recv(self, me: int, peer: int, key: tuple) -> Any:
        """The value `peer` sent with `key`; waits for it (bounded), an error naming `peer`."""
        ...

    def begin_iteration(self, me: int, loop: tuple, iteration: int, devices: Sequence[int], parallel: int) -> None:
        """Say `me` starts `iteration` of `loop` (its id and the enclosing iterations); wait until
        every device of `devices` has started `iteration - parallel + 1`."""
        ...


def _what(key: tuple) -> str:
    channel, iterations = key
    return f"channel {channel}" + (f" iteration {list(iterations)}" if iterations else "")


class MPMDThreadCommunicator(ThreadCommunicator):
    """Mailboxes between the devices' threads, on the `ThreadCommunicator`'s lock and failure
    bookkeeping."""

    def __init__(self, num_devices: int, timeout: float = DEFAULT_TIMEOUT,
                 on_event: Callable[[Event], None] | None = None, link_latency: float = 0.0) -> None:
        super().__init__(num_devices, timeout)
        self.link_latency = float(link_latency)  # seconds a message travels before it can be received
        self._messages: dict[tuple, tuple[float, Any]] = {}
        self._started: dict[tuple, dict[int, int]] = {}
        self.events: list[Event] = []
        self.on_event = on_event

    def _event(self, event: Event) -> None:
        with self._cond:
            self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def _wait_for(self, me: int, peer: int, ready: Callable[[], bool], what: str) -> None:
        """Wait (holding the lock) until `ready()`; an error naming `peer` if it failed or
        finished first, or after the timeout."""
        deadline = time.monotonic() + self.timeout
        while not ready():
            if peer in self._failed:
                raise CollectiveError(f"device {me} at {what}: device {peer} failed: {self._failed[peer]}", peer)
            if peer in self._finished:
                raise CollectiveError(f"device {me} at {what}: device {peer} finished its program without sending",
                                      peer)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CollectiveError(f"device {me} at {what}: device {peer} did not send within {self.timeout:g} s",
                                      peer)
            self._cond.wait(remaining)

    def send(self, me: int, peer: int, key: tuple, value: Any) -> None:
        with self._cond:
            self._messages[(me, peer, key)] = (time.monotonic() + self.link_latency, value)
            self._cond.notify_all()
        self._event((me, "send", *key))

    def recv(self, me: int, peer: int, key: tuple) -> Any:
        with self._cond:
            self._wait_for(me, peer, lambda: (peer, me, key) in self._messages,
                           f"mpmd.recv from device {peer} {_what(key)}")
            arrives, value = self._messages.pop((peer, me, key))
        wait = arrives - time.monotonic()
        if wait > 0:  # still on the link
            time.sleep(wait)
        self._event((me, "recv", *key))
        return value

    def begin_iteration(self, me: int, loop: tuple, iteration: int, devices: Sequence[int], parallel: int) -> None:
        need = iteration - parallel + 1
        with self._cond:
            started = self._started.setdefault(loop, {})
            started[me] = iteration
            self._cond.notify_all()
            for peer in devices:
                if peer != me:
                    self._wait_for(me, peer, lambda p=peer: started.get(p, -1) >= need,
                                   f"mpmd.iteration {iteration} of loop {loop[0]} (waiting for device {peer} to "
                                   f"start iteration {need})")
        self._event((me, "iteration", loop[0], (*loop[1], iteration)))


def _result_indices(function: Operation) -> list[int]:
    return [int(v) for v in function.get_attr(RESULTS_OF_FUNCTION).values]


class MPMDProgram:
    """The per-device programs of a partitioned module (or its text), compiled once. `executor`:
    "compiled" or "interpreter"."""

    def __init__(self, module: Operation | str, executor: str = "compiled") -> None:
        self.module = _module(module)
        functions = device_functions(self.module)
        if not functions:
            raise ValueError("the module has no per-device functions (mpmd.device); run mpmd-partition first")
        self.num_devices = len(functions)
        if sorted(functions) != list(range(self.num_devices)):
            raise ValueError(f"the module has functions for devices {sorted(functions)}, not 0..{self.num_devices - 1}")
        self.results = [_result_indices(functions[d]) for d in range(self.num_devices)]
        self.num_results = sum(map(len, self.results))
        names = [functions[d].get_attr("sym_name").value for d in range(self.num_devices)]
        if executor == "interpreter":
            self._runners: list[Any] = [Interpreted(self.module, n) for n in names]
        else:
            self._runners = [compile_module(self.module, entry=n, executor=executor, partition=False) for n in names]
        self.events: list[Event] = []

    def _gather(self, per_device: Sequence[Sequence[Any]]) -> tuple:
        out: list[Any] = [None] * self.num_results
        for indices, values in zip(self.results, per_device):
            for k, v in zip(indices, values):
                out[k] = v
        return tuple(out)

    def __call__(self, *args: Any, timeout: float = DEFAULT_TIMEOUT,
                 on_event: Callable[[Event], None] | None = None, link_latency: float = 0.0) -> tuple:
        """Run every device in its own thread of this process; the program's results.
        `link_latency`: seconds every message takes from its send to its receiver (a model of a
        slow link; 0 by default)."""
        comm = MPMDThreadCommunicator(self.num_devices, timeout, on_event, link_latency)
        try:
            outs = run_threads(self._runners, [args] * self.num_devices, timeout, comm=comm)
        finally:
            self.events = comm.events
        return self._gather(outs)

    def run_process(self, *args: Any, timeout: float = distributed.DEFAULT_TIMEOUT_S) -> dict[int, np.ndarray]:
        """Run this process's device (its rank) under torch.distributed; its results, by index in
        the program's results. Every rank must call it, in the same order as its other runs."""
        rank, world = distributed.process_index(), distributed.process_count()
        if world != self.num_devices:
            raise distributed.DistributedError(f"the program runs on {self.num_devices} devices, but there are {world} "
                                               "processes")
        comm = StoreCommunicator(timeout)
        try:
            with spmd_context(rank, comm):
                out = self._runners[rank](*args)
        except BaseException as e:
            comm.fail(f"{type(e).__name__}: {e}")
            raise
        values = list(out) if isinstance(out, tuple) else [out]
        return dict(zip(self.results[rank], values))

    def run_processes(self, *args: Any, timeout: float = distributed.DEFAULT_TIMEOUT_S) -> tuple:
        """`run_process` on every rank, then every result on every rank (gathered through the
        process group)."""
        mine = self.run_process(*args, timeout=timeout)
        everyone = distributed.communicator().all_gather_object(mine, "mpmd results")
        merged: dict[int, Any] = {}
        for d in everyone:
            merged.update(d)
        return tuple(merged[k] for k in range(self.num_results))


_RUNS = itertools.count()


class StoreCommunicator:
    """Transfers between processes through the process group's store: a message is the key
    `loom/mpmd/<run>/<sender>-><receiver>/<channel>/<iterations>`, deleted once received; an
    iteration started is the key `.../it/<loop>/<device>/<iterations>`. Waits are bounded and
    watch the peer's heartbeat (loom.runtime.distributed), so a dead rank is named."""

    def __init__(self, timeout: float) -> None:
        import torch.distributed as dist

        self.store = dist.distributed_c10d._get_default_store()
        self.rank = distributed.process_index()
        self.num_partitions = distributed.process_count()
        self.timeout = float(timeout)
        self.prefix = f"loom/mpmd/{next(_RUNS)}"

    def fail(self, reason: str) -> None:
        """Tell the peers this rank stopped with an error."""
        try:
            self.store.set(f"{self.prefix}/failed/{self.rank}", reason)
        except Exception:  # noqa: BLE001 - the store is gone: the peers see the heartbeat stop
            pass

    def _wait(self, peer: int, key: str, what: str) -> None:
        """Wait until `key` is in the store, polling it (backing off to 2 ms between looks: a
        blocking store wait that times out logs a warning each time), and every quarter second
        looking whether `peer` failed or stopped beating."""
        liveness = distributed._STATE.liveness
        deadline = time.monotonic() + self.timeout
        beat, beat_seen = None, time.monotonic()
        delay, next_look = 5e-5, time.monotonic() + distributed.HEARTBEAT_S
        while not self.store.check([key]):
            time.sleep(delay)
            delay = min(2 * delay, 2e-3)
            now = time.monotonic()
            if now < next_look:
                continue
            next_look = now + distributed.HEARTBEAT_S
            failed = f"{self.prefix}/failed/{peer}"
            if self.store.check([failed]):
                raise CollectiveError(f"rank {self.rank} at {what}: rank {peer} failed: "
                                      f"{self.store.get(failed).decode()}", peer)
            if liveness is not None:
                current = liveness._read(peer)[0]
                if current != beat:
                    beat, beat_seen = current, now
                elif now - beat_seen > 8 * distributed.HEARTBEAT_S:
                    raise CollectiveError(f"rank {self.rank} at {what}: rank {peer} stopped (exited or frozen: its "
                                          "heartbeat stopped)", peer)
            if now > deadline:
                raise CollectiveError(f"rank {self.rank} at {what}: rank {peer} did not send within "
                                      f"{self.timeout:g} s", peer)

    def _message(self, sender: int, receiver: int, key: tuple) -> str:
        channel, iterations = key
        return f"{self.prefix}/{sender}->{receiver}/{channel}/{'.'.join(map(str, iterations))}"

    def send(self, me: int, peer: int, key: tuple, value: Any) -> None:
        self.store.set(self._message(me, peer, key), pickle.dumps(np.asarray(value)))

    def recv(self, me: int, peer: int, key: tuple) -> Any:
        k = self._message(peer, me, key)
        self._wait(peer, k, f"mpmd.recv from rank {peer} {_what(key)}")
        value = pickle.loads(self.store.get(k))
        self.store.delete_key(k)
        return value

    def _started(self, loop: tuple, device: int, iteration: int) -> str:
        return f"{self.prefix}/it/{loop[0]}/{device}/{'.'.join(map(str, (*loop[1], iteration)))}"

    def begin_iteration(self, me: int, loop: tuple, iteration: int, devices: Sequence[int], parallel: int) -> None:
        self.store.set(self._started(loop, me, iteration), "1")
        need = iteration - parallel + 1
        if need < 0:
            return
        for peer in devices:
            if peer != me:
                self._wait(peer, self._started(loop, peer, need),
                           f"mpmd.iteration {iteration} of loop {loop[0]} (waiting for rank {peer} to start iteration "
                           f"{need})")
        # every peer has started iteration `need`, so has passed the waits of its iterations
        # before it, which looked for this device's keys up to need - parallel: those go
        if need - parallel >= 0:
            self.store.delete_key(self._started(loop, me, need - parallel))


def run(module: Operation | str, *args: Any, executor: str = "compiled", timeout: float = DEFAULT_TIMEOUT) -> tuple:
    """Run a partitioned module in this process, one thread per device; its results."""
    return MPMDProgram(module, executor)(*args, timeout=timeout)


__all__ = ["MPMDProgram", "MPMDThreadCommunicator", "StoreCommunicator", "Transfers", "run"]
