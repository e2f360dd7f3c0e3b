"""The mpmd dialect: transfers between the per-device programs of a placed (MPMD) program.

A program whose ops are placed on devices (the `mpmd.device = d : i64` attribute,
`DEVICE_ATTRIBUTE`, written by `loom.placement`) is cut by `loom.transforms.mpmd_partition` into
one function per device; every value that crosses devices becomes a send on its producer's device
and a receive on each consumer's device:

    mpmd.send %x to 1 channel 3 iteration %i : tensor<4xf32>, tensor<i32>
    %y = mpmd.recv from 0 channel 3 iteration %i : tensor<4xf32>, tensor<i32>
    "mpmd.send"(%x, %i) <{channel = 3 : i64, peer = 1 : i64}> : (tensor<4xf32>, tensor<i32>) -> ()

`channel` names the cut edge (one per value and consumer device, unique in the module), `peer` the
device at the other end. Each per-device function says its device (`mpmd.device`) and which of the
program's results it returns (`mpmd.results`); the module says how many devices there are
(`mpmd.num_devices`). The `iteration` operands are the iteration counters of the enclosing
partitioned loops, outermost first (none outside loops): a transfer is keyed by (channel,
iterations), so a device may run ahead of its peer into later iterations and the messages still
meet (parallel iterations). Sends do not wait for their receiver (up to the runtime's bound);
receives wait, with a timeout.

Each device runs its own copy of every loop and conditional it takes part in. The
`mpmd.iteration` op opens an iteration of a device's copy of a partitioned loop:

    mpmd.iteration %i loop 0 devices [0, 1] parallel 2 : tensor<i32>

It tells the runtime that this device starts iteration `%i` of loop `loop` (the counters of the
enclosing loops first), and waits until every device in `devices` has started iteration
`%i - parallel + 1`: at most `parallel` iterations of the loop are in flight at once
(`parallel_iterations`, as TensorFlow's while_loop). `devices` lists the device that decides the
loop (computes its predicate) first: it sends the predicate of iteration %i to the others after
its iteration %i - 1, so a runtime may take that message as word of its progress.

A loop's predicate may ride on a data message (`loom.transforms.mpmd_partition` marks both ends):
the decider's last send to a peer in its body, `{mpmd.carries = c}`, holds its value until the
decider sends the next iteration's predicate on channel `c` (`{mpmd.rides = d}`, `d` the data's
channel), and both leave as one message; the peer's receive of the data takes the predicate with
it, and its receive of the predicate takes that one. The first iteration's predicate goes alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from loom.dialects.stablehlo.types import I64Array, I64Attr
from loom.ir.attributes import DenseArrayAttr, IntegerAttr
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import Constraint, Dialect, OpBase, operand, prop, register_dialect, result_def, var_operand
from loom.ir.types import IntegerType, RankedTensorType, Type
from loom.ir.types import i64 as i64_type

DEVICE_ATTRIBUTE = "mpmd.device"  # the device an op is placed on (i64), on ops of a placed program
DEVICE_OF_FUNCTION = "mpmd.device"  # on each per-device func.func: the device it runs on
RESULTS_OF_FUNCTION = "mpmd.results"  # on each per-device func.func: which results of the program it returns
# on a stablehlo.while of a placed program (`lax.while_loop(parallel_iterations=, devices=)`):
PARALLEL_ITERATIONS_ATTRIBUTE = "mpmd.parallel_iterations"  # this loop's bound on iterations in flight (i64)
LOOP_DEVICES_ATTRIBUTE = "mpmd.devices"  # the devices its body may be placed on, its home first (i64 array)
CARRIES_ATTRIBUTE = "mpmd.carries"  # on a send / recv of a loop's data: the predicate channel it carries (i64)
RIDES_ATTRIBUTE = "mpmd.rides"  # on a send / recv of a loop's predicate: the data channel it rides on (i64)


def _is_counter(t: object) -> bool:
    return isinstance(t, RankedTensorType) and t.shape == () and isinstance(t.element_type, IntegerType)


Counter = Constraint(_is_counter, "integer scalar tensor (an iteration counter)")


class MPMDOp(OpBase):
    """Base of the mpmd ops."""


class TransferOp(MPMDOp):
    """Base of send and recv: the `channel` and the `peer` device at the other end."""

    channel = prop(I64Attr)
    peer = prop(I64Attr)

    def verify_(self) -> None:
        if int(self.properties["peer"].value) < 0:
            self.emit_error(f"peer must be a device number >= 0, not {self.properties['peer'].value}")
        here = self.attributes.get(DEVICE_ATTRIBUTE)
        if here is not None and here.value == self.properties["peer"].value:
            self.emit_error(f"transfers from device {here.value} to itself")


class SendOp(TransferOp):
    """Send `value` to device `peer` on `channel`, tagged with the enclosing loops' `iteration`s."""

    name = "mpmd.send"
    value = operand()
    iteration = var_operand(Counter)
    assembly_format = ("$value `to` $peer `channel` $channel (`iteration` $iteration^)? attr-dict `:` "
                       "type($value) (`,` type($iteration)^)?")


