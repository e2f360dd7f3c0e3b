"""IR-building helpers shared by the op families' rules (loom/ops) and the front end: clamped
start indices and in-bounds masks of gathers and scatters, convolution dimension numbers in JAX's
spec terms, `take_along` (a permutation applied along one dimension), and small builders."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from loom.dialects import stablehlo
from loom.dialects.stablehlo import ConvDimensionNumbers, GatherDimensionNumbers
from loom.ir.attributes import numpy_dtype
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.types import IntegerType, RankedTensorType
from loom.transforms.autodiff import MissingRuleError, full

I32 = IntegerType(32)


# --- helpers -----------------------------------------------------------------------------------


def shape_of(v: Value) -> tuple[int, ...]:
    return tuple(v.type.shape)


def int_property(op: Operation, name: str, default: int) -> int:
    attr = op.properties.get(name)
    return default if attr is None else int(attr.value)


def zeros_like(b: Builder, like: Value) -> Value:
    return full(b, 0, like.type)


def scalar_constant(b: Builder, value: float, et) -> Value:
    return full(b, value, RankedTensorType((), et, None))


def missing_rule(transformation: str, op: Operation, why: str) -> MissingRuleError:
    return MissingRuleError(f"the {transformation} transformation has no rule for op '{op.name}' {why} "
                            f"(at {op.location})")


def with_regions(b: Builder, op: Operation, operands: Sequence[Value], types: Sequence, props: dict) -> Operation:
    """A copy of `op` (its regions cloned) on new operands, result types and properties."""
    new = Operation.create(op.name, list(operands), list(types), props, dict(op.attributes), (), (), b.location)
    for region in op.regions:
        new.add_region(region.clone({}))
    return b.insert(new)


def batched_type(t: RankedTensorType, size: int) -> RankedTensorType:
    return RankedTensorType((size, *t.shape), t.element_type, None)


def rule(table: dict, *names: str) -> Callable:
    def register(fn: Callable) -> Callable:
        for n in names:
            table[n] = fn
        return fn
    return register


def add_body(bb: Builder, args: list[Value]) -> list[Value]:
    return [stablehlo.add(bb, args[0], args[1])]


def index_vector_components(indices: Value, index_vector_dim: int) -> int:
    shape = shape_of(indices)
    return 1 if index_vector_dim == len(shape) else shape[index_vector_dim]


def per_component(indices: Value, index_vector_dim: int, values: Sequence[int]) -> np.ndarray:
    """An array of the indices' shape holding `values[k]` at index vector component k."""
    shape = shape_of(indices)
    dtype = numpy_dtype(indices.type.element_type)
    if index_vector_dim == len(shape):
        return np.full(shape, values[0] if values else 0, dtype)
    vec_shape = [1] * len(shape)
    vec_shape[index_vector_dim] = len(values)
    return np.broadcast_to(np.asarray(values, dtype).reshape(vec_shape), shape)


def clamp_starts(b: Builder, indices: Value, index_map: Sequence[int], index_vector_dim: int,
                  operand_shape: Sequence[int], sizes: Sequence[int]) -> Value:
    """The start indices clamped into `[0, operand - window]`, as gather and dynamic_slice do."""
    hi = per_component(indices, index_vector_dim, [operand_shape[d] - sizes[d] for d in index_map])
    lo = np.zeros_like(hi)
    return stablehlo.clamp(b, stablehlo.constant(b, np.ascontiguousarray(lo), indices.type), indices,
                           stablehlo.constant(b, np.ascontiguousarray(hi), indices.type))


def in_bounds(b: Builder, indices: Value, index_map: Sequence[int], index_vector_dim: int,
               operand_shape: Sequence[int], sizes: Sequence[int]) -> Value:
    """A bool tensor over the indices' batch dimensions: whether each window lies in bounds (the
    windows scatter applies; the others are dropped)."""
    hi = per_component(indices, index_vector_dim, [operand_shape[d] - sizes[d] for d in index_map])
    hi_v = stablehlo.constant(b, np.ascontiguousarray(hi), indices.type)
    ok = stablehlo.and_(b, stablehlo.compare(b, indices, zeros_like(b, indices), "GE"),
                        stablehlo.compare(b, indices, hi_v, "LE"))
    rank = len(shape_of(indices))
    if index_vector_dim == rank:
        return ok
    true = stablehlo.constant(b, np.asarray(True), RankedTensorType((), IntegerType(1), None))
    return stablehlo.reduce(b, [ok], [true], [index_vector_dim],
                            lambda bb, args: [stablehlo.and_(bb, args[0], args[1])])



def dimension_numbers(lhs_spec: Sequence[int], rhs_spec: Sequence[int], out_spec: Sequence[int]
                       ) -> ConvDimensionNumbers:
    return ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0], input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=tuple(lhs_spec[2:]), kernel_output_feature_dimension=rhs_spec[0],
        kernel_input_feature_dimension=rhs_spec[1], kernel_spatial_dimensions=tuple(rhs_spec[2:]),
        output_batch_dimension=out_spec[0], output_feature_dimension=out_spec[1],
        output_spatial_dimensions=tuple(out_spec[2:]))



def take_along(b: Builder, v: Value, perm: Value, dim: int) -> Value:
    """`take_along_axis(v, perm, dim)` for `perm` of `v`'s shape: one gather whose every other
    dimension is a batching dimension."""
    rank = len(shape_of(v))
    others = tuple(d for d in range(rank) if d != dim)
    indices = stablehlo.reshape(b, perm, (*shape_of(perm), 1))
    dn = GatherDimensionNumbers.get(collapsed_slice_dims=(dim,), operand_batching_dims=others,
                                    start_indices_batching_dims=others, start_index_map=(dim,),
                                    index_vector_dim=rank)
    return stablehlo.gather(b, v, indices, dn, [1] * rank)



__all__ = ["I32", "add_body", "batched_type", "clamp_starts", "dimension_numbers", "in_bounds",
           "index_vector_components", "int_property", "missing_rule", "per_component", "rule", "scalar_constant",
           "shape_of", "take_along", "with_regions", "zeros_like"]
