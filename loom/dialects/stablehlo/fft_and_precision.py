"""`stablehlo.fft` and `stablehlo.reduce_precision`."""

from __future__ import annotations

from loom.dialects.stablehlo.attributes import FftTypeAttr
from loom.dialects.stablehlo.base import Elementwise, HloCompatibleOperandsAndResultType, StableHLOOp
from loom.dialects.stablehlo.properties import prop_int, prop_ints
from loom.dialects.stablehlo.types import I32Attr, I64Array, ShapeError, TensorOf, attr_of, dim_eq, shape_text
from loom.ir.opdef import Pure, prop, result_def
from loom.ir.opdef import operand as operand_def
from loom.ir.types import ComplexType, FloatType, RankedTensorType, UnrankedTensorType

__all__ = ["FftOp", "ReducePrecisionOp"]


class FftOp(StableHLOOp):
    """Fourier transforms over the trailing `fft_length` dimensions (FFT, IFFT, RFFT, IRFFT)."""

    name = "stablehlo.fft"
    assembly_format = ("$operand `,` `type` `=` $fft_type `,` `length` `=` $fft_length attr-dict `:` "
                       "functional-type(operands, results)")
    operand = operand_def(TensorOf("fc"))
    fft_type = prop(attr_of(FftTypeAttr))
    fft_length = prop(I64Array)
    result = result_def(TensorOf("fc"))
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        kind = properties["fft_type"].value if isinstance(properties.get("fft_type"), FftTypeAttr) else "FFT"
        lengths = prop_ints(properties, "fft_length")
        et = t.element_type
        if kind in ("FFT", "IFFT", "IRFFT") and not isinstance(et, ComplexType):
            raise ShapeError(f"{kind} takes complex operands, but got '{t}'")
        if kind == "RFFT" and not isinstance(et, FloatType):
            raise ShapeError(f"RFFT takes real operands, but got '{t}'")
        if not 1 <= len(lengths) <= 3:
            raise ShapeError(f"fft_length must have 1 to 3 elements, but has {len(lengths)}")
        out_et = ComplexType(et) if kind == "RFFT" else et.element_type if kind == "IRFFT" else et
        if not isinstance(t, RankedTensorType):
            return [UnrankedTensorType(out_et)]
        if t.rank < len(lengths):
            raise ShapeError(f"operand '{t}' has fewer dimensions than fft_length {list(lengths)}")
        shape = list(t.shape)
        n = len(lengths)
        expected = list(lengths)
        if kind == "IRFFT":
            expected[-1] = lengths[-1] // 2 + 1
        trailing = shape[-n:]
        if not all(map(dim_eq, trailing, expected)):
            raise ShapeError(f"trailing dimensions {shape_text(trailing)} of operand '{t}' must be "
                             f"{shape_text(expected)} for {kind} with fft_length {list(lengths)}")
        if kind == "RFFT":
            shape[-1] = lengths[-1] // 2 + 1
        elif kind == "IRFFT":
            shape[-1] = lengths[-1]
        return [RankedTensorType(tuple(shape), out_et, None)]


class ReducePrecisionOp(StableHLOOp):
    """Rounds to a float format with `exponent_bits` and `mantissa_bits`, keeping the type."""

    name = "stablehlo.reduce_precision"
    assembly_format = ("$operand `,` `format` `=` custom<ExponentMantissa>($exponent_bits, $mantissa_bits) attr-dict "
                       "`:` custom<SameOperandsAndResultType>(type($operand), type($output))")
    operand = operand_def(TensorOf("f"))
    exponent_bits = prop(I32Attr)
    mantissa_bits = prop(I32Attr)
    output = result_def(TensorOf("f"))
    traits = (Pure, Elementwise, HloCompatibleOperandsAndResultType)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        if prop_int(properties, "exponent_bits") < 1 or prop_int(properties, "mantissa_bits") < 0:
            raise ShapeError("exponent_bits must be at least 1 and mantissa_bits non-negative")
        return [operand_types[0]]
