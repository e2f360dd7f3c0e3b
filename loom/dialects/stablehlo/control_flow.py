"""Structured control flow: `stablehlo.while`, `stablehlo.if`, `stablehlo.case` and the
`stablehlo.return` terminator of every StableHLO region."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from loom.dialects.stablehlo.base import StableHLOOp, build_region, check_body, scalar_tensor
from loom.dialects.stablehlo.types import ShapeError, TensorOf, TensorTokenOrTuple
from loom.ir.attributes import Location
from loom.ir.builder import Builder
from loom.ir.core import Operation, Region, Value
from loom.ir.opdef import VARIADIC, Constraint, Pure, ReturnLike, Terminator, region_def, var_operand, var_result
from loom.ir.opdef import operand as operand_def
from loom.ir.types import RankedTensorType, Type, i1, i32

__all__ = ["ReturnOp", "WhileOp", "IfOp", "CaseOp"]


class ReturnOp(StableHLOOp):
    """Terminates the regions of StableHLO ops, yielding their values."""

    name = "stablehlo.return"
    assembly_format = "$results_ attr-dict (`:` type($results_)^)?"
    results_ = var_operand(TensorTokenOrTuple)
    traits = (Pure, Terminator, ReturnLike)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        return []

    @classmethod
    def build(cls, builder: Builder | None, values: Sequence[Value], location: Location | None = None) -> Operation:
        return cls.insert(builder, list(values), result_types=[], location=location)


def _check_no_args(region: Region, what: str) -> None:
    if region.blocks and region.blocks[0].args:
        raise ShapeError(f"{what} must not have arguments")


class WhileOp(StableHLOOp):
    """Runs `body` on the loop-carried values while `cond` (returning `tensor<i1>`) holds."""

    name = "stablehlo.while"
    operand = var_operand(TensorTokenOrTuple)
    results_ = var_result(TensorTokenOrTuple)
    cond = region_def()
    body = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        if len(regions) == 2:
            check_body(regions[0], "cond", operand_types, result_types=[scalar_tensor(i1)])
            check_body(regions[1], "body", operand_types, result_types=operand_types)
        return list(operand_types)

    @classmethod
    def build(cls, builder: Builder | None, init: Sequence[Value],
              cond: Callable[[Builder, list[Value]], Sequence[Value]],
              body: Callable[[Builder, list[Value]], Sequence[Value]], location: Location | None = None) -> Operation:
        types = [v.type for v in init]
        return cls.insert(builder, list(init), regions=[build_region(types, cond), build_region(types, body)],
                          location=location)

    # `stablehlo.while(%iterArg = %x, ...) : types attributes {...}` then `cond {...} do {...}`
    # (AssemblyFormat.cpp's printWhileOp / parseWhileOp).
    def asm_block_arg_names(self, region_index: int) -> list[str]:
        return ["iterArg"] * len(self.operands)

    def asm_printed_regions(self) -> list[str]:
        return ["body", "body"]

    def print_custom(self, p: Any) -> None:
        args = self.regions[1].blocks[0].args if self.regions[1].blocks else ()
        p.write(p.op_name(self) + "(" + ", ".join(f"{p.value(a)} = {p.value(v)}" for a, v in zip(args, self.operands))
                + ")")
        if self.operands:
            p.write(" : " + ", ".join(str(v.type) for v in self.operands))
        p.attr_dict(self.read_attributes(), keyword=True)
        p.newline()
        p.write("cond ")
        p.region(self.regions[0], print_entry_args=False)
        p.write(" do ")
        p.region(self.regions[1], print_entry_args=False)

    @classmethod
    def parse_custom(cls, parser: Any, n_results: int) -> Operation:
        parser.expect("(")
        names, refs = [], []
        if not parser.accept(")"):
            while True:
                names.append(parser.parse_operand_ref())
                parser.expect("=")
                refs.append(parser.parse_operand_ref())
                if parser.accept(")"):
                    break
                parser.expect(",")
        types: list[Type] = []
        if refs:
            parser.expect(":")
            types = [parser.parse_type()]
            while parser.accept(","):
                types.append(parser.parse_type())
            if len(types) != len(refs):
                raise parser.error(f"expected {len(refs)} types but had {len(types)}")
        operands = [parser.resolve_operand(r, t) for r, t in zip(refs, types)]
        attrs = parser.parse_optional_attr_dict() if parser.accept_keyword("attributes") else {}
        regions = []
        for keyword in ("cond", "do"):
            parser.expect_keyword(keyword)
            regions.append(parser.parse_region(entry_args=[(n, t, parser.loc_at(n[2])) for n, t in zip(names, types)]))
        return Operation.create(cls.name, operands, types, {}, attrs, regions)


class IfOp(StableHLOOp):
    """Runs `true_branch` or `false_branch` by the boolean scalar `pred`; both return the results."""

    name = "stablehlo.if"
    pred = operand_def(TensorOf("p", rank=0))
    results_ = var_result(TensorTokenOrTuple)
    true_branch = region_def()
    false_branch = region_def()
    traits = (Pure,)

    def check_types(self) -> None:
        for what, region in (("true_branch", self.regions[0]), ("false_branch", self.regions[1])):
            _check_no_args(region, what)
            check_body(region, what, [], result_types=self.result_types)

    @classmethod
    def build(cls, builder: Builder | None, pred: Value, result_types: Sequence[Type],
              true_branch: Callable[[Builder, list[Value]], Sequence[Value]],
              false_branch: Callable[[Builder, list[Value]], Sequence[Value]],
              location: Location | None = None) -> Operation:
        regions = [build_region([], true_branch), build_region([], false_branch)]
        return cls.insert(builder, [pred], result_types=list(result_types), regions=regions, location=location)


class CaseOp(StableHLOOp):
    """Runs branch `index` (the last one when out of range); every branch returns the results."""

    name = "stablehlo.case"
    index = operand_def(Constraint(lambda t: isinstance(t, RankedTensorType) and t.rank == 0 and t.element_type is i32,
                               "0D tensor of 32-bit signless integer values"))
    results_ = var_result(TensorTokenOrTuple)
    branches = region_def(kind=VARIADIC)
    traits = (Pure,)

    def check_types(self) -> None:
        if not self.regions:
            raise ShapeError("expects at least one branch")
        for i, region in enumerate(self.regions):
            _check_no_args(region, f"branch #{i}")
            check_body(region, f"branch #{i}", [], result_types=self.result_types)

    @classmethod
    def build(cls, builder: Builder | None, index: Value, result_types: Sequence[Type],
              branches: Sequence[Callable[[Builder, list[Value]], Sequence[Value]]],
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [index], result_types=list(result_types),
                          regions=[build_region([], b) for b in branches], location=location)
