"""mpmd-partition: cut a placed program into one program per device (Yu et al., EuroSys'18, 5).

The input is a function whose ops carry `mpmd.device = d` (`loom.placement`); the output replaces
it with one function per device, `@<name>_device<d>`, each taking all of the program's arguments
(arguments are on every device) and returning the program's results that live on its device
(`mpmd.results`, the result indices, on each function; `mpmd.device` says which device runs it):

- **Placement.** An op without a device goes where the placed ops of its source line are (when
  they are all on one device: reverse mode gives a derivative's ops the line of the op they
  differentiate, so the backward pass of a placed line runs on its device); a loop or conditional
  without one goes where its first placed op inside is; any other op goes with the values it reads
  (the device of its first operand whose device is known), else with its first user, repeated
  until nothing changes; what is left goes where the enclosing op is (a loop or conditional
  still without a device: where the first op inside with a device runs, stack ops and constants
  aside, so that the predicate of a gradient's backward loop is made on the device its body
  starts on, not after the whole backward chain of an iteration), or on device 0. Stack ops
  stay with their stack and the values pushed on it (the stacks of a gradient are on the devices
  that hold the saved values), and an op reading a value popped from a stack goes with the first
  such value: the backward pass of a line placed on several devices (one Python line making every
  layer) runs where each layer's saved values are, and receives the cotangents.
- **Owners.** A value lives on the device of the op that makes it. A loop carry lives on the
  device that computes its next value in the body (one the body passes through, with its first
  reader in the body, else on the loop's device); a result of `if` / `case` lives where branch 0 computes it.
- **Transfers.** A constant is made again on every device that reads it. Every other value
  needed on a device other than its owner's gets, for each such device,
  a channel: an `mpmd.send` on the owner right after the value is made and an `mpmd.recv` at the
  same place on the other device. Every device runs its ops in the order of the original program
  and sends never wait for their receivers, so every receive waits for a send that comes earlier
  in that order: no cycle of waits.
- **Control.** Every device that owns an op, a carry or a result of a loop or conditional (at
  any depth) runs its own copy of it, holding the carries it owns plus an iteration counter; the
  device that computes the loop predicate sends it to every other participating device in every
  iteration (the predicate is a value their copies of the condition need). A conditional's
  predicate or case index goes the same way to every participating device, so each runs the same
  branch: a device whose part lies on the untaken side skips it, and so does its peer, which is
  the dead-token rule; nothing waits for a send that will not come. Nested loops and conditionals
  nest their copies; a device with ops only in the outer loop gets no copy of the inner one.
- **Iterations.** Transfers inside loops are tagged with the counters of the enclosing loops, so
  devices may be in different iterations; each body opens with `mpmd.iteration`, which bounds how
  far ahead a device may run: the loop's own `mpmd.parallel_iterations` when it has one
  (`lax.while_loop(parallel_iterations=)`), else the pass's `parallel_iterations`.
- **Predicates on data.** In a loop with at least 2 iterations in flight, the decider's last send
  to a peer in its body carries the next iteration's predicate for that peer (one message instead
  of two: `mpmd.carries` / `mpmd.rides`, see `loom.dialects.mpmd`) when nothing after that send in
  the body, nor the condition, waits for another device: holding the data until the predicate is
  made then delays no wait of the decider, so no device waits on a held message in a cycle. With
  one iteration in flight the peer would start on the data only after the decider's whole body,
  so it goes at once there.
- **Loop devices.** A loop with `mpmd.devices` (`lax.while_loop(devices=)`) may hold ops placed
  on those devices only: one placed elsewhere is an error naming it.

The single-device program is the oracle: the per-device programs compute the same values.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from loom.dialects import func, mpmd, stablehlo
from loom.dialects.mpmd import (
    CARRIES_ATTRIBUTE,
    DEVICE_ATTRIBUTE,
    DEVICE_OF_FUNCTION,
    LOOP_DEVICES_ATTRIBUTE,
    PARALLEL_ITERATIONS_ATTRIBUTE,
    RESULTS_OF_FUNCTION,
    RIDES_ATTRIBUTE,
    device_of,
    i64,
)
from loom.ir.attributes import DenseArrayAttr, location_line_col
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Block, Operation, OpResult, Region, Value
from loom.ir.types import FunctionType, IntegerType, RankedTensorType
from loom.ir.types import i64 as i64_type
from loom.rewrite.passes import Option, Pass, register_pass

CONTROL_OPS = ("stablehlo.while", "stablehlo.if", "stablehlo.case")
TERMINATORS = ("stablehlo.return", "func.return")
COPIED_OPS = ("stablehlo.constant",)  # made again on every device that reads them, never sent
DEFAULT_PARALLEL_ITERATIONS = 10  # as TensorFlow's while_loop
COUNTER_TYPE = RankedTensorType((), IntegerType(32), None)
LOOP_ATTRIBUTES = (DEVICE_ATTRIBUTE, PARALLEL_ITERATIONS_ATTRIBUTE, LOOP_DEVICES_ATTRIBUTE)  # used up by the pass


class MPMDError(ValueError):
    """A program that cannot be partitioned by placement."""


def _i64_array(values: Sequence[int]) -> DenseArrayAttr:
    return DenseArrayAttr.get(i64_type, [int(v) for v in values])


def _where(op: Operation) -> str:
    """`file:line:col` of an op's location."""
    at = location_line_col(op.location)
    return f"{at[0]}:{at[1]}:{at[2]}" if at else f"loc({op.location})"


