"""The PatternRewriter: the only way patterns and passes that use a driver mutate the IR."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from loom.ir.attributes import UNKNOWN_LOC, Location
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Block, IRError, Operation, Region, ResolvingLocation, Value
from loom.rewrite.listener import RewriteListener


class PatternRewriter(Builder):
    """A Builder that reports every IR change to its `listener`.

    Creating or inserting ops, replacing and erasing them, changing them in place, moving ops
    and inlining blocks all go through here while a driver runs, so that its worklist stays right.
    Uses of a value are visited newest first, as MLIR's use lists are, so that drivers see users
    in the order MLIR would."""

    listener: RewriteListener | None  # a Builder's listener that hears of every change
    _location: Any  # a Location, or a PendingLocation until read (see ResolvingLocation)

    def __init__(self, listener: RewriteListener | None = None, insertion_point: InsertionPoint | None = None,
                 location: Location = UNKNOWN_LOC) -> None:
        super().__init__(insertion_point, location)
        self.listener = listener

    # The current location may be an op's still unresolved source position (the applicator sets
    # it before every pattern attempt; most attempts never create an op): resolved when read.
    location = ResolvingLocation()

    # Insertion points ---------------------------------------------------------------------
    def set_insertion_point_before(self, op: Operation) -> None:
        self.insertion_point = InsertionPoint(op.containing_block(), op)

    def set_insertion_point_after(self, op: Operation) -> None:
        self.insertion_point = InsertionPoint(op.containing_block(), op.next_op)

    def set_insertion_point_to_start(self, block: Block) -> None:
        self.insertion_point = InsertionPoint(block, block.first_op)

    def set_insertion_point_to_end(self, block: Block) -> None:
        self.insertion_point = InsertionPoint(block, None)

    @contextmanager
    def insertion_guard(self) -> Iterator[None]:
        """Restore the insertion point (and location) on exit."""
        saved, loc = self.insertion_point, self._location
        try:
            yield
        finally:
            self.insertion_point, self._location = saved, loc

    # Creation -----------------------------------------------------------------------------
    def clone(self, op: Operation, mapping: dict[Any, Any] | None = None) -> Operation:
        """Insert a deep copy of `op`; the listener hears of the copy and every op nested in it."""
        new = op.clone(mapping)
        ip = self.insertion_point
        if ip is None:
            raise ValueError("rewriter has no insertion point")
        ip.block.insert_before(new, ip.anchor)
        listener = self.listener
        if listener is not None:
            for nested in new.walk():
                listener.notify_op_inserted(nested)
        return new

    def create_block(self, region: Region, arg_types: Sequence = (), arg_locations: Sequence | None = None,
                     before: Block | None = None) -> Block:
        """Add a block to `region` (before `before`, else at the end) and move the insertion point
        to its end."""
        block = Block(arg_types, arg_locations)
        if before is None:
            region.add_block(block)
        else:
            region.insert_block(region.blocks.index(before), block)
        self.insertion_point = InsertionPoint(block, None)
        if self.listener is not None:
            self.listener.notify_block_inserted(block)
        return block

    # Replacement --------------------------------------------------------------------------
    def replace_all_uses_with(self, old: Value, new: Value) -> None:
        """Make every user of `old` use `new`; each user is reported as modified."""
        if old is new:
            return
        listener = self.listener
        for use in reversed(list(old.uses)):
            owner = use.owner
            owner.set_operand(use.index, new)
            if listener is not None:
                listener.notify_op_modified(owner)

    def replace_uses_with_if(self, old: Value, new: Value, predicate: Callable[[Any], bool]) -> None:
        """Replace the uses of `old` for which `predicate(use)` holds."""
        listener = self.listener
        for use in reversed(list(old.uses)):
            if predicate(use):
                owner = use.owner
                owner.set_operand(use.index, new)
                if listener is not None:
                    listener.notify_op_modified(owner)

    def replace_all_op_uses_with(self, op: Operation, values: Sequence[Value]) -> None:
        """Replace the uses of every result of `op`, without erasing it."""
        if len(values) != len(op.results):
            raise IRError(f"'{op.name}' has {len(op.results)} results, replaced with {len(values)} values")
        if self.listener is not None:
            self.listener.notify_op_replaced(op, values)
        for r, v in zip(op.results, values):
            self.replace_all_uses_with(r, v)

    def replace_op(self, op: Operation, new: Sequence[Value] | Operation) -> None:
        """Replace the results of `op` by `new` (values, or the results of an op) and erase it."""
        values = new.results if isinstance(new, Operation) else tuple(new)
        self.replace_all_op_uses_with(op, values)
        self.erase_op(op)

    # Erasure ------------------------------------------------------------------------------
    def erase_op(self, op: Operation) -> None:
        """Erase `op`, whose results must be unused. Nested ops are reported erased first (users
        before definitions), then `op` itself, each while it still holds its operands."""
        for r in op.results:
            if r.uses and not all(op.is_ancestor(u.owner) for u in r.uses):
                users = ", ".join(sorted({u.owner.name for u in r.uses}))
                raise IRError(f"cannot erase '{op.name}': result #{r.index} is still used by {users}")
        listener = self.listener
        if listener is None:
            op.detach()
            op.drop_all_references()
            return
        self._erase_tree(op, listener)
        op.detach()

    def _erase_tree(self, op: Operation, listener: RewriteListener) -> None:
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                nested = block._last
                while nested is not None:
                    prev = nested._prev
                    self._erase_tree(nested, listener)
                    nested.detach()
                    nested = prev
                listener.notify_block_erased(block)
        listener.notify_op_erased(op)
        op.drop_all_references()

    def erase_block(self, block: Block) -> None:
        """Erase `block` and its ops; no terminator may still branch to it."""
        if block._uses:
            raise IRError("cannot erase a block that is still a successor")
        listener = self.listener
        nested = block._last
        while nested is not None:
            prev = nested._prev
            if listener is not None:
                self._erase_tree(nested, listener)
            else:
                nested.drop_all_references()
            nested.detach()
            nested = prev
        if listener is not None:
            listener.notify_block_erased(block)
        block.erase()

    # In-place modification ----------------------------------------------------------------
    def start_op_modification(self, op: Operation) -> None:
        """Begin changing `op` in place; pair with `finalize_op_modification`."""

    def finalize_op_modification(self, op: Operation) -> None:
        """Report that `op` was changed in place."""
        if self.listener is not None:
            self.listener.notify_op_modified(op)

    def modify_op_in_place(self, op: Operation, callback: Callable[[], Any]) -> None:
        """Run `callback` (which changes `op`) and report the change."""
        self.start_op_modification(op)
        callback()
        self.finalize_op_modification(op)

    @contextmanager
    def modifying(self, op: Operation) -> Iterator[Operation]:
        """`with rewriter.modifying(op): op.set_operand(...)`: report the change on exit."""
        self.start_op_modification(op)
        yield op
        self.finalize_op_modification(op)

    # Moving -------------------------------------------------------------------------------
    def move_op_before(self, op: Operation, anchor: Operation) -> None:
        block = anchor.containing_block()
        op.detach()
        block.insert_before(op, anchor)
        if self.listener is not None:
            self.listener.notify_op_inserted(op)

    def move_op_after(self, op: Operation, anchor: Operation) -> None:
        block = anchor.containing_block()
        op.detach()
        block.insert_after(op, anchor)
        if self.listener is not None:
            self.listener.notify_op_inserted(op)

    def inline_block_before(self, source: Block, dest: Block, anchor: Operation | None = None,
                            arg_values: Sequence[Value] = ()) -> None:
        """Move the ops of `source` into `dest` before `anchor` (at the end when None), replacing
        the arguments of `source` by `arg_values`, then erase `source`."""
        if len(arg_values) != len(source.args):
            raise IRError(f"block has {len(source.args)} arguments, inlined with {len(arg_values)} values")
        if source._uses:
            raise IRError("cannot inline a block that is still a successor")
        for arg, v in zip(source.args, arg_values):
            self.replace_all_uses_with(arg, v)
        listener = self.listener
        op = source._first
        while op is not None:
            nxt = op._next
            op.detach()
            dest.insert_before(op, anchor)
            if listener is not None:
                listener.notify_op_inserted(op)
            op = nxt
        if source.parent is not None:
            self.erase_block(source)

    def merge_blocks(self, source: Block, dest: Block, arg_values: Sequence[Value] = ()) -> None:
        """Append the ops of `source` to `dest` and erase `source`."""
        self.inline_block_before(source, dest, None, arg_values)

    def inline_region_before(self, region: Region, parent: Region, before: Block | None = None) -> None:
        """Move every block of `region` into `parent`, before `before` (at the end when None)."""
        index = len(parent.blocks) if before is None else parent.blocks.index(before)
        blocks = list(region.blocks)
        region.blocks = []
        for block in blocks:
            block.parent = None
            parent.insert_block(index, block)
            index += 1
            if self.listener is not None:
                self.listener.notify_block_inserted(block)
                for op in block.ops:
                    for nested in op.walk():
                        self.listener.notify_op_inserted(nested)

    # Diagnostics --------------------------------------------------------------------------
    def notify_match_failure(self, op: Operation, reason: str = "") -> bool:
        """Report why a pattern did not apply; returns False so patterns can `return` it."""
        if self.listener is not None:
            self.listener.notify_match_failure(op, reason)
        return False


__all__ = ["PatternRewriter"]
