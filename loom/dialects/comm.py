"""The comm dialect: asynchronous collectives, split into a start that issues the transfer and a
done that waits for it, so that computation can run while the data travels.

    %f = comm.collective_permute_start %x {source_target_pairs = dense<[[0, 1], [1, 0]]> :
                                              tensor<2x2xi64>} : tensor<4xf32>
    %y = comm.collective_permute_done %f : !comm.future<tensor<4xf32>>

or, generic (`<{...}>` holding the same properties):

    %f = "comm.collective_permute_start"(%x) <{...}> : (tensor<4xf32>) -> !comm.future<tensor<4xf32>>
    %y = "comm.collective_permute_done"(%f) : (!comm.future<tensor<4xf32>>) -> tensor<4xf32>

`comm.collective_permute_start` takes the attributes of `stablehlo.collective_permute`
(`source_target_pairs`, an optional `channel_handle`) and has its meaning, checked the same way;
its result, a `!comm.future<T>`, is the transfer in flight. `comm.collective_permute_done` waits
for it and gives the received tensor (zeros on a partition no pair targets). Each future is waited
for by exactly one done, in the block of its start (the executors hold a transfer per future). The
ops are not `Pure`: the rewriters never move, merge or erase them. `schedule-latency-hiding`
(loom.transforms.latency_hiding) writes them; the kernels are in loom.ops.async_collectives.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loom.dialects.stablehlo.attributes import ChannelHandle
from loom.dialects.stablehlo.collectives import (
    AllGatherOp,
    ChannelHandleAttr,
    CollectivePermuteOp,
    I64Matrix,
    Unit,
    channel_handle_attr,
)
from loom.dialects.stablehlo.types import AnyTensor, I64Attr, ShapeError
from loom.ir.attributes import UNKNOWN_LOC, DenseElementsAttr, Location
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import Constraint, Dialect, OpBase, opt_prop, prop, register_dialect, result_def
from loom.ir.opdef import operand as operand_def
from loom.ir.types import RankedTensorType, Type, i64


class FutureType(Type):
    """`!comm.future<T>`: a value of type `T` in flight."""

    __slots__ = ("value_type",)
    _canonical_args = True

    def __init__(self, value_type: Type) -> None:
        self.value_type = value_type

    def _render(self) -> str:
        return f"!comm.future<{self.value_type}>"


def parse_type(text: str) -> Type | None:
    """`!comm.future<T>` from its text (the dialect's type parser); None for any other text."""
    from loom.ir.parser import parse_wrapped_type
    inner = parse_wrapped_type(text, "!comm.future<")
    return None if inner is None else FutureType(inner)


IsFuture = Constraint(lambda t: isinstance(t, FutureType), "!comm.future")


def _location(builder: Builder | None, location: Location | None) -> Location:
    if location is not None:
        return location
    return builder.location if builder is not None else UNKNOWN_LOC


class CollectivePermuteStartOp(OpBase):
    """Issues `stablehlo.collective_permute` of `operand` without waiting: the result is the
    transfer in flight."""

    name = "comm.collective_permute_start"
    operand = operand_def(AnyTensor)
    source_target_pairs = prop(I64Matrix)
    channel_handle = opt_prop(ChannelHandleAttr)
    result = result_def(IsFuture)
    assembly_format = "$operand attr-dict `:` type($operand)"

    @property
    def pairs(self) -> list[tuple[int, int]]:
        return [(int(s), int(t)) for s, t in self.source_target_pairs.to_numpy().reshape(-1, 2)]

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        return [FutureType(operand_types[0])] if operand_types else None

    def verify_(self) -> None:
        try:  # the permute's own checks of the pairs
            CollectivePermuteOp.infer_result_types([self.operands[0].type], dict(self.properties))
        except ShapeError as e:
            self.emit_error(str(e))
        want = FutureType(self.operands[0].type)
        if self.results[0].type is not want:
            self.emit_error(f"result type '{self.results[0].type}' should be '{want}' (the future of the operand)")

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, source_target_pairs: Sequence[tuple[int, int]],
              channel_handle: int | ChannelHandle | None = None, location: Location | None = None) -> Operation:
        arr = np.array(list(source_target_pairs), dtype=np.int64).reshape(-1, 2)
        props = {"source_target_pairs": DenseElementsAttr.get(arr, RankedTensorType(arr.shape, i64))}
        handle = channel_handle_attr(channel_handle)
        if handle is not None:
            props["channel_handle"] = handle
        op = Operation.create(cls.name, [operand], [FutureType(operand.type)], props,
                              location=_location(builder, location))
        return builder.insert(op) if builder is not None else op


