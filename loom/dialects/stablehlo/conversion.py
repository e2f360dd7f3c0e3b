"""`stablehlo.convert` (element type conversion, folded by StableHLO's rules) and
`stablehlo.bitcast_convert`."""

from __future__ import annotations

import numpy as np

from loom.dialects.stablehlo.base import Elementwise, StableHLOOp
from loom.dialects.stablehlo.folding import dtype_kind, foldable, result_attr, to_arrays
from loom.dialects.stablehlo.types import (
    AnyTensor,
    ShapeError,
    bit_width,
    compatible,
    dim_eq,
    element_type,
    with_element_type,
)
from loom.ir.attributes import Location, numpy_dtype
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import Pure, result_def
from loom.ir.opdef import operand as operand_def
from loom.ir.types import RankedTensorType, Type, i1

__all__ = ["ConvertOp", "BitcastConvertOp"]


def _convert_array(a: np.ndarray, src: Type, dst: Type) -> np.ndarray | None:
    """numpy conversion where the spec's answer is unambiguous: exact conversions, integer
    wrap-around, float to integer in range (truncating), anything to boolean (`x != 0`)."""
    dtype = numpy_dtype(dst)
    sk, dk = dtype_kind(a.dtype), dtype_kind(dtype)
    if sk == "c":
        return a.astype(dtype) if dk == "c" and dtype.itemsize >= a.dtype.itemsize else None
    if dk == "c":
        part = _convert_array(a, src, dst.element_type)
        return None if part is None else part.astype(dtype)
    if dk == "b":
        return a.astype(np.float64) != 0 if sk == "f" else a != 0
    if dk == "f":
        out = a.astype(dtype)
        back = out.astype(a.dtype)
        same = back == a
        if sk == "f":
            same |= np.isnan(back.astype(np.float64)) & np.isnan(a.astype(np.float64))
        return out if np.all(same) else None  # only exactly representable values
    if sk == "f":
        wide = a.astype(np.float64)
        if not np.all(np.isfinite(wide)):
            return None
        t = np.trunc(wide)
        info = np.iinfo(dtype)
        if np.any(t < info.min) or np.any(t > info.max):
            return None
        return np.array([int(v) for v in t.reshape(-1)], dtype=object).astype(dtype).reshape(a.shape)
    vals = [dst.normalize(int(v)) for v in a.reshape(-1)]
    return np.array(vals, dtype=object).astype(dtype).reshape(a.shape)


class ConvertOp(StableHLOOp):
    """Elementwise conversion to the result's element type (same shape)."""

    name = "stablehlo.convert"
    assembly_format = "$operand attr-dict `:` custom<SameOperandsAndResultType>(type($operand), type($result))"
    operand = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = (Pure, Elementwise)

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, element_type: Type,
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], result_types=[with_element_type(operand.type, element_type)],
                          location=location)

    def check_types(self) -> None:
        src, dst = self.operand.type, self.results[0].type
        if not compatible(with_element_type(src, i1), with_element_type(dst, i1)):
            raise ShapeError(f"operand and result must have the same shape, but got '{src}' and '{dst}'")

    def fold(self, operands):
        src, dst = self.operand.type, self.results[0].type
        if src is dst:
            return [self.operand]
        attrs = foldable(operands)
        if attrs is None:
            return None
        try:
            with np.errstate(all="ignore"):
                value = _convert_array(to_arrays(attrs)[0], element_type(src), element_type(dst))
        except (ValueError, TypeError):
            return None
        r = result_attr(value, dst)
        return None if r is None else [r]


class BitcastConvertOp(StableHLOOp):
    """Reinterprets the bits of the operand as the result type; a narrower element type adds a
    trailing dimension, a wider one consumes it."""

    name = "stablehlo.bitcast_convert"
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, result_type: Type,
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], result_types=[result_type], location=location)

    def check_types(self) -> None:
        src, dst = self.operand.type, self.results[0].type
        if not (isinstance(src, RankedTensorType) and isinstance(dst, RankedTensorType)):
            return
        a, b = bit_width(src.element_type), bit_width(dst.element_type)
        if a is None or b is None:
            return
        if a == b:
            expected = src.shape
            ok = len(dst.shape) == len(expected) and all(map(dim_eq, dst.shape, expected))
        elif a > b:
            ok = len(dst.shape) == src.rank + 1 and all(map(dim_eq, dst.shape[:-1], src.shape)) and \
                dim_eq(dst.shape[-1], a // b) and a % b == 0
        else:
            ok = src.rank == dst.rank + 1 and all(map(dim_eq, src.shape[:-1], dst.shape)) and \
                dim_eq(src.shape[-1], b // a) and b % a == 0
        if not ok:
            raise ShapeError(f"cannot bitcast '{src}' ({a}-bit elements) to '{dst}' ({b}-bit elements)")

    def fold(self, operands):
        if self.operand.type is self.results[0].type:
            return [self.operand]
        return None
