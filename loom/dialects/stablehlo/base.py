"""The base of every StableHLO op family: `StableHLOOp` (type inference, verification,
`create`/`insert`), the dialect's traits (`Elementwise`, `HloCompatibleOperandsAndResultType`) and
the helpers for single-block regions ending in `stablehlo.return` (building and checking them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from loom.dialects.stablehlo.types import ShapeError, compatible
from loom.ir.attributes import UNKNOWN_LOC, Attribute, Location
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Block, Operation, Region, Value
from loom.ir.opdef import OpBase, Trait, lookup_op
from loom.ir.types import RankedTensorType, Type

__all__ = ["HloCompatibleOperandsAndResultType", "Elementwise", "StableHLOOp", "build_region", "scalar_tensor"]


class HloCompatibleOperandsAndResultType(Trait):
    """All operands and results have compatible types (equal up to dynamic dimensions): StableHLO's
    `HLO_CompatibleOperandsAndResultType`, its form of `SameOperandsAndResultType`."""

    @classmethod
    def verify(cls, op: Operation) -> str | None:
        types = [v.type for v in op.operands] + [r.type for r in op.results]
        for t in types[1:]:
            if not compatible(types[0], t):
                return f"requires compatible types for all operands and results, but got '{types[0]}' and '{t}'"
        return None


class Elementwise(Trait):
    """Applies elementwise to operands of one shape (a mapping of scalar functions)."""


class StableHLOOp(OpBase):
    """Base of StableHLO ops.

    `infer_result_types(operand_types, properties, regions)` checks the operands and attributes
    against the spec and returns the result types (raising `ShapeError` on a violation); the
    verifier runs it and compares with the op's result types, builders use it to type new ops. Ops
    whose result type is not determined by their inputs return None and check in `check_types`."""

    @classmethod
    def infer_result_types(cls, operand_types: Sequence[Type], properties: dict[str, Attribute],
                           regions: Sequence[Region] = ()) -> list[Type] | None:
        return None

    def asm_result_names(self) -> list[str] | None:
        """Ops with several results, none variadic, name them after their fields in the custom
        form: `%values, %indices = chlo.top_k(...)`."""
        d = self.definition
        if len(d.results) > 1 and d._result_variadics == 0:
            return [f.name for f in d.results]
        return None

    def check_types(self) -> None:
        """Extra checks that need the result types; raise ShapeError."""

    def verify_(self) -> None:
        try:
            inferred = type(self).infer_result_types(self.operand_types, self.properties, self.regions)
            if inferred is not None:
                self._check_inferred(inferred)
            self.check_types()
        except ShapeError as e:
            self.emit_error(str(e))

    def _check_inferred(self, inferred: Sequence[Type]) -> None:
        actual = self.result_types
        if len(inferred) != len(actual) or not all(compatible(a, b) for a, b in zip(inferred, actual)):
            raise ShapeError(f"inferred type(s) '{', '.join(map(str, inferred))}' are incompatible with return "
                             f"type(s) of operation '{', '.join(map(str, actual))}'")

    @classmethod
    def create(cls, operands: Sequence[Value] = (), properties: dict[str, Attribute] | None = None,
               result_types: Sequence[Type] | None = None, regions: Sequence[Region] = (),
               attributes: dict[str, Attribute] | None = None, location: Location = UNKNOWN_LOC) -> Operation:
        """A new (detached) op; result types are inferred when not given."""
        props = {k: v for k, v in (properties or {}).items() if v is not None}
        if result_types is None:
            result_types = cls.infer_result_types([v.type for v in operands], props, regions)
            if result_types is None:
                raise ShapeError(f"'{cls.name}' needs explicit result types")
        return Operation.create(cls.name, operands, result_types, props, attributes or {}, list(regions), (),
                                location)

    @classmethod
    def insert(cls, builder: Builder | None, operands: Sequence[Value] = (),
               properties: dict[str, Attribute] | None = None, result_types: Sequence[Type] | None = None,
               regions: Sequence[Region] = (), location: Location | None = None) -> Operation:
        """`create` then insert at the builder's insertion point (with its location by default)."""
        if location is None:
            location = builder.location if builder is not None else UNKNOWN_LOC
        op = cls.create(operands, properties, result_types, regions, None, location)
        if builder is not None:
            builder.insert(op)
        return op


