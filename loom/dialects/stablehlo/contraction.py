"""`stablehlo.dot_general`, `stablehlo.dot` and `stablehlo.convolution`, with the shape rules
(`dot_general_shape`, `convolution_shape`, `window_output_size`) other code reuses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loom.dialects.stablehlo.attributes import (
    ConvDimensionNumbers,
    DotDimensionNumbers,
    PrecisionAttr,
    i64_array,
    i64_attr,
    padding_attr,
)
from loom.dialects.stablehlo.base import StableHLOOp
from loom.dialects.stablehlo.properties import prop_int, prop_ints, prop_padding
from loom.dialects.stablehlo.types import (
    AnyTensor,
    BoolArray,
    I64Array,
    I64Attr,
    I64Elements,
    PrecisionConfig,
    ShapeError,
    attr_of,
    check_dims_in_range,
    dim_eq,
    shape_text,
    with_element_type,
)
from loom.ir.attributes import ArrayAttr, Attribute, DenseArrayAttr, Location
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import Pure, opt_prop, prop, result_def
from loom.ir.opdef import operand as operand_def
from loom.ir.types import DYNAMIC, RankedTensorType, Type

__all__ = ["dot_general_shape", "DotGeneralOp", "DotOp", "window_output_size", "convolution_shape", "ConvolutionOp"]


def _check_precision_config(props: dict[str, Attribute]) -> None:
    pc = props.get("precision_config")
    if isinstance(pc, ArrayAttr) and len(pc) not in (0, 2):
        raise ShapeError(f"precision_config must have 0 or 2 elements, but has {len(pc)}")


def dot_general_shape(lhs: RankedTensorType, rhs: RankedTensorType, dn: DotDimensionNumbers) -> tuple[int, ...]:
    """The result shape of `dot_general` (batch, lhs free, rhs free dimensions), checking the
    dimension numbers against both operand shapes."""
    lb, rb = dn.lhs_batching_dimensions, dn.rhs_batching_dimensions
    lc, rc = dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions
    if len(lb) != len(rb):
        raise ShapeError(f"lhs and rhs should have the same number of batching dimensions ({list(lb)} vs "
                         f"{list(rb)})")
    if len(lc) != len(rc):
        raise ShapeError(f"lhs and rhs should have the same number of contracting dimensions ({list(lc)} vs "
                         f"{list(rc)})")
    check_dims_in_range((*lb, *lc), lhs.rank, f"lhs batching and contracting dimensions {list(lb)}, {list(lc)} "
                                         f"(lhs '{lhs}')")
    check_dims_in_range((*rb, *rc), rhs.rank, f"rhs batching and contracting dimensions {list(rb)}, {list(rc)} "
                                         f"(rhs '{rhs}')")
    for kind, ls, rs in (("batching", lb, rb), ("contracting", lc, rc)):
        for a, b in zip(ls, rs):
            if not dim_eq(lhs.shape[a], rhs.shape[b]):
                raise ShapeError(f"{kind} dimension sizes must match: lhs dimension {a} has size {lhs.shape[a]} "
                                 f"but rhs dimension {b} has size {rhs.shape[b]} (lhs '{lhs}', rhs '{rhs}')")
    lhs_free = [d for d in range(lhs.rank) if d not in lb and d not in lc]
    rhs_free = [d for d in range(rhs.rank) if d not in rb and d not in rc]
    return tuple([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in lhs_free] + [rhs.shape[d] for d in rhs_free])


class DotGeneralOp(StableHLOOp):
    """Generalised matrix product over batching and contracting dimensions. The result element type
    may differ from the operands' (the preferred element type)."""

    name = "stablehlo.dot_general"
    assembly_format = ("$lhs `,` $rhs `,` custom<DotDimensionNumbers>($dot_dimension_numbers) `` "
                       "custom<PrecisionConfigAndAlgorithm>($precision_config, $algorithm) attr-dict `:` "
                       "functional-type(operands, results)")
    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    dot_dimension_numbers = prop(attr_of(DotDimensionNumbers))
    precision_config = opt_prop(PrecisionConfig)
    algorithm = opt_prop()
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        lhs, rhs = operand_types
        dn = properties.get("dot_dimension_numbers")
        _check_precision_config(properties)
        if not isinstance(dn, DotDimensionNumbers) or not isinstance(lhs, RankedTensorType) or \
                not isinstance(rhs, RankedTensorType):
            return None
        return [RankedTensorType(dot_general_shape(lhs, rhs, dn), lhs.element_type, None)]

    def _check_inferred(self, inferred):
        t = self.results[0].type
        expected = inferred[0]
        if isinstance(t, RankedTensorType) and (t.rank != expected.rank or
                                                not all(map(dim_eq, t.shape, expected.shape))):
            raise ShapeError(f"inferred shape '{shape_text(expected.shape)}' is incompatible with return type of "
                             f"operation '{t}' (lhs '{self.lhs.type}', rhs '{self.rhs.type}')")

    @classmethod
    def build(cls, builder: Builder | None, lhs: Value, rhs: Value, dimension_numbers: DotDimensionNumbers,
              precision_config: Sequence[str] | None = None, preferred_element_type: Type | None = None,
              location: Location | None = None) -> Operation:
        props: dict[str, Attribute] = {"dot_dimension_numbers": dimension_numbers}
        if precision_config is not None:
            props["precision_config"] = ArrayAttr(tuple(PrecisionAttr(p) for p in precision_config))
        (t,) = cls.infer_result_types([lhs.type, rhs.type], props)
        if preferred_element_type is not None:
            t = with_element_type(t, preferred_element_type)
        return cls.insert(builder, [lhs, rhs], props, [t], location=location)