def _body_ops(op: Operation) -> list[Operation]:
    """Every op nested in `op`'s regions (not `op`)."""
    return [o for o in op.walk() if o is not op]


class _Placement:
    """The device of every op (inferred where not placed), the owner of every value and the
    participants of every loop and conditional of one function."""

    def __init__(self, function: Operation) -> None:
        self.device: dict[Operation, int] = {}
        self.owner: dict[Value, int | None] = {}
        self.participants: dict[Operation, list[int]] = {}
        self.loop_id: dict[Operation, int] = {}
        self.function = function
        self._free_ops: dict[Operation, bool] = {}
        ops = [o for o in function.walk() if o is not function and o.name not in TERMINATORS]
        lines: dict[tuple, set[int]] = {}  # the devices placed ops of each source line are on
        for op in ops:
            d = device_of(op)
            if d is not None:
                lines.setdefault(location_line_col(op.location), set()).add(d)
        for op in ops:
            d = device_of(op)
            if d is None and op.name in CONTROL_OPS:
                d = next((x for x in map(device_of, _body_ops(op)) if x is not None), None)
            if d is None:  # made from a placed line: a derivative's ops carry the line they differentiate
                on_line = lines.get(location_line_col(op.location), set())
                d = next(iter(on_line)) if len(on_line) == 1 and location_line_col(op.location) else None
            if d is not None:
                self.device[op] = d
        self._colocate_handles(ops, early=True)
        self._infer(ops)
        self._fill_leftovers(function.regions[0].entry, 0)
        self._colocate_handles(ops)
        for op in ops:  # an op with regions that is not control flow (a reduce) runs whole on its device
            if op.regions and op.name not in CONTROL_OPS:
                for inner in _body_ops(op):
                    self.device[inner] = self.device[op]
        for op in ops:
            for r in op.results:
                self.owner[r] = self.device[op]
        self._own(function)
        loops = itertools.count()
        for op in function.walk():
            if op.name == "stablehlo.while":
                self.loop_id[op] = next(loops)

    def _value_device(self, v: Value) -> int | None:
        """While inferring: a result lives on its op's device (a constant nowhere: every reader
        makes its own), a loop's or conditional's where the
        value it yields is made (None while that is not known); a block argument of a region on the region's op's
        device, a loop carry's as that loop's result (None for the function's arguments)."""
        if isinstance(v, OpResult):
            op, k = v.owner_op, v.index
            if op.name in COPIED_OPS:  # made again wherever it is read: it says nothing about where
                return None
        else:
            op, k = v.parent_block.parent_op, v.index
            if op is None or op.name == "func.func":
                return None
        if op.name in CONTROL_OPS and (isinstance(v, OpResult) or op.name == "stablehlo.while"):
            yielded = op.regions[-1 if op.name == "stablehlo.while" else 0].entry.terminator.operands[k]
            if isinstance(yielded, OpResult) and self._inside(op, yielded):  # not known yet: ask another operand
                return self.device.get(yielded.owner_op)
        return self.device.get(op)

    def _infer(self, ops: list[Operation]) -> None:
        """Devices of unplaced ops, from their operands (a value popped from a stack first), else
        their users, repeated until nothing changes: first only for ops none of whose operands
        still waits for a device (so that an op does not follow one operand for want of knowing
        another's), then for every op."""
        for patient in (True, False):
            changed = True
            while changed:
                changed = False
                for op in ops:
                    if op in self.device or op.name in CONTROL_OPS:  # control goes with its body: see _fill_leftovers
                        continue
                    saved = [v for v in op.operands if isinstance(v, OpResult) and v.owner_op.name == "stack.pop"]
                    known = [self._value_device(v) for v in op.operands]
                    d = next((x for x in map(self._value_device, saved) if x is not None), None)
                    if d is None and patient and any(x is None and self._waits(v) for x, v in zip(known, op.operands)):
                        continue
                    d = next((x for x in known if x is not None), None) if d is None else d
                    if d is None:
                        users = [u for r in op.results for u in r.users]
                        d = next((self.device[u] for u in users if u in self.device), None)
                    if d is not None:
                        self.device[op] = d
                        changed = True

    def _waits(self, v: Value) -> bool:
        """Whether `v`'s device is not known yet but will be (it is made by an op inside the function
        that is neither a constant nor made of the function's arguments and constants alone)."""
        if isinstance(v, OpResult):
            return not self._free(v.owner_op)
        parent = v.parent_block.parent_op
        return parent is not None and parent.name == "stablehlo.while"

    def _free(self, op: Operation) -> bool:
        """Whether `op` is a constant, or computed from the function's arguments and constants
        alone (a slice of a weight): nothing it reads has a device, so it takes its users' and
        others need not wait for it."""
        free = self._free_ops.get(op)
        if free is None:
            free = self._free_ops[op] = op.name in COPIED_OPS or (not op.regions and all(
                self._free(v.owner_op) if isinstance(v, OpResult) else v.parent_block.parent_op is self.function
                for v in op.operands))
        return free

    def _colocate_handles(self, ops: list[Operation], early: bool = False) -> None:
        """Values that are not tensors (stacks) never travel: the ops sharing one (a stack's new,
        push, pop and companion ops, and the outer stacks its handle is pushed on) all go where
        the first value pushed on them is made (`early`: only where that is known yet)."""
        group: dict[Operation, Operation] = {op: op for op in ops}

        def root(op: Operation) -> Operation:
            while group[op] is not op:
                group[op] = group[group[op]]
                op = group[op]
            return op
        for op in ops:
            for v in (*op.operands, *op.results):
                if not isinstance(v.type, RankedTensorType) and isinstance(v, OpResult) and v.owner_op in group:
                    group[root(op)] = root(v.owner_op)
        members: dict[Operation, list[Operation]] = {}
        for op in ops:
            members.setdefault(root(op), []).append(op)
        for together in members.values():
            if len(together) == 1:
                continue
            pushed = [v for op in together if op.name == "stack.push" for v in op.operands[1:]
                      if isinstance(v.type, RankedTensorType)]
            d = self._value_device(pushed[0]) if pushed else None
            if d is None and early:
                continue
            d = self.device[together[0]] if d is None else d
            for op in together:
                self.device[op] = d

    def _fill_leftovers(self, block: Block, enclosing: int) -> None:
        for op in block.ops:
            if op.name in TERMINATORS:
                continue
            if op not in self.device and op.name in CONTROL_OPS:  # where its first op that has a device runs
                enclosing = next((self.device[o] for o in _body_ops(op) if o in self.device
                                  and not o.name.startswith("stack.") and o.name not in COPIED_OPS), enclosing)
            d = self.device.setdefault(op, enclosing)
            for region in op.regions:
                for b in region.blocks:
                    self._fill_leftovers(b, d)

    def _own(self, parent: Operation) -> None:
        """Owners of the carries and results of the control ops in `parent` (inner ops first) and
        their participants."""
        for region in parent.regions:
            for block in region.blocks:
                for op in block.ops:
                    if op.name in CONTROL_OPS:
                        self._own(op)
                        self._own_control(op)

    def _inside(self, op: Operation, v: Value) -> bool:
        d = v.owner_op if isinstance(v, OpResult) else v.parent_block.parent_op
        return d is not None and d is not op and op.is_ancestor(d)

    def _own_control(self, op: Operation) -> None:
        here = self.device[op]
        yields = op.regions[-1].entry.terminator.operands if op.name == "stablehlo.while" else \
            op.regions[0].entry.terminator.operands
        owners = [self.device[v.owner_op] if isinstance(v, OpResult) and self._inside(op, v) else here
                  for v in yields]
        if op.name == "stablehlo.while":  # a carry the body passes through lives with its first reader
            body = op.regions[1].entry
            for k, v in enumerate(yields):
                readers = [u for u in v.users if u.name not in TERMINATORS] if v is body.args[k] else []
                if readers:
                    owners[k] = self.device[readers[0]]
        for k, r in enumerate(op.results):
            self.owner[r] = owners[k]
        if op.name == "stablehlo.while":
            for region in op.regions:
                for k, a in enumerate(region.entry.args):
                    self.owner[a] = owners[k]
        devices = set(owners)
        for inner in _body_ops(op):
            if inner.name not in TERMINATORS:
                devices.add(self.device[inner])
            devices.update(self.participants.get(inner, ()))
        self.participants[op] = sorted(devices) or [here]