def build_region(arg_types: Sequence[Type], body: Callable[[Builder, list[Value]], Sequence[Value]],
                 location: Location = UNKNOWN_LOC) -> Region:
    """A one-block region with arguments of `arg_types`; `body(builder, args)` builds its ops and
    returns the values the block returns with `stablehlo.return`."""
    region = Region()
    block = region.add_block(Block(arg_types))
    b = Builder(InsertionPoint.at_end(block), location)
    results = body(b, list(block.args))
    # Looked up by name: the terminator is defined with the control-flow ops, which register
    # after the families that build regions.
    lookup_op("stablehlo.return").insert(b, list(results))
    return region


def scalar_tensor(et: Type) -> RankedTensorType:
    return RankedTensorType((), et, None)


def _return_types(region: Region) -> list[Type] | None:
    """Operand types of the `stablehlo.return` ending the region's block, or None."""
    if not region.blocks or region.blocks[0].last_op is None:
        return None
    term = region.blocks[0].last_op
    if term.name != "stablehlo.return":
        return None
    return list(term.operand_types)


def check_body(region: Region, what: str, arg_types: Sequence[Type], result_count: int | None = None,
               result_types: Sequence[Type] | None = None) -> list[Type]:
    """A single-block region with these argument types, returning `result_count` values (or values
    compatible with `result_types`); returns its return types."""
    if len(region.blocks) != 1:
        raise ShapeError(f"{what} must have exactly one block")
    args = [a.type for a in region.blocks[0].args]
    if len(args) != len(arg_types) or not all(compatible(a, b) for a, b in zip(args, arg_types)):
        raise ShapeError(f"{what} has argument types ({', '.join(map(str, args))}) but expects "
                         f"({', '.join(map(str, arg_types))})")
    rets = _return_types(region)
    if rets is None:
        raise ShapeError(f"{what} must end with 'stablehlo.return'")
    if result_types is not None:
        if len(rets) != len(result_types) or not all(compatible(a, b) for a, b in zip(rets, result_types)):
            raise ShapeError(f"{what} returns ({', '.join(map(str, rets))}) but must return "
                             f"({', '.join(map(str, result_types))})")
    elif result_count is not None and len(rets) != result_count:
        raise ShapeError(f"{what} returns {len(rets)} values but must return {result_count}")
    return rets


def reducer_types(region: Region, what: str, element_types: Sequence[Type]) -> list[Type]:
    """A reduction body `(acc..., x...) -> acc...` over rank-0 tensors; its return element types."""
    n = len(element_types)
    if len(region.blocks) != 1:
        raise ShapeError(f"{what} must have exactly one block")
    args = [a.type for a in region.blocks[0].args]
    if len(args) != 2 * n:
        raise ShapeError(f"{what} must take {2 * n} arguments, but takes {len(args)}")
    for i, t in enumerate(args):
        if not isinstance(t, RankedTensorType) or t.rank != 0:
            raise ShapeError(f"{what} argument #{i} must be a rank-0 tensor, but got '{t}'")
    rets = _return_types(region)
    if rets is None:
        raise ShapeError(f"{what} must end with 'stablehlo.return'")
    if len(rets) != n:
        raise ShapeError(f"{what} returns {len(rets)} values but must return {n}")
    for i, t in enumerate(rets):
        if not isinstance(t, RankedTensorType) or t.rank != 0:
            raise ShapeError(f"{what} result #{i} must be a rank-0 tensor, but got '{t}'")
        if args[i] is not t or args[n + i] is not t:
            raise ShapeError(f"{what} result #{i} has type '{t}' but its accumulator and input arguments have "
                             f"types '{args[i]}' and '{args[n + i]}'")
    return [t.element_type for t in rets]
