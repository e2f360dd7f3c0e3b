"""Shape ops: reshape, broadcast_in_dim, transpose, reverse, slice, pad, concatenate (their
derivatives and batching here, per op: each is linear, so its JVP applies the op to the tangent and
its VJP is the transpose), and iota, constants and the dynamic-shape forms.

Kernels in `loom.backend.kernels_numpy` / `kernels_torch`. What the ops lack is declared at the end.
"""

from __future__ import annotations

import numpy as np

from loom.dialects import stablehlo
from loom.ir.core import Value
from loom.ir.types import RankedTensorType, Type
from loom.ops.registry import declare, unsupported
from loom.transforms import autodiff, batching
from loom.transforms.autodiff import VJP_RULES, MissingRuleError, full, full_like, is_float, reduce_sum, unbroadcast
from loom.transforms.autodiff import props_ints as ints
from loom.transforms.batching import BATCH_RULES, bdim_to_front, moveaxis
from loom.transforms.forward_ad import JVP_RULES
from loom.transforms.rule_builders import rule, shape_of


def _element(v: Value) -> Type:
    return v.type.element_type


def tangent_or_zeros(b, t: Value | None, like: Value) -> Value:
    """`t`, or zeros of the type of `like` when `t` is None (a zero tangent)."""
    return t if t is not None else full(b, 0, like.type)


# --- broadcast_in_dim ------------------------------------------------------------------------


@rule(JVP_RULES, "stablehlo.broadcast_in_dim")
def _broadcast_in_dim_jvp(b, op, xs, ts):
    return [stablehlo.broadcast_in_dim(b, ts[0], shape_of(op.results[0]), ints(op, "broadcast_dimensions"))]


@rule(VJP_RULES, "stablehlo.broadcast_in_dim")
def _broadcast_in_dim_vjp(b, op, cts):
    return [unbroadcast(b, cts[0], op.operands[0], ints(op, "broadcast_dimensions"))]


@rule(BATCH_RULES, "stablehlo.broadcast_in_dim")
def _broadcast_in_dim_batch(b, op, args, dims):
    x, d = args[0], dims[0]
    size = shape_of(x)[d]
    x = moveaxis(b, x, d, 0)
    out_dims = [0] + [i + 1 for i in ints(op, "broadcast_dimensions")]
    return [stablehlo.broadcast_in_dim(b, x, (size, *shape_of(op.results[0])), out_dims)], [0]


# --- reshape ---------------------------------------------------------------------------------


@rule(JVP_RULES, "stablehlo.reshape")
def _reshape_jvp(b, op, xs, ts):
    return [stablehlo.reshape(b, ts[0], shape_of(op.results[0]))]


@rule(VJP_RULES, "stablehlo.reshape")
def _reshape_vjp(b, op, cts):
    return [stablehlo.reshape(b, cts[0], shape_of(op.operands[0]))]


@rule(BATCH_RULES, "stablehlo.reshape")
def _reshape_batch(b, op, args, dims):
    x = moveaxis(b, args[0], dims[0], 0)
    return [stablehlo.reshape(b, x, (shape_of(x)[0], *shape_of(op.results[0])))], [0]


# --- transpose -------------------------------------------------------------------------------


@rule(JVP_RULES, "stablehlo.transpose")
def _transpose_jvp(b, op, xs, ts):
    return [stablehlo.transpose(b, ts[0], ints(op, "permutation"))]


@rule(VJP_RULES, "stablehlo.transpose")
def _transpose_vjp(b, op, cts):
    perm = ints(op, "permutation")
    return [stablehlo.transpose(b, cts[0], list(np.argsort(perm)))]


@rule(BATCH_RULES, "stablehlo.transpose")
def _transpose_batch(b, op, args, dims):
    x = moveaxis(b, args[0], dims[0], 0)
    return [stablehlo.transpose(b, x, [0] + [p + 1 for p in ints(op, "permutation")])], [0]


# --- reverse ---------------------------------------------------------------------------------


@rule(JVP_RULES, "stablehlo.reverse")
def _reverse_jvp(b, op, xs, ts):
    return [stablehlo.reverse(b, ts[0], ints(op, "dimensions"))]


@rule(VJP_RULES, "stablehlo.reverse")
def _reverse_vjp(b, op, cts):
    return [stablehlo.reverse(b, cts[0], ints(op, "dimensions"))]


@rule(BATCH_RULES, "stablehlo.reverse")
def _reverse_batch(b, op, args, dims):
    x = moveaxis(b, args[0], dims[0], 0)
    return [stablehlo.reverse(b, x, [i + 1 for i in ints(op, "dimensions")])], [0]


# --- slice -----------------------------------------------------------------------------------


@rule(JVP_RULES, "stablehlo.slice")
def _slice_jvp(b, op, xs, ts):
    return [stablehlo.slice_(b, ts[0], ints(op, "start_indices"), ints(op, "limit_indices"), ints(op, "strides"))]


@rule(VJP_RULES, "stablehlo.slice")
def _slice_vjp(b, op, cts):
    x, g = op.operands[0], cts[0]
    starts, strides = ints(op, "start_indices"), ints(op, "strides")
    if 0 in shape_of(g):
        return [full_like(b, 0, x)]
    low, high, interior = [], [], []
    for size, start, stride, n in zip(shape_of(x), starts, strides, shape_of(g)):
        low.append(start)
        interior.append(stride - 1)
        high.append(size - start - (n - 1) * stride - 1)
    zero = full(b, 0, RankedTensorType((), _element(g), None))
    return [stablehlo.pad(b, g, zero, low, high, interior)]