def _needs(placement: _Placement, function: Operation) -> dict[Value, set[int]]:
    """The devices each value is read on (where its op, or the loop or branch that uses it, runs)."""
    needs: dict[Value, set[int]] = {}

    def need(v: Value, devices: Sequence[int]) -> None:
        needs.setdefault(v, set()).update(devices)

    for op in function.walk():
        if op is function or op.name == "func.return":
            continue
        if op.name == "stablehlo.return":
            parent = op.parent_op
            if parent.name == "stablehlo.while" and op.parent_region is parent.regions[0]:
                need(op.operands[0], placement.participants[parent])
            elif parent.name in CONTROL_OPS:
                for v, r in zip(op.operands, parent.results):
                    need(v, [placement.owner[r]])
            continue
        if op.name == "stablehlo.while":
            for v, r in zip(op.operands, op.results):
                need(v, [placement.owner[r]])
        elif op.name in ("stablehlo.if", "stablehlo.case"):
            need(op.operands[0], placement.participants[op])
        else:
            for v in op.operands:
                need(v, [placement.device[op]])
            for inner in _body_ops(op):  # values an atomic op's regions read from above
                for v in inner.operands:
                    if not op.is_ancestor(v.owner_op if isinstance(v, OpResult) else v.parent_block.parent_op):
                        need(v, [placement.device[op]])
    return needs


