"""Running the per-device programs of a placed program (`loom.transforms.mpmd_partition`).

    program = MPMDProgram(partitioned_module)
    outs = program(x, n)                        # in process: one thread per device
    outs = program.run_process(x, n)            # under torch.distributed: this rank's device

Every device runs its own function (`@main_device<d>`) on all of the program's arguments; the
results are gathered from the devices that hold them (`mpmd.results`). Transfers are keyed by
(sender, receiver, channel, iterations): a message waits in a mailbox until its receiver asks for
it, so a device may run ahead into later iterations; `mpmd.iteration` bounds how far (at most
`parallel` iterations of a loop in flight).

In process, `MPMDThreadCommunicator` extends the SPMD runtime's `ThreadCommunicator` (the per-device
programs may hold collectives too) with mailboxes on the same lock; threads run through
`loom.runtime.local`. Over processes (`loom.distributed.initialize`, a gloo process group: the
messages are host tensors, and NCCL would ignore their tags), `P2PCommunicator` sends every message
point to point (`isend` / `irecv`), tagged by its channel and its place among the channel's
messages, so matching by iteration needs no ordering across channels. Every wait is bounded: a
receive whose sender failed, finished, or (over processes) stopped beating in the store raises an
error naming the device and the op (channel and iteration) it waited at; the runtime then raises a
`PartitionError` naming the device that failed first.

`events` (in process) is the order in which the devices sent, received and opened iterations:
`(device, "send" | "recv", channel, iterations)` and `(device, "iteration", loop, iterations)`;
`on_event(event)` is called by the device's thread as it happens. `link_latency` makes every
in-process message take that many seconds from its send to its receiver (a model of a slow link).
The kernels reach a runtime through the `Transfers` protocol.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any, Protocol

import numpy as np

from loom.dialects.mpmd import RESULTS_OF_FUNCTION
from loom.ir.core import Operation
from loom.runtime import distributed
from loom.runtime.communicator import CollectiveError, spmd_context
from loom.runtime.executable import Interpreted
from loom.runtime.executable import compile as compile_module
from loom.runtime.local import DEFAULT_TIMEOUT, ThreadCommunicator, _module
from loom.runtime.local import _run as run_threads
from loom.transforms.mpmd_partition import device_functions

Event = tuple


class Transfers(Protocol):
    """What the mpmd kernels (loom.ops.mpmd) ask of the communicator a runtime installs with
    `spmd_context`: `me` is the calling device, `key` is (channel, iterations)."""

    num_partitions: int

    def send(self, me: int, peer: int, key: tuple, value: Any, join: tuple[str, int] | None = None,
             window: int = 0) -> None:
        """Leave `value` for `peer` (does not wait for it). `join`: ("carries", predicate channel)
        or ("rides", data channel) where a loop's predicate rides on its data (loom.dialects.mpmd).
        `window`: the `parallel` of the innermost loop that holds the transfer (0 outside loops)."""
        ...

    def recv(self, me: int, peer: int, key: tuple, like: tuple[np.dtype, tuple[int, ...], int],
             join: tuple[str, int] | None = None, window: int = 0) -> Any:
        """The value `peer` sent with `key`, of the dtype, shape and bytes `like`; waits for it
        (bounded), an error naming `peer`. `join` and `window` as `send`'s."""
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

    def send(self, me: int, peer: int, key: tuple, value: Any, join: tuple[str, int] | None = None,
             window: int = 0) -> None:
        with self._cond:  # a mailbox costs nothing per message: `join` and `window` change nothing here
            self._messages[(me, peer, key)] = (time.monotonic() + self.link_latency, value)
            self._cond.notify_all()
        self._event((me, "send", *key))

    def recv(self, me: int, peer: int, key: tuple, like: Any = None, join: tuple[str, int] | None = None,
             window: int = 0) -> Any:
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
                    self._wait_for(me, peer, lambda: started.get(peer, -1) >= need,  # noqa: B023 - called at once
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
        self.waited_s = 0.0  # run_process: seconds its rank spent blocked on the transport (idle, or in flight)

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
        the program's results. Every rank must call it, in the same order as its other runs.
        Afterwards `waited_s` holds the seconds this rank spent blocked on the transport (waiting
        for a peer's message, or for a peer to take its own): its idle time, or messages in flight."""
        rank, world = distributed.process_index(), distributed.process_count()
        if world != self.num_devices:
            raise distributed.DistributedError(f"the program runs on {self.num_devices} devices, but there are {world} "
                                               "processes")
        comm = P2PCommunicator(timeout)
        try:
            with spmd_context(rank, comm):  # type: ignore[arg-type]  # the mpmd kernels ask for `Transfers`
                out = self._runners[rank](*args)
            comm.finish()
        except BaseException as e:
            comm.fail(f"{type(e).__name__}: {e}")
            raise
        finally:
            self.waited_s = comm.waited
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


_RUNS = itertools.count()  # every rank runs its programs in the same order: a run's number is the same
_WINDOW = 4096  # messages of one channel in flight at once, at most: the tag's sequence part wraps here
_PAYLOAD, _STARTED = range(2)  # what a tag carries
_AHEAD = 4  # receives posted beyond the one waited for, at most, per stream of a loop (payloads or tokens)
# On 2 gloo processes, posting receives ahead made a loop of one-byte messages slower and a loop of
# 64 KiB messages faster (benchmarks/NOTES.md, mpmd.py): small messages are posted for as they are taken.
_AHEAD_MIN_BYTES = 4096
_PREDICATE_BYTES = 1  # a loop's predicate (tensor<i1>) riding on a data message


def _said(text: str) -> Callable[[], str]:
    """`text` as the P2PCommunicator's waits take where they are (made only when a wait fails)."""
    return lambda: text


@functools.cache
def _one_byte_tensors() -> list[Any]:
    """A one-byte tensor of each value, for the messages of one byte (predicates, tokens)."""
    import torch
    return [torch.full((1,), b, dtype=torch.uint8) for b in range(256)]


def _posted_ahead(window: int, nbytes: int) -> int:
    """Receives posted past the one taken, on a stream of messages of `nbytes` bytes in a loop of
    window `window` (0: no loop): half the window, the other half keeping the decider's waits off
    the sends it just made; none for messages under _AHEAD_MIN_BYTES."""
    return min(_AHEAD, (window - 1) // 2) if window and nbytes >= _AHEAD_MIN_BYTES else 0


def _tag(kind: int, channel: int, sequence: int) -> int:
    return (channel * _WINDOW + sequence % _WINDOW) * 2 + kind


class P2PCommunicator:
    """Transfers between processes with torch.distributed point-to-point messages (`isend` / `irecv`
    of host tensors, on a gloo process group). Sender and receiver count the messages of each
    channel between them in the same order (program order: the dead-token rule makes both skip the
    same ones), so the n-th message of a channel has the tag (channel, n mod _WINDOW) on both sides.
    A message is the bytes of its value only: the receiver knows its dtype and shape from the IR
    (the types are static). Where the partitioned program says a loop's predicate rides on data
    (`mpmd.carries` / `mpmd.rides`), the decider holds that data until it sends the next predicate
    and sends both as one message on the data's channel; the loop's first predicate goes alone.

    Receives are posted ahead: taking the n-th message of a stream (peer, kind, channel) inside a
    loop of window `parallel` first posts the receives of its next a = min(_AHEAD, (parallel - 1)
    // 2) messages, if they are of _AHEAD_MIN_BYTES or more. Gloo sends a message only once its
    receiver posted the receive (a rendezvous: a round trip between the processes otherwise), so a
    message posted for lands while its receiver is still busy with the ones before it; and a send
    that completed says how far its receiver got, so the window needs no message back to the
    loop's decider (devices[0]). Starting iteration i, with j = i - parallel + 1 > 0, the decider
    waits until the message that carried each device's predicate of iteration j + a completed:
    the device posted its receive when it took the message a before it on the same stream, so it
    has started iteration j (took its predicate) or, where the predicate rides on data, taken its
    last message of iteration j - 1 (for j = 0: the first predicate, whose receive is posted as it
    is taken). Only that send is waited for (waiting for every send before it would also wait for
    large ones' bytes to drain), and with a <= (parallel - 1) // 2 never one made in the last
    iterations, which costs a round trip of gloo's threads (measured on 2 gloo processes). Both
    sides count the same messages, so at the end of the run the sender knows which receives are
    still posted (the a after its last message of each stream of a loop) and fills them with
    messages of the same size, and the next run starts with none posted. The other devices of a
    loop hear nothing from each other every iteration: each tells the others but the decider
    (whose predicates bound them all) that it started every `parallel // 2`-th iteration with a
    one-byte token, taken when a wait needs it and at the end of the run. Every wait is bounded by
    the timeout; when one fails (the peer's connection closed, or the time ran out) the peers'
    heartbeats (loom.runtime.distributed) and failure notes in the store name the rank that stopped or failed."""

    def __init__(self, timeout: float) -> None:
        import torch
        import torch.distributed as dist

        self.torch, self.dist = torch, dist
        self.group: Any = dist.group.WORLD  # its send / recv: the module's isend / irecv add Python per message
        self.store = dist.distributed_c10d._get_default_store()
        self.rank = distributed.process_index()
        self.num_partitions = distributed.process_count()
        self.timeout = float(timeout)
        self.failed_key = f"loom/mpmd/{next(_RUNS)}/failed/{{}}"  # a run's failure notes
        self._sent: dict[tuple, int] = {}  # (peer, kind, channel) -> messages sent
        self._received: dict[tuple, int] = {}  # (peer, kind, channel) -> messages received
        self._posted: dict[tuple, deque] = {}  # (peer, kind, channel) -> (work, buffer) of the next messages
        self._ahead: dict[tuple, tuple[int, int]] = {}  # (peer, kind, channel) of a loop -> (bytes, posted ahead)
        self._sends: dict[tuple, deque] = defaultdict(deque)  # (peer, kind) -> pending sends (they hold their buffers)
        self._last_ahead: dict[int, int] = {}  # peer -> receives it posts ahead on the stream of the last payload
        self._waited: set[int] = set()  # ids of the sends in _sends waited for already
        self._marks: dict[tuple, list] = defaultdict(list)  # (loop, peer) -> the last payload as each iteration began
        self._plans: dict[int, tuple] = {}  # loop -> begin_iteration's tell, hear, every, watch
        self._first: dict[tuple, int] = {}  # (peer, loop) -> its tokens before the loop's current instance
        self._due: dict[tuple, int] = {}  # (peer, loop) -> tokens it sends this device (as counted here)
        self._held: dict[tuple, tuple[int, Any]] = {}  # (peer, predicate channel) -> (channel, value) carrying it
        self._carried: dict[tuple, Any] = {}  # (peer, predicate channel) -> the predicate that came with data
        self._bytes = _one_byte_tensors()  # isend only reads them
        self._token = self._bytes[1]  # what every token carries
        self._patience = timedelta(seconds=max(self.timeout, 1e-3))
        self.waited = 0.0  # seconds this rank spent blocked on its peers' messages and on its own sends

    def fail(self, reason: str) -> None:
        """Tell the peers this rank stopped with an error."""
        try:
            self.store.set(self.failed_key.format(self.rank), reason)
        except Exception:  # noqa: BLE001 - the store is gone: the peers see the heartbeat stop
            pass

    def _isend(self, peer: int, kind: int, channel: int, data: Any, ahead: int) -> None:
        stream = (peer, kind, channel)
        n = self._sent.get(stream, 0)
        self._sent[stream] = n + 1
        if ahead:  # the receiver posts receives ahead: the end of the run fills them with messages of this size
            self._ahead[stream] = (data.numel(), ahead)
        self._sends[(peer, kind)].append(self._post(peer, self.group.send, data, _tag(kind, channel, n),
                                                         lambda: f"mpmd.send to rank {peer} channel {channel}"))
        if kind == _PAYLOAD:  # what the decider's window reads, beside the payload's work (begin_iteration)
            self._last_ahead[peer] = ahead

    def _take(self, peer: int, kind: int, channel: int, nbytes: int, ahead: int, what: Callable[[], str]) -> Any:
        """The next message of a stream (a new tensor of `nbytes` bytes), the receives of its next
        `ahead` posted."""
        stream = (peer, kind, channel)
        n = self._received.get(stream, 0)
        self._received[stream] = n + 1
        posted = self._posted.get(stream)
        if posted is None:
            posted = self._posted[stream] = deque()
        while len(posted) <= ahead:
            buffer = self.torch.empty(nbytes, dtype=self.torch.uint8)
            posted.append((self._post(peer, self.group.recv, buffer, _tag(kind, channel, n + len(posted)), what),
                           buffer))
        work, buffer = posted.popleft()
        self._wait(peer, work, what)
        return buffer

    def _post(self, peer: int, post: Callable, tensor: Any, tag: int, what: Callable[[], str]) -> Any:
        """Post a send or receive; the transport refuses one to a peer whose connection closed."""
        try:
            return post([tensor], peer, tag)
        except Exception as e:  # noqa: BLE001 - the transport's errors: connection closed
            blamed, why = self._blame(peer)
            raise CollectiveError(f"rank {self.rank} at {what()}: {why} "
                                  f"({type(e).__name__}: {str(e)[:200]})", blamed) from None

    def _wait(self, peer: int, work: Any, what: Callable[[], str]) -> None:
        """Wait for `work` within the timeout (gloo's works report completion only through a
        wait); if it fails, say which rank is to blame and where (`what()`, made only then)."""
        start = time.perf_counter()
        try:
            work.wait(timeout=self._patience)
        except Exception as e:  # noqa: BLE001 - the transport's errors: connection closed, timed out
            blamed, why = self._blame(peer)
            raise CollectiveError(f"rank {self.rank} at {what()}: {why} ({type(e).__name__}: {str(e)[:200]})",
                                  blamed) from None
        finally:
            self.waited += time.perf_counter() - start

    def _blame(self, peer: int) -> tuple[int, str]:
        """The rank to blame for a failed wait on `peer`, and why: one that reported a failure,
        one whose heartbeat stopped (watched for 4 periods), else `peer` for not sending in time."""
        others = [p for p in range(self.num_partitions) if p != self.rank]
        others.sort(key=lambda p: p != peer)  # the peer waited on first
        try:
            for p in others:
                key = self.failed_key.format(p)
                if self.store.check([key]):
                    return p, f"rank {p} failed: {self.store.get(key).decode()}"
            liveness = distributed._STATE.liveness
            if liveness is not None:
                before = {p: liveness._read(p)[0] for p in others}
                time.sleep(4 * distributed.HEARTBEAT_S)
                for p in others:
                    if liveness._read(p)[0] == before[p]:
                        return p, f"rank {p} stopped (exited or frozen: its heartbeat stopped)"
        except Exception:  # noqa: BLE001 - the store's host is gone with it
            return peer, f"rank {peer} stopped (the store is gone)"
        return peer, f"rank {peer} did not send within {self.timeout:g} s"

    def send(self, me: int, peer: int, key: tuple, value: Any, join: tuple[str, int] | None = None,
             window: int = 0) -> None:
        # no copy: the kernel hands over a C-ordered array of its own, of the IR's type (loom.ops.mpmd.send),
        # which the tensor keeps alive; a one-byte value (a predicate) is one of the tensors made once
        channel = key[0]
        role, other = join if join is not None else ("", 0)
        if role == "carries":  # held until the predicate it carries is made
            self._held[(peer, other)] = (channel, value)
            return
        if role == "rides":  # a predicate that rides on the data held for it, else (the first) alone
            held = self._held.pop((peer, channel), None)
            if held is not None:
                channel, data = held
                value = np.concatenate((data.reshape(-1).view(np.uint8), value.reshape(-1).view(np.uint8)))
            else:
                window = 0  # the peer takes it without posting receives ahead: one per loop instance
        ahead = _posted_ahead(window, value.nbytes)
        data = self._bytes[value.view(np.uint8).item()] if value.nbytes == 1 else \
            self.torch.from_numpy(value.reshape(-1).view(np.uint8))
        self._isend(peer, _PAYLOAD, channel, data, ahead)

    def recv(self, me: int, peer: int, key: tuple, like: tuple[np.dtype, tuple[int, ...], int],
             join: tuple[str, int] | None = None, window: int = 0) -> Any:
        dtype, shape, nbytes = like
        channel = key[0]
        role, other = join if join is not None else ("", 0)
        if role == "rides":
            carried = self._carried.pop((peer, channel), None)
            if carried is not None:  # it came with the data before it
                return carried.numpy().view(dtype).reshape(shape)
            window = 0  # the loop's first predicate comes alone
        extra = _PREDICATE_BYTES if role == "carries" else 0
        buffer = self._take(peer, _PAYLOAD, channel, nbytes + extra, _posted_ahead(window, nbytes + extra),
                            lambda: f"mpmd.recv from rank {peer} {_what(key)}")
        if extra:
            self._carried[(peer, other)] = buffer[nbytes:]
            buffer = buffer[:nbytes]
        return buffer.numpy().view(dtype).reshape(shape)

    def begin_iteration(self, me: int, loop: tuple, iteration: int, devices: Sequence[int], parallel: int) -> None:
        # The decider sends every other device its predicate for iteration i before it reaches
        # iteration i (the condition opens it: nothing between that send and its mpmd.iteration
        # waits), so its last payload to each as an iteration begins is the message that carried
        # that iteration's predicate (the class's docstring says what waiting for one means).
        # Its wait cannot deadlock: every device takes the messages of the iterations before i with
        # no more from the decider. The other devices tell each other every `every`-th iteration
        # (half the window: fewer messages); they start the same iterations in the same order, so
        # both sides count the same tokens: a peer has started iteration `k * every` of this
        # instance once it sent `first + k + 1` tokens for the loop. Waiting for the first token at
        # or after `need` is stricter than the window asks (at most `every - 1` iterations), and
        # never waits for an iteration later than the one this device starts, so it cannot
        # deadlock either.
        loop_id = loop[0]
        if loop_id not in self._plans:  # the same for every iteration of the loop
            decider = devices[0]
            others = [p for p in devices if p != me and p != decider]
            self._plans[loop_id] = ([], [], 1, others) if me == decider else (others, others, max(1, parallel // 2), [])
        tell, hear, every, watch = self._plans[loop_id]
        need = iteration - parallel + 1
        for peer in watch:  # payloads only: a peer takes tokens when a wait needs them, maybe only at the end
            sends, marks = self._sends[(peer, _PAYLOAD)], self._marks[(loop_id, peer)]
            if iteration == 0:
                marks.clear()
            if not sends or (marks and marks[-1] is sends[-1]):
                raise CollectiveError(f"rank {self.rank} at mpmd.iteration {iteration} of loop {loop_id}: it decides "
                                      f"the loop (the first of its devices {list(devices)}) but sent rank {peer} no "
                                      f"message since {'the run began' if not sends else 'its last iteration'}; a "
                                      "loop's decider sends every other device of the loop the predicate of each "
                                      "iteration (the mpmd dialect), which this program does not", self.rank)
            marks.append(sends[-1])  # the message that carries the predicate of this iteration
            # the iteration whose predicate's message must have completed, by the receives posted ahead on
            # the stream of the last one (that of iteration i); the first predicate's are posted as it is taken
            marked = need + self._last_ahead[peer] if need > 0 else need
            if marked >= 0:  # a gloo work is waited for once: the end of the run skips it
                work = marks[marked]
                self._wait(peer, work, _said(f"mpmd.iteration {iteration} of loop {loop_id} (waiting for "
                                             f"rank {peer} to start iteration {need})"))
                self._waited.add(id(work))
        if iteration == 0:
            for peer in hear:
                self._first[(peer, loop_id)] = self._due.get((peer, loop_id), 0)
        if iteration % every == 0:
            for peer in tell:
                self._isend(peer, _STARTED, loop_id, self._token, _AHEAD)
            for peer in hear:
                self._due[(peer, loop_id)] = self._due.get((peer, loop_id), 0) + 1
        if need < 0:
            return
        for peer in hear:
            tokens = self._first[(peer, loop_id)] + -(-need // every) + 1
            while self._received.get((peer, _STARTED, loop_id), 0) < tokens:
                self._take(peer, _STARTED, loop_id, 1, _AHEAD, _said(f"mpmd.iteration {iteration} of loop {loop_id} "
                                                       f"(waiting for rank {peer} to start iteration {need})"))

    def finish(self) -> None:
        """Fill the receives the peers posted past their last message, take the peers' iteration
        tokens no wait needed and the fillers they send, and wait until every send was taken: the
        next run starts with no message in flight and no receive posted."""
        for (peer, kind, channel), (size, ahead) in self._ahead.items():
            filler, n = self.torch.zeros(size, dtype=self.torch.uint8), self._sent[(peer, kind, channel)]
            for k in range(n, n + ahead):
                self._sends[(peer, kind)].append(self.group.send([filler], peer, _tag(kind, channel, k)))
        for (peer, loop_id), due in self._due.items():
            while self._received.get((peer, _STARTED, loop_id), 0) < due:
                self._take(peer, _STARTED, loop_id, 1, _AHEAD,
                           _said(f"the end of the run (loop {loop_id}'s iterations started by rank {peer})"))
        for (peer, _, _), posted in self._posted.items():
            for work, _ in posted:
                self._wait(peer, work, _said(f"the end of the run (rank {peer}'s messages past its last one)"))
        self._posted.clear()
        for (peer, _), sends in self._sends.items():
            for work in sends:
                if id(work) not in self._waited:
                    self._wait(peer, work, _said(f"the end of the run (a message not yet received by rank {peer})"))
        self._sends.clear()
        self._marks.clear()
        self._waited.clear()


def run(module: Operation | str, *args: Any, executor: str = "compiled", timeout: float = DEFAULT_TIMEOUT) -> tuple:
    """Run a partitioned module in this process, one thread per device; its results."""
    return MPMDProgram(module, executor)(*args, timeout=timeout)


__all__ = ["MPMDProgram", "MPMDThreadCommunicator", "P2PCommunicator", "Transfers", "run"]
