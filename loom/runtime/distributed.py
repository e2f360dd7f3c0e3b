"""Partitioned programs over many processes on torch.distributed: one partition per process, the
rank is the partition id, the collectives are torch.distributed calls.

    loom.distributed.initialize()                       # under torchrun: reads RANK, WORLD_SIZE, ...
    x_local = local_shard(x, NamedSharding(mesh, P("data")))
    (y_local,) = run_partitioned(partitioned_module, [x_local])
    y = assemble(y_local, NamedSharding(mesh, P("data")), y_shape)

Backends: gloo when the arrays live on the CPU, nccl when CUDA devices are used (each process
drives the GPU `LOCAL_RANK`; numpy operands are staged through it). Every collective is bounded by
the process group's timeout. A failed collective raises `CollectiveError`, which names the op
that ran it, the collective, the ranks taking part and, found through the rendezvous store, the
peers missing from it: each process publishes a heartbeat there, with the number of collectives
it has entered, from a daemon thread, so a dead or frozen process is told from one that is alive
but elsewhere in the program.
"""

from __future__ import annotations

import atexit
import datetime
import functools
import hashlib
import os
import sys
import threading
import time
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.ir.core import Operation
from loom.ir.diagnostics import LoomError
from loom.runtime import communicator as communicator_module
from loom.runtime.communicator import REDUCTIONS, spmd_context
from loom.runtime.devices import is_tensor
from loom.sharding import NamedSharding

DEFAULT_TIMEOUT_S = 60.0
HEARTBEAT_S = 0.25  # how often each process bumps its counter in the store


class DistributedError(LoomError):
    """A distributed run that cannot start or go on: an incomplete environment, processes running
    different programs, a peer that is gone."""


class CollectiveError(DistributedError, communicator_module.CollectiveError):
    """A collective that failed: says which op ran it, which collective, on which rank, among which
    ranks, and which peers are missing from it (stopped, or alive elsewhere in the program);
    `partition` is the first of those (None when none is known)."""

    def __init__(self, message: str, collective: str, rank: int, group: Sequence[int], missing: Sequence[int]) -> None:
        communicator_module.CollectiveError.__init__(self, message, missing[0] if missing else None)
        self.collective = collective
        self.rank = rank
        self.group = list(group)
        self.missing = list(missing)  # the peers that stopped or have not reached the collective


# The process group and how it was made ----------------------------------------------------------

class _State:
    rank = 0
    world = 1
    device: Any = None          # torch.device the collectives run on
    timeout_s = DEFAULT_TIMEOUT_S
    liveness: _Liveness | None = None
    communicator: TorchCommunicator | None = None


_STATE = _State()
_ENV_HELP = ("set it (torchrun sets RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and LOCAL_RANK) or pass "
             "coordinator_address=, num_processes= and process_id= to loom.distributed.initialize")


def _env(name: str, given: Any) -> str:
    if given is not None:
        return str(given)
    value = os.environ.get(name)
    if value is None or value == "":
        raise DistributedError(f"loom.distributed.initialize: the environment variable {name} is not set; {_ENV_HELP}")
    return value


def _env_int(name: str, given: Any) -> int:
    text = _env(name, given)
    try:
        return int(text)
    except ValueError:
        raise DistributedError(f"loom.distributed.initialize: {name}={text!r} is not an integer") from None


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, timeout_s: float = DEFAULT_TIMEOUT_S, *,
               local_device_id: int | None = None, backend: str | None = None) -> None:
    """Join the processes of a distributed run (as `jax.distributed.initialize`).

    `coordinator_address` is "host:port" of the rendezvous store (default MASTER_ADDR:MASTER_PORT),
    `num_processes` the number of processes (default WORLD_SIZE), `process_id` this process's rank
    (default RANK), `local_device_id` the GPU it drives (default LOCAL_RANK, then 0). `backend` is
    "gloo" (CPU) or "nccl" (CUDA); by default nccl when CUDA is available, else gloo. Every
    collective, and the rendezvous itself, gives up after `timeout_s` seconds."""
    import torch
    import torch.distributed as dist

    if dist.is_initialized():
        raise DistributedError("loom.distributed.initialize: already initialized; call loom.distributed.shutdown() "
                               "first")
    if coordinator_address is None:
        host, port = _env("MASTER_ADDR", None), _env_int("MASTER_PORT", None)
    else:
        host, sep, port_text = coordinator_address.rpartition(":")
        if not sep or not host or not port_text.isdigit():
            raise DistributedError(f"loom.distributed.initialize: coordinator_address {coordinator_address!r} is not "
                                   "'host:port'")
        port = int(port_text)
    world = _env_int("WORLD_SIZE", num_processes)
    rank = _env_int("RANK", process_id)
    if not 0 <= rank < world:
        raise DistributedError(f"loom.distributed.initialize: process id (RANK) {rank} is not in [0, {world})")
    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend not in ("gloo", "nccl"):
        raise DistributedError(f"loom.distributed.initialize: backend {backend!r} is not 'gloo' or 'nccl'")
    timeout = datetime.timedelta(seconds=timeout_s)
    device = torch.device("cpu")
    kwargs: dict[str, Any] = {}
    if backend == "nccl":
        local = _env_int("LOCAL_RANK", local_device_id if local_device_id is not None else
                         os.environ.get("LOCAL_RANK") or 0)
        if not 0 <= local < torch.cuda.device_count():
            raise DistributedError(f"loom.distributed.initialize: rank {rank} drives GPU {local} (LOCAL_RANK), but "
                                   f"{torch.cuda.device_count()} are visible")
        device = torch.device("cuda", local)
        torch.cuda.set_device(device)
        kwargs["device_id"] = device
        # Without blocking wait, a timed-out NCCL collective is reported by the watchdog thread
        # (which tears the process down); with it, `wait()` raises, and we name the collective.
        os.environ.setdefault("TORCH_NCCL_BLOCKING_WAIT", "1")
    # The rendezvous store is hosted by rank 0, or by torchrun's agent. The liveness counters live
    # there too, written through a second client: the process group's client can be held for long
    # by a blocking wait (a group's rendezvous), which must not pause this process's heartbeat.
    hosts_store = rank == 0 and not _agent_store()
    store: Any = dist.TCPStore(host, port, world_size=world, is_master=hosts_store, timeout=timeout,
                               wait_for_workers=False)
    beat_store: Any = dist.TCPStore(host, port, is_master=False, timeout=timeout)
    if _agent_store():  # the agent's store outlives a restart: this attempt's keys apart
        attempt = f"loom/attempt_{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}/"
        store, beat_store = dist.PrefixStore(attempt, store), dist.PrefixStore(attempt, beat_store)
    liveness = _Liveness(beat_store, rank, f"{host}:{port}", hosts_store,  # published before a peer looks
                         timeout.total_seconds())
    dist.init_process_group(backend, store=store, rank=rank, world_size=world, timeout=timeout, **kwargs)
    _STATE.rank, _STATE.world, _STATE.device, _STATE.timeout_s = rank, world, device, timeout_s
    _STATE.liveness = liveness
    _STATE.communicator = None