class _DeviceProgram:
    """Writes the program of one device."""

    def __init__(self, partitioner: MPMDPartitioner, device: int) -> None:
        self.p = partitioner
        self.device = device
        self.mapping: dict[Value, Value] = {}

    def transfers(self, b: Builder, v: Value, iterations: list[Value]) -> None:
        """The sends (on `v`'s owner) or the receive (elsewhere) of `v`, at `b`."""
        owner = self.p.placement.owner.get(v)
        if owner is None or (isinstance(v, OpResult) and v.owner_op.name in COPIED_OPS):
            return
        for peer in sorted(self.p.needs.get(v, set()) - {owner}):
            channel = self.p.channel(v, peer)
            if owner == self.device:
                mpmd.send(b, self.mapping[v], peer, channel, iterations)
            elif peer == self.device:
                self.mapping[v] = mpmd.recv(b, v.type, owner, channel, iterations)

    def block(self, src: Block, b: Builder, iterations: list[Value]) -> None:
        for op in src.ops:
            if op.name in TERMINATORS:
                continue
            if op.name in CONTROL_OPS:
                if self.device in self.p.placement.participants[op]:
                    self.control(op, b, iterations)
            elif self.p.placement.device[op] == self.device or (
                    op.name in COPIED_OPS and self.device in self.p.needs.get(op.results[0], ())):
                new = op.clone(self.mapping)
                new.attributes.pop(DEVICE_ATTRIBUTE, None)
                for inner in new.walk():
                    inner.attributes.pop(DEVICE_ATTRIBUTE, None)
                b.insert(new)
            for r in op.results:
                self.transfers(b, r, iterations)

    def _mine(self, results: Sequence[Value]) -> list[int]:
        return [k for k, r in enumerate(results) if self.p.placement.owner[r] == self.device]

    def control(self, op: Operation, b: Builder, iterations: list[Value]) -> None:
        b.location = op.location
        if op.name == "stablehlo.while":
            self.loop(op, b, iterations)
            return
        mine = self._mine(op.results)
        regions = []
        for src in op.regions:
            region = Region()
            block = region.add_block(Block([]))
            inner = Builder(InsertionPoint.at_end(block), op.location)
            self.block(src.entry, inner, iterations)
            stablehlo.return_(inner, [self.mapping[src.entry.terminator.operands[k]] for k in mine])
            regions.append(region)
        new = b.insert(Operation.create(op.name, [self.mapping[op.operands[0]]], [op.results[k].type for k in mine],
                                        dict(op.properties), None, regions, (), op.location))
        for k, r in zip(mine, new.results):
            self.mapping[op.results[k]] = r

    def loop(self, op: Operation, b: Builder, iterations: list[Value]) -> None:
        mine = self._mine(op.results)
        types = [COUNTER_TYPE] + [op.results[k].type for k in mine]
        zero = stablehlo.constant(b, np.zeros((), np.int32), COUNTER_TYPE)
        regions = []
        for which, src in enumerate(op.regions):
            block = Block(types)
            counter = block.args[0]
            for k, a in zip(mine, block.args[1:]):
                self.mapping[src.entry.args[k]] = a
            inner = Builder(InsertionPoint.at_end(block), op.location)
            here = [*iterations, counter]
            if which == 1:
                mpmd.iteration(inner, here, self.p.placement.loop_id[op], self.p.loop_devices(op), self.p.parallel[op])
            for a in src.entry.args:
                self.transfers(inner, a, here)
            self.block(src.entry, inner, here)
            yields = src.entry.terminator.operands
            if which == 0:
                stablehlo.return_(inner, [self.mapping[yields[0]]])
            else:
                one = stablehlo.constant(inner, np.ones((), np.int32), COUNTER_TYPE)
                nxt = inner.insert(Operation.create("stablehlo.add", [counter, one], [COUNTER_TYPE],
                                                    location=op.location)).results[0]
                stablehlo.return_(inner, [nxt] + [self.mapping[yields[k]] for k in mine])
            regions.append(Region([block]))
        operands = [zero] + [self.mapping[op.operands[k]] for k in mine]
        attributes = {k: v for k, v in op.attributes.items() if k not in LOOP_ATTRIBUTES}
        new = b.insert(Operation.create(op.name, operands, types, dict(op.properties), attributes, regions, (),
                                        op.location))
        for k, r in zip(mine, new.results[1:]):
            self.mapping[op.results[k]] = r