class DotOp(StableHLOOp):
    """Legacy matrix/vector product (`dot_general` with the usual contraction)."""

    name = "stablehlo.dot"
    assembly_format = ("$lhs `,` $rhs `` custom<PrecisionConfig>($precision_config) attr-dict `:` "
                       "functional-type(operands, results)")
    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    precision_config = opt_prop(PrecisionConfig)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        lhs, rhs = operand_types
        if not isinstance(lhs, RankedTensorType) or not isinstance(rhs, RankedTensorType):
            return None
        if lhs.rank not in (1, 2) or rhs.rank not in (1, 2):
            raise ShapeError(f"expects rank-1 or rank-2 operands, but got '{lhs}' and '{rhs}'")
        dn = DotDimensionNumbers((), (), (lhs.rank - 1,), (0,))
        return [RankedTensorType(dot_general_shape(lhs, rhs, dn), lhs.element_type, None)]

    _check_inferred = DotGeneralOp._check_inferred


def _conv_window(props: dict[str, Attribute], n: int) -> tuple[list[int], list[tuple[int, int]], list[int], list[int]]:
    strides = prop_ints(props, "window_strides", [1] * n)
    lhs_dil = prop_ints(props, "lhs_dilation", [1] * n)
    rhs_dil = prop_ints(props, "rhs_dilation", [1] * n)
    for name, values in (("window_strides", strides), ("lhs_dilation", lhs_dil), ("rhs_dilation", rhs_dil)):
        if len(values) != n:
            raise ShapeError(f"{name} must have {n} elements (one per spatial dimension), but has {len(values)}")
        if any(v <= 0 for v in values):
            raise ShapeError(f"{name} must be positive, but got {list(values)}")
    return list(strides), prop_padding(props, "padding", n), list(lhs_dil), list(rhs_dil)


def window_output_size(size: int, window: int, stride: int, padding: tuple[int, int], base_dilation: int = 1,
                       window_dilation: int = 1) -> int:
    """The number of window positions along one dimension (StableHLO's shape formula)."""
    if size == DYNAMIC:
        return DYNAMIC
    dilated = 0 if size == 0 else (size - 1) * base_dilation + 1
    padded = padding[0] + dilated + padding[1]
    dilated_window = 0 if window == 0 else (window - 1) * window_dilation + 1
    if padded <= 0 or dilated_window > padded:
        return 0
    return (padded - dilated_window) // stride + 1


def convolution_shape(lhs: RankedTensorType, rhs: RankedTensorType, props: dict[str, Attribute]) -> tuple[int, ...]:
    """The result shape of `convolution`, checking its attributes against the operand shapes."""
    dn = props.get("dimension_numbers")
    if not isinstance(dn, ConvDimensionNumbers):
        raise ShapeError("requires attribute 'dimension_numbers'")
    n = len(dn.input_spatial_dimensions)
    if lhs.rank != n + 2 or rhs.rank != n + 2:
        raise ShapeError(f"lhs '{lhs}' and rhs '{rhs}' must have rank {n + 2} ({n} spatial dimensions)")
    if len(dn.kernel_spatial_dimensions) != n or len(dn.output_spatial_dimensions) != n:
        raise ShapeError("dimension_numbers must have the same number of input, kernel and output spatial "
                         "dimensions")
    check_dims_in_range((dn.input_batch_dimension, dn.input_feature_dimension, *dn.input_spatial_dimensions), n + 2,
                        "input dimension numbers")
    check_dims_in_range((dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension,
                         *dn.kernel_spatial_dimensions), n + 2, "kernel dimension numbers")
    check_dims_in_range((dn.output_batch_dimension, dn.output_feature_dimension, *dn.output_spatial_dimensions), n + 2,
                        "output dimension numbers")
    fgc, bgc = prop_int(props, "feature_group_count", 1), prop_int(props, "batch_group_count", 1)
    if fgc <= 0 or bgc <= 0 or (fgc > 1 and bgc > 1):
        raise ShapeError(f"feature_group_count ({fgc}) and batch_group_count ({bgc}) must be positive and not both "
                         "greater than 1")
    _check_precision_config(props)
    strides, padding, lhs_dil, rhs_dil = _conv_window(props, n)
    reversal = props.get("window_reversal")
    if isinstance(reversal, DenseArrayAttr) and len(reversal) != n:
        raise ShapeError(f"window_reversal must have {n} elements, but has {len(reversal)}")
    batch = lhs.shape[dn.input_batch_dimension]
    in_features = lhs.shape[dn.input_feature_dimension]
    k_in = rhs.shape[dn.kernel_input_feature_dimension]
    k_out = rhs.shape[dn.kernel_output_feature_dimension]
    if DYNAMIC not in (in_features, k_in):
        if in_features % fgc != 0 or in_features // fgc != k_in:
            raise ShapeError(f"input feature dimension size ({in_features}) divided by feature_group_count ({fgc}) "
                             f"must equal the kernel input feature dimension size ({k_in}); lhs '{lhs}', "
                             f"rhs '{rhs}'")
    if batch != DYNAMIC and batch % bgc != 0:
        raise ShapeError(f"input batch dimension size ({batch}) must be divisible by batch_group_count ({bgc})")
    if k_out != DYNAMIC and (k_out % bgc != 0 or k_out % fgc != 0):
        raise ShapeError(f"kernel output feature dimension size ({k_out}) must be divisible by "
                         f"feature_group_count ({fgc}) and batch_group_count ({bgc})")
    out = [0] * (n + 2)
    out[dn.output_batch_dimension] = DYNAMIC if batch == DYNAMIC else batch // bgc
    out[dn.output_feature_dimension] = k_out
    for i in range(n):
        size = lhs.shape[dn.input_spatial_dimensions[i]]
        window = rhs.shape[dn.kernel_spatial_dimensions[i]]
        out[dn.output_spatial_dimensions[i]] = DYNAMIC if window == DYNAMIC else \
            window_output_size(size, window, strides[i], padding[i], lhs_dil[i], rhs_dil[i])
    return tuple(out)


