"""The stack dialect (saved values of reverse-mode loops): kernels for both executors, derivatives
and batching (at the end).

A stack at run time is a `SavedStack`: a Python list that grows as the forward loop pushes and
shrinks as the backward loop pops. The kernels are registered in the numpy kernel table
(`KERNELS`), which both the reference interpreter and the compiled executor use for ops without
regions, so a backward program with stacks runs the same in both. The torch executor has code
generation rules of its own for the four ops: they call the same functions on the tensors
themselves (a saved tensor stays a tensor on its device, never a numpy copy), and a `stack.new`
marked `offload` (the `offload` memory policy of `loom.lax.while_loop`) makes a stack that keeps
its values in host memory through `OFFLOAD`, a `HostOffload`:

- a CUDA tensor pushed on a marked stack is copied to pinned host memory by
  `loom.runtime.devices.offload`, asynchronously on a side stream, so the forward loop does not wait for
  the copy; the next push on the same stack makes the compute stream (not the host) wait for the
  previous copy, which bounds the device memory held by copies in flight to one value per stack;
- popping a marked stack waits for that value's copy to host if it has not finished, and starts
  bringing the next value back to the device on another side stream (a prefetch), so the next pop
  finds it there and the backward loop does not wait for the copy either;
- values already in host memory (CPU tensors, numpy arrays) stay where they are, untouched: the
  numpy executor and the interpreter ignore the mark.

Saved memory is counted: `saved_bytes()` is the number of bytes held on all live stacks,
`peak_saved_bytes()` the highest it has been since `reset_saved_bytes()`; both take
`memory="device"` or `"host"` to count only the bytes in device memory or in host memory (values
offloaded to the host count as host bytes; numpy arrays and CPU tensors are host bytes too). This
is how the memory policies of `loom.lax.while_loop` are measured.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.backend.compiled.codegen import FunctionCodegen, codegen_rule
from loom.backend.kernels import KERNELS, Kernel
from loom.dialects import stablehlo
from loom.dialects import stack as stack_dialect
from loom.ir.core import Operation
from loom.ops.registry import declare, register, unsupported
from loom.runtime.devices import OffloadedValue
from loom.transforms import autodiff, batching
from loom.transforms.autodiff import VJP_RULES, full, is_float
from loom.transforms.batching import BATCH_RULES, moveaxis
from loom.transforms.sharding_propagation import SHARDING_RULES


class _Counter:
    __slots__ = ("device", "host", "peak", "peak_device", "peak_host")

    def __init__(self) -> None:
        self.device = 0
        self.host = 0
        self.peak = 0
        self.peak_device = 0
        self.peak_host = 0

    def add(self, n: int, on_host: bool) -> None:
        if on_host:
            self.host += n
            if self.host > self.peak_host:
                self.peak_host = self.host
        else:
            self.device += n
            if self.device > self.peak_device:
                self.peak_device = self.device
        total = self.host + self.device
        if total > self.peak:
            self.peak = total


_COUNTER = _Counter()


def _size(value: Any) -> tuple[int, bool]:
    """(bytes, whether they are in host memory) of a value held on a stack."""
    if isinstance(value, (np.ndarray, np.generic)):  # the numpy executor's values: the common case first
        return value.nbytes, True
    if isinstance(value, SavedStack):  # a nested loop's stack: its bytes are counted by itself
        return 0, True
    if isinstance(value, OffloadedValue):
        return int(value.host.nbytes), True
    device = getattr(value, "device", None)
    nbytes = getattr(value, "nbytes", None)
    if nbytes is None:
        return int(np.asarray(value).nbytes), True
    return int(nbytes), getattr(device, "type", "cpu") == "cpu"


class SavedStack:
    """The run-time value of a `!stack.stack<T>`: values pushed by a forward loop. `offload`, the
    `HostOffload` of a stack marked for the offload policy (None otherwise), decides what is
    kept for each pushed value and brings it back when popped."""

    __slots__ = ("companion", "device_nbytes", "host_nbytes", "items", "offload", "_pending", "_ready")

    def __init__(self, offload: HostOffload | None = None) -> None:
        self.items: list[Any] = []
        self.device_nbytes = 0
        self.host_nbytes = 0
        self.companion: SavedStack | None = None  # `stack.companion`, created on first use
        self.offload = offload
        # (what `offload` stored, the value pushed) for the last push: its copy may still run, and
        # holding the value keeps its memory from being freed and reused before the copy ends,
        # whatever the allocator knows about the copy's stream
        self._pending: tuple[Any, Any] | None = None
        self._ready: tuple[Any, Any] | None = None  # (item, its prefetched form) for the next pop

    @property
    def nbytes(self) -> int:
        return self.device_nbytes + self.host_nbytes

    def push(self, value: Any) -> None:
        if self.offload is not None:
            value = self._store(value)
        self.items.append(value)
        n, on_host = _size(value)
        if on_host:
            self.host_nbytes += n
        else:
            self.device_nbytes += n
        _COUNTER.add(n, on_host)

    def _store(self, value: Any) -> Any:
        hook = self.offload
        if self._pending is not None:
            hook.wait(self._pending[0])
        stored = hook.store(value)
        self._pending = (stored, value)
        self._ready = None  # the item a prefetch was for is no longer on top
        return stored

    def pop(self) -> Any:
        if not self.items:
            raise IndexError("stack.pop on an empty stack: the backward loop ran more iterations than the forward "
                             "loop pushed")
        value = self.items.pop()
        n, on_host = _size(value)
        if on_host:
            self.host_nbytes -= n
            _COUNTER.host -= n
        else:
            self.device_nbytes -= n
            _COUNTER.device -= n
        if self.offload is not None:
            value = self._load(value)
        return value

    def _load(self, stored: Any) -> Any:
        hook = self.offload
        ready, self._ready = self._ready, None
        value = hook.load(ready[1] if ready is not None and ready[0] is stored else stored)
        if self._pending is not None and self._pending[0] is stored:
            self._pending = None  # `load` has waited for this copy: the pushed value may go
        if self.items:
            nxt = self.items[-1]
            self._ready = (nxt, hook.prefetch(nxt))
        return value

    def __del__(self) -> None:
        # a stack dropped before it was emptied (a forward pass whose backward never ran)
        _COUNTER.device -= self.device_nbytes
        _COUNTER.host -= self.host_nbytes

    def __repr__(self) -> str:
        where = ", offloaded" if self.offload is not None else ""
        return f"SavedStack({len(self.items)} items, {self.nbytes} bytes{where})"


class HostOffload:
    """How a stack marked for the offload memory policy keeps its values in host memory (the
    torch executor's stacks; `OFFLOAD` is the one they use). `store` is called once per push with
    the pushed value and returns what the stack keeps; `load` once per pop with what was kept and
    returns the value; `prefetch` with the next value to be popped, right after a pop; `wait`
    before a push with what the previous push stored. Replace `OFFLOAD` (or its methods) to
    change the policy; values only move, so every hook must give back the value pushed.

    The default moves CUDA tensors to pinned host memory with `loom.runtime.devices.offload` and keeps
    anything else (host values: CPU tensors, numpy arrays, nested stacks) as it is."""

    def store(self, value: Any) -> Any:
        if _is_cuda_tensor(value):
            from loom.runtime.devices import offload
            return offload(value)
        return value

    def wait(self, stored: Any) -> None:
        # The compute stream waits (the host does not) for the previous copy to host: a value's
        # device memory cannot be reused until its copy ends, so without this a forward loop that
        # computes faster than the copies drain would hold every pushed value on the device.
        if isinstance(stored, OffloadedValue) and stored.event is not None:
            import torch
            torch.cuda.current_stream(stored.device).wait_event(stored.event)

    def prefetch(self, stored: Any) -> Any:
        if not (isinstance(stored, OffloadedValue) and stored.event is not None):
            return stored
        import torch
        stream = _prefetch_stream(stored.device)
        stream.wait_event(stored.event)  # the copy to host must have landed before it is read back
        with torch.cuda.stream(stream):
            tensor = stored.host.to(stored.device, non_blocking=True)
            event = torch.cuda.Event()
            event.record(stream)
        return _Prefetched(tensor, event)

    def load(self, stored: Any) -> Any:
        if isinstance(stored, _Prefetched):
            import torch
            current = torch.cuda.current_stream(stored.tensor.device)
            current.wait_event(stored.event)
            # made on the prefetch stream, used (and freed) on this one: the caching allocator must
            # not hand its memory out again before this stream's work on it is done
            stored.tensor.record_stream(current)
            return stored.tensor
        if isinstance(stored, OffloadedValue):
            return stored.fetch()  # waits for the copy to host, then copies back on this stream
        return stored


class _Prefetched:
    """A value on its way back to the device: the tensor, and the event its copy ends with."""

    __slots__ = ("event", "tensor")

    def __init__(self, tensor: Any, event: Any) -> None:
        self.tensor = tensor
        self.event = event


def _is_cuda_tensor(value: Any) -> bool:
    device = getattr(value, "device", None)
    return getattr(device, "type", None) == "cuda" and hasattr(value, "record_stream")


_PREFETCH_STREAMS: dict[Any, Any] = {}


def _prefetch_stream(device: Any) -> Any:
    # one per device, not the offload stream: copies to and from the host then overlap
    stream = _PREFETCH_STREAMS.get(device)
    if stream is None:
        import torch
        stream = _PREFETCH_STREAMS[device] = torch.cuda.Stream(device)
    return stream


OFFLOAD = HostOffload()


def saved_bytes(memory: str | None = None) -> int:
    """Bytes currently held on stacks of saved values; with `memory="device"` or `"host"`, only
    those in device memory or in host memory."""
    c = _COUNTER
    return c.device + c.host if memory is None else _pick(memory, c.device, c.host)


def peak_saved_bytes(memory: str | None = None) -> int:
    """The most bytes held on stacks at once since the last `reset_saved_bytes()`; with
    `memory="device"` or `"host"`, the most held in device memory or in host memory."""
    c = _COUNTER
    return c.peak if memory is None else _pick(memory, c.peak_device, c.peak_host)


def _pick(memory: str, device: int, host: int) -> int:
    if memory == "device":
        return device
    if memory == "host":
        return host
    raise ValueError(f"memory must be None, 'device' or 'host', not {memory!r}")


def reset_saved_bytes() -> None:
    """Restart the peak counts from the bytes held now."""
    c = _COUNTER
    c.peak, c.peak_device, c.peak_host = c.device + c.host, c.device, c.host


def stack_new() -> SavedStack:
    return SavedStack()


def stack_new_offloaded() -> SavedStack:
    """A stack whose values `OFFLOAD` keeps in host memory (looked up now, so a replaced
    `OFFLOAD` applies to the stacks made after it)."""
    return SavedStack(OFFLOAD)


def stack_push(stack: SavedStack, value: Any) -> None:
    stack.push(value)


def stack_pop(stack: SavedStack) -> Any:
    return stack.pop()


def stack_companion(stack: SavedStack) -> SavedStack:
    if stack.companion is None:
        # the cotangents of a stack's values are as large as the values: they live where those do
        stack.companion = SavedStack(stack.offload)
    return stack.companion


def _new(op: Operation) -> Kernel:
    return Kernel(stack_new)


def _push(op: Operation) -> Kernel:
    return Kernel(stack_push)


def _pop(op: Operation) -> Kernel:
    return Kernel(stack_pop)


KERNELS["stack.new"] = _new
KERNELS["stack.push"] = _push
KERNELS["stack.pop"] = _pop
KERNELS["stack.companion"] = lambda op: Kernel(stack_companion)


@codegen_rule("stack.new", "stack.push", "stack.pop", "stack.companion")
def _stack_codegen(gen: FunctionCodegen, op: Operation) -> None:
    """The stack functions move Python objects only: both libraries call them on their own values
    (torch would otherwise run the numpy kernels on numpy copies of the tensors, `NumpyFallback`,
    moving every saved value to the host and back). Torch code offloads the stacks marked so."""
    if gen.torch and op.name == "stack.new" and stack_dialect.is_offloaded(op):
        gen.kernel(op, Kernel(stack_new_offloaded))
    else:
        gen.kernel(op, gen.mod.kernels[op.name](op))

__all__ = ["OFFLOAD", "HostOffload", "SavedStack", "peak_saved_bytes", "reset_saved_bytes", "saved_bytes",
           "stack_companion", "stack_new", "stack_new_offloaded", "stack_pop", "stack_push"]


# Declarations ------------------------------------------------------------------------------------

declare(["stack.new", "stack.companion", "stack.push", "stack.pop"],
        unsupported("made by reverse mode for while loops: forward mode never sees them"), tables=("jvp",))
declare(["stack.new", "stack.companion"],
        unsupported("made by reverse mode inside a loop's body; vmap batches the pushed values"), tables=("batching",))


def _stack_layout(op):
    """stack ops: spmd-partition handles them structurally (a stack holds each device's shards,
    split as the values pushed on it), so the rule table only records that they are handled."""
    return None


for _name in ("stack.new", "stack.companion", "stack.push", "stack.pop"):
    register(SHARDING_RULES, _name, _stack_layout)


# --- the `stack` dialect: derivatives and batching ---------------------------------------------------
#
# Stacks of saved values are differentiable, so gradients of gradients work through loops: a pop's
# cotangent is pushed on the stack's companion (`stack.companion`), and popped back by the rule of
# the push that saved the value. The companion belongs to the run-time stack rather than to one IR
# value, so the pops' and the pushes' rules reach the same one even when the stack's handle was
# itself saved on an outer loop's stack and popped back (loops nested in loops). Batched, a stack
# keeps its element type: a batched value is pushed as its lanes, one by one, and every pop of that
# stack pops the lanes back and stacks them (so a batched while loop's forward and backward
# passes, which run the same number of iterations for every lane, stay in step).


def _push_vjp(b, op, cts):
    v = op.operands[1]
    if not is_float(v.type):
        return [None, None]
    return [None, stack_dialect.pop(b, stack_dialect.companion(b, op.operands[0]))]


def _push_batch(b, op, args, dims):
    s, v = args
    if dims[1] is None:
        stack_dialect.push(b, s, v)
        return [], []
    batching.split_stack(s)
    v = moveaxis(b, v, dims[1], 0)
    shape = tuple(v.type.shape)
    for lane in range(shape[0]):
        part = stablehlo.slice_(b, v, [lane] + [0] * (len(shape) - 1), [lane + 1, *shape[1:]])
        stack_dialect.push(b, s, stablehlo.reshape(b, part, shape[1:]))
    return [], []


def _pop_vjp(b, op, cts):
    r = op.results[0]
    if is_float(r.type):
        ct = cts[0] if cts[0] is not None else full(b, 0, r.type)
        stack_dialect.push(b, stack_dialect.companion(b, op.operands[0]), ct)
    return [None]


def _pop_batch(b, op, args, dims):
    s = args[0]
    if not batching.is_split_stack(s):
        return [stack_dialect.pop(b, s)], [None]
    size = batching.axis_size()
    lanes = [stack_dialect.pop(b, s) for _ in range(size)][::-1]
    t = s.type.element_type
    parts = [stablehlo.reshape(b, x, (1, *t.shape)) for x in lanes]
    return [stablehlo.concatenate(b, parts, 0) if size > 1 else parts[0]], [0]


register(VJP_RULES, "stack.push", _push_vjp)
register(BATCH_RULES, "stack.push", _push_batch)
register(VJP_RULES, "stack.pop", _pop_vjp)
register(BATCH_RULES, "stack.pop", _pop_batch)
for _name in ("stack.new", "stack.companion"):
    register(VJP_RULES, _name, autodiff.no_gradient)