class MPMDPartitioner:
    """Partitions one placed function (see the module's doc)."""

    def __init__(self, function: Operation, parallel_iterations: int = DEFAULT_PARALLEL_ITERATIONS,
                 num_devices: int | None = None) -> None:
        if parallel_iterations < 1:
            raise MPMDError(f"parallel_iterations must be >= 1, not {parallel_iterations}")
        self.function = function
        self.parallel_iterations = parallel_iterations
        self.placement = _Placement(function)
        used = max(self.placement.device.values(), default=0) + 1
        if num_devices is not None and num_devices < used:
            where = next(op for op, d in self.placement.device.items() if d >= num_devices)
            raise MPMDError(f"{where.name} at {_where(where)} is placed on device {self.placement.device[where]}, "
                            f"but the program runs on {num_devices} devices")
        self.num_devices = num_devices if num_devices is not None else used
        self.needs = _needs(self.placement, function)
        self._channels: dict[tuple[Value, int], int] = {}
        self.parallel = {op: self._loop_settings(op) for op in self.placement.loop_id}

    def _loop_settings(self, loop: Operation) -> int:
        """The loop's bound on iterations in flight; checks its body's placements against its devices."""
        devices = loop.attributes.get(LOOP_DEVICES_ATTRIBUTE)
        if devices is not None:
            allowed = [int(d) for d in devices.values]
            for inner in _body_ops(loop):
                d = device_of(inner)
                if d is not None and d not in allowed:
                    raise MPMDError(f"{inner.name} at {_where(inner)} is placed on device {d}, but the loop at "
                                    f"{_where(loop)} runs on devices {allowed}")
        bound = loop.attributes.get(PARALLEL_ITERATIONS_ATTRIBUTE)
        if bound is None:
            return self.parallel_iterations
        if int(bound.value) < 1:
            raise MPMDError(f"the loop at {_where(loop)} has {PARALLEL_ITERATIONS_ATTRIBUTE} = {bound.value}; it must "
                            "be >= 1")
        return int(bound.value)

    def loop_devices(self, loop: Operation) -> list[int]:
        """The participants of a loop, the one that decides it (computes its predicate) first."""
        decider = self.placement.owner.get(loop.regions[0].entry.terminator.operands[0])
        devices = self.placement.participants[loop]
        return sorted(devices, key=lambda d: d != decider)

    def channel(self, v: Value, peer: int) -> int:
        return self._channels.setdefault((v, peer), len(self._channels))

    def device_function(self, device: int) -> Operation:
        src = self.function
        name = src.get_attr("sym_name").value
        ftype = src.get_attr("function_type").value
        returned = src.regions[0].entry.terminator.operands
        mine = [k for k, v in enumerate(returned) if (self.placement.owner.get(v) or 0) == device]
        new = func.FuncOp.build(f"{name}_device{device}", FunctionType(ftype.inputs, tuple(returned[k].type
                                                                                            for k in mine)))
        program = _DeviceProgram(self, device)
        for old, arg in zip(src.regions[0].entry.args, new.regions[0].entry.args):
            program.mapping[old] = arg
        b = Builder(InsertionPoint.at_end(new.regions[0].entry), src.location)
        program.block(src.regions[0].entry, b, [])
        b.insert(func.ReturnOp.build([program.mapping[returned[k]] for k in mine], src.location))
        new.attributes[DEVICE_OF_FUNCTION] = i64(device)
        new.attributes[RESULTS_OF_FUNCTION] = _i64_array(mine)
        return new