def _agent_store() -> bool:
    """Under torchrun the agent hosts the rendezvous store at MASTER_ADDR:MASTER_PORT itself."""
    return os.environ.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() == "true"


def shutdown() -> None:
    """Leave the distributed run (a no-op when not initialized)."""
    import torch.distributed as dist

    if _STATE.liveness is not None:
        _STATE.liveness.stop()
    # The programs run here hold the communicator, and it the process groups: let go of them now,
    # so that the groups are torn down with the run, not by the interpreter's exit.
    _PROGRAMS.clear()
    if _STATE.communicator is not None:
        _STATE.communicator._groups.clear()
    _STATE.liveness = _STATE.communicator = None
    if dist.is_initialized():
        dist.destroy_process_group()
    _STATE.rank, _STATE.world = 0, 1


def is_initialized() -> bool:
    import torch.distributed as dist
    return dist.is_initialized()


def process_index() -> int:
    """This process's rank (0 when not initialized), which is the partition it runs."""
    return _STATE.rank


def process_count() -> int:
    """The number of processes (1 when not initialized)."""
    return _STATE.world


def communicator() -> TorchCommunicator:
    """The communicator of this process (made on first use)."""
    if not is_initialized():
        raise DistributedError("loom.distributed is not initialized; call loom.distributed.initialize() first")
    if _STATE.communicator is None:
        _STATE.communicator = TorchCommunicator()
    return _STATE.communicator


class _Liveness:
    """Each process publishes `loom/alive/<rank>` = "<beat> <collectives entered> <the last one>" in
    the rendezvous store every HEARTBEAT_S seconds, from a daemon thread (a collective only sets an
    attribute, so it pays nothing). After a failed collective, a peer whose beat does not move has
    stopped (exited, killed or frozen); a live peer that has entered fewer collectives has not
    reached this one."""

    def __init__(self, store: Any, rank: int, address: str, hosts_store: bool, store_timeout_s: float) -> None:
        self.store, self.rank, self.address, self.hosts_store = store, rank, address, hosts_store
        # the collectives entered, the last one's name and group (formatted by the heartbeat thread)
        self.progress: tuple[int, str, Sequence[int] | None] = (0, "none", None)
        self._beats = 0
        self._publish()
        self._stop = threading.Event()
        # A store call blocks for at most the store's timeout; the heartbeat is waited for that long.
        self._stop_within = min(store_timeout_s, 60.0) + 2 * HEARTBEAT_S + 1
        self._thread = threading.Thread(target=self._beat, name=f"loom-heartbeat-{rank}", daemon=True)
        self._thread.start()
        # Stopped before the interpreter finalizes too: a daemon thread that is inside a store call
        # then is ended from within C++ code, which aborts the process ("terminate called without
        # an active exception") after its work is done.
        atexit.register(self.stop)

    @staticmethod
    def _key(rank: int) -> str:
        return f"loom/alive/{rank}"

    def _publish(self) -> None:
        self._beats += 1
        calls, collective, group = self.progress
        what = collective if group is None else _describe(collective, group)
        self.store.set(self._key(self.rank), f"{self._beats} {calls} {what}")

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                self._publish()
            except Exception:  # the store is gone (its host exited): nothing left to tell
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self._stop_within)
        atexit.unregister(self.stop)

    def _read(self, rank: int) -> tuple[int, int, str]:
        if not self.store.check([self._key(rank)]):
            return 0, 0, "none"
        beat, calls, what = self.store.get(self._key(rank)).decode().split(" ", 2)
        return int(beat), int(calls), what

    def report_failure(self, calls: int) -> None:
        """Say that this process's collective number `calls` failed, and that it has looked for the
        peers missing from it (it needs the store no more)."""
        self.store.set(f"loom/failed/{self.rank}", str(calls))

    def linger(self, peers: Sequence[int], calls: int, seconds: float) -> None:
        """Wait (at most `seconds`) until `peers` have reported the failure of collective `calls`.
        The process hosting the store does this before raising: were it to exit at once, the store
        would vanish while the others still look for the peer that is missing."""
        end = time.monotonic() + seconds
        waiting = [p for p in peers if p != self.rank]
        while waiting and time.monotonic() < end:
            waiting = [p for p in waiting if self._failed(p) < calls]
            if waiting:
                time.sleep(HEARTBEAT_S)

    def missing(self, peers: Sequence[int], calls: int) -> tuple[list[int], str]:
        """The peers missing from this process's collective number `calls`, found by watching
        their beats for 4 periods, and a sentence saying why each is missing."""
        peers = [p for p in peers if p != self.rank]
        try:
            before = {p: self._read(p) for p in peers}
            time.sleep(4 * HEARTBEAT_S)
            after = {p: self._read(p) for p in peers}
            failed = [p for p in peers if self._failed(p) >= calls]  # were in it, and saw it fail
        except Exception:
            return self._store_gone()
        stopped = [p for p in peers if after[p][0] == before[p][0] and p not in failed]
        behind = [p for p in peers if p not in stopped and p not in failed and after[p][1] < calls]
        parts = [f"rank {p} stopped (exited or frozen; last seen {_seen(after[p][1])})" for p in stopped]
        parts += [f"rank {p} is alive but has not reached it (last seen {_seen(after[p][1])}: {after[p][2]})"
                  for p in behind]
        if failed:
            parts.append(f"rank{'s' if len(failed) > 1 else ''} {', '.join(map(str, failed))} saw it fail too")
        return stopped + behind, "; ".join(parts) or "every peer is alive and has reached it"

    def _failed(self, rank: int) -> int:
        """The last collective `rank` reported failed (0: none)."""
        key = f"loom/failed/{rank}"
        return int(self.store.get(key)) if self.store.check([key]) else 0

    def _store_gone(self) -> tuple[list[int], str]:
        if _agent_store():
            return [], f"the rendezvous store at {self.address} (hosted by torchrun's agent) is unreachable"
        return [0], f"rank 0 stopped (it exited: the rendezvous store it hosted at {self.address} is unreachable)"


