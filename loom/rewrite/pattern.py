"""Rewrite patterns: a match-and-rewrite rule rooted at an op name, a trait, or any op."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom.ir.core import Operation
    from loom.rewrite.rewriter import PatternRewriter


class RewritePattern:
    """A local rewrite: `match_and_rewrite(op, rewriter)` returns True if it changed the IR, which
    it must do only through `rewriter`.

    `root` is the op name the pattern applies to, a Trait class (every registered op with that
    trait), or None for any op. Patterns with a higher `benefit` are tried first; ties keep the
    order in which patterns were given. Subclasses set `root` and `benefit` as class attributes or
    pass them to `__init__`."""

    root: str | type | None = None
    benefit: int = 1

    def __init__(self, root: str | type | None = ..., benefit: int | None = None,  # type: ignore[assignment]
                 debug_name: str | None = None) -> None:
        if root is not ...:
            self.root = root
        if benefit is not None:
            self.benefit = benefit
        if self.benefit < 0:
            raise ValueError("pattern benefit must be non-negative")
        self.debug_name = debug_name or type(self).__name__

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        raise NotImplementedError(f"{type(self).__name__} does not define match_and_rewrite")

    def __repr__(self) -> str:
        return f"<{self.debug_name} root={self.root!r} benefit={self.benefit}>"


class FunctionPattern(RewritePattern):
    """A pattern made from a plain function `fn(op, rewriter) -> bool` (see `pattern`)."""

    def __init__(self, fn: Callable[[Operation, PatternRewriter], bool], root: str | type | None = None,
                 benefit: int = 1) -> None:
        super().__init__(root, benefit, fn.__name__)
        self.fn = fn

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        return bool(self.fn(op, rewriter))


def pattern(root: str | type | None = None, benefit: int = 1) -> Callable[[Callable], FunctionPattern]:
    """Decorator: `@pattern("arith.addi")` turns `def f(op, rewriter) -> bool` into a pattern."""

    def wrap(fn: Callable[[Operation, PatternRewriter], bool]) -> FunctionPattern:
        return FunctionPattern(fn, root, benefit)

    return wrap


__all__ = ["FunctionPattern", "RewritePattern", "pattern"]
