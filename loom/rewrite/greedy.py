"""The greedy pattern driver: apply patterns and folders until nothing changes.

This follows MLIR's `GreedyPatternRewriteDriver` (the region driver behind
`applyPatternsGreedily`), so that loom's canonicalizer produces the same IR as MLIR's:

* each iteration starts from an empty worklist filled by a walk of every nested op (pre-order
  when `top_down`, else post-order with each op's ancestors); constant ops met on the way are
  deduplicated and hoisted to the start of the entry block of the nearest isolated region;
* then unreachable blocks are erased and the worklist is processed, last in first out: a
  trivially dead op is erased; otherwise the op is folded (constants are materialised before it
  by its dialect, then its results replaced), else patterns are tried by benefit;
* every change is reported through the rewriter, which puts the affected ops back on the
  worklist: inserted and modified ops, users of replaced values, and the defining ops of an
  erased op's operands when they are left with at most one other user;
* after the worklist is empty, regions are simplified (unreachable blocks, dead ops);
* iterations repeat while anything changed, up to `max_iterations`.

The worklist is a list plus an index map, so pushing, popping and removing are O(1) and a sweep is
O(ops).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from loom.ir.core import Operation, OpResult, Region, Value, paused_gc
from loom.rewrite.applicator import PatternApplicator
from loom.rewrite.effects import _REMOVABLE_CLASSES, regions_are_pure, removable_class
from loom.rewrite.folding import (
    _CONSTANT_CLASSES,
    _FOLDABLE_CLASSES,
    IN_PLACE,
    ConstantUniquer,
    constant_op_value,
    dialect_name,
    fold_op,
    foldable_class,
    is_constant_class,
    materialize_constant,
)
from loom.rewrite.listener import RewriteListener
from loom.rewrite.pattern import RewritePattern
from loom.rewrite.region_utils import erase_dead_ops, erase_unreachable_blocks
from loom.rewrite.rewriter import PatternRewriter

REGION_SIMPLIFY_LEVELS = ("disabled", "normal", "aggressive")


class GreedyRewriteConfig:
    """Settings of the greedy driver (MLIR's `GreedyRewriteConfig`).

    `max_iterations` / `max_num_rewrites`: -1 for no limit. `top_down`: initial worklist in
    pre-order (MLIR's default is bottom-up; the canonicalize pass asks for top-down).
    `region_simplify`: "disabled", "normal" or "aggressive" (aggressive block merging is not
    implemented and behaves as normal). `cse_between_iterations`: a function
    `(rewriter, region) -> bool` run after each iteration. `listener`: also told of every change."""

    def __init__(self, max_iterations: int = 10, max_num_rewrites: int = -1, top_down: bool = False,
                 fold: bool = True, cse_constants: bool = True, region_simplify: str = "normal",
                 listener: RewriteListener | None = None,
                 cse_between_iterations: Callable[[PatternRewriter, Region], bool] | None = None) -> None:
        if region_simplify not in REGION_SIMPLIFY_LEVELS:
            raise ValueError(f"region_simplify must be one of {', '.join(REGION_SIMPLIFY_LEVELS)}")
        self.max_iterations = max_iterations
        self.max_num_rewrites = max_num_rewrites
        self.top_down = top_down
        self.fold = fold
        self.cse_constants = cse_constants
        self.region_simplify = region_simplify
        self.listener = listener
        self.cse_between_iterations = cse_between_iterations


def apply_patterns_greedily(root_op: Operation, patterns: Iterable[RewritePattern] | PatternApplicator,
                            max_iterations: int = 10, fold: bool = True,
                            config: GreedyRewriteConfig | None = None) -> bool:
    """Rewrite the regions of `root_op` (not `root_op` itself) with `patterns` and op folders until
    a fixpoint. Returns True if the rewrite converged, False if it stopped at the iteration limit
    with changes still happening. `config`, when given, overrides `max_iterations` and `fold`."""
    return apply_patterns_greedily_and_report(root_op, patterns, max_iterations, fold, config)[0]


def apply_patterns_greedily_and_report(root_op: Operation, patterns: Iterable[RewritePattern] | PatternApplicator,
                                       max_iterations: int = 10, fold: bool = True,
                                       config: GreedyRewriteConfig | None = None) -> tuple[bool, bool]:
    """`apply_patterns_greedily`, returning (converged, changed): `changed` is False only if the
    IR was left exactly as it was (no op created, changed, moved or erased)."""
    if config is None:
        config = GreedyRewriteConfig(max_iterations=max_iterations, fold=fold)
    applicator = patterns if isinstance(patterns, PatternApplicator) else PatternApplicator(patterns)
    converged = True
    changed = False
    with paused_gc():
        for region in root_op.regions:
            driver = GreedyDriver(region, applicator, config)
            if not driver.simplify():
                converged = False
            changed |= driver.ir_changed
    return converged, changed


class GreedyDriver(RewriteListener):
    """Simplifies the ops of one region (its scope); see the module docstring."""

    def __init__(self, region: Region, applicator: PatternApplicator, config: GreedyRewriteConfig) -> None:
        self.region = region
        self.applicator = applicator
        self.config = config
        self.rewriter = PatternRewriter(self)
        self.forward = config.listener
        self.worklist: list[Operation | None] = []
        self.positions: dict[Operation, int] = {}
        self.num_rewrites = 0
        self.ir_changed = False  # anything at all changed (see apply_patterns_greedily_and_report)

    # Worklist ----------------------------------------------------------------------------
    def _push(self, op: Operation) -> None:
        positions = self.positions
        if op not in positions:
            positions[op] = len(self.worklist)
            self.worklist.append(op)

    def add_to_worklist(self, op: Operation) -> None:
        """Add `op` and its ancestors up to the driver's region (nothing if `op` is outside it)."""
        scope = self.region
        block = op.parent
        if block is not None and block.parent is scope:  # the common case: no ancestor to add
            positions = self.positions
            if op not in positions:
                positions[op] = len(self.worklist)
                self.worklist.append(op)
            return
        ancestors = []
        while True:
            ancestors.append(op)
            block = op.parent
            region = block.parent if block is not None else None
            if region is scope:
                positions = self.positions
                worklist = self.worklist
                for a in ancestors:
                    if a not in positions:
                        positions[a] = len(worklist)
                        worklist.append(a)
                return
            if region is None:
                return
            parent = region.parent
            if parent is None:
                return
            op = parent

    def remove_from_worklist(self, op: Operation) -> None:
        i = self.positions.pop(op, None)
        if i is not None:
            self.worklist[i] = None

    def _add_operands_to_worklist(self, op: Operation) -> None:
        """Revisit the definitions of `op`'s operands that will have at most one other user."""
        for u in op._operands:
            v = u.value
            if type(v) is not OpResult:
                continue
            other = None
            more = False
            for use in v.uses:
                user = use.owner
                if user is op or user is other:
                    continue
                if other is None:
                    other = user
                    continue
                more = True
                break
            if not more:
                self.add_to_worklist(v.op)

    # Listener ----------------------------------------------------------------------------
    def notify_op_inserted(self, op: Operation) -> None:
        self.ir_changed = True
        if self.forward is not None:
            self.forward.notify_op_inserted(op)
        self.add_to_worklist(op)

    def notify_op_modified(self, op: Operation) -> None:
        self.ir_changed = True
        if self.forward is not None:
            self.forward.notify_op_modified(op)
        self.add_to_worklist(op)

    def notify_op_replaced(self, op: Operation, values) -> None:
        if self.forward is not None:
            self.forward.notify_op_replaced(op, values)

    def notify_op_erased(self, op: Operation) -> None:
        self.ir_changed = True
        if self.forward is not None:
            self.forward.notify_op_erased(op)
        self._add_operands_to_worklist(op)
        self.remove_from_worklist(op)

    def notify_block_inserted(self, block) -> None:
        self.ir_changed = True
        if self.forward is not None:
            self.forward.notify_block_inserted(block)

    def notify_block_erased(self, block) -> None:
        self.ir_changed = True
        if self.forward is not None:
            self.forward.notify_block_erased(block)

    def notify_match_failure(self, op: Operation, reason: str) -> None:
        if self.forward is not None:
            self.forward.notify_match_failure(op, reason)

    # Driver ------------------------------------------------------------------------------
    def simplify(self) -> bool:
        """Run iterations until nothing changes; True if the last one changed nothing."""
        config = self.config
        region = self.region
        rewriter = self.rewriter
        iteration = 0
        changed = False
        while True:
            iteration += 1
            if config.max_iterations != -1 and iteration > config.max_iterations:
                break
            self.worklist = []
            self.positions = {}
            uniquer = ConstantUniquer(rewriter) if config.cse_constants else None
            self._populate(uniquer)
            if uniquer is not None and uniquer.moved:
                self.ir_changed = True
            changed = erase_unreachable_blocks(rewriter, [region])
            changed |= self.process_worklist()
            if config.region_simplify != "disabled":
                changed |= erase_unreachable_blocks(rewriter, [region])
                changed |= erase_dead_ops(rewriter, [region])
            if config.cse_between_iterations is not None:
                changed |= bool(config.cse_between_iterations(rewriter, region))
            if not changed:
                break
            self.ir_changed = True
        return not changed

    def _populate(self, uniquer: ConstantUniquer | None) -> None:
        if self.config.top_down:
            self._walk_pre_order(self.region, uniquer)
            # Reverse so that popping from the end visits ops in walk order.
            self.worklist.reverse()
            self.positions = {op: i for i, op in enumerate(self.worklist) if op is not None}
        else:
            self._walk_post_order(self.region, uniquer)

    def _is_duplicate_constant(self, op: Operation, uniquer: ConstantUniquer | None) -> bool:
        """Record a constant op with the uniquer; True if it was a duplicate (and is now erased)."""
        if uniquer is None or not is_constant_class(type(op)):
            return False
        value = constant_op_value(op)
        return value is not None and not uniquer.insert_known_constant(op, value)

    def _walk_pre_order(self, region: Region, uniquer: ConstantUniquer | None) -> None:
        worklist = self.worklist
        positions = self.positions
        for block in list(region.blocks):
            op = block._first
            while op is not None:
                nxt = op._next
                cls = type(op)
                constant = _CONSTANT_CLASSES.get(cls)
                if constant is None:
                    constant = is_constant_class(cls)
                if constant and uniquer is not None:
                    if self._is_duplicate_constant(op, uniquer):
                        op = nxt
                        continue
                    # The uniquer may have hoisted it out of the driver's region.
                    self.add_to_worklist(op)
                elif op not in positions:
                    # Its ancestors up to the driver's region were met, and pushed, before it.
                    positions[op] = len(worklist)
                    worklist.append(op)
                if op.regions:
                    for r in op.regions:
                        self._walk_pre_order(r, uniquer)
                op = nxt

    def _walk_post_order(self, region: Region, uniquer: ConstantUniquer | None) -> None:
        # Ops of the driver's own region have no ancestor inside it: push them directly.
        top_level = region is self.region
        worklist = self.worklist
        positions = self.positions
        for block in list(region.blocks):
            op = block._first
            while op is not None:
                nxt = op._next
                if op.regions:
                    for r in op.regions:
                        self._walk_post_order(r, uniquer)
                cls = type(op)
                constant = _CONSTANT_CLASSES.get(cls)
                if constant is None:
                    constant = is_constant_class(cls)
                if constant and uniquer is not None:
                    if not self._is_duplicate_constant(op, uniquer):
                        self.add_to_worklist(op)  # it may have been hoisted out of the region
                elif not top_level:
                    self.add_to_worklist(op)
                elif op not in positions:
                    positions[op] = len(worklist)
                    worklist.append(op)
                op = nxt

    def process_worklist(self) -> bool:
        """Process ops until the worklist is empty or `max_num_rewrites` is reached."""
        config = self.config
        rewriter = self.rewriter
        applicator = self.applicator
        matchers_for = applicator.matchers_for
        worklist = self.worklist
        positions = self.positions
        max_rewrites = config.max_num_rewrites
        fold = config.fold
        changed = False
        num_rewrites = 0
        while True:
            while worklist and worklist[-1] is None:
                worklist.pop()
            if not worklist or (max_rewrites != -1 and num_rewrites >= max_rewrites):
                break
            op: Operation = worklist.pop()  # type: ignore[assignment]  # the erased entries (None) are popped above
            del positions[op]
            cls = type(op)

            # Trivially dead (effects.is_op_trivially_dead, inlined: this runs for every op).
            for r in op.results:
                if r.uses:
                    break
            else:
                removable = _REMOVABLE_CLASSES.get(cls)
                if removable is None:
                    removable = removable_class(cls)
                if removable and (not op.regions or regions_are_pure(op)):
                    rewriter.erase_op(op)
                    changed = True
                    continue

            foldable = _FOLDABLE_CLASSES.get(cls)
            if foldable is None:
                foldable = foldable_class(cls)
            if fold and foldable:
                results = fold_op(op)
                if results is IN_PLACE:
                    self.notify_op_modified(op)
                    changed = True
                    continue
                if results is not None and self._replace_with_fold_results(op, results):
                    changed = True
                    continue

            matchers = matchers_for(op)
            if matchers and applicator.apply_matchers(op, rewriter, matchers):
                changed = True
                num_rewrites += 1
        self.num_rewrites += num_rewrites
        return changed

    def _replace_with_fold_results(self, op: Operation, results: Sequence) -> bool:
        rewriter = self.rewriter
        for folded in results:
            if not isinstance(folded, Value):
                break
        else:  # folded to existing values only: nothing to materialise, no insertion point needed
            rewriter.replace_op(op, results)
            return True
        saved_point, saved_location = rewriter.insertion_point, rewriter._location
        try:
            rewriter.set_insertion_point_before(op)
            replacements: list[Value] = []
            created: list[Operation] = []
            dialect = dialect_name(op)
            for folded, result in zip(results, op.results):
                if isinstance(folded, Value):
                    replacements.append(folded)
                    continue
                constant = materialize_constant(rewriter, dialect, folded, result.type, op.location)
                if constant is None:
                    for c in reversed(created):
                        rewriter.erase_op(c)
                    return False
                created.append(constant)
                replacements.append(constant.results[0])
            rewriter.replace_op(op, replacements)
        finally:
            rewriter.insertion_point, rewriter._location = saved_point, saved_location
        return True


__all__ = ["GreedyDriver", "GreedyRewriteConfig", "apply_patterns_greedily", "apply_patterns_greedily_and_report"]