def _waits(op: Operation) -> bool:
    """Whether `op` (or an op inside it) may wait for another device."""
    return any((o.name.startswith("mpmd.") and o.name != "mpmd.send") or o.name.startswith(
        ("stablehlo.all_", "stablehlo.collective", "stablehlo.reduce_scatter")) for o in op.walk())


def _peer(op: Operation) -> int:
    return int(op.properties["peer"].value)


def _channel(op: Operation) -> int:
    return int(op.properties["channel"].value)


def join_predicates(functions: dict[int, Operation]) -> None:
    """Mark the decider's last send to each peer in a loop body as carrying the next iteration's
    predicate, and the receives at the other end (see the module's doc, "Predicates on data")."""
    receives = {_channel(o): o for f in functions.values() for o in f.walk() if o.name == "mpmd.recv"}
    for device, function in functions.items():
        for loop in [o for o in function.walk() if o.name == "stablehlo.while"]:
            cond, body = loop.regions[0].entry, loop.regions[1].entry
            ops = [o for o in body.ops if o.name not in TERMINATORS]
            opening = ops[0] if ops else None
            if (opening is None or opening.name != "mpmd.iteration" or int(opening.properties["parallel"].value) < 2
                    or int(opening.properties["devices"].values[0]) != device or any(map(_waits, cond.ops))):
                continue
            predicate = cond.terminator.operands[0]
            for told in [o for o in cond.ops if o.name == "mpmd.send" and o.operands[0] is predicate]:
                last = max((k for k, o in enumerate(ops) if o.name == "mpmd.send" and _peer(o) == _peer(told)),
                           default=None)
                if last is None or any(map(_waits, ops[last + 1:])):
                    continue
                carrier = ops[last]
                for end in (carrier, receives[_channel(carrier)]):
                    end.attributes[CARRIES_ATTRIBUTE] = i64(_channel(told))
                for end in (told, receives[_channel(told)]):
                    end.attributes[RIDES_ATTRIBUTE] = i64(_channel(carrier))


