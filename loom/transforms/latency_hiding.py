"""schedule-latency-hiding: split every `stablehlo.collective_permute` into
`comm.collective_permute_start` / `comm.collective_permute_done` and spread the pair apart, so the
transfer runs while the ops between them compute (XLA's async collective-permute with its
latency-hiding scheduler).

In the permute's block, the start goes as early as its operand allows: right after the op that
defines the operand (or the op of this block that holds that definition), or at the top of the
block when the operand comes from outside it (a block argument, a value of an enclosing region);
but never above a synchronous collective (or an op holding one) that came before the permute, which
would wait for the links the transfer occupies and so expose it; behind the starts already placed
there, so starts keep their program order. The done goes right before the first op of the block
that uses the result (directly or inside its regions), or before the terminator when nothing uses
it. Everything else keeps its order.

With `all-gathers=true`, each single-operand `stablehlo.all_gather` is split the same way into
`comm.all_gather_start` / `comm.all_gather_done`, its start hoisted over independent compute only:
never above an op that is or holds a collective or a transfer's start, so a decomposed loop's
transfers keep the links to themselves (off by default: an all-gather in flight across a loop
would share its links, which decompose-collective-matmul's cost model does not price).

On a loop from `decompose-collective-matmul` this puts each step's partial dot between the start
and the done: in the all-gather loop the permuted shard is only returned to the next iteration,
in the reduce-scatter loop the received accumulator is only needed by the add after the dot. The
pass changes no value: every partition issues its transfers in one order, the same on all.
"""

from __future__ import annotations

from collections.abc import Callable

from loom.dialects.comm import AllGatherDoneOp, AllGatherStartOp, CollectivePermuteDoneOp, CollectivePermuteStartOp
from loom.dialects.stablehlo.collectives import AllGatherOp, CollectivePermuteOp
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Block, Operation, Value
from loom.rewrite.passes import Option, Pass, register_pass

_STARTS = (CollectivePermuteStartOp, AllGatherStartOp)


def _in_block(op: Operation, block: Block) -> Operation | None:
    """The op of `block` that is `op` or holds it in its regions (None: `op` is outside `block`)."""
    while op is not None and op.parent is not block:
        op = op.parent_op
    return op


_SYNC_COLLECTIVES = {f"stablehlo.{k}" for k in ("all_gather", "reduce_scatter", "all_reduce", "all_to_all",
                                                  "collective_permute", "collective_broadcast")}


def _waits_for_links(op: Operation) -> bool:
    """Whether `op` is (or holds) a synchronous collective: one that would wait for the links a
    transfer started before it occupies."""
    nested = (o for r in op.regions for top in r.ops for o in top.walk())
    return op.name in _SYNC_COLLECTIVES or any(o.name in _SYNC_COLLECTIVES for o in nested)


def _earliest(operand: Value, block: Block, before: Operation,
              barrier: Callable[[Operation], bool] = _waits_for_links) -> Operation | None:
    """The op after which a start of `operand` may go in `block`, to run before `before` (None: at
    the block's top): after its operand's definition and after every `barrier` op between the two
    (by default the synchronous collectives: a transfer issued ahead of one would delay it, and
    hide behind nothing)."""
    owner = operand.owner_op
    defined = _in_block(owner, block) if owner is not None else None
    op = before.prev_op
    while op is not None and op is not defined:
        if barrier(op):
            return op
        op = op.prev_op
    return defined


def _uses_links(op: Operation) -> bool:
    """Whether `op` is (or holds) a collective or the start of a transfer."""
    nested = (o for r in op.regions for top in r.ops for o in top.walk())
    return any(o.name in _SYNC_COLLECTIVES or isinstance(o, _STARTS) for o in (op, *nested))


def _place(start: Operation, done: Operation, after: Operation | None) -> None:
    """Move `start` right after `after` (the block's top for None), behind the starts already
    there, and `done` right before the first op of the block that uses its result (the
    terminator when none does)."""
    block = start.parent
    anchor = after.next_op if after is not None else block.first_op
    while anchor is not None and anchor is not start and isinstance(anchor, _STARTS):
        anchor = anchor.next_op  # behind the starts already hoisted here: program order
    if anchor is not start:
        start.move_before(anchor)
    users = [u for u in (_in_block(use.owner, block) for use in done.results[0].uses) if u is not None]
    target = users[0] if users else block.terminator
    for u in users[1:]:
        if u.is_before_in_block(target):
            target = u
    if target is not None and target is not done:
        done.move_before(target)


def split_permute(permute: Operation) -> tuple[Operation, Operation]:
    """Replace one `stablehlo.collective_permute` by a start placed as early as its operand allows
    and a done right before the first use of its result; return (start, done)."""
    after = _earliest(permute.operands[0], permute.parent, permute)
    b = Builder(InsertionPoint.before(permute), permute.location)
    start = CollectivePermuteStartOp.build(b, permute.operands[0], permute.pairs,
                                           permute.properties.get("channel_handle"))
    done = CollectivePermuteDoneOp.build(b, start.results[0])
    permute.results[0].replace_all_uses_with(done.results[0])
    permute.erase()
    _place(start, done, after)
    return start, done


def split_all_gather(gather: Operation) -> tuple[Operation, Operation]:
    """Replace one single-operand `stablehlo.all_gather` by a start placed as early as its operand
    allows but below every op before it that is or holds a collective or a transfer's start (so
    each loop of transfers keeps its links to itself), and a done right before the first use of
    its result; return (start, done)."""
    after = _earliest(gather.operands[0], gather.parent, gather, _uses_links)
    b = Builder(InsertionPoint.before(gather), gather.location)
    start = AllGatherStartOp.build(b, gather)
    done = AllGatherDoneOp.build(b, start.results[0])
    gather.results[0].replace_all_uses_with(done.results[0])
    gather.erase()
    _place(start, done, after)
    return start, done


@register_pass
class ScheduleLatencyHidingPass(Pass):
    """Split each collective_permute into an asynchronous start / done pair spread as far apart
    as the data allows (see the module's doc)."""

    name = "schedule-latency-hiding"
    summary = "Issue collective permutes (and all-gathers) early and wait for them late, so they overlap computation"
    all_gathers = Option(bool, False, "also split each single-operand all_gather into comm.all_gather_start / done")

    def run(self, op: Operation) -> None:
        permutes = [p for p in op.walk() if isinstance(p, CollectivePermuteOp)]
        for p in permutes:
            split_permute(p)
        gathers = [g for g in op.walk() if isinstance(g, AllGatherOp) and len(g.operands) == 1] \
            if self.all_gathers else []
        for g in gathers:
            split_all_gather(g)
        if not permutes and not gathers:
            self.mark_all_analyses_preserved()


__all__ = ["ScheduleLatencyHidingPass", "split_all_gather", "split_permute"]
