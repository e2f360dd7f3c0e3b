"""Folding: constant values of SSA values, op folders plus trait folders, and the constant
uniquer the greedy driver uses (MLIR's `OperationFolder`).

An op's `fold(operands)` receives the constant value of each operand (None where unknown) and
returns None (no fold), one Attribute (a constant) or Value (an existing value) per result, or
an in-place fold: an empty list, or, for a one-result op, its own result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from loom.ir.attributes import UNKNOWN_LOC, Attribute
from loom.ir.core import IRError, Operation, OpResult, Region, Value
from loom.ir.opdef import Commutative, ConstantLike, IsolatedFromAbove, OpBase

if TYPE_CHECKING:
    from loom.ir.core import Block
    from loom.rewrite.rewriter import PatternRewriter


# Op class -> True if it is registered and `ConstantLike` (asked for every operand folded).
_CONSTANT_CLASSES: dict[type[Operation], bool] = {}


def is_constant_class(cls: type[Operation]) -> bool:
    """True if ops of class `cls` are registered and `ConstantLike`."""
    found = _CONSTANT_CLASSES.get(cls)
    if found is None:
        d = cls.definition
        found = _CONSTANT_CLASSES[cls] = d is not None and ConstantLike in d.trait_set
    return found


def constant_op_value(op: Operation) -> Attribute | None:
    """The value of a `ConstantLike` op (what its folder returns, else its `value` attribute)."""
    cls = type(op)
    constant = _CONSTANT_CLASSES.get(cls)
    if constant is None:
        constant = is_constant_class(cls)
    if not constant:
        return None
    folded = cast(OpBase, op).fold([None] * len(op._operands))
    if folded:
        v = folded[0]
        if isinstance(v, Attribute):
            return v
    v = op.get_attr("value")
    return v if isinstance(v, Attribute) else None


def constant_value(value: Value) -> Attribute | None:
    """The constant `value` holds, if it is the result of a `ConstantLike` op (MLIR's `m_Constant`)."""
    if type(value) is not OpResult:
        return None
    return constant_op_value(value.op)


# Op class -> True if `fold_op` may do anything for its ops: registered, not `ConstantLike`, and
# with a folder of its own or the `Commutative` trait folder. Ops of other classes are not folded.
_FOLDABLE_CLASSES: dict[type[Operation], bool] = {}


def foldable_class(cls: type[Operation]) -> bool:
    """True if the greedy driver should try to fold ops of class `cls`."""
    found = _FOLDABLE_CLASSES.get(cls)
    if found is None:
        from loom.ir.opdef import OpBase
        d = cls.definition
        found = (d is not None and ConstantLike not in d.trait_set
                 and (getattr(cls, "fold", None) is not OpBase.fold or Commutative in d.trait_set))
        _FOLDABLE_CLASSES[cls] = found
    return found


IN_PLACE: tuple = ()
"""What `fold_op` returns for a fold that only updated the op in place (compare with `is`)."""


def fold_op(op: Operation) -> list[Attribute | Value] | tuple | None:
    """Run the op's folder, then its traits' folders as MLIR's fold hook does: a commutative op
    whose own fold failed (or was in place) gets its constant operands moved to the end.

    Returns None if nothing folded, `IN_PLACE` if the op was updated in place, else one
    Attribute or Value per result."""
    d = type(op).definition
    if d is None:
        return None
    operands = []
    for u in op._operands:
        v = u.value
        operands.append(constant_op_value(v.op) if type(v) is OpResult else None)
    results = cast(OpBase, op).fold(operands)
    in_place = False
    if results is not None:
        n = len(op.results)
        if len(results) == 0 or (n == 1 and len(results) == 1 and results[0] is op.results[0]):
            in_place = True
        elif len(results) != n:
            raise IRError(f"folder of '{op.name}' returned {len(results)} values for {n} results")
        else:
            return list(results)
    if Commutative in d.trait_set and _fold_commutative(op, operands):
        in_place = True
    return IN_PLACE if in_place else None


def _fold_commutative(op: Operation, constants: list[Attribute | None]) -> bool:
    """Stable-partition operands so that constants come last; True if anything moved."""
    if len(constants) < 2:
        return False
    # Nothing moves unless a non-constant follows a constant.
    seen_constant = False
    for c in constants:
        if c is not None:
            seen_constant = True
        elif seen_constant:
            break
    else:
        return False
    values = [u.value for u in op._operands]
    non_constant = [v for v, c in zip(values, constants) if c is None]
    constant = [v for v, c in zip(values, constants) if c is not None]
    op.set_operands(non_constant + constant)
    return True


def dialect_name(op: Operation) -> str:
    name = op.name
    i = name.find(".")
    return name[:i] if i >= 0 else name


def materialize_constant(rewriter: PatternRewriter, dialect: str, value: Attribute, type, location) -> Operation | None:
    """Ask `dialect` to build a constant op for `value` at the rewriter's insertion point."""
    from loom.ir.opdef import lookup_dialect
    d = lookup_dialect(dialect)
    hook = d.materialize_constant if d is not None else None
    if hook is None:
        return None
    op = hook(rewriter, value, type, location)
    if op is None:
        return None
    if op.parent is None:
        rewriter.insert(op)
    return op


def insertion_region(block: Block) -> Region:
    """Where folded constants go for an op in `block`: the nearest enclosing region whose parent
    is isolated from above, unregistered, or top level (MLIR's `getInsertionRegion`).

    An op class may also claim constants by defining `materialize_constants_into(region) -> bool`."""
    while True:
        region = block.parent
        assert region is not None, "a block in no region"
        parent = region.parent
        if parent is None or parent.parent is None:
            return region
        d = type(parent).definition
        if d is None or IsolatedFromAbove in d.trait_set:
            return region
        hook = getattr(parent, "materialize_constants_into", None)
        if hook is not None and hook(region):
            return region
        block = parent.parent


class ConstantUniquer:
    """Deduplicates constant ops per insertion region and hoists them to the start of its entry
    block, as MLIR's `OperationFolder::insertKnownConstant` (including where locations are reset
    to unknown). Keys are (dialect, value, type)."""

    def __init__(self, rewriter: PatternRewriter) -> None:
        self.rewriter = rewriter
        self.scopes: dict[Region, dict[tuple, Operation]] = {}
        self.owned: dict[Operation, tuple] = {}
        self.moved = False  # whether a constant was hoisted (erasures go through the rewriter)

    def insert_known_constant(self, op: Operation, value: Attribute | None = None) -> bool:
        """Record constant `op`. Returns False if an equal constant already existed, in which case
        `op` was replaced by it and erased."""
        block = op.containing_block()
        if op in self.owned:
            first = block._first
            if first is not op and first is not None and op._prev not in self.owned:
                op.move_before(first)
                op.location = UNKNOWN_LOC
                self.moved = True
            return True
        if value is None:
            value = constant_op_value(op)
        region = insertion_region(block)
        constants = self.scopes.get(region)
        if constants is None:
            constants = self.scopes[region] = {}
        key = (dialect_name(op), value, op.results[0].type)
        existing = constants.get(key)
        if existing is not None:
            self.rewriter.replace_op(op, existing.results)
            existing.location = UNKNOWN_LOC
            return False
        entry = region.blocks[0]
        if block is not entry:
            op.detach()
            entry.prepend(op)
            op.location = UNKNOWN_LOC
            self.moved = True
        elif (first := entry._first) is not op and first is not None and op._prev not in self.owned:
            op.move_before(first)
            self.moved = True
        constants[key] = op
        self.owned[op] = key
        return True

    def notify_removal(self, op: Operation) -> None:
        key = self.owned.pop(op, None)
        if key is None or op.parent is None:
            return
        constants = self.scopes.get(insertion_region(op.parent))
        if constants is not None and constants.get(key) is op:
            del constants[key]


__all__ = ["IN_PLACE", "ConstantUniquer", "constant_op_value", "constant_value", "dialect_name", "fold_op",
           "foldable_class", "insertion_region", "is_constant_class", "materialize_constant"]
