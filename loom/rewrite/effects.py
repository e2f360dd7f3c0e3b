"""Side-effect queries the rewriters share: which ops may be removed when unused.

loom has one effect trait, `Pure`. An op is effect free when it is registered, declares `Pure`,
and every op nested in its regions is effect free too. Unregistered ops may do anything, as in
MLIR, so they are never removed or merged.

The answers that depend only on an op's class (registered, `Pure`, terminator, symbol) are
computed once per class: the drivers ask them for every op they visit.
"""

from __future__ import annotations

from loom.ir.core import Operation
from loom.ir.opdef import Pure, Symbol, Terminator

# Op class -> True if its ops are `Pure` (their own effects, not their regions').
_PURE_CLASSES: dict[type[Operation], bool] = {}
# Op class -> True if an unused op of it may be erased when its regions are pure: registered,
# `Pure`, neither a terminator nor a symbol.
_REMOVABLE_CLASSES: dict[type[Operation], bool] = {}


def pure_class(cls: type[Operation]) -> bool:
    """True if ops of class `cls` are registered and declare `Pure`."""
    found = _PURE_CLASSES.get(cls)
    if found is None:
        d = cls.definition
        found = _PURE_CLASSES[cls] = d is not None and Pure in d.trait_set
    return found


def removable_class(cls: type[Operation]) -> bool:
    """True if an unused op of class `cls` whose regions are pure may be erased."""
    found = _REMOVABLE_CLASSES.get(cls)
    if found is None:
        d = cls.definition
        found = _REMOVABLE_CLASSES[cls] = (d is not None and Pure in d.trait_set
                                           and Terminator not in d.trait_set and Symbol not in d.trait_set)
    return found


def regions_are_pure(op: Operation) -> bool:
    """True if every op nested in the regions of `op` is registered and `Pure`."""
    stack = [op]
    while stack:
        for region in stack.pop().regions:
            for block in region.blocks:
                nested = block._first
                while nested is not None:
                    pure = _PURE_CLASSES.get(type(nested))
                    if pure is None:
                        pure = pure_class(type(nested))
                    if not pure:
                        return False
                    if nested.regions:
                        stack.append(nested)
                    nested = nested._next
    return True


def is_pure(op: Operation) -> bool:
    """True if `op` and everything nested in it is registered and `Pure`."""
    if not pure_class(type(op)):
        return False
    return not op.regions or regions_are_pure(op)


def would_op_be_trivially_dead(op: Operation) -> bool:
    """True if `op` could be erased were its results unused: effect free, not a terminator and
    not a symbol (MLIR's `wouldOpBeTriviallyDead`)."""
    if not removable_class(type(op)):
        return False
    return not op.regions or regions_are_pure(op)


def is_op_trivially_dead(op: Operation) -> bool:
    """True if `op` has no used results and no side effects, so erasing it changes nothing."""
    for r in op.results:
        if r.uses:
            return False
    cls = type(op)
    removable = _REMOVABLE_CLASSES.get(cls)
    if removable is None:
        removable = removable_class(cls)
    return removable and (not op.regions or regions_are_pure(op))


__all__ = ["is_op_trivially_dead", "is_pure", "pure_class", "regions_are_pure", "removable_class",
           "would_op_be_trivially_dead"]
