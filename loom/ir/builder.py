"""Builder with insertion points, as MLIR's OpBuilder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from loom.ir.attributes import UNKNOWN_LOC, Attribute, Location
from loom.ir.core import Block, Operation, Region, Value
from loom.ir.types import Type


class InsertionPoint:
    """Insert before `anchor` in `block` (at the end when anchor is None)."""

    __slots__ = ("block", "anchor")

    def __init__(self, block: Block, anchor: Operation | None = None) -> None:
        self.block = block
        self.anchor = anchor

    @staticmethod
    def at_end(block: Block) -> InsertionPoint:
        return InsertionPoint(block, None)

    @staticmethod
    def at_start(block: Block) -> InsertionPoint:
        return InsertionPoint(block, block.first_op)

    @staticmethod
    def before(op: Operation) -> InsertionPoint:
        return InsertionPoint(op.containing_block(), op)

    @staticmethod
    def after(op: Operation) -> InsertionPoint:
        return InsertionPoint(op.containing_block(), op.next_op)


class InsertionListener(Protocol):
    """What a Builder tells of the ops it inserts."""

    def notify_op_inserted(self, op: Operation) -> None: ...


class Builder:
    """Creates ops at an insertion point with a current location.

    `listener`, when set, is told of every inserted op (the rewriter uses it)."""

    def __init__(self, insertion_point: InsertionPoint | None = None, location: Location = UNKNOWN_LOC) -> None:
        self.insertion_point = insertion_point
        self.location = location
        self.listener: InsertionListener | None = None

    def set_insertion_point(self, ip: InsertionPoint) -> None:
        self.insertion_point = ip

    def insert(self, op: Operation) -> Operation:
        ip = self.insertion_point
        if ip is None:
            raise ValueError("builder has no insertion point")
        ip.block.insert_before(op, ip.anchor)
        if self.listener is not None:
            self.listener.notify_op_inserted(op)
        return op

    def create(self, name: str, operands: Sequence[Value] = (), result_types: Sequence[Type] = (),
               properties: dict[str, Attribute] | None = None, attributes: dict[str, Attribute] | None = None,
               regions: int | Sequence[Region] = 0, successors: Sequence[Block] = (),
               location: Location | None = None) -> Operation:
        op = Operation.create(name, operands, result_types, properties, attributes, regions, successors,
                              location if location is not None else self.location)
        return self.insert(op)

    def create_block(self, region: Region, arg_types: Sequence[Type] = (),
                     arg_locations: Sequence[Location] | None = None) -> Block:
        block = region.add_block(Block(arg_types, arg_locations))
        self.insertion_point = InsertionPoint.at_end(block)
        return block
