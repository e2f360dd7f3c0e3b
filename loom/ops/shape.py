"""Shape ops: reshape, broadcast_in_dim, transpose, reverse, slice, pad, concatenate (their
derivatives and batching here, per op: each is linear, so its JVP applies the op to the tangent and
its VJP is the transpose), and iota, constants and the dynamic-shape forms.

Kernels (numpy) here, after the imports; torch kernels in `loom.ops.shape_torch`. What the ops lack
is declared at the end.
"""

from __future__ import annotations

import operator
from dataclasses import replace

import numpy as np

from loom.backend import common
from loom.backend.common import torch_kernels_in
from loom.backend.kernels import (
    NARROW_FLOATS,
    PACKED,
    Kernel,
    Operand,
    identity,
    kernel,
    operand_dtype,
    pad,
    reshape,
    result_dtype,
    result_shape,
)
from loom.dialects import stablehlo
from loom.ir.attributes import DenseArrayAttr, DenseElementsAttr
from loom.ir.core import Operation, Value
from loom.ir.types import RankedTensorType, Type, i64
from loom.ops.registry import declare, register, unsupported
from loom.transforms import autodiff, batching, forward_ad
from loom.transforms.autodiff import VJP_RULES, MissingRuleError, full, full_like, is_float, reduce_sum, unbroadcast
from loom.transforms.autodiff import props_ints as ints
from loom.transforms.batching import BATCH_RULES, bdim_to_front, moveaxis
from loom.transforms.forward_ad import JVP_RULES
from loom.transforms.rule_builders import rule, shape_of
from loom.transforms.sharding_propagation import SHARDING_RULES, Factors, identity_rule

# Kernels -----------------------------------------------------------------------------------------

# numpy kernels here; torch kernels in loom.ops.shape_torch (imported with torch)

@kernel("stablehlo.reshape")
def _reshape(op: Operation) -> Kernel:
    # the method, not np.reshape: that one goes through two Python frames of numpy's dispatch
    # (values here are ndarrays or numpy scalars, both of which have .reshape)
    return Kernel(reshape, Operand(0), result_shape(op))


@kernel("stablehlo.transpose")
def _transpose(op: Operation) -> Kernel:
    return Kernel(np.transpose, Operand(0), common.ints(op.get_attr("permutation")))