def partition(module: Operation, entry: str = "main", parallel_iterations: int = DEFAULT_PARALLEL_ITERATIONS,
              num_devices: int | None = None) -> Operation:
    """Replace function `entry` of `module` (in place) by one function per device,
    `@<entry>_device<d>`; return the module. `num_devices`: how many devices the program runs on
    (default: one more than the highest device placed)."""
    function = next((op for op in module.regions[0].entry.ops if op.name == "func.func"
                     and op.get_attr("sym_name").value == entry), None)
    if function is None:
        raise MPMDError(f"no function @{entry} in the module")
    partitioner = MPMDPartitioner(function, parallel_iterations, num_devices)
    block = module.regions[0].entry
    functions = {d: partitioner.device_function(d) for d in range(partitioner.num_devices)}
    join_predicates(functions)
    for d in range(partitioner.num_devices):
        block.insert_before(functions[d], function)
    function.erase()
    module.attributes["mpmd.num_devices"] = i64(partitioner.num_devices)
    return module


def device_functions(module: Operation) -> dict[int, Operation]:
    """The per-device functions of a partitioned module, by device."""
    return {int(op.get_attr(DEVICE_OF_FUNCTION).value): op for op in module.regions[0].entry.ops
            if op.name == "func.func" and op.get_attr(DEVICE_OF_FUNCTION) is not None}


@register_pass
class MPMDPartitionPass(Pass):
    """Cut a placed program into one program per device (see the module's doc)."""

    name = "mpmd-partition"
    summary = "Cut a program placed on devices (mpmd.device) into one function per device with send / recv"
    entry = Option(str, "main", "The function to partition")
    parallel_iterations = Option(int, DEFAULT_PARALLEL_ITERATIONS,
                                 "Iterations of a loop in flight at once (for loops without mpmd.parallel_iterations)")

    def run(self, op: Operation) -> None:
        try:
            partition(op, self.entry, self.parallel_iterations)
        except MPMDError as e:
            raise self.fail(op, str(e)) from None


__all__ = ["CONTROL_OPS", "DEFAULT_PARALLEL_ITERATIONS", "MPMDError", "MPMDPartitionPass", "MPMDPartitioner",
           "device_functions", "partition"]
