"""The listener interface: how a rewriter tells a driver what it changed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom.ir.core import Block, Operation, Value


class RewriteListener:
    """Receives a notification for every change a `PatternRewriter` makes, so that a driver
    (its worklist, its constant table) stays in step with the IR. All hooks default to no-ops."""

    def notify_op_inserted(self, op: Operation) -> None:
        """`op` was inserted into a block (created, cloned or moved)."""

    def notify_op_modified(self, op: Operation) -> None:
        """`op` was changed in place (operands, attributes, successors)."""

    def notify_op_replaced(self, op: Operation, values: Sequence[Value]) -> None:
        """The results of `op` are about to be replaced by `values`; `op` will be erased."""

    def notify_op_erased(self, op: Operation) -> None:
        """`op` is about to be erased; it is still in the IR and still holds its operands."""

    def notify_block_inserted(self, block: Block) -> None:
        """`block` was inserted into a region."""

    def notify_block_erased(self, block: Block) -> None:
        """`block` is about to be erased."""

    def notify_match_failure(self, op: Operation, reason: str) -> None:
        """A pattern failed to match `op`, for `reason` (debugging aid)."""


__all__ = ["RewriteListener"]