@rule(BATCH_RULES, "stablehlo.slice")
def _slice_batch(b, op, args, dims):
    x = moveaxis(b, args[0], dims[0], 0)
    strides = ints(op, "strides") or [1] * (len(shape_of(x)) - 1)
    return [stablehlo.slice_(b, x, [0, *ints(op, "start_indices")], [shape_of(x)[0], *ints(op, "limit_indices")],
                             [1, *strides])], [0]


# --- pad -------------------------------------------------------------------------------------


@rule(JVP_RULES, "stablehlo.pad")
def _pad_jvp(b, op, xs, ts):
    x, padding = xs
    return [stablehlo.pad(b, tangent_or_zeros(b, ts[0], x), tangent_or_zeros(b, ts[1], padding),
                          ints(op, "edge_padding_low"), ints(op, "edge_padding_high"), ints(op, "interior_padding"))]


@rule(VJP_RULES, "stablehlo.pad")
def _pad_vjp(b, op, cts):
    x, g = op.operands[0], cts[0]
    low, interior = ints(op, "edge_padding_low"), ints(op, "interior_padding")
    if any(v < 0 for v in low) or any(v < 0 for v in ints(op, "edge_padding_high")):
        raise MissingRuleError(f"the {autodiff.TRANSFORMATION} rule of stablehlo.pad does not handle negative padding")
    limits = [lo + (n - 1) * (i + 1) + 1 if n else lo for lo, n, i in zip(low, shape_of(x), interior)]
    gx = stablehlo.slice_(b, g, low, limits, [i + 1 for i in interior])
    gpad = reduce_sum(b, g, list(range(len(shape_of(g))))) if is_float(op.operands[1].type) else None
    if gpad is not None:  # the padding value gets the cotangents of the padded positions
        gpad = stablehlo.subtract(b, gpad, reduce_sum(b, gx, list(range(len(shape_of(gx))))))
    return [gx, gpad]


@rule(BATCH_RULES, "stablehlo.pad")
def _pad_batch(b, op, args, dims):
    if dims[1] is not None:
        raise batching.MissingRuleError(f"the {batching.TRANSFORMATION} transformation has no rule for op "
                                         f"'{op.name}' with a batched padding value (at {op.location})")
    x = moveaxis(b, args[0], dims[0], 0)
    return [stablehlo.pad(b, x, args[1], [0, *ints(op, "edge_padding_low")], [0, *ints(op, "edge_padding_high")],
                          [0, *(ints(op, "interior_padding") or [0] * (len(shape_of(x)) - 1))])], [0]


# --- concatenate -----------------------------------------------------------------------------


@rule(JVP_RULES, "stablehlo.concatenate")
def _concatenate_jvp(b, op, xs, ts):
    parts = [tangent_or_zeros(b, t, x) for x, t in zip(xs, ts)]
    return [stablehlo.concatenate(b, parts, int(op.properties["dimension"].value))]


@rule(VJP_RULES, "stablehlo.concatenate")
def _concatenate_vjp(b, op, cts):
    g = cts[0]
    axis = int(op.properties["dimension"].value)
    out: list[Value | None] = []
    offset = 0
    for x in op.operands:
        shape = shape_of(x)
        starts = [0] * len(shape)
        limits = list(shape_of(g))
        starts[axis], limits[axis] = offset, offset + shape[axis]
        out.append(stablehlo.slice_(b, g, starts, limits))
        offset += shape[axis]
    return out


@rule(BATCH_RULES, "stablehlo.concatenate")
def _concatenate_batch(b, op, args, dims):
    size = next(shape_of(v)[k] for v, k in zip(args, dims) if k is not None)
    parts = [bdim_to_front(b, v, d, size) for v, d in zip(args, dims)]
    return [stablehlo.concatenate(b, parts, int(op.properties["dimension"].value) + 1)], [0]


# Constants need no torch kernel: the numpy kernel's value is a compile-time constant that the
# torch executor places on the device as it is.
declare(["stablehlo.constant", "stablehlo.iota"],
        unsupported("a compile-time constant: the numpy kernel's value is placed on the device"), tables=("torch",))
declare(["stablehlo.constant", "stablehlo.iota"],
        unsupported("an unbatched constant: vmap leaves it unbatched without a rule"), tables=("batching",))

DYNAMIC = unsupported("dynamic shapes: run for static programs exported by JAX, not traced by loom")
declare(["stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_iota", "stablehlo.dynamic_reshape",
         "stablehlo.get_dimension_size"], DYNAMIC, tables=("torch", "jvp", "vjp", "batching"))
declare(["stablehlo.dynamic_pad", "stablehlo.real_dynamic_slice", "stablehlo.set_dimension_size",
         "stablehlo.broadcast"], unsupported("parsed and printed only: JAX emits broadcast_in_dim and static "
                                             "shapes"))
declare(["chlo.constant", "chlo.constant_like"],
        unsupported("parsed and printed only: loom's front end emits stablehlo.constant"))
