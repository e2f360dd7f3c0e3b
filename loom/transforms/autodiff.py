"""Reverse-mode automatic differentiation as an IR-to-IR transformation.

`vjp_function(fn, wrt, cotangent_outputs)` takes a `func.func` of StableHLO and builds a new
`func.func` that takes the original arguments followed by one cotangent per chosen output, and
returns the original outputs followed by the cotangent (vector-Jacobian product) of each chosen
argument. The forward ops are copied, then walked in reverse; each op's cotangent rule, looked up
by op name in this transformation's own table `VJP_RULES` (as JAX's `ad.primitive_transposes`),
emits the ops computing the cotangents of its operands. Cotangents reaching one value from
several uses are summed with `stablehlo.add`. Values of integer or boolean type carry no
cotangent; an argument that receives none gets zeros. An op on the differentiated path without a
rule raises `MissingRuleError`, naming the op and the transformation.

A rule is `rule(builder, op, cotangents) -> list[Value | None]`: `op` is the copied forward op
(its operands and results are values of the new function), `cotangents` holds one entry per
result (None for a zero cotangent) and the rule returns one entry per operand (None for zero).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from loom.dialects import builtin, func, stablehlo
from loom.dialects.stablehlo import DotDimensionNumbers
from loom.ir.attributes import TypeAttr, numpy_dtype
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Operation, Value
from loom.ir.types import FloatType, FunctionType, IntegerType, RankedTensorType, Type

TRANSFORMATION = "vjp"

VjpRule = Callable[[Builder, Operation, list["Value | None"]], list["Value | None"]]
VJP_RULES: dict[str, VjpRule] = {}


class MissingRuleError(NotImplementedError):
    """An op on the differentiated path has no rule in `VJP_RULES`."""


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


def _props_ints(op: Operation, name: str) -> list[int]:
    attr = op.properties.get(name)
    if attr is None:
        return []
    values = getattr(attr, "values", None)
    if values is None:
        values = attr.to_numpy().tolist() if hasattr(attr, "to_numpy") else list(attr)
    return [int(x) for x in values]


# --- rules -------------------------------------------------------------------------------------


def _rule(*names: str) -> Callable[[VjpRule], VjpRule]:
    def register(fn: VjpRule) -> VjpRule:
        for n in names:
            VJP_RULES[n] = fn
        return fn
    return register


def _no_gradient(b: Builder, op: Operation, cts: list[Value | None]) -> list[Value | None]:
    return [None] * len(op.operands)


for _name in ("stablehlo.compare", "stablehlo.constant", "stablehlo.iota", "stablehlo.sign", "stablehlo.floor",
              "stablehlo.ceil", "stablehlo.round_nearest_even", "stablehlo.round_nearest_afz",
              "stablehlo.is_finite", "stablehlo.and", "stablehlo.or", "stablehlo.not", "stablehlo.xor"):
    VJP_RULES[_name] = _no_gradient


@_rule("stablehlo.add")
def _add(b, op, cts):
    return [cts[0], cts[0]]


@_rule("stablehlo.subtract")
def _subtract(b, op, cts):
    return [cts[0], stablehlo.negate(b, cts[0])]


@_rule("stablehlo.negate")
def _negate(b, op, cts):
    return [stablehlo.negate(b, cts[0])]


@_rule("stablehlo.multiply")
def _multiply(b, op, cts):
    x, y = op.operands
    return [stablehlo.multiply(b, cts[0], y), stablehlo.multiply(b, x, cts[0])]


@_rule("stablehlo.divide")
def _divide(b, op, cts):
    x, y = op.operands
    g, z = cts[0], op.results[0]
    return [stablehlo.divide(b, g, y), stablehlo.negate(b, stablehlo.divide(b, stablehlo.multiply(b, g, z), y))]


@_rule("stablehlo.exponential")
def _exponential(b, op, cts):
    return [stablehlo.multiply(b, cts[0], op.results[0])]


@_rule("stablehlo.exponential_minus_one")
def _expm1(b, op, cts):
    z = op.results[0]
    return [stablehlo.multiply(b, cts[0], stablehlo.add(b, z, full_like(b, 1, z)))]


@_rule("stablehlo.log")
def _log(b, op, cts):
    return [stablehlo.divide(b, cts[0], op.operands[0])]


@_rule("stablehlo.log_plus_one")
def _log1p(b, op, cts):
    x = op.operands[0]
    return [stablehlo.divide(b, cts[0], stablehlo.add(b, x, full_like(b, 1, x)))]


@_rule("stablehlo.tanh")
def _tanh(b, op, cts):
    z = op.results[0]
    one_minus = stablehlo.subtract(b, full_like(b, 1, z), stablehlo.multiply(b, z, z))
    return [stablehlo.multiply(b, cts[0], one_minus)]


@_rule("stablehlo.logistic")
def _logistic(b, op, cts):
    z = op.results[0]
    dz = stablehlo.multiply(b, z, stablehlo.subtract(b, full_like(b, 1, z), z))
    return [stablehlo.multiply(b, cts[0], dz)]


@_rule("stablehlo.sine")
def _sine(b, op, cts):
    return [stablehlo.multiply(b, cts[0], stablehlo.cosine(b, op.operands[0]))]


@_rule("stablehlo.cosine")
def _cosine(b, op, cts):
    return [stablehlo.negate(b, stablehlo.multiply(b, cts[0], stablehlo.sine(b, op.operands[0])))]


@_rule("stablehlo.sqrt")
def _sqrt(b, op, cts):
    z = op.results[0]
    return [stablehlo.divide(b, cts[0], stablehlo.multiply(b, z, full_like(b, 2, z)))]


@_rule("stablehlo.rsqrt")
def _rsqrt(b, op, cts):
    x, z = op.operands[0], op.results[0]
    dz = stablehlo.multiply(b, stablehlo.divide(b, z, x), full_like(b, -0.5, z))
    return [stablehlo.multiply(b, cts[0], dz)]


@_rule("stablehlo.power")
def _power(b, op, cts):
    x, y = op.operands
    g, z = cts[0], op.results[0]
    # as JAX: d/dx = y * x^(y-1) (0 where y == 0); d/dy = z * log(x) (0 where x == 0)
    zero_y = stablehlo.compare(b, y, full_like(b, 0, y), "EQ")
    dx = stablehlo.multiply(b, y, stablehlo.power(b, x, stablehlo.subtract(b, y, full_like(b, 1, y))))
    dx = stablehlo.select(b, zero_y, full_like(b, 0, x), dx)
    out: list[Value | None] = [stablehlo.multiply(b, g, dx), None]
    if is_float(y.type):
        zero_x = stablehlo.compare(b, x, full_like(b, 0, x), "EQ")
        safe_x = stablehlo.select(b, zero_x, full_like(b, 1, x), x)
        out[1] = stablehlo.multiply(b, g, stablehlo.multiply(b, z, stablehlo.log(b, safe_x)))
    return out


@_rule("stablehlo.abs")
def _abs(b, op, cts):
    return [stablehlo.multiply(b, cts[0], stablehlo.sign(b, op.operands[0]))]


def _balanced_eq(b: Builder, x: Value, z: Value, y: Value) -> Value:
    """1 where x == z != y, 0.5 where x == z == y, else 0 (JAX's tie splitting for max / min)."""
    half, one, zero = full_like(b, 0.5, z), full_like(b, 1, z), full_like(b, 0, z)
    inner = stablehlo.select(b, stablehlo.compare(b, y, z, "EQ"), half, one)
    return stablehlo.select(b, stablehlo.compare(b, x, z, "EQ"), inner, zero)


@_rule("stablehlo.maximum", "stablehlo.minimum")
def _max_min(b, op, cts):
    x, y = op.operands
    z, g = op.results[0], cts[0]
    return [stablehlo.multiply(b, g, _balanced_eq(b, x, z, y)), stablehlo.multiply(b, g, _balanced_eq(b, y, z, x))]


@_rule("stablehlo.select")
def _select(b, op, cts):
    pred, on_true, _ = op.operands
    g = cts[0]
    zero = full_like(b, 0, g)
    if _shape(pred) != _shape(g):  # a scalar predicate
        pred = stablehlo.broadcast_in_dim(b, pred, _shape(g), [])
    return [None, stablehlo.select(b, pred, g, zero), stablehlo.select(b, pred, zero, g)]


@_rule("stablehlo.convert")
def _convert(b, op, cts):
    x = op.operands[0]
    if not is_float(x.type):
        return [None]
    return [stablehlo.convert(b, cts[0], _element(x))]


@_rule("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(b, op, cts):
    return [unbroadcast(b, cts[0], op.operands[0], _props_ints(op, "broadcast_dimensions"))]


@_rule("stablehlo.reshape")
def _reshape(b, op, cts):
    return [stablehlo.reshape(b, cts[0], _shape(op.operands[0]))]


@_rule("stablehlo.transpose")
def _transpose(b, op, cts):
    perm = _props_ints(op, "permutation")
    return [stablehlo.transpose(b, cts[0], list(np.argsort(perm)))]


@_rule("stablehlo.reverse")
def _reverse(b, op, cts):
    return [stablehlo.reverse(b, cts[0], _props_ints(op, "dimensions"))]


@_rule("stablehlo.slice")
def _slice(b, op, cts):
    x, g = op.operands[0], cts[0]
    starts, strides = _props_ints(op, "start_indices"), _props_ints(op, "strides")
    if 0 in _shape(g):
        return [full_like(b, 0, x)]
    low, high, interior = [], [], []
    for size, start, stride, n in zip(_shape(x), starts, strides, _shape(g)):
        low.append(start)
        interior.append(stride - 1)
        high.append(size - start - (n - 1) * stride - 1)
    zero = full(b, 0, RankedTensorType((), _element(g), None))
    return [stablehlo.pad(b, g, zero, low, high, interior)]


@_rule("stablehlo.pad")
def _pad(b, op, cts):
    x, g = op.operands[0], cts[0]
    low, interior = _props_ints(op, "edge_padding_low"), _props_ints(op, "interior_padding")
    if any(v < 0 for v in low) or any(v < 0 for v in _props_ints(op, "edge_padding_high")):
        raise MissingRuleError(f"the {TRANSFORMATION} rule of stablehlo.pad does not handle negative padding")
    limits = [lo + (n - 1) * (i + 1) + 1 if n else lo for lo, n, i in zip(low, _shape(x), interior)]
    gx = stablehlo.slice_(b, g, low, limits, [i + 1 for i in interior])
    gpad = reduce_sum(b, g, list(range(len(_shape(g))))) if is_float(op.operands[1].type) else None
    if gpad is not None:  # the padding value gets the cotangents of the padded positions
        gpad = stablehlo.subtract(b, gpad, reduce_sum(b, gx, list(range(len(_shape(gx))))))
    return [gx, gpad]


@_rule("stablehlo.concatenate")
def _concatenate(b, op, cts):
    g = cts[0]
    axis = int(op.properties["dimension"].value)
    out: list[Value | None] = []
    offset = 0
    for x in op.operands:
        shape = _shape(x)
        starts = [0] * len(shape)
        limits = list(_shape(g))
        starts[axis], limits[axis] = offset, offset + shape[axis]
        out.append(stablehlo.slice_(b, g, starts, limits))
        offset += shape[axis]
    return out


def _ranges_like(*xs: Sequence[int]) -> list[list[int]]:
    out, start = [], 0
    for x in xs:
        out.append(list(range(start, start + len(x))))
        start += len(x)
    return out


def _dot_transpose_lhs(b: Builder, g: Value, x: Value, y: Value, x_contract: Sequence[int],
                       y_contract: Sequence[int], x_batch: Sequence[int], y_batch: Sequence[int],
                       swap_ans: bool = False) -> Value:
    """JAX's `_dot_general_transpose_lhs`: the cotangent of the lhs `x` of a dot_general."""
    x_ndim, y_ndim = len(_shape(x)), len(_shape(y))
    x_kept = [i for i in range(x_ndim) if i not in x_contract and i not in x_batch]
    y_kept = [i for i in range(y_ndim) if i not in y_contract and i not in y_batch]
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dn = DotDimensionNumbers.get(lhs_batching_dimensions=tuple(ans_batch), rhs_batching_dimensions=tuple(y_batch),
                                 lhs_contracting_dimensions=tuple(ans_y), rhs_contracting_dimensions=tuple(y_kept))
    x_contract_sorted_by_y = [x_contract[i] for i in np.argsort(y_contract)]
    out_axes = [int(i) for i in np.argsort(list(x_batch) + x_kept + x_contract_sorted_by_y)]
    v = stablehlo.dot_general(b, g, y, dn)
    if out_axes != list(range(len(out_axes))):
        v = stablehlo.transpose(b, v, out_axes)
    if _element(v) != _element(x):
        v = stablehlo.convert(b, v, _element(x))
    return v


@_rule("stablehlo.dot_general")
def _dot_general(b, op, cts):
    x, y = op.operands
    g = cts[0]
    dn = op.properties["dot_dimension_numbers"]
    xc, yc = list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions)
    xb, yb = list(dn.lhs_batching_dimensions), list(dn.rhs_batching_dimensions)
    gx = _dot_transpose_lhs(b, g, x, y, xc, yc, xb, yb) if is_float(x.type) else None
    gy = _dot_transpose_lhs(b, g, y, x, yc, xc, yb, xb, swap_ans=True) if is_float(y.type) else None
    return [gx, gy]


def _reduce_body_op(op: Operation) -> str | None:
    """The name of the single binary op in a one-input reduce body that combines its two
    arguments, or None."""
    block = op.regions[0].entry
    ops = list(block.ops)
    if len(ops) != 2 or len(ops[0].operands) != 2 or set(ops[0].operands) != set(block.args):
        return None
    if ops[1].operands != (ops[0].results[0],):
        return None
    return ops[0].name


@_rule("stablehlo.reduce")
def _reduce(b, op, cts):
    if len(op.operands) == 4 and not is_float(op.operands[1].type):
        # a (values, indices) reduce, as argmax / argmin: the indices carry no cotangent, the values
        # are an extremum (the cotangent is split among the positions equal to it, as max)
        if cts[0] is None:
            return [None] * 4
        return [_extremum_ct(op.operands[0], cts[0], op.results[0], _props_ints(op, "dimensions"), b),
                None, None, None]
    body = _reduce_body_op(op) if len(op.operands) == 2 else None
    if body not in ("stablehlo.add", "stablehlo.maximum", "stablehlo.minimum"):
        raise MissingRuleError(f"the {TRANSFORMATION} transformation has no rule for stablehlo.reduce with "
                               f"body {body or '(not a single add/maximum/minimum)'}")
    x, g, z = op.operands[0], cts[0], op.results[0]
    dims = _props_ints(op, "dimensions")
    kept = [i for i in range(len(_shape(x))) if i not in dims]
    if body == "stablehlo.add":
        return [stablehlo.broadcast_in_dim(b, g, _shape(x), kept), None]
    return [_extremum_ct(x, g, z, dims, b), None]


def _extremum_ct(x: Value, g: Value, z: Value, dims: Sequence[int], b: Builder) -> Value:
    """As JAX: the cotangent `g` of the extremum `z` of `x` over `dims` is split evenly among the
    positions equal to it."""
    kept = [i for i in range(len(_shape(x))) if i not in dims]
    zb = stablehlo.broadcast_in_dim(b, z, _shape(x), kept)
    mask = stablehlo.convert(b, stablehlo.compare(b, x, zb, "EQ"), _element(x))
    counts = reduce_sum(b, mask, dims)
    share = stablehlo.broadcast_in_dim(b, stablehlo.divide(b, g, counts), _shape(x), kept)
    return stablehlo.multiply(b, share, mask)


@_rule("stablehlo.remainder")
def _remainder(b, op, cts):
    # as JAX: d/dx = 1, d/dy = -round_toward_zero(x / y)
    x, y = op.operands
    g = cts[0]
    q = stablehlo.divide(b, x, y)
    trunc = stablehlo.multiply(b, stablehlo.sign(b, q), stablehlo.floor(b, stablehlo.abs_(b, q)))
    return [g, stablehlo.negate(b, stablehlo.multiply(b, g, trunc))]


@_rule("stablehlo.atan2")
def _atan2(b, op, cts):
    y, x = op.operands
    g = cts[0]
    denom = stablehlo.add(b, stablehlo.multiply(b, x, x), stablehlo.multiply(b, y, y))
    share = stablehlo.divide(b, g, denom)
    return [stablehlo.multiply(b, share, x), stablehlo.negate(b, stablehlo.multiply(b, share, y))]


@_rule("stablehlo.clamp")
def _clamp(b, op, cts):
    lo, x, hi = op.operands
    g = cts[0]
    zero = full_like(b, 0, g)

    def wide(v: Value) -> Value:
        return v if _shape(v) == _shape(x) else stablehlo.broadcast_in_dim(b, v, _shape(x), [])

    def narrow(v: Value, like: Value) -> Value:
        return v if _shape(like) == _shape(v) else reduce_sum(b, v, list(range(len(_shape(v)))))

    lo_w, hi_w = wide(lo), wide(hi)
    inside = stablehlo.and_(b, stablehlo.compare(b, x, lo_w, "GT"), stablehlo.compare(b, x, hi_w, "LT"))
    g_lo = narrow(stablehlo.select(b, stablehlo.compare(b, lo_w, x, "GT"), g, zero), lo)
    g_hi = narrow(stablehlo.select(b, stablehlo.compare(b, hi_w, x, "LT"), g, zero), hi)
    return [g_lo, stablehlo.select(b, inside, g, zero), g_hi]


@_rule("stablehlo.reduce_window")
def _reduce_window(b, op, cts):
    body = _reduce_body_op(op) if len(op.operands) == 2 else None
    x, g = op.operands[0], cts[0]
    rank = len(_shape(x))
    window = _props_ints(op, "window_dimensions")
    ones = [1] * rank
    plain = all(_props_ints(op, n) in ([], ones) for n in ("window_strides", "base_dilations", "window_dilations"))
    attr = op.properties.get("padding")
    flat = [0] * (2 * rank) if attr is None else [int(v) for v in np.asarray(attr.to_numpy()).reshape(-1)]
    if body == "stablehlo.multiply" and plain:
        axes = [d for d in range(rank) if window[d] != 1 or flat[2 * d] or flat[2 * d + 1]]
        if not axes:  # windows of one element
            return [g, None]
        if len(axes) == 1 and window[axes[0]] == _shape(x)[axes[0]] and flat[2 * axes[0]:2 * axes[0] + 2] == [
                _shape(x)[axes[0]] - 1, 0]:
            return [_cumprod_ct(b, x, g, axes[0]), None]
    if body != "stablehlo.add" or not plain:
        raise MissingRuleError(f"the {TRANSFORMATION} transformation has no rule for stablehlo.reduce_window other "
                               "than a single-input add with unit strides and dilations, or a cumulative product")
    padding = []
    for d in range(rank):
        lo, w, n_in, n_out = flat[2 * d], window[d], _shape(x)[d], _shape(g)[d]
        before = w - 1 - lo
        after = n_in + w - 1 - n_out - before
        if before < 0 or after < 0:
            raise MissingRuleError(f"the {TRANSFORMATION} rule of stablehlo.reduce_window does not handle "
                                   "this padding")
        padding.append((before, after))
    zero = full(b, 0, RankedTensorType((), _element(g), None))
    gx = stablehlo.reduce_window(b, [g], [zero], window, lambda bb, args: [stablehlo.add(bb, args[0], args[1])],
                                 padding=padding)
    return [gx, None]


def _cumprod_ct(b: Builder, x: Value, g: Value, ax: int) -> Value:
    """The cotangent of `x` for its cumulative product along `ax`, exact with zeros:
    `gx[i] = prod(x[:i]) * sum_{j >= i} g[j] * prod(x[i+1:j+1])`, from an (n, n) expansion along
    a new axis (memory grows with the square of the axis length)."""
    shape, n = _shape(x), _shape(x)[ax]
    big = (*shape[:ax], n, *shape[ax:])  # the new axis `i` at ax, the original axis `k` at ax + 1
    i32 = RankedTensorType(big, IntegerType(32), None)
    i_idx, k_idx = stablehlo.iota(b, i32, ax), stablehlo.iota(b, i32, ax + 1)
    keep = [d if d < ax else d + 1 for d in range(len(shape))]
    xb = stablehlo.broadcast_in_dim(b, x, big, keep)
    gb = stablehlo.broadcast_in_dim(b, g, big, keep)
    one, zero = full_like(b, 1, xb), full_like(b, 0, xb)

    def mul(bb: Builder, args: list[Value]) -> list[Value]:
        return [stablehlo.multiply(bb, args[0], args[1])]

    # C[i, j] = prod(x[i+1:j+1]): a cumulative product over k of x[k] where k > i, else 1
    after = stablehlo.select(b, stablehlo.compare(b, k_idx, i_idx, "GT"), xb, one)
    window = [1] * len(big)
    window[ax + 1] = n
    padding = [(0, 0)] * len(big)
    padding[ax + 1] = (n - 1, 0)
    unit = full(b, 1, RankedTensorType((), _element(x), None))
    c = stablehlo.reduce_window(b, [after], [unit], window, mul, padding=padding)
    later = stablehlo.select(b, stablehlo.compare(b, k_idx, i_idx, "GE"), stablehlo.multiply(b, gb, c), zero)
    total = reduce_sum(b, later, [ax + 1])
    before = stablehlo.select(b, stablehlo.compare(b, k_idx, i_idx, "LT"), xb, one)
    prefix = stablehlo.reduce(b, [before], [unit], [ax + 1], mul)
    return stablehlo.multiply(b, prefix, total)


@_rule("stablehlo.sort")
def _sort(b, op, cts):
    # Re-sort the operands with an iota appended to get the permutation, then sort
    # (permutation, cotangents) by the permutation to send each cotangent back to its position.
    dim = int(op.properties["dimension"].value)
    operands = list(op.operands)
    shape = _shape(operands[0])
    dim %= len(shape)
    i32 = RankedTensorType(shape, IntegerType(32), None)
    iota = stablehlo.iota(b, i32, dim)
    comparator = op.regions[0].entry

    def compare(bb: Builder, args: list[Value]) -> list[Value]:
        mapping: dict = dict(zip(comparator.args, args))
        for inner in comparator.ops:
            if inner.name == "stablehlo.return":
                return [mapping.get(v, v) for v in inner.operands]
            bb.insert(inner.clone(mapping))
        raise ValueError("the comparator of stablehlo.sort has no stablehlo.return")

    perm = stablehlo.sort(b, [*operands, iota], dim, compare, is_stable=True)[-1]
    which = [k for k, c in enumerate(cts) if c is not None and is_float(operands[k].type)]
    if not which:
        return [None] * len(operands)
    back = stablehlo.sort(b, [perm, *(cts[k] for k in which)], dim,
                          lambda bb, args: [stablehlo.compare(bb, args[0], args[1], "LT")])
    back = list(back) if isinstance(back, (list, tuple)) else [back]
    out: list[Value | None] = [None] * len(operands)
    for k, v in zip(which, back[1:]):
        out[k] = v
    return out


# --- the transformation ------------------------------------------------------------------------


def vjp_function(fn: Operation, wrt: Sequence[int], cotangent_outputs: Sequence[int] | None = None,
                 name: str = "main") -> Operation:
    """A new `func.func @name` computing `fn`'s outputs and the VJP w.r.t. its arguments `wrt`.

    Its arguments are `fn`'s arguments followed by one cotangent per output in
    `cotangent_outputs` (all outputs by default; the others count as zero); its results are
    `fn`'s results followed by the cotangent of each argument in `wrt` (zeros for arguments of
    integer or boolean type or that the outputs do not depend on)."""
    ftype: FunctionType = fn.properties["function_type"].value
    n_out = len(ftype.results)
    cotangent_outputs = list(range(n_out)) if cotangent_outputs is None else list(cotangent_outputs)
    new_type = FunctionType((*ftype.inputs, *(ftype.results[i] for i in cotangent_outputs)),
                            (*ftype.results, *(ftype.inputs[i] for i in wrt)))
    new = func.FuncOp.build(name, new_type, location=fn.location)
    block = new.regions[0].entry
    old_block = fn.regions[0].entry
    mapping: dict = dict(zip(old_block.args, block.args))
    b = Builder(InsertionPoint.at_end(block))
    forward: list[Operation] = []
    ret = None
    for op in old_block.ops:
        if op.name == "func.return":
            ret = op
            break
        forward.append(b.insert(op.clone(mapping)))
    if ret is None:
        raise ValueError("the function has no func.return")
    outputs = [mapping.get(v, v) for v in ret.operands]

    cotangents: dict[Value, Value] = {}

    def accumulate(v: Value, ct: Value | None) -> None:
        if ct is None or not is_float(v.type):
            return
        prev = cotangents.get(v)
        cotangents[v] = ct if prev is None else stablehlo.add(b, prev, ct)

    for k, i in enumerate(cotangent_outputs):
        accumulate(outputs[i], block.args[len(ftype.inputs) + k])
    for op in reversed(forward):
        cts = [cotangents.pop(r, None) for r in op.results]
        if all(c is None for c in cts):
            continue
        rule = VJP_RULES.get(op.name)
        if rule is None:
            raise MissingRuleError(f"the {TRANSFORMATION} transformation has no rule for op '{op.name}' "
                                   f"(at {op.location}); add one to loom.transforms.autodiff.VJP_RULES")
        b.location = op.location
        operand_cts = rule(b, op, cts)
        for v, ct in zip(op.operands, operand_cts):
            accumulate(v, ct)
    results = list(outputs)
    for i in wrt:
        arg = block.args[i]
        ct = cotangents.get(arg)
        results.append(ct if ct is not None else full(b, 0, arg.type))
    b.insert(func.ReturnOp.build(results, fn.location))
    new.properties["function_type"] = TypeAttr(new_type)
    return new


def vjp_module(module: Operation, wrt: Sequence[int], cotangent_outputs: Sequence[int] | None = None,
               entry: str = "main") -> Operation:
    """A new `builtin.module` holding `vjp_function` of the module's function `entry` as `@main`."""
    fn = next((op for op in module.regions[0].entry.ops
               if op.name == "func.func" and op.properties["sym_name"].value == entry), None)
    if fn is None:
        raise ValueError(f"the module has no function @{entry}")
    out = builtin.ModuleOp.build()
    out.body.append(vjp_function(fn, wrt, cotangent_outputs, "main"))
    return out


__all__ = ["TRANSFORMATION", "VJP_RULES", "MissingRuleError", "VjpRule", "full", "is_float", "reduce_sum",
           "unbroadcast", "vjp_function", "vjp_module"]