def _seen(calls: int) -> str:
    return f"in collective #{calls}" if calls else "before its first collective"


# numpy <-> torch ----------------------------------------------------------------------------------

# numpy dtypes torch.from_numpy takes as they are
_NATIVE = frozenset(np.dtype(n) for n in ("bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32",
                                             "float64", "complex64", "complex128"))
_INT_OF_SIZE = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}


@functools.cache
def _native_dtypes() -> frozenset:
    """The torch dtypes whose tensors (of a program compiled for a torch device) reach
    torch.distributed as they are; bool and the others take the host path's integer views."""
    import torch
    return frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.uint8,
                      torch.int16, torch.int32, torch.int64})


def _numpy_dtype(t: Any) -> np.dtype:
    from loom.backend.torch_kernels import numpy_dtype_of
    return numpy_dtype_of(t.dtype)


# dtypes whose reductions torch.distributed computes (unsigned integers wider than 8 bits travel as
# the signed type of their width: sums, products and bits agree, max and min do not; others are
# gathered and reduced with numpy)
_TORCH_REDUCES = frozenset(d.name for d in _NATIVE) | {"bfloat16"}
_UFUNCS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum, "and": np.logical_and,
           "or": np.logical_or, "xor": np.logical_xor}
_BIT_UFUNCS = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def to_torch(x: np.ndarray, device: Any = None) -> Any:
    """A torch tensor with `x`'s bits and shape, sharing its memory on the CPU (a copy where `x` is
    not contiguous or not writable, and to a GPU `device`). bfloat16 becomes torch's; dtypes numpy
    does not have natively (8-bit floats, wide unsigned integers, ...) travel as an integer of their
    width, since gloo moves no 8-bit floats."""
    import torch
    x = np.asarray(x)
    if not x.flags.c_contiguous or not x.flags.writeable:
        x = np.array(x, order="C")
    if x.dtype in _NATIVE:
        t = torch.from_numpy(x)
    else:
        t = torch.from_numpy(x.view(_INT_OF_SIZE[x.dtype.itemsize]))
        if x.dtype.name == "bfloat16":
            t = t.view(torch.bfloat16)
    return t if device is None or device.type == "cpu" else t.to(device)


def _torch_int(size: int) -> Any:
    import torch
    return {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size]


# The communicator ---------------------------------------------------------------------------------

def _describe(collective: str, group: Sequence[int]) -> str:
    return f"{collective} among ranks [{', '.join(map(str, group))}]"


