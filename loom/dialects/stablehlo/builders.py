"""`stablehlo.add(builder, lhs, rhs)` and friends: one function per op that inserts it with
`Op.build` and returns its result value(s). Names clashing with Python get a trailing underscore
(`abs_`, `and_`, `slice_`, `while_`, ...)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from loom.dialects.stablehlo.calls import CustomCallOp
from loom.dialects.stablehlo.comparison import ClampOp, CompareOp, SelectOp
from loom.dialects.stablehlo.constants import ConstantOp, IotaOp
from loom.dialects.stablehlo.contraction import ConvolutionOp, DotGeneralOp
from loom.dialects.stablehlo.control_flow import CaseOp, IfOp, ReturnOp, WhileOp
from loom.dialects.stablehlo.conversion import BitcastConvertOp, ConvertOp
from loom.dialects.stablehlo.elementwise import (
    AbsOp,
    AddOp,
    AndOp,
    Atan2Op,
    CbrtOp,
    CeilOp,
    ComplexOp,
    CosineOp,
    CountLeadingZerosOp,
    DivOp,
    ExponentialMinusOneOp,
    ExponentialOp,
    FloorOp,
    ImagOp,
    IsFiniteOp,
    LogisticOp,
    LogOp,
    LogPlusOneOp,
    MaxOp,
    MinOp,
    MulOp,
    NegOp,
    NotOp,
    OrOp,
    PopulationCountOp,
    PowOp,
    RealOp,
    RemOp,
    RoundNearestEvenOp,
    RoundOp,
    RsqrtOp,
    ShiftLeftOp,
    ShiftRightArithmeticOp,
    ShiftRightLogicalOp,
    SignOp,
    SineOp,
    SqrtOp,
    SubtractOp,
    TanhOp,
    TanOp,
    XorOp,
)
from loom.dialects.stablehlo.gather_scatter import GatherOp, ScatterOp
from loom.dialects.stablehlo.reduction import ReduceOp, ReduceWindowOp, SortOp
from loom.dialects.stablehlo.rng import RngBitGeneratorOp
from loom.dialects.stablehlo.shape import (
    BroadcastInDimOp,
    ConcatenateOp,
    DynamicSliceOp,
    DynamicUpdateSliceOp,
    GetDimensionSizeOp,
    PadOp,
    ReshapeOp,
    ReverseOp,
    SliceOp,
    TransposeOp,
)
from loom.dialects.stablehlo.tuples_tokens import GetTupleElementOp, OptimizationBarrierOp, TupleOp
from loom.ir.attributes import Location
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value

__all__ = ["abs_", "cbrt", "ceil", "count_leading_zeros", "cosine", "exponential", "exponential_minus_one", "floor",
           "imag", "is_finite", "log", "log_plus_one", "logistic", "not_", "negate", "popcnt", "real",
           "round_nearest_afz", "round_nearest_even", "rsqrt", "sign", "sine", "sqrt", "tan", "tanh", "add", "atan2",
           "divide", "maximum", "minimum", "multiply", "power", "remainder", "shift_left", "shift_right_arithmetic",
           "shift_right_logical", "subtract", "and_", "or_", "xor", "complex_", "constant", "iota", "compare",
           "select", "clamp", "convert", "bitcast_convert", "broadcast_in_dim", "reshape", "transpose", "slice_",
           "dynamic_slice", "dynamic_update_slice", "concatenate", "pad", "reverse", "get_dimension_size",
           "dot_general", "convolution", "reduce", "reduce_window", "sort", "while_", "if_", "case", "gather",
           "scatter", "tuple_", "get_tuple_element", "optimization_barrier", "rng_bit_generator", "custom_call",
           "return_"]


def _value_builder(cls: type, fn_name: str) -> Callable[..., Any]:
    def build(builder: Builder | None, *args: Any, **kwargs: Any) -> Any:
        op = cls.build(builder, *args, **kwargs)
        return op.results[0] if len(op.results) == 1 else op.results
    build.__name__ = build.__qualname__ = fn_name
    build.__doc__ = f"Insert `{cls.name}` (see `{cls.__name__}.build`) and return its result (a tuple if several)."
    return build


# `stablehlo.add(builder, lhs, rhs)` and friends: insert the op, return its result value(s).
abs_ = _value_builder(AbsOp, "abs_")
cbrt = _value_builder(CbrtOp, "cbrt")
ceil = _value_builder(CeilOp, "ceil")
count_leading_zeros = _value_builder(CountLeadingZerosOp, "count_leading_zeros")
cosine = _value_builder(CosineOp, "cosine")
exponential = _value_builder(ExponentialOp, "exponential")
exponential_minus_one = _value_builder(ExponentialMinusOneOp, "exponential_minus_one")
floor = _value_builder(FloorOp, "floor")
imag = _value_builder(ImagOp, "imag")
is_finite = _value_builder(IsFiniteOp, "is_finite")
log = _value_builder(LogOp, "log")
log_plus_one = _value_builder(LogPlusOneOp, "log_plus_one")
logistic = _value_builder(LogisticOp, "logistic")
not_ = _value_builder(NotOp, "not_")
negate = _value_builder(NegOp, "negate")
popcnt = _value_builder(PopulationCountOp, "popcnt")
real = _value_builder(RealOp, "real")
round_nearest_afz = _value_builder(RoundOp, "round_nearest_afz")
round_nearest_even = _value_builder(RoundNearestEvenOp, "round_nearest_even")
rsqrt = _value_builder(RsqrtOp, "rsqrt")
sign = _value_builder(SignOp, "sign")
sine = _value_builder(SineOp, "sine")
sqrt = _value_builder(SqrtOp, "sqrt")
tan = _value_builder(TanOp, "tan")
tanh = _value_builder(TanhOp, "tanh")
add = _value_builder(AddOp, "add")
atan2 = _value_builder(Atan2Op, "atan2")
divide = _value_builder(DivOp, "divide")
maximum = _value_builder(MaxOp, "maximum")
minimum = _value_builder(MinOp, "minimum")
multiply = _value_builder(MulOp, "multiply")
power = _value_builder(PowOp, "power")
remainder = _value_builder(RemOp, "remainder")
shift_left = _value_builder(ShiftLeftOp, "shift_left")
shift_right_arithmetic = _value_builder(ShiftRightArithmeticOp, "shift_right_arithmetic")
shift_right_logical = _value_builder(ShiftRightLogicalOp, "shift_right_logical")
subtract = _value_builder(SubtractOp, "subtract")
and_ = _value_builder(AndOp, "and_")
or_ = _value_builder(OrOp, "or_")
xor = _value_builder(XorOp, "xor")
complex_ = _value_builder(ComplexOp, "complex_")
constant = _value_builder(ConstantOp, "constant")
iota = _value_builder(IotaOp, "iota")
compare = _value_builder(CompareOp, "compare")
select = _value_builder(SelectOp, "select")
clamp = _value_builder(ClampOp, "clamp")
convert = _value_builder(ConvertOp, "convert")
bitcast_convert = _value_builder(BitcastConvertOp, "bitcast_convert")
broadcast_in_dim = _value_builder(BroadcastInDimOp, "broadcast_in_dim")
reshape = _value_builder(ReshapeOp, "reshape")
transpose = _value_builder(TransposeOp, "transpose")
slice_ = _value_builder(SliceOp, "slice_")
dynamic_slice = _value_builder(DynamicSliceOp, "dynamic_slice")
dynamic_update_slice = _value_builder(DynamicUpdateSliceOp, "dynamic_update_slice")
concatenate = _value_builder(ConcatenateOp, "concatenate")
pad = _value_builder(PadOp, "pad")
reverse = _value_builder(ReverseOp, "reverse")
get_dimension_size = _value_builder(GetDimensionSizeOp, "get_dimension_size")
dot_general = _value_builder(DotGeneralOp, "dot_general")
convolution = _value_builder(ConvolutionOp, "convolution")
reduce = _value_builder(ReduceOp, "reduce")
reduce_window = _value_builder(ReduceWindowOp, "reduce_window")
sort = _value_builder(SortOp, "sort")
while_ = _value_builder(WhileOp, "while_")
if_ = _value_builder(IfOp, "if_")
case = _value_builder(CaseOp, "case")
gather = _value_builder(GatherOp, "gather")
scatter = _value_builder(ScatterOp, "scatter")
tuple_ = _value_builder(TupleOp, "tuple_")
get_tuple_element = _value_builder(GetTupleElementOp, "get_tuple_element")
optimization_barrier = _value_builder(OptimizationBarrierOp, "optimization_barrier")
rng_bit_generator = _value_builder(RngBitGeneratorOp, "rng_bit_generator")
custom_call = _value_builder(CustomCallOp, "custom_call")


def return_(builder: Builder, values: Sequence[Value], location: Location | None = None) -> Operation:
    """Insert `stablehlo.return` of `values` (a terminator: returns the op)."""
    return ReturnOp.build(builder, values, location)
