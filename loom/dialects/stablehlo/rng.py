"""Random numbers: `stablehlo.rng_bit_generator` and the legacy `stablehlo.rng`."""

from __future__ import annotations

from loom.dialects.stablehlo.attributes import RngAlgorithmAttr, RngDistributionAttr
from loom.dialects.stablehlo.base import StableHLOOp
from loom.dialects.stablehlo.types import ShapeError, TensorOf, attr_of, bit_width, check_same_element_type, compatible
from loom.ir.attributes import Location
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import Pure, prop, result_def
from loom.ir.opdef import operand as operand_def
from loom.ir.types import RankedTensorType, Type

__all__ = ["RngBitGeneratorOp", "RngOp"]


class RngBitGeneratorOp(StableHLOOp):
    """Random bits from `initial_state` by `rng_algorithm`: the new state and the output."""

    name = "stablehlo.rng_bit_generator"
    assembly_format = ("$initial_state `,` `algorithm` `=` $rng_algorithm attr-dict `:` functional-type(operands, "
                       "results)")
    rng_algorithm = prop(attr_of(RngAlgorithmAttr))
    initial_state = operand_def(TensorOf("if"))
    output_state = result_def(TensorOf("if"))
    output = result_def(TensorOf("if"))
    traits = (Pure,)

    def check_types(self) -> None:
        state, new_state = self.initial_state.type, self.results[0].type
        if not compatible(state, new_state):
            raise ShapeError(f"output_state '{new_state}' must have the type of initial_state '{state}'")
        algorithm = self.properties["rng_algorithm"].value
        if isinstance(state, RankedTensorType) and state.has_static_shape:
            bits = state.num_elements * (bit_width(state.element_type) or 0)
            need = {"THREE_FRY": (128,), "PHILOX": (128, 192)}.get(algorithm)
            if need is not None and bits not in need:
                raise ShapeError(f"initial_state '{state}' must hold {' or '.join(map(str, need))} bits for "
                                 f"{algorithm}")

    @classmethod
    def build(cls, builder: Builder | None, initial_state: Value, output_type: Type, algorithm: str = "DEFAULT",
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [initial_state], {"rng_algorithm": RngAlgorithmAttr(algorithm)},
                          [initial_state.type, output_type], location=location)


class RngOp(StableHLOOp):
    """Random numbers between `a` and `b` (uniform) or with mean `a` and deviation `b` (normal)."""

    name = "stablehlo.rng"
    assembly_format = ("$a `,` $b `,` $shape `,` `distribution` `=` $rng_distribution attr-dict `:` "
                       "functional-type(operands, results)")
    a = operand_def(TensorOf("pif", rank=0))
    b = operand_def(TensorOf("pif", rank=0))
    shape = operand_def(TensorOf("i", rank=1))
    rng_distribution = prop(attr_of(RngDistributionAttr))
    result = result_def(TensorOf("pif"))

    def check_types(self) -> None:
        check_same_element_type(self.a.type, self.results[0].type, "a and result")
        check_same_element_type(self.b.type, self.results[0].type, "b and result")
