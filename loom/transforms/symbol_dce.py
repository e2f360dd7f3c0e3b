"""symbol-dce: erase private symbols nothing references (MLIR's SymbolDCE)."""

from __future__ import annotations

from loom.ir.core import Operation
from loom.rewrite.passes import Pass, register_pass
from loom.transforms.symbol_utils import (
    SymbolTableCollection,
    can_discard_on_use_empty,
    is_private,
    is_symbol,
    is_symbol_table,
    symbol_uses,
)


@register_pass
class SymbolDCEPass(Pass):
    """Eliminate dead symbols: a symbol is live if it cannot be discarded (public or nested
    visibility) or a live op references it, transitively; the others are erased. Runs on a
    symbol table op."""

    name = "symbol-dce"
    summary = "Eliminate dead symbols"

    def run(self, op: Operation) -> None:
        if not is_symbol_table(op):
            raise self.fail(op, "was scheduled to run under SymbolDCE, but does not define a symbol table")
        hidden = True
        if op.parent is not None and is_symbol(op):
            hidden = is_private(op)
        live: set[Operation] = set()
        tables = SymbolTableCollection()
        self._compute_liveness(op, tables, hidden, live)
        erased = False
        for nested_table in list(op.walk_post_order()):
            if not is_symbol_table(nested_table) or not nested_table.regions:
                continue
            for block in nested_table.regions[0].blocks:
                for child in list(block.ops):
                    if is_symbol(child) and child not in live:
                        child.erase()
                        erased = True
        if not erased:
            self.mark_all_analyses_preserved()

    def _compute_liveness(self, table_op: Operation, tables: SymbolTableCollection, hidden: bool,
                          live: set[Operation]) -> None:
        worklist: list[Operation] = []
        for block in table_op.regions[0].blocks if table_op.regions else ():
            for child in block.ops:
                if not is_symbol(child):
                    worklist.append(child)
                    continue
                discardable = (hidden or is_private(child)) and can_discard_on_use_empty(child)
                if not discardable and child not in live:
                    live.add(child)
                    worklist.append(child)
        while worklist:
            op = worklist.pop()
            if is_symbol_table(op):
                nested_hidden = hidden or not is_symbol(op) or is_private(op)
                self._compute_liveness(op, tables, nested_hidden, live)
            else:
                # Symbol tables nested in non-table ops are scanned as if they were at top level.
                for region in op.regions:
                    for block in region.blocks:
                        for nested in block.ops:
                            if nested.regions:
                                worklist.append(nested)
            parent = op.parent_op
            if parent is None or not is_symbol_table(parent):
                continue
            uses = symbol_uses(op)
            if uses is None:
                raise self.fail(op, "operation contains potentially unknown symbol table, meaning that we can't "
                                    "reliable compute symbol uses")
            for ref in uses:
                resolved = tables.lookup_in(parent, ref)
                if resolved is None:
                    continue
                for sym in resolved:
                    if sym not in live:
                        live.add(sym)
                        worklist.append(sym)


__all__ = ["SymbolDCEPass"]