class RecvOp(TransferOp):
    """Receive the value device `peer` sends on `channel` for the enclosing loops' `iteration`s."""

    name = "mpmd.recv"
    iteration = var_operand(Counter)
    result = result_def()
    assembly_format = ("`from` $peer `channel` $channel (`iteration` $iteration^)? attr-dict `:` "
                       "type($result) (`,` type($iteration)^)?")


class IterationOp(MPMDOp):
    """Open iteration `iteration[-1]` of this device's copy of partitioned loop `loop` (the
    enclosing loops' counters first); wait until every device of `devices` has started iteration
    `iteration[-1] - parallel + 1`."""

    name = "mpmd.iteration"
    iteration = var_operand(Counter)
    loop = prop(I64Attr)
    devices = prop(I64Array)
    parallel = prop(I64Attr)
    assembly_format = "$iteration `loop` $loop `devices` $devices `parallel` $parallel attr-dict `:` type($iteration)"

    def verify_(self) -> None:
        if not self.operands:
            self.emit_error("needs the loop's iteration counter")
        if int(self.properties["parallel"].value) < 1:
            self.emit_error(f"parallel must be >= 1, not {self.properties['parallel'].value}")


def device_of(op: Operation) -> int | None:
    """The device an op is placed on (`mpmd.device`), or None."""
    attr = op.attributes.get(DEVICE_ATTRIBUTE)
    return None if attr is None else int(attr.value)


def i64(value: int) -> IntegerAttr:
    return IntegerAttr.get(int(value))


def send(builder: Builder, value: Value, peer: int, channel: int, iteration: Sequence[Value] = ()) -> Operation:
    """Insert `mpmd.send`; return the op."""
    return builder.insert(Operation.create(SendOp.name, [value, *iteration], [],
                                           {"channel": i64(channel), "peer": i64(peer)}, location=builder.location))


def recv(builder: Builder, type: Type, peer: int, channel: int, iteration: Sequence[Value] = ()) -> Value:
    """Insert `mpmd.recv` of a value of type `type`; return the value."""
    return builder.insert(Operation.create(RecvOp.name, list(iteration), [type],
                                           {"channel": i64(channel), "peer": i64(peer)},
                                           location=builder.location)).results[0]


def iteration(builder: Builder, counters: Sequence[Value], loop: int, devices: Sequence[int],
              parallel: int) -> Operation:
    """Insert `mpmd.iteration`; return the op."""
    props = {"loop": i64(loop), "devices": DenseArrayAttr.get(i64_type, [int(d) for d in devices]),
             "parallel": i64(parallel)}
    return builder.insert(Operation.create(IterationOp.name, list(counters), [], props, location=builder.location))


DIALECT = register_dialect(Dialect("mpmd", [SendOp, RecvOp, IterationOp]))

__all__ = ["CARRIES_ATTRIBUTE", "DEVICE_ATTRIBUTE", "DEVICE_OF_FUNCTION", "DIALECT", "LOOP_DEVICES_ATTRIBUTE",
           "PARALLEL_ITERATIONS_ATTRIBUTE", "RESULTS_OF_FUNCTION", "RIDES_ATTRIBUTE", "IterationOp", "RecvOp", "SendOp",
           "TransferOp", "device_of", "iteration", "recv", "send"]
