"""The pattern applicator: which patterns to try on an op, in which order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

from loom.ir.builder import InsertionPoint
from loom.rewrite.pattern import FunctionPattern, RewritePattern

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
        self._matchers: dict[str, list] = {}

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

    def matchers_for(self, op: Operation) -> list:
        """The `match_and_rewrite` callables of `patterns_for(op)`, in order: for a plain
        `FunctionPattern` its function itself, which saves a call per attempt."""
        found = self._matchers.get(op.name)
        if found is None:
            found = []
            for p in self.patterns_for(op):
                if type(p).match_and_rewrite is FunctionPattern.match_and_rewrite:
                    found.append(cast(FunctionPattern, p).fn)
                else:
                    found.append(p.match_and_rewrite)
            self._matchers[op.name] = found
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        """Apply the first pattern that matches; True if one did. Each attempt starts with the
        rewriter's insertion point just before `op` and its location set to `op`'s."""
        matchers = self.matchers_for(op)
        return bool(matchers) and self.apply_matchers(op, rewriter, matchers)

    @staticmethod
    def apply_matchers(op: Operation, rewriter: PatternRewriter, matchers: list) -> bool:
        """`match_and_rewrite` with the callables `matchers_for(op)` returned."""
        block = op.parent
        assert block is not None, "patterns apply to ops in a block"
        location = op._location  # maybe still unresolved: the rewriter resolves it when asked
        for match in matchers:
            rewriter.insertion_point = InsertionPoint(block, op)
            rewriter.location = location
            if match(op, rewriter):
                return True
        return False


__all__ = ["PatternApplicator"]
