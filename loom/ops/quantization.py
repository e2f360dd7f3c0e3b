"""Quantized tensors: `uniform_quantize`, `uniform_dequantize`, and the spec's rule for the other ops
it allows on quantized tensors (`dequantize_op_quantize`): dequantize the quantized operands, run
the op on their expressed (float) values, quantize the quantized results.

A quantized tensor is held as an array of its storage integers (`tensor<4x!quant.uniform<i8:f32,
0.1:-3>>` is an int8 array). The spec's arithmetic (its "Quantization computations"):

    dequantize(q) = convert(q - zero_point, expressed) * scale
    quantize(x)   = convert(round_nearest_even(clamp(storage_min, x / scale + zero_point, storage_max)), storage)

with per-axis types taking the scale and zero point of each element's slice along the quantized
dimension. The subtraction is done in int64 (the spec's, in the storage type, cannot wrap for the
values it defines). Ops whose operands are float and quantized (the spec's hybrid dot_general and
convolution) dequantize the quantized ones and give a float result, the same rule.

Data movement (reshape, transpose, slice, concatenate, broadcast_in_dim, bitcast_convert, ...)
moves storage integers, as the spec's types of those ops keep the quantization parameters.

The rule wraps the kernels the op families register (so this module is imported after them): the
numpy kernel of an op with a quantized operand or result runs the float kernel of the op's
expressed twin between dequantize and quantize; the torch backend runs that numpy kernel on the
tensors' values (`torch_kernels.torch_kernel_for` takes no torch kernel for such an op).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from loom.backend.common import ExecutionError, shape_of
from loom.backend.kernels import ALL, KERNELS, Kernel
from loom.dialects.quant import UniformQuantizedType, check_quantized_tensor
from loom.ir.attributes import numpy_dtype
from loom.ir.core import Block, Operation
from loom.ir.types import RankedTensorType, Type
from loom.ops.registry import declare, register, unsupported


@dataclass(frozen=True, eq=False)
class Quantization:
    """The parameters of one quantized tensor type, as arrays broadcasting against its values."""

    scales: np.ndarray        # expressed dtype; shape (1,)*rank, or the slices along the dimension
    zero_points: np.ndarray   # int64, same shape
    storage_min: int
    storage_max: int
    storage: np.dtype
    expressed: np.dtype

    @staticmethod
    def of(t: Type) -> Quantization:
        et = t.element_type
        check_quantized_tensor(t)
        expressed = numpy_dtype(et.expressed_type)
        shape = [1] * len(shape_of(t))
        if et.is_per_axis:
            shape[et.quantized_dimension] = -1
        return Quantization(np.array(et.scales, expressed).reshape(shape),
                            np.array(et.zero_points, np.int64).reshape(shape), et.storage_min, et.storage_max,
                            numpy_dtype(et.storage_type), expressed)

    def dequantize(self, q: Any) -> np.ndarray:
        return (np.asarray(q, np.int64) - self.zero_points).astype(self.expressed) * self.scales

    def quantize(self, x: Any) -> np.ndarray:
        x = np.asarray(x, self.expressed)
        shifted = x / self.scales + self.zero_points.astype(self.expressed)
        clamped = np.clip(shifted, self.expressed.type(self.storage_min), self.expressed.type(self.storage_max))
        return np.rint(clamped).astype(self.storage)


def is_quantized(t: Type) -> bool:
    return isinstance(getattr(t, "element_type", None), UniformQuantizedType)


def expressed_type(t: Type) -> Type:
    """A quantized tensor type's float twin (`tensor<4x!quant.uniform<i8:f32, ...>>` -> `tensor<4xf32>`)."""
    if not is_quantized(t):
        return t
    return RankedTensorType(t.shape, t.element_type.expressed_type, t.encoding)


# uniform_quantize / uniform_dequantize -----------------------------------------------------------

def _uniform_quantize(op: Operation) -> Kernel:
    source, target = op.operands[0].type, op.results[0].type
    if not is_quantized(target):
        raise ExecutionError(f"'{op.name}' at {op.location}: the result type {target} is not quantized")
    out = Quantization.of(target)
    if is_quantized(source):
        return Kernel(requantize, Quantization.of(source), out, ALL)
    return Kernel(out.quantize, ALL)


