"""Small IR builders shared by the derivative rules (loom/ops) and the transformations: splat
constants, sums over axes, the transpose of a broadcast, and the test of whether a type carries
derivatives."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loom.dialects import stablehlo
from loom.ir.attributes import numpy_dtype
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.types import FloatType, RankedTensorType, Type


def is_float(t: Type) -> bool:
    """Whether `t` is a tensor (or scalar) of a floating-point element type."""
    et = t.element_type if isinstance(t, RankedTensorType) else t
    return isinstance(et, FloatType)


# --- helpers emitting ops -----------------------------------------------------------------------


def _shape(v: Value) -> tuple[int, ...]:
    return tuple(v.type.shape)


def _element(v: Value) -> Type:
    return v.type.element_type


def full(b: Builder, value: float, type: RankedTensorType) -> Value:
    """A splat constant `value` of tensor type `type`."""
    return stablehlo.constant(b, np.asarray(value, dtype=numpy_dtype(type.element_type)), type)


def full_like(b: Builder, value: float, v: Value) -> Value:
    """A splat constant `value` of the type of `v`."""
    return full(b, value, v.type)


def reduce_sum(b: Builder, v: Value, axes: Sequence[int]) -> Value:
    """`v` summed over `axes` (a `stablehlo.reduce` with an add body)."""
    if not axes:
        return v
    zero = full(b, 0, RankedTensorType((), _element(v), None))
    return stablehlo.reduce(b, [v], [zero], sorted(axes), lambda bb, args: [stablehlo.add(bb, args[0], args[1])])


def unbroadcast(b: Builder, g: Value, operand: Value, dims: Sequence[int]) -> Value:
    """The transpose of `broadcast_in_dim(operand, shape(g), dims)`: sum `g` over the broadcast
    dimensions and back to the operand's shape and dimension order."""
    in_shape, out_shape = _shape(operand), _shape(g)
    collapsed = [j for j, d in enumerate(dims) if in_shape[j] == 1 and out_shape[d] != 1]
    kept = [j for j in range(len(dims)) if j not in collapsed]
    axes = [i for i in range(len(out_shape)) if i not in dims] + [dims[j] for j in collapsed]
    v = reduce_sum(b, g, axes)
    sorted_kept = sorted(dims[j] for j in kept)
    perm = [sorted_kept.index(dims[j]) for j in kept]
    if perm != list(range(len(perm))):
        v = stablehlo.transpose(b, v, perm)
    if _shape(v) != in_shape:
        v = stablehlo.reshape(b, v, in_shape)
    return v


def props_ints(op: Operation, name: str) -> list[int]:
    """The integers of an array/dense property of `op` (empty when it is absent)."""
    attr = op.properties.get(name)
    if attr is None:
        return []
    values = getattr(attr, "values", None)
    if values is None:
        values = attr.to_numpy().tolist() if hasattr(attr, "to_numpy") else list(attr)
    return [int(x) for x in values]


__all__ = ["full", "full_like", "is_float", "props_ints", "reduce_sum", "unbroadcast"]