class TorchCommunicator:
    """The `Communicator` of one process in a torch.distributed run: partition id = rank.

    A group (partition ids, in group order) becomes a torch.distributed process group the first
    time this process takes part in a collective over it, made by the group's members only
    (`new_group(..., use_local_synchronization=True)`: its name is a hash of its ranks and the
    members meet in the store). Creating every group on every rank up front would need each rank
    to know all groups of the program, which the communicator is not told (it gets its own group);
    and since every member of a group reaches the group's first collective, the members create it
    together there, in program order, so creation cannot deadlock where the program itself would
    not. Ranks are kept in group order (`sort_ranks=False`), so a torch group rank is a position in
    the group: concatenation and scatter orders need no reordering.

    Operands are numpy arrays (or torch tensors, returned as tensors); on the CPU they reach torch
    without a copy (`torch.from_numpy`), except where a collective writes in place (all_reduce,
    broadcast): into a copy, unless the program never reads the operand again (an all_reduce
    called with `in_place`, see `PartitionedProgram`), which then holds the result."""

    def __init__(self) -> None:
        import torch.distributed as dist
        if not dist.is_initialized():
            raise DistributedError("TorchCommunicator: call loom.distributed.initialize() first")
        self.num_partitions = dist.get_world_size()
        self.rank = dist.get_rank()
        self.device = _STATE.device
        self._on_cpu = self.device.type == "cpu"  # (read on every call: a torch.device's type is not free)
        self.backend = str(dist.get_backend())
        self._groups: dict[tuple[int, ...], Any] = {}
        self._spare: dict[tuple[tuple[int, ...], np.dtype], list[np.ndarray]] = {}
        self._calls = 0
        self._entered_call: tuple[str, Sequence[int]] = ("none", ())  # the last collective entered and its group
        self._world = tuple(range(self.num_partitions))
        self.timeline: Any = None  # see `record`
        self._origin = self._resumed = self._entered = 0.0
        import torch
        self._from_numpy = torch.from_numpy  # (looked up once: every collective takes it)

    def record(self, timeline: Any, origin: float | None = None) -> None:
        """From now on, add this rank's spans to `timeline` (a `loom.sim.timeline.Timeline`; None
        stops), in seconds from `origin` (a `time.perf_counter()` reading, by default now): "compute"
        between collectives; each synchronous collective, from its call to its return, on "link+";
        each asynchronous permute's send, from its start until its done has waited for it (gloo
        reports a send's completion to its wait only: the transfer ran within that span), on the
        link of its direction ("link+" to rank + 1, "link-" to rank - 1)."""
        self.timeline = timeline
        self._origin = time.perf_counter() if origin is None else origin
        self._resumed = self._clock()

    def _clock(self) -> float:
        return time.perf_counter() - self._origin

    def _computed(self) -> None:
        """The rank's thread reaches a collective: it computed since it left the last one."""
        now = self._entered = time.perf_counter() - self._origin
        if self.timeline is not None and now > self._resumed:
            self.timeline.add(self.rank, "compute", "compute", self._resumed, now)

    # groups
    def _group(self, group: Sequence[int]) -> Any:
        import torch.distributed as dist
        pg = self._groups.get(group) if type(group) is tuple else None  # the kernels' groups: found as they are
        if pg is not None:
            return pg
        key = tuple(int(g) for g in group)
        pg = self._groups.get(key)
        if pg is None:
            if sorted(key) != sorted(set(key)) or not all(0 <= g < self.num_partitions for g in key):
                raise DistributedError(f"{self._what}: a group must list distinct ranks in [0, {self.num_partitions})")
            if self.rank not in key:
                raise DistributedError(f"{self._what}: rank {self.rank} is not in its group")
            if key == self._world:
                pg = dist.group.WORLD
            else:
                pg = self._run(key, lambda: dist.new_group(list(key), use_local_synchronization=True, sort_ranks=False),
                               f"creating the process group of {self._what}", lane=None)
            self._groups[key] = pg
        return pg

    @property
    def _what(self) -> str:
        """The collective entered last, for messages."""
        collective, group = self._entered_call
        return f"{_describe(collective, group)} (collective #{self._calls} of rank {self.rank})"

    def _enter(self, collective: str, me: int, group: Sequence[int]) -> None:
        """Count the collective (every member of a group enters the same ones, in the same order)
        and say where this process is, for a peer's diagnosis."""
        if me != self.rank:
            raise DistributedError(f"partition {me} asked for a collective on rank {self.rank}; in a distributed run "
                                   "each process runs the partition of its rank")
        self._calls += 1
        self._entered_call = (collective, group)  # `_what` says it, on demand: formatting it costs every call
        self._computed()
        if _STATE.liveness is not None:
            _STATE.liveness.progress = (self._calls, collective, group)

    def _run(self, peers: Sequence[int], call: Callable[[], Any], what: str = "", calls: int | None = None,
             lane: str | None = "link+") -> Any:
        """Run a torch.distributed call of the collective entered last (or of collective number
        `calls`, described by `what`); its failure becomes a CollectiveError naming the
        collective, this rank and the peers missing from it. Recording (see `record`), the call is
        a span on `lane` (None: none) and the rank computes again after it."""
        calls = self._calls if calls is None else calls
        start = time.monotonic()
        try:
            out = call()
            if self.timeline is not None:
                now = self._clock()
                if lane is not None:
                    name = what.split(" (collective #")[0] if what else _describe(*self._entered_call)
                    self.timeline.add(self.rank, lane, name, self._entered, now)
                self._resumed = now
            return out
        except Exception as e:
            if isinstance(e, LoomError):
                raise
            elapsed = time.monotonic() - start
            what = what or self._what
            liveness = _STATE.liveness
            missing: list[int] = []
            diagnosis = ""
            if liveness is not None:
                missing, diagnosis = liveness.missing(peers, calls)
                try:
                    liveness.report_failure(calls)
                except Exception:  # the store is gone; `diagnosis` says so
                    pass
                if liveness.hosts_store:
                    # a peer that entered with us fails by its own timeout, then looks for 4 beats
                    liveness.linger([p for p in peers if p not in missing], calls,
                                    _STATE.timeout_s + 10 * HEARTBEAT_S)
            torch_said = (str(e).strip().splitlines() or [type(e).__name__])[0]
            op = _calling_op()
            raise CollectiveError(
                f"rank {self.rank}: {op + ': ' if op else ''}{what} failed after {elapsed:.1f} s "
                f"(timeout {_STATE.timeout_s:g} s){': ' + diagnosis if diagnosis else ''}. "
                f"torch.distributed said: {torch_said}",
                what, self.rank, peers, missing) from e

    # collectives. Each result is a fresh numpy array torch writes into (through a tensor
    # sharing its memory; on a GPU, copied back), so that executors need not copy it again.
    def _result(self, shape: tuple[int, ...], dtype: np.dtype, fill: Any = None) -> np.ndarray:
        """A new array for a result (holding `fill` where given). A large fresh array costs a page
        fault per page on every call, since the allocator gives freed ones back to the system; so
        the last two result arrays of each shape and dtype are kept, and handed out again once
        nothing else holds them (as a caching allocator does). Two: gloo's worker thread lets go
        of a finished call's tensor a little after the call returns."""
        kept = self._spare.setdefault((shape, dtype), [])
        for out in kept:
            if sys.getrefcount(out) == 3:  # held by nothing else (3: the list, `out`, the call)
                break
        else:
            out = np.empty(shape, dtype)
            kept.insert(0, out)
            del kept[2:]
        if fill is not None:
            np.copyto(out, fill)
        return out

    def _tensor(self, a: np.ndarray, filled: bool = True) -> Any:
        """`a` as a tensor on this process's device; on a GPU, an uninitialized one unless `filled`."""
        if self._on_cpu and a.dtype in _NATIVE and a.flags.c_contiguous and a.flags.writeable:
            return self._from_numpy(a)  # (to_torch's common case, without its call)
        t = to_torch(a)
        if self._on_cpu:
            return t
        return t.to(self.device) if filled else t.new_empty(t.shape, device=self.device)

    def _written(self, out: np.ndarray, t: Any) -> np.ndarray:
        """`out` once torch has written `t` (its tensor): on a GPU, copied back."""
        if not self._on_cpu:
            to_torch(out).copy_(t)
        return out

    # The collective kernels hand a program compiled for this process's torch device its tensors
    # (loom.ops.collectives_torch): those of the dtypes below reach torch.distributed as they are
    # (`_native`), others take the host path (`_operand`).
    takes_tensors = True

    def _native(self, x: Any) -> Any:
        """`x` when it is a tensor on this process's device of a dtype torch.distributed moves and
        reduces as it is; else None."""
        if type(x) is np.ndarray or not is_tensor(x):
            return None
        import torch
        if not isinstance(x, torch.Tensor) or x.device != self.device or x.dtype not in _native_dtypes():
            return None
        return x

    def all_reduce(self, me: int, x: Any, group: Sequence[int], reduction: str, in_place: bool = False) -> Any:
        import torch.distributed as dist
        self._enter("all_reduce", me, group)
        t = self._native(x)
        if t is not None and len(group) > 1:
            op = _reduce_op(_numpy_dtype(t), reduction, self.backend)
            if op is not None:  # into the operand when the program gives it up, else into a copy
                import torch
                out = t if in_place and t.is_contiguous() else t.clone(memory_format=torch.contiguous_format)
                pg = self._group(group)
                self._run(group, lambda: dist.all_reduce(out, op=op, group=pg))
                return out
        x_np, back = _operand(x)
        if len(group) == 1:
            return back(np.array(x_np))
        op = _reduce_op(x_np.dtype, reduction, self.backend)
        if op is None:
            return back(self._gather_reduce(x_np, group, reduction))
        pg = self._group(group)
        # all_reduce writes in place: into the operand when the program never reads it again
        # (`in_place`), else into a result array holding a copy of it
        own = back is _same and in_place and x_np.flags.writeable and x_np.flags.c_contiguous
        out = x_np if own else self._result(x_np.shape, x_np.dtype, x_np)
        t = self._tensor(out)
        self._run(group, lambda: dist.all_reduce(t, op=op, group=pg))
        return back(self._written(out, t))

    def all_gather(self, me: int, x: Any, group: Sequence[int], dim: int) -> Any:
        import torch.distributed as dist
        self._enter("all_gather", me, group)
        t = self._native(x)
        if t is not None and len(group) > 1 and t.dim():
            moved = t.movedim(dim, 0).contiguous()
            out = moved.new_empty((len(group) * moved.shape[0],) + tuple(moved.shape[1:]))
            pg = self._group(group)
            self._run(group, lambda: _all_gather_single(dist)(out, moved, group=pg))
            return out.movedim(0, dim).contiguous() if dim else out
        x_np, back = _operand(x)
        if len(group) == 1:
            return back(np.array(x_np))
        gathered = self._gather(np.moveaxis(x_np, dim, 0) if dim else x_np, group)  # along dim, moved first
        return back(np.ascontiguousarray(np.moveaxis(gathered, 0, dim)) if dim else gathered)

    def _gather(self, x: np.ndarray, group: Sequence[int]) -> np.ndarray:
        """The group's operands concatenated along their first dimension (stacked, for scalars),
        in group order, as a new array."""
        import torch.distributed as dist
        pg = self._group(group)
        x = x if x.ndim else x.reshape(1)
        out = self._result((len(group) * x.shape[0],) + x.shape[1:], x.dtype)
        t_in, t = self._tensor(x), self._tensor(out, filled=False)
        self._run(group, lambda: _all_gather_single(dist)(t, t_in, group=pg))
        return self._written(out, t)

    def _gather_reduce(self, x: np.ndarray, group: Sequence[int], reduction: str) -> np.ndarray:
        """A reduction torch.distributed cannot do for this dtype (max/min of wide unsigned
        integers, any of the 8-bit floats): gather the operands and reduce them with numpy, in
        group order, the same on every member."""
        stacked = self._gather(x, group).reshape((len(group),) + x.shape)
        ufunc = _BIT_UFUNCS[reduction] if reduction in _BIT_UFUNCS and x.dtype != np.bool_ else _UFUNCS[reduction]
        out = np.array(stacked[0])
        for piece in stacked[1:]:
            out = ufunc(out, piece).astype(x.dtype, copy=False)
        return out

    def reduce_scatter(self, me: int, x: Any, group: Sequence[int], dim: int, reduction: str) -> Any:
        import torch.distributed as dist
        self._enter("reduce_scatter", me, group)
        t, n = self._native(x), len(group)
        if t is not None and n > 1 and t.shape[dim] % n == 0:
            op = _reduce_op(_numpy_dtype(t), reduction, self.backend)
            if op is not None:
                moved = t.movedim(dim, 0).contiguous()
                out = moved.new_empty((moved.shape[0] // n,) + tuple(moved.shape[1:]))
                pg = self._group(group)
                self._run(group, lambda: _reduce_scatter_single(dist)(out, moved, op=op, group=pg))
                return out.movedim(0, dim).contiguous() if dim else out
        x_np, back = _operand(x)
        self._check_splits(x_np, dim, n)
        if n == 1:
            return back(np.array(x_np))
        op = _reduce_op(x_np.dtype, reduction, self.backend)
        if op is None:
            full = self._gather_reduce(x_np, group, reduction)
            return back(np.array(np.split(full, n, axis=dim)[list(group).index(self.rank)]))
        pg = self._group(group)
        # gloo has reduce_scatter in torch 2.13 (checked for every dtype loom sends), so no
        # all_reduce and slice; the scattered dimension goes first, since torch splits the flat input.
        moved = np.moveaxis(x_np, dim, 0) if dim else x_np
        out = self._result((moved.shape[0] // n,) + moved.shape[1:], x_np.dtype)
        t_in, t = self._tensor(moved), self._tensor(out, filled=False)
        self._run(group, lambda: _reduce_scatter_single(dist)(t, t_in, op=op, group=pg))
        out = self._written(out, t)
        return back(np.ascontiguousarray(np.moveaxis(out, 0, dim)) if dim else out)

    def all_to_all(self, me: int, x: Any, group: Sequence[int], split_dim: int, concat_dim: int) -> Any:
        import torch.distributed as dist
        self._enter("all_to_all", me, group)
        x_np, back = _operand(x)
        n = len(group)
        self._check_splits(x_np, split_dim, n)
        if n == 1:
            return back(np.array(x_np))
        pg = self._group(group)
        # all_to_all_single sends block j of the first dimension to group member j (gloo has it)
        moved = np.moveaxis(x_np, split_dim, 0) if split_dim else x_np
        out = self._result(moved.shape, x_np.dtype)
        t_in, t = self._tensor(moved), self._tensor(out, filled=False)
        self._run(group, lambda: dist.all_to_all_single(t, t_in, group=pg))
        received = self._written(out, t)  # block j came from member j
        if split_dim == 0 and concat_dim == 0:
            return back(received)
        pieces = [np.moveaxis(p, 0, split_dim) if split_dim else p for p in np.split(received, n, axis=0)]
        return back(np.concatenate(pieces, axis=concat_dim))

    def _check_splits(self, x: np.ndarray, dim: int, n: int) -> None:
        if x.shape[dim] % n:
            raise DistributedError(f"{self._what}: dimension {dim} of the operand, of size {x.shape[dim]}, does not "
                                   f"split into {n} pieces")

    def collective_permute(self, me: int, x: Any, pairs: Sequence[tuple[int, int]]) -> Any:
        return self.collective_permute_start(me, x, pairs).wait()

    def collective_permute_start(self, me: int, x: Any, pairs: Sequence[tuple[int, int]]) -> Any:
        """Post this rank's send and receive (`isend` / `irecv` work handles) and return at once;
        the transfer's `wait()` waits for them (bounded by the timeout) and gives the result."""
        import torch.distributed as dist
        targets = [int(t) for s, t in pairs if s == me]
        sources = [int(s) for s, t in pairs if t == me]
        self._enter(f"collective_permute (to {targets or 'none'}, from {sources or 'none'})", me,
                    sorted({me, *targets, *sources}))
        if len(targets) > 1 or len(sources) > 1:
            raise DistributedError(f"{self._what}: pairs {list(pairs)} make rank {me} the source or the target of "
                                   "more than one pair")
        native = self._native(x)
        result: Callable[[], Any]
        if native is not None:  # a tensor sent as it is, received into a new one (no source: zeros)
            if targets == [me]:  # to itself
                return communicator_module.Completed(native.clone())
            t_in, t = native.contiguous(), native.new_zeros(native.shape)
            result = lambda: t  # noqa: E731
        else:
            x_np, back = _operand(x)
            if targets == [me]:
                return communicator_module.Completed(back(np.array(x_np)))
            out = self._result(x_np.shape, x_np.dtype, None if sources else 0)  # no source: zeros
            t_in, t = self._tensor(x_np), self._tensor(out)
            result = lambda: back(self._written(out, t))  # noqa: E731
        # point to point on the world group (NCCL wants the first call on a group to involve all its
        # ranks: here it is the start-up check, an all_gather_object)
        ops = [dist.P2POp(dist.isend, t_in, targets[0])] if targets else []
        ops += [dist.P2POp(dist.irecv, t, sources[0])] if sources else []
        peers = sorted({*targets, *sources})
        works = self._run(peers, lambda: dist.batch_isend_irecv(ops), lane=None) if ops else []
        transfer = _TorchTransfer(self, works, (t_in, t), result, peers)
        if self.timeline is not None and targets:
            n = self.num_partitions
            lane = "link-" if targets[0] == (me - 1) % n != (me + 1) % n else "link+"
            transfer.traced = (self.timeline, lane, f"collective_permute {me}->{targets[0]}", self._entered)
        return transfer

    def all_gather_start(self, me: int, x: Any, group: Sequence[int], dim: int) -> Any:
        """Post the gather (`all_gather_into_tensor(..., async_op=True)`, a work handle) and return
        at once; the transfer's `wait()` waits for it (bounded by the timeout) and gives the result."""
        import torch.distributed as dist
        self._enter("all_gather", me, group)
        x_np, back = _operand(x)
        if len(group) == 1:
            return communicator_module.Completed(back(np.array(x_np)))
        moved = np.ascontiguousarray(np.moveaxis(x_np, dim, 0) if dim else x_np)  # along dim, moved first
        out = self._result((len(group) * moved.shape[0],) + moved.shape[1:], moved.dtype)
        t_in, t = self._tensor(moved), self._tensor(out, filled=False)
        pg = self._group(group)
        work = self._run(group, lambda: _all_gather_single(dist)(t, t_in, group=pg, async_op=True), lane=None)

        def result() -> Any:
            gathered = self._written(out, t)
            return back(np.ascontiguousarray(np.moveaxis(gathered, 0, dim)) if dim else gathered)

        return _TorchTransfer(self, [work], (t_in, t), result, group)

    def collective_broadcast(self, me: int, x: Any, group: Sequence[int]) -> Any:
        import torch.distributed as dist
        self._enter("collective_broadcast", me, group)
        x_np, back = _operand(x)
        if len(group) == 1:
            return back(np.array(x_np))
        pg = self._group(group)
        out = self._result(x_np.shape, x_np.dtype, x_np)  # broadcast writes in place: into the result
        t = self._tensor(out)
        self._run(group, lambda: dist.broadcast(t, src=int(group[0]), group=pg))
        return back(self._written(out, t))

    def barrier(self) -> None:
        """Wait for every process (bounded by the timeout)."""
        import torch.distributed as dist
        self._enter("barrier", self.rank, self._world)
        self._run(self._world, lambda: dist.barrier())

    def all_gather_object(self, obj: Any, what: str = "all_gather_object") -> list[Any]:
        """Every process's `obj` (pickled), in rank order."""
        import torch.distributed as dist
        self._enter(what, self.rank, self._world)
        out: list[Any] = [None] * self.num_partitions
        self._run(self._world, lambda: dist.all_gather_object(out, obj))
        return out


class _TorchTransfer:
    """A collective_permute or all_gather in flight: gloo's (or NCCL's) work handles, waited for at
    the done."""

    def __init__(self, comm: TorchCommunicator, works: Sequence[Any], tensors: tuple[Any, ...],
                 result: Callable[[], Any], peers: Sequence[int]) -> None:
        self.comm, self.works, self.result, self.peers = comm, list(works), result, list(peers)
        self.tensors = tensors  # the send and receive buffers stay alive until the transfer is done
        self.what, self.calls = comm._what, comm._calls
        self.traced: tuple | None = None  # (timeline, lane, name, start) of the send, when recording

    def wait(self) -> Any:
        if self.works:
            bound = datetime.timedelta(seconds=_STATE.timeout_s)
            self.comm._computed()
            self.comm._run(self.peers, lambda: [w.wait(bound) for w in self.works], self.what, self.calls, lane=None)
        if self.traced is not None:  # gloo tells a send's completion only to its wait: the span ends here
            timeline, lane, name, start = self.traced
            timeline.add(self.comm.rank, lane, name, start, max(start, self.comm._clock()))
        return self.result()


def _calling_op() -> str | None:
    """The op whose kernel called the communicator ("'stablehlo.all_reduce' at loc(...)"), for
    the error message: the collective kernels (loom.ops.collectives) hold it as the `where` of
    their `ProcessGroups` argument. Looked up on failure only."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        for value in frame.f_locals.values():
            if type(value).__name__ == "ProcessGroups" and isinstance(getattr(value, "where", None), str):
                return value.where
        frame = frame.f_back
    return None


def _same(r: np.ndarray) -> np.ndarray:
    return r


def _operand(x: Any) -> tuple[np.ndarray, Callable[[np.ndarray], Any]]:
    """The operand as numpy, and the function giving a result back in the operand's kind (torch
    tensors, on their device, come back as tensors)."""
    if type(x) is np.ndarray:
        return x, _same
    if type(x).__module__.startswith("torch"):
        import torch
        if isinstance(x, torch.Tensor):
            device = x.device
            if x.dtype == torch.bfloat16 or str(x.dtype).startswith("torch.float8"):
                import ml_dtypes
                np_dtype = np.dtype(getattr(ml_dtypes, str(x.dtype).removeprefix("torch.")))
                arr = x.detach().cpu().view(_torch_int(x.dtype.itemsize)).numpy().view(np_dtype)
            else:
                arr = x.detach().cpu().numpy()
            return arr, lambda r: to_torch(np.asarray(r)).to(device)
    return np.asarray(x), _same


@functools.cache
def _reduce_op(dtype: np.dtype, reduction: str, backend: str) -> Any:
    """The torch ReduceOp computing `reduction` of `dtype` values on `backend`; None where torch
    cannot (the operands are then gathered and reduced with numpy)."""
    import torch.distributed as dist
    if reduction not in REDUCTIONS:
        raise DistributedError(f"unknown reduction {reduction!r}; expected one of {', '.join(REDUCTIONS)}")
    if reduction in ("and", "or", "xor") and dtype.kind not in "biu":
        raise DistributedError(f"reduction {reduction!r} of {dtype} values: only for booleans and integers")
    if dtype.kind == "b" and reduction in ("and", "or"):  # min and max of 0/1: NCCL has no bitwise ops
        reduction = "min" if reduction == "and" else "max"
    if backend == "nccl" and reduction in ("and", "or", "xor"):
        return None
    if dtype.kind == "u" and dtype.itemsize > 1:  # travels as signed: sums and bits agree, order does not
        if reduction in ("max", "min"):
            return None
    elif dtype.name not in _TORCH_REDUCES or (dtype.kind == "c" and reduction in ("max", "min")):
        return None
    return {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "max": dist.ReduceOp.MAX,
            "min": dist.ReduceOp.MIN, "and": dist.ReduceOp.BAND, "or": dist.ReduceOp.BOR,
            "xor": dist.ReduceOp.BXOR}[reduction]


def _all_gather_single(dist: Any) -> Callable[..., Any]:
    """`all_gather_single` (torch 2.13's name), else `all_gather_into_tensor`."""
    return getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor


def _reduce_scatter_single(dist: Any) -> Callable[..., Any]:
    """`reduce_scatter_single` (torch 2.13's name), else `reduce_scatter_tensor`."""
    return getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


# Running a partitioned program ----------------------------------------------------------------------

def _module(module: Operation | str) -> Operation:
    if isinstance(module, str):
        from loom.ir import parse
        return parse(module, allow_unregistered=True)
    return module


def program_fingerprint(module: Operation) -> str:
    """sha256 of the module's generic text: equal on two ranks exactly when they run the same program."""
    from loom.ir.printer import print_op
    return hashlib.sha256(print_op(module, generic=True).encode()).hexdigest()


def module_mesh(module: Operation) -> tuple[tuple[str, int], ...] | None:
    """The axes of the module's first `sdy.mesh` op (None without one)."""
    for op in module.walk():
        if op.name == "sdy.mesh":
            mesh = op.get_attr("mesh")
            return tuple(getattr(mesh, "axes", ())) or ()
    return None


def _num_partitions(module: Operation) -> int | None:
    attr = module.get_attr("mhlo.num_partitions")
    return None if attr is None else int(attr.value)


class PartitionedProgram:
    """A partitioned (per-device) module ready to run on this process's partition. Made once per
    module: on creation every process checks (one `all_gather_object`) that all run the same
    program on the same mesh and as many partitions as processes; a mismatch raises on every rank,
    naming the ranks that differ. `donate_argnums`: the arguments the caller gives up (see
    `run_partitioned`); an all_reduce whose operand the program never reads again reduces into it
    in place (`loom.runtime.executable.dead_operand_collectives`). `device`: a torch device to
    compile for (the process's own, `communicator().device`, to compute on its GPU): the program
    then runs on tensors there, which its collectives hand torch.distributed as they are; by
    default the host's numpy arrays."""

    def __init__(self, module: Operation | str, executor: str = "compiled", donate_argnums: Sequence[int] = (),
                 device: Any = None) -> None:
        from loom.runtime.executable import compile_partition
        self.module = _module(module)
        self.communicator = communicator()
        rank, world = self.communicator.rank, self.communicator.num_partitions
        mesh = module_mesh(self.module)
        partitions = _num_partitions(self.module)
        mine = (program_fingerprint(self.module), mesh)
        everyone = self.communicator.all_gather_object(mine, "the start-up check that all processes run one program")
        _check_same(everyone, rank)
        size = partitions if partitions is not None else (int(np.prod([s for _, s in mesh])) if mesh else None)
        if size is not None and size != world:
            raise DistributedError(f"rank {rank}: the program has {size} partitions "
                                   f"({'mhlo.num_partitions' if partitions is not None else 'its mesh'}) but "
                                   f"{world} processes run it; run one process per partition")
        self.mesh = mesh
        self.fn = compile_partition(self.module, executor=executor, donate=donate_argnums, device=device)

    def __call__(self, local_args: Sequence[Any]) -> list[Any]:
        with spmd_context(self.communicator.rank, self.communicator):
            out = self.fn(*local_args)
        return list(out) if isinstance(out, tuple) else [out]


class DistributedExecutable:
    """A partitioned program (`loom.sharding.partition`'s output: per-device types, each argument
    and result with `sdy.sharding` and `loom.global_type`) run on global values, as
    `loom.runtime.local.MeshExecutable` runs one on threads, with one partition per process: every
    process calls it with the same global arguments (numpy arrays); each runs its own pieces (split
    by the arguments' shardings, uneven dimensions padded) and gets the global results back as
    numpy arrays (every process's pieces gathered, padding dropped)."""

    def __init__(self, module: Operation | str, executor: str = "compiled") -> None:
        from loom.backend.interpreter import functions_of
        from loom.runtime.local import _Layout
        from loom.sharding import Mesh
        self.program = PartitionedProgram(module, executor)
        if not self.program.mesh:
            raise DistributedError("DistributedExecutable runs partitioned programs, which keep their sdy.mesh "
                                   "(loom.sharding.partition); this module has none")
        names, sizes = zip(*self.program.mesh)
        mesh = Mesh(np.arange(int(np.prod(sizes))).reshape(sizes), names)  # partition p is process p
        func = functions_of(self.program.module)["main"]
        ftype, arg_attrs, res_attrs = (func.get_attr(a) for a in ("function_type", "arg_attrs", "res_attrs"))
        self.inputs = [_Layout(arg_attrs[i] if arg_attrs is not None else None, t, mesh, f"argument {i} of @main")
                       for i, t in enumerate(ftype.value.inputs)]
        self.outputs = [_Layout(res_attrs[i] if res_attrs is not None else None, t, mesh, f"result {i} of @main")
                        for i, t in enumerate(ftype.value.results)]

    def __call__(self, *args: Any) -> Any:
        comm = self.program.communicator
        if len(args) != len(self.inputs):
            raise TypeError(f"the program takes {len(self.inputs)} arguments, got {len(args)}")
        local = [layout.split(x)[comm.rank] for layout, x in zip(self.inputs, args)]
        pieces = comm.all_gather_object(self.program(local), "assembling the results")
        results = [np.asarray(layout.assemble([p[k] for p in pieces])) for k, layout in enumerate(self.outputs)]
        return results[0] if len(results) == 1 else tuple(results)


def _check_same(everyone: list[tuple[str, Any]], rank: int) -> None:
    groups: dict[tuple[str, Any], list[int]] = {}
    for r, item in enumerate(everyone):
        groups.setdefault(item, []).append(r)
    if len(groups) == 1:
        return
    ref = everyone[0]
    lines = []
    for item, ranks in groups.items():
        if item == ref:
            continue
        what = []
        if item[0] != ref[0]:
            what.append(f"program {item[0][:12]} (rank 0: {ref[0][:12]})")
        if item[1] != ref[1]:
            what.append(f"mesh {_mesh_text(item[1])} (rank 0: {_mesh_text(ref[1])})")
        plural = len(ranks) > 1
        lines.append(f"rank{'s' if plural else ''} {', '.join(map(str, ranks))} run{'' if plural else 's'} "
                     f"{' and '.join(what)}")
    raise DistributedError(f"rank {rank}: the processes do not all run the same program and mesh: " + "; ".join(lines))


def _mesh_text(mesh: Any) -> str:
    return "none" if mesh is None else "[" + ", ".join(f"{n}={s}" for n, s in mesh) + "]"


_PROGRAMS: dict[Any, PartitionedProgram] = {}


def run_partitioned(module: Operation | str, local_args: Sequence[Any], executor: str = "compiled",
                    donate_argnums: Sequence[int] = (), device: Any = None) -> list[Any]:
    """Run this process's partition (its rank) of a partitioned module on its local arguments; the
    local results, as a list. `donate_argnums`: the arguments the caller gives up (it does not read
    them again): results, an all_reduce's included, may be written into their memory. `device`: a
    torch device to run on (see PartitionedProgram; results are tensors there). The module is
    checked and compiled on its first run here (every process must run it, see
    PartitionedProgram), then reused."""
    key = (module if isinstance(module, str) else id(module), executor, tuple(donate_argnums), str(device))
    program = _PROGRAMS.get(key)
    if program is None or program.communicator is not _STATE.communicator:
        program = _PROGRAMS[key] = PartitionedProgram(module, executor, donate_argnums, device)
        if not isinstance(module, str):
            program.module = module  # keeps the id in the key alive
    return program(local_args)


# Global arrays --------------------------------------------------------------------------------------

def shard_index(sharding: NamedSharding, global_shape: Sequence[int], partition: int) -> tuple[slice, ...]:
    """The index (slices) of a global array that partition `partition` (`mesh.device_list`
    position) holds."""
    return list(sharding.devices_indices_map(tuple(global_shape)).values())[partition]


def local_shard(x: np.ndarray, sharding: NamedSharding, partition: int | None = None) -> np.ndarray:
    """This process's (or `partition`'s) shard of the global array `x`, padded with zeros to the
    shard shape where a dimension does not split evenly (as XLA pads)."""
    x = np.asarray(x)
    sharding.check_rank(x.ndim)
    p = process_index() if partition is None else partition
    piece = x[shard_index(sharding, x.shape, p)]
    shape = sharding.shard_shape(x.shape)
    if piece.shape == shape:
        return np.ascontiguousarray(piece)
    out = np.zeros(shape, x.dtype)
    out[tuple(slice(0, s) for s in piece.shape)] = piece
    return out


def assemble(local: Any, sharding: NamedSharding, global_shape: Sequence[int]) -> np.ndarray:
    """The global array whose shards the processes hold (each passes its own `local`): gathered
    from every process with all_gather_object; padding dropped."""
    local = np.asarray(local)
    shards = communicator().all_gather_object(local, "assembling a global array")
    return assemble_shards(shards, sharding, global_shape)


def assemble_shards(shards: Sequence[np.ndarray], sharding: NamedSharding, global_shape: Sequence[int]) -> np.ndarray:
    """The global array from every partition's shard (in partition order)."""
    shape = tuple(global_shape)
    out = np.zeros(shape, np.asarray(shards[0]).dtype)
    for shard, index in zip(shards, sharding.devices_indices_map(shape).values()):
        out[index] = np.asarray(shard)[tuple(slice(0, len(range(n)[i])) for n, i in zip(shape, index))]
    return out


__all__ = ["CollectiveError", "DistributedError", "DistributedExecutable", "PartitionedProgram", "TorchCommunicator",
           "assemble", "assemble_shards", "communicator", "initialize", "is_initialized", "local_shard",
           "process_count", "process_index", "program_fingerprint", "run_partitioned", "shard_index", "shutdown",
           "to_torch"]