def requantize(source: Quantization, target: Quantization, q: Any) -> np.ndarray:
    return target.quantize(source.dequantize(q))


def _uniform_dequantize(op: Operation) -> Kernel:
    source = op.operands[0].type
    if not is_quantized(source):
        raise ExecutionError(f"'{op.name}' at {op.location}: the operand type {source} is not quantized")
    return Kernel(Quantization.of(source).dequantize, ALL)


for _name, _maker in (("stablehlo.uniform_quantize", _uniform_quantize),
                      ("stablehlo.uniform_dequantize", _uniform_dequantize)):
    register(KERNELS, _name, _maker)
    declare(_name, unsupported("runs its numpy kernel on the tensors' values"), tables=("torch",))
declare(["stablehlo.uniform_quantize", "stablehlo.uniform_dequantize"],
        unsupported("quantization is run, not differentiated, batched or sharded"),
        tables=("jvp", "vjp", "batching", "sharding"))


# dequantize, op, quantize ------------------------------------------------------------------------

# The ops the spec defines on quantized tensors by dequantize_op_quantize (and its compare,
# select and hybrid variants, which are the same rule here).
DEQUANTIZE_OP_QUANTIZE = tuple(f"stablehlo.{n}" for n in (
    "abs", "add", "atan2", "batch_norm_grad", "batch_norm_inference", "batch_norm_training", "cbrt", "ceil",
    "cholesky", "clamp", "compare", "convolution", "cosine", "divide", "dot_general", "exponential",
    "exponential_minus_one", "floor", "log", "log_plus_one", "logistic", "maximum", "minimum", "multiply",
    "negate", "power", "reduce_precision", "remainder", "round_nearest_afz", "round_nearest_even", "rsqrt",
    "select", "sign", "sine", "sqrt", "subtract", "tan", "tanh", "triangular_solve"))


def expressed_twin(op: Operation) -> Operation:
    """A detached copy of `op` whose quantized operand and result types are their expressed
    types (the op the float kernel is made for)."""
    block = Block([expressed_type(v.type) for v in op.operands])
    return Operation.create(op.name, block.args, [expressed_type(r.type) for r in op.results],
                            dict(op.properties), dict(op.attributes), location=op.location)


def on_expressed_values(maker: Callable[[Operation], Kernel]) -> Callable[[Operation], Kernel]:
    """`maker`, and for an op with quantized operands or results, the spec's dequantize_op_quantize
    around the kernel `maker` makes for the op's expressed twin."""
    def make(op: Operation) -> Kernel:
        types = [v.type for v in (*op.operands, *op.results)]
        if not any(map(is_quantized, types)):
            return maker(op)
        inner = maker(expressed_twin(op))
        ins = tuple(Quantization.of(v.type) if is_quantized(v.type) else None for v in op.operands)
        outs = tuple(Quantization.of(r.type) if is_quantized(r.type) else None for r in op.results)
        return Kernel(dequantize_op_quantize, ins, inner, outs, ALL)
    make.__qualname__ = f"on_expressed_values({getattr(maker, '__qualname__', maker)})"
    return make


def dequantize_op_quantize(ins: tuple, inner: Kernel, outs: tuple, *operands: Any) -> Any:
    values = inner([x if q is None else q.dequantize(x) for q, x in zip(ins, operands)])
    if len(outs) == 1:
        return values if outs[0] is None else outs[0].quantize(values)
    return tuple(v if q is None else q.quantize(v) for q, v in zip(outs, values))


for _name in DEQUANTIZE_OP_QUANTIZE:
    if _name in KERNELS:
        KERNELS[_name] = on_expressed_values(KERNELS[_name])


__all__ = ["DEQUANTIZE_OP_QUANTIZE", "Quantization", "dequantize_op_quantize", "expressed_twin", "expressed_type",
           "is_quantized", "on_expressed_values"]
