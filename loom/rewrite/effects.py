"""Side-effect queries the rewriters share: which ops may be removed when unused.

loom has one effect trait, `Pure`. An op is effect free when it is registered, declares `Pure`,
and every op nested in its regions is effect free too. Unregistered ops may do anything, as in
MLIR, so they are never removed or merged.
"""

from __future__ import annotations

from loom.ir.core import Operation
from loom.ir.opdef import Pure, Symbol, Terminator


def is_pure(op: Operation) -> bool:
    """True if `op` and everything nested in it is registered and `Pure`."""
    d = type(op).definition
    if d is None or Pure not in d.trait_set:
        return False
    if not op.regions:
        return True
    stack = [op]
    while stack:
        for region in stack.pop().regions:
            for block in region.blocks:
                nested = block._first
                while nested is not None:
                    nd = type(nested).definition
                    if nd is None or Pure not in nd.trait_set:
                        return False
                    if nested.regions:
                        stack.append(nested)
                    nested = nested._next
    return True


def would_op_be_trivially_dead(op: Operation) -> bool:
    """True if `op` could be erased were its results unused: effect free, not a terminator and
    not a symbol (MLIR's `wouldOpBeTriviallyDead`)."""
    d = type(op).definition
    if d is None:
        return False
    traits = d.trait_set
    if Terminator in traits or Symbol in traits:
        return False
    return is_pure(op)


def is_op_trivially_dead(op: Operation) -> bool:
    """True if `op` has no used results and no side effects, so erasing it changes nothing."""
    for r in op.results:
        if r.uses:
            return False
    return would_op_be_trivially_dead(op)


__all__ = ["is_op_trivially_dead", "is_pure", "would_op_be_trivially_dead"]
