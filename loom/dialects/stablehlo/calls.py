"""Calls out of the op set: `stablehlo.custom_call` and `stablehlo.composite`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loom.dialects.stablehlo.attributes import OutputOperandAlias
from loom.dialects.stablehlo.base import StableHLOOp
from loom.dialects.stablehlo.types import BoolAttr_, ShapeError, TensorTokenOrTuple
from loom.ir.attributes import ArrayAttr, BoolAttr, DictionaryAttr, IntegerAttr, Location, StringAttr, SymbolRefAttr
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import opt_prop, prop, var_operand, var_result
from loom.ir.types import Type

__all__ = ["CustomCallOp", "CompositeOp"]


class CustomCallOp(StableHLOOp):
    """A call to an implementation-defined target `call_target_name` (kept as is; executed where a
    kernel is registered for the target)."""

    name = "stablehlo.custom_call"
    assembly_format = ("custom<CustomCallTarget>($call_target_name) `(` $inputs `)` attr-dict `:` "
                       "functional-type(operands, results)")
    inputs = var_operand(TensorTokenOrTuple)
    call_target_name = prop(StringAttr)
    has_side_effect = opt_prop(BoolAttr_)
    backend_config = opt_prop()
    api_version = opt_prop(IntegerAttr)
    called_computations = opt_prop(ArrayAttr)
    operand_layouts = opt_prop(ArrayAttr)
    result_layouts = opt_prop(ArrayAttr)
    output_operand_aliases = opt_prop(ArrayAttr)
    results_ = var_result(TensorTokenOrTuple)

    def check_types(self) -> None:
        for name, values in (("operand_layouts", self.operands), ("result_layouts", self.results)):
            layouts = self.read_properties().get(name)
            if isinstance(layouts, ArrayAttr) and len(layouts) != len(values):
                raise ShapeError(f"{name} has {len(layouts)} entries for {len(values)} "
                                 f"{'operands' if name == 'operand_layouts' else 'results'}")
        aliases = self.read_properties().get("output_operand_aliases")
        for alias in aliases if isinstance(aliases, ArrayAttr) else ():
            if isinstance(alias, OutputOperandAlias) and not 0 <= alias.operand_index < len(self.operands):
                raise ShapeError(f"output_operand_aliases refers to operand {alias.operand_index}, but there are "
                                 f"{len(self.operands)} operands")

    @classmethod
    def build(cls, builder: Builder | None, call_target_name: str, inputs: Sequence[Value],
              result_types: Sequence[Type], backend_config: str = "", has_side_effect: bool = False,
              location: Location | None = None) -> Operation:
        props = {"call_target_name": StringAttr(call_target_name), "backend_config": StringAttr(backend_config),
                 "has_side_effect": BoolAttr(has_side_effect)}
        return cls.insert(builder, list(inputs), props, list(result_types), location=location)


class _keyed_prop(prop):
    """A property stored under `key` but read through another accessor name (for a property
    called `name`, which is the op class's own name attribute)."""

    def __init__(self, key: str, constr: Any = None, optional: bool = False) -> None:
        super().__init__(constr, optional=optional)
        self.key = key

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.key


class CompositeOp(StableHLOOp):
    """A named composite of other ops: `decomposition` names the function that implements it."""

    name = "stablehlo.composite"
    assembly_format = "$name operands attr-dict `:` functional-type(operands, results)"
    inputs = var_operand()
    composite_name = _keyed_prop("name", StringAttr)
    composite_attributes = opt_prop(DictionaryAttr)
    decomposition = prop(SymbolRefAttr)
    version = opt_prop(IntegerAttr)
    results_ = var_result()