_CONV_PROPS: dict[str, Any] = {
    "window_strides": opt_prop(I64Array), "padding": opt_prop(I64Elements), "lhs_dilation": opt_prop(I64Array),
    "rhs_dilation": opt_prop(I64Array), "window_reversal": opt_prop(BoolArray),
    "dimension_numbers": prop(attr_of(ConvDimensionNumbers)), "feature_group_count": prop(I64Attr),
    "batch_group_count": prop(I64Attr), "precision_config": opt_prop(PrecisionConfig),
}


class ConvolutionOp(StableHLOOp):
    """Convolution of `lhs` (input) with `rhs` (kernel): windows, padding, dilations, feature and
    batch groups, layouts given by `dimension_numbers`."""

    name = "stablehlo.convolution"
    assembly_format = ("`(`operands`)` `dim_numbers` `=` custom<ConvolutionDimensions>($dimension_numbers) `,` "
                       "`window` `=` `{` custom<WindowAttributes>($window_strides, $padding, $lhs_dilation, "
                       "$rhs_dilation, $window_reversal) `}` attr-dict `:` functional-type(operands, results)")
    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    window_strides = _CONV_PROPS["window_strides"]
    padding = _CONV_PROPS["padding"]
    lhs_dilation = _CONV_PROPS["lhs_dilation"]
    rhs_dilation = _CONV_PROPS["rhs_dilation"]
    window_reversal = _CONV_PROPS["window_reversal"]
    dimension_numbers = _CONV_PROPS["dimension_numbers"]
    feature_group_count = _CONV_PROPS["feature_group_count"]
    batch_group_count = _CONV_PROPS["batch_group_count"]
    precision_config = _CONV_PROPS["precision_config"]
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        lhs, rhs = operand_types
        if not isinstance(lhs, RankedTensorType) or not isinstance(rhs, RankedTensorType):
            return None
        return [RankedTensorType(convolution_shape(lhs, rhs, properties), lhs.element_type, None)]

    _check_inferred = DotGeneralOp._check_inferred

    @classmethod
    def build(cls, builder: Builder | None, lhs: Value, rhs: Value, dimension_numbers: ConvDimensionNumbers,
              window_strides: Sequence[int] | None = None, padding: Sequence[tuple[int, int]] | None = None,
              lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
              feature_group_count: int = 1, batch_group_count: int = 1,
              precision_config: Sequence[str] | None = None, preferred_element_type: Type | None = None,
              location: Location | None = None) -> Operation:
        props: dict[str, Attribute | None] = {
            "dimension_numbers": dimension_numbers, "feature_group_count": i64_attr(feature_group_count),
            "batch_group_count": i64_attr(batch_group_count),
            "window_strides": None if window_strides is None else i64_array(window_strides),
            "padding": None if padding is None else padding_attr(padding),
            "lhs_dilation": None if lhs_dilation is None else i64_array(lhs_dilation),
            "rhs_dilation": None if rhs_dilation is None else i64_array(rhs_dilation),
            "precision_config": None if precision_config is None else
            ArrayAttr(tuple(PrecisionAttr(p) for p in precision_config)),
        }
        props = {k: v for k, v in props.items() if v is not None}
        (t,) = cls.infer_result_types([lhs.type, rhs.type], props)
        if preferred_element_type is not None:
            t = with_element_type(t, preferred_element_type)
        return cls.insert(builder, [lhs, rhs], props, [t], location=location)
