"""Block dominance within a region: the dominator tree CSE walks."""

from __future__ import annotations

from loom.ir.core import Block, Region


class DominatorTree:
    """Immediate dominators and dominator-tree children of the blocks reachable from the entry of
    `region` (Cooper, Harvey and Kennedy's iterative algorithm over reverse post-order)."""

    def __init__(self, region: Region) -> None:
        entry = region.blocks[0]
        order: list[Block] = []
        seen = {entry}
        stack = [(entry, iter(entry.successors))]
        while stack:
            block, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                order.append(block)
                stack.pop()
            elif nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, iter(nxt.successors)))
        rpo = order[::-1]
        index = {b: i for i, b in enumerate(rpo)}
        preds: dict[Block, list[Block]] = {b: [] for b in rpo}
        for b in rpo:
            for s in b.successors:
                preds[s].append(b)
        idom: dict[Block, Block] = {entry: entry}
        changed = True
        while changed:
            changed = False
            for b in rpo[1:]:
                new = None
                for p in preds[b]:
                    if p in idom:
                        new = p if new is None else _intersect(p, new, idom, index)
                if new is not None and idom.get(b) is not new:
                    idom[b] = new
                    changed = True
        self.entry = entry
        self.idom = idom
        self.children: dict[Block, list[Block]] = {b: [] for b in rpo}
        for b in rpo[1:]:
            self.children[idom[b]].append(b)

    def is_reachable(self, block: Block) -> bool:
        return block in self.idom

    def dominates(self, a: Block, b: Block) -> bool:
        """True if every path from the entry to `b` goes through `a`."""
        idom = self.idom
        while True:
            if a is b:
                return True
            parent = idom.get(b)
            if parent is None or parent is b:
                return False
            b = parent


def _intersect(a: Block, b: Block, idom: dict[Block, Block], index: dict[Block, int]) -> Block:
    while a is not b:
        while index[a] > index[b]:
            a = idom[a]
        while index[b] > index[a]:
            b = idom[b]
    return a


__all__ = ["DominatorTree"]