@kernel("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(op: Operation) -> Kernel:
    dims = common.ints(op.get_attr("broadcast_dimensions"))
    shape = result_shape(op)
    in_shape = common.shape_of(op.operands[0].type)
    if in_shape == shape and list(dims) == sorted(dims):
        return Kernel(identity)
    if list(dims) != sorted(dims):  # operand dims out of order: transpose first
        perm = tuple(sorted(range(len(dims)), key=lambda i: dims[i]))
        dims = tuple(sorted(dims))
        in_shape = tuple(in_shape[p] for p in perm)
        expanded = [1] * len(shape)
        for d, n in zip(dims, in_shape):
            expanded[d] = n
        return Kernel(broadcast_transposed, Operand(0), perm, tuple(expanded), shape)
    expanded = [1] * len(shape)
    for d, n in zip(dims, in_shape):
        expanded[d] = n
    return Kernel(broadcast_in_dim, Operand(0), tuple(expanded), shape)


def broadcast_in_dim(x, expanded, shape):
    return np.broadcast_to(np.reshape(x, expanded), shape)


def broadcast_transposed(x, perm, expanded, shape):
    return np.broadcast_to(np.reshape(np.transpose(x, perm), expanded), shape)


@kernel("stablehlo.slice")
def _slice(op: Operation) -> Kernel:
    starts = common.ints(op.get_attr("start_indices"))
    limits = common.ints(op.get_attr("limit_indices"))
    strides = common.ints(op.get_attr("strides"), [1] * len(starts))
    index = tuple(slice(s, e, k) for s, e, k in zip(starts, limits, strides))
    return Kernel(operator.getitem, Operand(0), index)


@kernel("stablehlo.concatenate")
def _concatenate(op: Operation) -> Kernel:
    return Kernel(np.concatenate, PACKED, common.integer(op.get_attr("dimension")))


@kernel("stablehlo.reverse")
def _reverse(op: Operation) -> Kernel:
    return Kernel(np.flip, Operand(0), common.ints(op.get_attr("dimensions")))


@kernel("stablehlo.iota")
def _iota(op: Operation) -> Kernel:
    return Kernel.constant(iota(result_shape(op), common.integer(op.get_attr("iota_dimension")), result_dtype(op)))


def iota(shape, dim, dtype):
    values = np.arange(shape[dim]).astype(dtype)
    expanded = [1] * len(shape)
    expanded[dim] = shape[dim]
    out = np.broadcast_to(values.reshape(expanded), shape)
    out.flags.writeable = False
    return out


@kernel("stablehlo.constant")
def _constant(op: Operation) -> Kernel:
    return Kernel.constant(common.dense_value(op.get_attr("value")))


@kernel("stablehlo.pad")
def _pad(op: Operation) -> Kernel:
    return Kernel(pad, Operand(0), Operand(1), common.ints(op.get_attr("edge_padding_low")),
                  common.ints(op.get_attr("edge_padding_high")), common.ints(op.get_attr("interior_padding")))


@kernel("stablehlo.get_dimension_size")
def _get_dimension_size(op: Operation) -> Kernel:
    return Kernel(get_dimension_size, Operand(0), common.integer(op.get_attr("dimension")))


def get_dimension_size(x, dim):
    return np.array(x.shape[dim], np.int32)


@kernel("stablehlo.dynamic_reshape")
def _dynamic_reshape(op: Operation) -> Kernel:
    return Kernel(dynamic_reshape)


def dynamic_reshape(x, shape):
    return np.reshape(x, tuple(int(s) for s in np.asarray(shape)))


@kernel("stablehlo.dynamic_iota")
def _dynamic_iota(op: Operation) -> Kernel:
    return Kernel(dynamic_iota, Operand(0), common.integer(op.get_attr("iota_dimension")), result_dtype(op))


def dynamic_iota(shape, dim, dtype):
    return iota(tuple(int(s) for s in np.asarray(shape)), dim, dtype)


@kernel("stablehlo.dynamic_broadcast_in_dim")
def _dynamic_broadcast_in_dim(op: Operation) -> Kernel:
    return Kernel(dynamic_broadcast_in_dim, Operand(0), Operand(1),
                  common.ints(op.get_attr("broadcast_dimensions")))


def dynamic_broadcast_in_dim(x, shape, dims):
    shape = tuple(int(s) for s in np.asarray(shape))
    expanded = [1] * len(shape)
    for d, n in zip(dims, np.shape(x)):
        expanded[d] = n
    return np.broadcast_to(np.reshape(x, expanded), shape)



@kernel("stablehlo.bitcast_convert")
def _bitcast_convert(op: Operation) -> Kernel:
    in_bits, out_bits = common.element_bits(op.operands[0].type), common.element_bits(op.results[0].type)
    dtype = result_dtype(op)
    in_dtype = operand_dtype(op)
    if in_bits == in_dtype.itemsize * 8 and out_bits == dtype.itemsize * 8 and in_dtype not in NARROW_FLOATS:
        return Kernel(bitcast_convert, Operand(0), dtype, result_shape(op))
    return Kernel(bitcast_convert_bits, Operand(0), operand_dtype(op), in_bits, dtype, out_bits, result_shape(op))


def bitcast_convert(x, dtype, shape):
    return np.ascontiguousarray(x).view(dtype).reshape(shape)


def bitcast_convert_bits(x, in_dtype, in_bits: int, dtype, out_bits: int, shape):
    """bitcast_convert where an element's bits do not fill its storage (i1 in a byte, i4 in int8,
    f4E2M1FN in a byte): the operand's `in_bits` low bits per element, little-endian, regrouped
    into `out_bits` per result element; the storage's high bits are zero (the sub-byte wrap after
    the op extends the sign of signed integers)."""
    x = np.ascontiguousarray(x, in_dtype)  # the torch backend holds float8 in float32
    raw = x.reshape(x.size, 1).view(np.uint8)
    bits = np.unpackbits(raw, axis=1, bitorder="little")[:, :in_bits].reshape(-1, out_bits)
    padded = np.zeros((bits.shape[0], dtype.itemsize * 8), np.uint8)
    padded[:, :out_bits] = bits
    return np.packbits(padded, axis=1, bitorder="little").view(dtype).reshape(shape)


torch_kernels_in("loom.ops.shape_torch")


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

# No derivative: constants have no operands, and a bit-exact reinterpretation carries no tangent or
# cotangent (vmap of cond uses a round trip through it as a stop-gradient). A reinterpretation of
# one width maps elements one to one, so it batches as an elementwise op (it has no Elementwise
# trait, since a change of width changes the shape).
for _name in ("stablehlo.constant", "stablehlo.iota", "stablehlo.bitcast_convert"):
    register(JVP_RULES, _name, forward_ad.zero_tangent)
    register(VJP_RULES, _name, autodiff.no_gradient)
register(BATCH_RULES, "stablehlo.bitcast_convert", batching.elementwise_rule)

DYNAMIC = unsupported("dynamic shapes: run for static programs exported by JAX, not traced by loom")
declare(["stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_iota", "stablehlo.dynamic_reshape",
         "stablehlo.get_dimension_size"], DYNAMIC, tables=("torch", "jvp", "vjp", "batching"))
declare("stablehlo.broadcast", unsupported("parsed and printed only: JAX emits broadcast_in_dim"))
declare(["chlo.constant", "chlo.constant_like"],
        unsupported("parsed and printed only: loom's front end emits stablehlo.constant"))


# --- sharding rules ----------------------------------------------------------------------------
# The dimensions an op keeps whole share a factor between operand and result; the others (a
# sliced, padded, reversed or concatenated dimension) need replication.

def _broadcast_in_dim_sharding(op):
    out, src = shape_of(op.results[0]), shape_of(op.operands[0])
    f = Factors()
    fs = [f.new(n) for n in out]
    return f.rule([[fs[d] if src[i] == out[d] else None for i, d in enumerate(ints(op, "broadcast_dimensions"))]],
                  [fs])


def _reshape_sharding(op):
    """Factors where the two shapes split cleanly (`[8, 6] -> [48]` is one dimension of factors
    8 and 6); a size that does not divide gives a factor needing replication on each side."""
    src, out = list(shape_of(op.operands[0])), list(shape_of(op.results[0]))
    f = Factors()
    a_dims: list[list[int]] = [[] for _ in src]
    b_dims: list[list[int]] = [[] for _ in out]
    blocked = set()
    i = j = 0
    ri, rj = (src[0] if src else 1), (out[0] if out else 1)
    while i < len(src) and j < len(out):
        if ri == 1 or rj == 1:
            if ri == 1:
                i += 1
                ri = src[i] if i < len(src) else 1
            if rj == 1:
                j += 1
                rj = out[j] if j < len(out) else 1
            continue
        if ri % rj == 0 or rj % ri == 0:
            k = f.new(min(ri, rj))
            a_dims[i].append(k)
            b_dims[j].append(k)
            ri, rj = ri // min(ri, rj), rj // min(ri, rj)
        else:
            for dims, at, size in ((a_dims, i, ri), (b_dims, j, rj)):
                k = f.new(size)
                dims[at].append(k)
                blocked.add(k)
            ri = rj = 1
    return f.rule([a_dims], [b_dims], need_replication=blocked)


def _transpose_sharding(op):
    f = Factors()
    fs = [f.new(n) for n in shape_of(op.operands[0])]
    return f.rule([fs], [[fs[p] for p in ints(op, "permutation")]])


def _kept_or_replicated(op, keep: list[bool], operands: list[int]):
    """Operands `operands` and the result share the factor of a kept dimension; the others get
    factors needing replication, one per tensor."""
    f = Factors()
    blocked = set()
    shared = [f.new(n) if k else None for n, k in zip(shape_of(op.results[0]), keep)]
    def dims(v):
        out = []
        for d, n in enumerate(shape_of(v)):
            if shared[d] is not None:
                out.append(shared[d])
            else:
                out.append(f.new(n))
                blocked.add(out[-1])
        return out
    return f.rule([dims(v) if i in operands else [None] * len(shape_of(v)) for i, v in enumerate(op.operands)],
                  [dims(r) for r in op.results], need_replication=blocked)


def _slice_sharding(op):
    src = shape_of(op.operands[0])
    keep = [s == 0 and e == n and k == 1 for s, e, k, n in
            zip(ints(op, "start_indices"), ints(op, "limit_indices"), ints(op, "strides"), src)]
    return replace(_kept_or_replicated(op, keep, [0]), localize=_slice_localize)


def _slice_localize(b, new, ctx):
    shape = ctx.local_shape()
    limits = [shape[d] if s == 0 and k == 1 and e == n else e for d, (s, e, k, n) in
              enumerate(zip(ints(new, "start_indices"), ints(new, "limit_indices"), ints(new, "strides"),
                            shape_of(ctx.op.operands[0])))]
    new.properties["limit_indices"] = DenseArrayAttr.get(i64, limits)


def _dynamic_slice_sharding(op):
    keep = [s == n for s, n in zip(ints(op, "slice_sizes"), shape_of(op.operands[0]))]
    return replace(_kept_or_replicated(op, keep, [0]), localize=_dynamic_slice_localize)


def _dynamic_slice_localize(b, new, ctx):
    new.properties["slice_sizes"] = DenseArrayAttr.get(i64, ctx.local_shape())


def _dynamic_update_slice_sharding(op):
    keep = [u == n for u, n in zip(shape_of(op.operands[1]), shape_of(op.operands[0]))]
    return _kept_or_replicated(op, keep, [0, 1])


def _concatenate_sharding(op):
    d = int(op.properties["dimension"].value)
    return _kept_or_replicated(op, [i != d for i in range(len(shape_of(op.results[0])))],
                               list(range(len(op.operands))))


def _pad_sharding(op):
    keep = [lo == 0 and hi == 0 and it == 0 for lo, hi, it in
            zip(ints(op, "edge_padding_low"), ints(op, "edge_padding_high"), ints(op, "interior_padding"))]
    return _kept_or_replicated(op, keep, [0])


def _reverse_sharding(op):
    rev = set(ints(op, "dimensions"))
    return _kept_or_replicated(op, [d not in rev for d in range(len(shape_of(op.results[0])))], [0])


def _iota_sharding(op):
    return replace(identity_rule(op), localize=_iota_localize)


def _iota_localize(b, new, ctx):
    """The local iota counts from this partition's first index along the iota dimension."""
    d = int(new.properties["iota_dimension"].value)
    start = ctx.offset(d)
    if start is None:
        return None
    t = new.results[0].type
    scalar_t = RankedTensorType((), t.element_type)
    start = b.create("stablehlo.convert", [start], [scalar_t]).results[0]
    start = b.create("stablehlo.broadcast_in_dim", [start], [t],
                     {"broadcast_dimensions": DenseArrayAttr.get(i64, [])}).results[0]
    return [b.create("stablehlo.add", [new.results[0], start], [t]).results[0]]


def _constant_sharding(op):
    """A splat is the same on every partition (made at the local shape); other constants are
    made whole and then sliced."""
    rule_ = identity_rule(op)
    if not op.properties["value"].splat:
        return replace(rule_, need_replication=frozenset(range(len(rule_.sizes))))
    return replace(rule_, localize=_constant_localize)


def _constant_localize(b, new, ctx):
    value = new.properties["value"]
    new.properties["value"] = DenseElementsAttr(new.results[0].type, value.raw, True)


for _name, _rule in {"stablehlo.broadcast_in_dim": _broadcast_in_dim_sharding, "stablehlo.reshape": _reshape_sharding,
                     "stablehlo.transpose": _transpose_sharding, "stablehlo.slice": _slice_sharding,
                     "stablehlo.dynamic_slice": _dynamic_slice_sharding,
                     "stablehlo.dynamic_update_slice": _dynamic_update_slice_sharding,
                     "stablehlo.concatenate": _concatenate_sharding, "stablehlo.pad": _pad_sharding,
                     "stablehlo.reverse": _reverse_sharding, "stablehlo.iota": _iota_sharding,
                     "stablehlo.constant": _constant_sharding}.items():
    register(SHARDING_RULES, _name, _rule)
declare(["stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_iota", "stablehlo.dynamic_reshape",
         "stablehlo.get_dimension_size", "stablehlo.dynamic_pad", "stablehlo.real_dynamic_slice",
         "stablehlo.set_dimension_size", "stablehlo.broadcast", "chlo.constant", "chlo.constant_like"],
        unsupported("dynamic shapes and forms loom's front end does not emit: run replicated"), tables=("sharding",))


def _bitcast_convert_sharding(op):
    """Same shape: elementwise; a changed bit width adds or drops a last dimension that stays whole."""
    if shape_of(op.operands[0]) == shape_of(op.results[0]):
        return identity_rule(op)
    src, out = shape_of(op.operands[0]), shape_of(op.results[0])
    f = Factors()
    lead = [f.new(n) for n in (src if len(src) < len(out) else out)]
    extra = f.new((src if len(src) > len(out) else out)[-1])
    dims_in = lead + [extra] if len(src) > len(out) else lead
    dims_out = lead + [extra] if len(out) > len(src) else lead
    return f.rule([dims_in], [dims_out], need_replication={extra})


register(SHARDING_RULES, "stablehlo.bitcast_convert", _bitcast_convert_sharding)
