"""dce: erase unreachable blocks and unused effect-free ops, to a fixpoint."""

from __future__ import annotations

from loom.ir.core import Operation
from loom.rewrite.passes import Pass, register_pass
from loom.rewrite.region_utils import erase_dead_ops, erase_unreachable_blocks
from loom.rewrite.rewriter import PatternRewriter


def eliminate_dead_code(op: Operation) -> bool:
    """Erase, in the regions of `op` and everything nested, the blocks no path from their entry
    reaches, then every op without side effects whose results are unused (erasing an op may make
    its operands' definitions dead in turn). True if anything was erased."""
    rewriter = PatternRewriter()
    changed = erase_unreachable_blocks(rewriter, op.regions)
    changed |= erase_dead_ops(rewriter, op.regions)
    return changed


@register_pass
class DCEPass(Pass):
    """Dead code elimination: unreachable blocks and unused ops without side effects (only
    registered `Pure` ops, whose regions are pure too; terminators and symbols stay)."""

    name = "dce"
    summary = "Erase unreachable blocks and unused ops without side effects"

    def run(self, op: Operation) -> None:
        if not eliminate_dead_code(op):
            self.mark_all_analyses_preserved()


__all__ = ["DCEPass", "eliminate_dead_code"]