class _Done:
    """What a done op does: wait for the future of a start of `starts` in its own block, its only
    use, and give the type the future carries."""

    starts: str  # the name of the start op

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0] if operand_types else None
        return [t.value_type] if isinstance(t, FutureType) else None

    def verify_(self) -> None:
        future = self.operands[0]
        if self.results[0].type is not future.type.value_type:
            self.emit_error(f"result type '{self.results[0].type}' should be '{future.type.value_type}', the type "
                            f"the future carries")
        start = future.owner_op
        if start is None or start.name != self.starts:
            self.emit_error(f"waits for a future that no {self.starts} in its block made")
        elif start.parent is not self.parent:
            self.emit_error(f"waits for a future started in another block (at {start.location})")
        if len(future.uses) != 1:
            self.emit_error(f"a future must be waited for by exactly one {self.name} and used by nothing else")

    @classmethod
    def build(cls, builder: Builder | None, future: Value, location: Location | None = None) -> Operation:
        op = Operation.create(cls.name, [future], [future.type.value_type], location=_location(builder, location))
        return builder.insert(op) if builder is not None else op


class CollectivePermuteDoneOp(_Done, OpBase):
    """Waits for the transfer `future` and gives the tensor this partition received."""

    name = "comm.collective_permute_done"
    starts = "comm.collective_permute_start"
    future = operand_def(IsFuture)
    result = result_def(AnyTensor)
    assembly_format = "$future attr-dict `:` type($future)"


class AllGatherStartOp(OpBase):
    """Issues `stablehlo.all_gather` of one `operand` without waiting: the result is the gather in
    flight, a future of the gathered tensor."""

    name = "comm.all_gather_start"
    operand = operand_def(AnyTensor)
    all_gather_dim = prop(I64Attr)
    replica_groups = prop(I64Matrix)
    channel_handle = opt_prop(ChannelHandleAttr)
    use_global_device_ids = opt_prop(Unit)
    result = result_def(IsFuture)
    assembly_format = "$operand attr-dict `:` type($operand) `->` type($result)"

    def verify_(self) -> None:
        try:  # the all_gather's own checks
            gathered = AllGatherOp.infer_result_types([self.operands[0].type], dict(self.properties))
        except ShapeError as e:
            self.emit_error(str(e))
            return
        if gathered is not None and self.results[0].type is not FutureType(gathered[0]):
            self.emit_error(f"result type '{self.results[0].type}' should be '{FutureType(gathered[0])}' (the future "
                            f"of the gathered operand)")

    @classmethod
    def build(cls, builder: Builder | None, gather: Operation, location: Location | None = None) -> Operation:
        """The start of all_gather `gather` (its operand and properties; not inserted for it)."""
        op = Operation.create(cls.name, [gather.operands[0]], [FutureType(gather.results[0].type)],
                              dict(gather.properties), location=_location(builder, location or gather.location))
        return builder.insert(op) if builder is not None else op


class AllGatherDoneOp(_Done, OpBase):
    """Waits for the gather `future` and gives the gathered tensor."""

    name = "comm.all_gather_done"
    starts = "comm.all_gather_start"
    future = operand_def(IsFuture)
    result = result_def(AnyTensor)
    assembly_format = "$future attr-dict `:` type($future)"


DIALECT = register_dialect(Dialect("comm", [CollectivePermuteStartOp, CollectivePermuteDoneOp, AllGatherStartOp,
                                            AllGatherDoneOp], type_parser=parse_type))

__all__ = ["DIALECT", "AllGatherDoneOp", "AllGatherStartOp", "CollectivePermuteDoneOp", "CollectivePermuteStartOp",
           "FutureType", "IsFuture", "parse_type"]
