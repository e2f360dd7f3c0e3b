"""The pattern applicator: which patterns to try on an op, in which order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from loom.rewrite.pattern import RewritePattern

if TYPE_CHECKING:
    from loom.ir.core import Operation
    from loom.rewrite.rewriter import PatternRewriter


class PatternApplicator:
    """Tries patterns on an op highest benefit first (MLIR's `PatternApplicator` with its default
    cost model): the op's own patterns (by name or trait, in the order given) and any-op patterns
    are merged by benefit, the op's own first on ties. The list per op name is computed once."""

    def __init__(self, patterns: Iterable[RewritePattern]) -> None:
        self.patterns = list(patterns)
        for p in self.patterns:
            if not isinstance(p, RewritePattern):
                raise TypeError(f"not a RewritePattern: {p!r}")
        self._any = [p for p in self.patterns if p.root is None]
        self._cache: dict[str, list[RewritePattern]] = {}

    def patterns_for(self, op: Operation) -> list[RewritePattern]:
        name = op.name
        found = self._cache.get(name)
        if found is not None:
            return found
        d = type(op).definition
        traits = d.trait_set if d is not None else frozenset()
        own = [p for p in self.patterns if p.root is not None and
               (p.root == name if isinstance(p.root, str) else p.root in traits)]
        merged = sorted(own + self._any, key=lambda p: -p.benefit)
        self._cache[name] = merged
        return merged

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        """Apply the first pattern that matches; True if one did. Each attempt starts with the
        rewriter's insertion point just before `op` and its location set to `op`'s."""
        for p in self.patterns_for(op):
            rewriter.set_insertion_point_before(op)
            rewriter.location = op.location
            if p.match_and_rewrite(op, rewriter):
                return True
        return False


__all__ = ["PatternApplicator"]
