"""Region simplifications shared by the greedy driver and the DCE passes."""

from __future__ import annotations

from collections.abc import Iterable

from loom.ir.core import Block, Operation, OpResult, Region
from loom.rewrite.effects import _REMOVABLE_CLASSES, regions_are_pure, removable_class
from loom.rewrite.rewriter import PatternRewriter


def reachable_blocks(region: Region) -> set[Block]:
    """Blocks reachable from the entry block of `region` through successors."""
    entry = region.blocks[0]
    seen = {entry}
    stack = [entry]
    while stack:
        block = stack.pop()
        last = block._last
        if last is None:
            continue
        for s in last._successors:
            b = s.block
            if b not in seen:
                seen.add(b)
                stack.append(b)
    return seen


def erase_unreachable_blocks(rewriter: PatternRewriter, regions: Iterable[Region]) -> bool:
    """Erase blocks no path from their region's entry reaches, in `regions` and every region
    nested in them (MLIR's `eraseUnreachableBlocks`). True if any block was erased."""
    erased = False
    worklist = list(regions)
    while worklist:
        region = worklist.pop()
        blocks = region.blocks
        if not blocks:
            continue
        if len(blocks) == 1:
            _push_nested(blocks[0], worklist)
            continue
        reachable = reachable_blocks(region)
        dead = [b for b in blocks if b not in reachable]
        if dead:
            # Dead terminators may branch to each other: cut those edges, then erase (each op is
            # reported while it still holds its operands, as MLIR does).
            for block in dead:
                _drop_successors(block._last)
            for block in dead:
                rewriter.erase_block(block)
            erased = True
        for block in region.blocks:
            _push_nested(block, worklist)
    return erased


def _drop_successors(op: Operation | None) -> None:
    if op is None or not op._successors:
        return
    for s in op._successors:
        del s.block._uses[s]
    op._successors = ()


def _push_nested(block: Block, worklist: list[Region]) -> None:
    op = block._first
    while op is not None:
        if op.regions:
            worklist.extend(op.regions)
        op = op._next


def erase_dead_ops(rewriter: PatternRewriter, regions: Iterable[Region]) -> bool:
    """Erase ops whose results are unused and that have no side effects, to a fixpoint: users
    are visited before definitions, and the definitions of an erased op's operands are looked at
    again. True if anything was erased. (A simple form of MLIR's `runRegionDCE`, without block
    argument removal, which needs branch op knowledge loom does not have.)"""
    erased = False
    worklist: list[Operation] = []
    for region in regions:
        for block in region.blocks:
            op = block._first
            while op is not None:
                worklist.append(op)
                op = op._next
    # Pop from the end: later ops (users) first.
    pending = set(worklist)
    while worklist:
        op = worklist.pop()
        pending.discard(op)
        if op.parent is None:
            continue
        # Trivially dead (effects.is_op_trivially_dead, inlined: this runs for every op).
        for r in op.results:
            if r.uses:
                break
        else:
            cls = type(op)
            removable = _REMOVABLE_CLASSES.get(cls)
            if removable is None:
                removable = removable_class(cls)
            if removable and (not op.regions or regions_are_pure(op)):
                defs = [u.value.op for u in op._operands if type(u.value) is OpResult]
                rewriter.erase_op(op)
                erased = True
                for d in defs:
                    if d.parent is not None and d not in pending:
                        pending.add(d)
                        worklist.append(d)
                continue
        if not op.regions:
            continue
        for region in op.regions:
            for block in region.blocks:
                nested = block._first
                while nested is not None:
                    if nested not in pending:
                        pending.add(nested)
                        worklist.append(nested)
                    nested = nested._next
    return erased


__all__ = ["erase_dead_ops", "erase_unreachable_blocks", "reachable_blocks"]
