"""canonicalize: every registered op's folder and canonicalization patterns, applied by the
greedy driver (MLIR's Canonicalizer pass, with the same options)."""

from __future__ import annotations

from loom.ir.core import Operation
from loom.ir.opdef import DIALECTS
from loom.rewrite.applicator import PatternApplicator
from loom.rewrite.greedy import REGION_SIMPLIFY_LEVELS, GreedyRewriteConfig, apply_patterns_greedily_and_report
from loom.rewrite.passes import Option, Pass, register_pass
from loom.rewrite.pattern import RewritePattern


def canonicalization_patterns() -> list[RewritePattern]:
    """The canonicalization patterns of every registered dialect (a dialect may define a
    `canonicalization_patterns()` callable) and op (`cls.canonicalization_patterns()`), ops in
    name order, as MLIR collects them."""
    patterns: list[RewritePattern] = []
    for name in sorted(DIALECTS):
        hook = getattr(DIALECTS[name], "canonicalization_patterns", None)
        if callable(hook):
            patterns.extend(hook())
    ops = {}
    for dialect in DIALECTS.values():
        ops.update(dialect.ops)
    for name in sorted(ops):
        hook = getattr(ops[name], "canonicalization_patterns", None)
        if callable(hook):
            patterns.extend(hook())
    return patterns


@register_pass
class CanonicalizerPass(Pass):
    """Canonicalize operations: fold, apply canonicalization patterns, erase dead ops, dedupe and
    hoist constants, until a fixpoint or `max-iterations`."""

    name = "canonicalize"
    summary = "Canonicalize operations"

    cse_between_iterations = Option(bool, False, "Run CSE between greedy rewrite iterations")
    disable_patterns = Option(list, [], "Labels of patterns that should be filtered out during application")
    enable_patterns = Option(list, [], "Labels of patterns that should be used during application, all other "
                                       "patterns are filtered out")
    max_iterations = Option(int, 10, "Max. iterations between applying patterns / simplifying regions")
    max_num_rewrites = Option(int, -1, "Max. number of pattern rewrites within an iteration")
    region_simplify = Option(str, "normal", "Perform control flow optimizations to the region tree",
                             choices=REGION_SIMPLIFY_LEVELS,
                             aliases={"false": "disabled", "true": "normal", "0": "disabled", "1": "normal"})
    test_convergence = Option(bool, False, "Test only: Fail pass on non-convergence to detect cyclic pattern")
    top_down = Option(bool, True, "Seed the worklist in general top-down order")

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self._applicator: PatternApplicator | None = None
        self._registry_size = -1

    def applicator(self) -> PatternApplicator:
        """The frozen pattern set, rebuilt when new ops were registered since the last run."""
        size = sum(len(d.ops) for d in DIALECTS.values())
        if self._applicator is None or size != self._registry_size:
            patterns = canonicalization_patterns()
            enabled, disabled = set(self.enable_patterns), set(self.disable_patterns)
            if enabled:
                patterns = [p for p in patterns if p.debug_name in enabled]
            patterns = [p for p in patterns if p.debug_name not in disabled]
            self._applicator = PatternApplicator(patterns)
            self._registry_size = size
        return self._applicator

    def run(self, op: Operation) -> None:
        cse = None
        if self.cse_between_iterations:
            from loom.transforms.cse import eliminate_common_subexpressions

            def cse(rewriter, region):
                return eliminate_common_subexpressions(region, rewriter)
        config = GreedyRewriteConfig(max_iterations=self.max_iterations, max_num_rewrites=self.max_num_rewrites,
                                     top_down=self.top_down, region_simplify=self.region_simplify,
                                     cse_between_iterations=cse)
        converged, changed = apply_patterns_greedily_and_report(op, self.applicator(), config=config)
        self.converged = converged
        if not changed:
            self.mark_all_analyses_preserved()
        if self.test_convergence and not converged:
            raise self.fail(op, f"canonicalization did not converge within {self.max_iterations} iterations")


__all__ = ["CanonicalizerPass", "canonicalization_patterns"]
