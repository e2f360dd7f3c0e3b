"""Reductions: reduce, reduce_window, sort (their derivatives and batching here), select_and_scatter,
top_k.

Code generation in `loom.backend.compiled` (region bodies of one elementwise op reduce with numpy's
ufuncs).

- reduce: sums are linear (the cotangent broadcast back); maxima and minima share it among the
  positions equal to the result (as JAX); products divide out each element (exact with zeros);
  argmax-style (value, index) reductions pass it to the values only.
- reduce_window: windowed sums (the cotangent summed over the windows that read each element),
  cumulative products (exact with zeros) and max / min windows (pooling, cummax: each window's
  cotangent goes to its first extremum through `stablehlo.select_and_scatter`, as JAX; the tangent
  is carried along by a two-input reduce_window).
- sort: the cotangents are sent back through the sorting permutation; batched by sorting one
  dimension further.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loom.dialects import stablehlo
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.types import IntegerType, RankedTensorType
from loom.ops.registry import declare, register, unsupported
from loom.transforms import autodiff, batching, forward_ad
from loom.transforms.autodiff import VJP_RULES, MissingRuleError, full, full_like, is_float, reduce_sum
from loom.transforms.autodiff import props_ints as _ints
from loom.transforms.batching import BATCH_RULES, bdim_to_front
from loom.transforms.forward_ad import JVP_RULES
from loom.transforms.rule_builders import (
    I32,
    add_body,
    batched_type,
    int_property,
    missing_rule,
    rule,
    scalar_constant,
    shape_of,
    take_along,
    with_regions,
    zeros_like,
)
from loom.transforms.sharding_propagation import SHARDING_RULES, Factors

# --- sort --------------------------------------------------------------------------------------


@rule(BATCH_RULES, "stablehlo.sort")
def _sort_batch(b, op, args, dims):
    size = next(shape_of(v)[d] for v, d in zip(args, dims) if d is not None)
    inputs = [bdim_to_front(b, v, d, size) for v, d in zip(args, dims)]
    rank = len(shape_of(op.operands[0]))
    props = dict(op.properties)
    props["dimension"] = stablehlo.i64_attr(int_property(op, "dimension", -1) % rank + 1)
    types = [batched_type(r.type, size) for r in op.results]
    res = with_regions(b, op, inputs, types, props)
    return list(res.results), [0] * len(types)


@rule(VJP_RULES, "stablehlo.sort")
def _sort_vjp(b, op, cts):
    # Re-sort the operands with an iota appended to get the permutation, then sort
    # (permutation, cotangents) by the permutation to send each cotangent back to its position.
    dim = int(op.properties["dimension"].value)
    operands = list(op.operands)
    shape = shape_of(operands[0])
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


@rule(JVP_RULES, "stablehlo.sort")
def _sort_jvp(b, op, xs, ts):
    # the permutation: the same sort with an iota carried along, then each tangent follows it
    rank = len(shape_of(xs[0]))
    dim = int_property(op, "dimension", -1) % rank
    iota = stablehlo.iota(b, RankedTensorType(shape_of(xs[0]), I32, None), dim)
    props = dict(op.properties)
    types = [*(v.type for v in xs), iota.type]
    new = Operation.create(op.name, [*xs, iota], types, props, dict(op.attributes), (), (), b.location)
    region = op.regions[0].clone({})
    block = region.entry
    scalar = RankedTensorType((), I32, None)
    block.add_argument(scalar)  # the comparator ignores the iota's pair of arguments
    block.add_argument(scalar)
    new.add_region(region)
    perm = b.insert(new).results[-1]
    return [None if t is None else take_along(b, t, perm, dim) for t in ts]



# --- sums, maxima and minima (reduce, reduce_window) ----------------------------------------------


def _sum(b: Builder, v: Value, dims: Sequence[int]) -> Value:
    zero = full(b, 0, RankedTensorType((), v.type.element_type, None))
    return stablehlo.reduce(b, [v], [zero], list(dims), lambda bb, args: [stablehlo.add(bb, args[0], args[1])])


def _sum_max_min_reduce_jvp(b, op, xs, ts):
    body = stablehlo.reduction_body(op)
    if body not in ("stablehlo.add", "stablehlo.maximum", "stablehlo.minimum"):
        raise forward_ad.MissingRuleError(f"the {forward_ad.TRANSFORMATION} transformation has no rule for "
                                          f"stablehlo.reduce with body {body or '(not a single add/maximum/minimum)'} "
                                          f"(at {op.location})")
    x, z = xs[0], op.results[0]
    dims = _ints(op, "dimensions")
    if body == "stablehlo.add":  # linear in the input and the initial value
        out = None if ts[0] is None else _sum(b, ts[0], dims)
        if ts[1] is not None:
            t_init = stablehlo.broadcast_in_dim(b, ts[1], shape_of(z), [])
            out = t_init if out is None else stablehlo.add(b, out, t_init)
        return [out]
    if ts[0] is None:
        return [None]
    # as JAX: the mean of the tangents at the positions equal to the extremum
    kept = [i for i in range(len(shape_of(x))) if i not in dims]
    mask = stablehlo.convert(b, stablehlo.compare(b, x, stablehlo.broadcast_in_dim(b, z, shape_of(x), kept), "EQ"),
                             x.type.element_type)
    return [stablehlo.divide(b, _sum(b, stablehlo.multiply(b, ts[0], mask), dims), _sum(b, mask, dims))]


def _sum_max_min_reduce_vjp(b, op, cts):
    if len(op.operands) == 4 and not is_float(op.operands[1].type):
        # a (values, indices) reduce, as argmax / argmin: the indices carry no cotangent, the values
        # are an extremum (the cotangent is split among the positions equal to it, as max)
        if cts[0] is None:
            return [None] * 4
        return [_extremum_ct(op.operands[0], cts[0], op.results[0], _ints(op, "dimensions"), b),
                None, None, None]
    body = stablehlo.reduction_body(op)
    if body not in ("stablehlo.add", "stablehlo.maximum", "stablehlo.minimum"):
        raise MissingRuleError(f"the {autodiff.TRANSFORMATION} transformation has no rule for stablehlo.reduce with "
                               f"body {body or '(not a single add/maximum/minimum)'}")
    x, g, z = op.operands[0], cts[0], op.results[0]
    dims = _ints(op, "dimensions")
    kept = [i for i in range(len(shape_of(x))) if i not in dims]
    if body == "stablehlo.add":
        return [stablehlo.broadcast_in_dim(b, g, shape_of(x), kept), None]
    return [_extremum_ct(x, g, z, dims, b), None]


def _extremum_ct(x: Value, g: Value, z: Value, dims: Sequence[int], b: Builder) -> Value:
    """As JAX: the cotangent `g` of the extremum `z` of `x` over `dims` is split evenly among the
    positions equal to it."""
    kept = [i for i in range(len(shape_of(x))) if i not in dims]
    zb = stablehlo.broadcast_in_dim(b, z, shape_of(x), kept)
    mask = stablehlo.convert(b, stablehlo.compare(b, x, zb, "EQ"), x.type.element_type)
    counts = reduce_sum(b, mask, dims)
    share = stablehlo.broadcast_in_dim(b, stablehlo.divide(b, g, counts), shape_of(x), kept)
    return stablehlo.multiply(b, share, mask)


@rule(BATCH_RULES, "stablehlo.reduce")
def _reduce_batch(b, op, args, dims):
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise batching.MissingRuleError(f"the {batching.TRANSFORMATION} transformation has no rule for op "
                                         f"'{op.name}' with a batched initial value (at {op.location})")
    size = next(shape_of(v)[k] for v, k in zip(args, dims) if k is not None)
    inputs = [bdim_to_front(b, v, d, size) for v, d in zip(args[:n], dims[:n])]
    props = dict(op.properties)
    props["dimensions"] = stablehlo.i64_array([i + 1 for i in _ints(op, "dimensions")])
    types = [batched_type(r.type, size) for r in op.results]
    new = with_regions(b, op, [*inputs, *args[n:]], types, props)
    return list(new.results), [0] * len(types)


def _sum_reduce_window_jvp(b, op, xs, ts):
    body = stablehlo.reduction_body(op)
    if body != "stablehlo.add" or ts[1] is not None:
        raise forward_ad.MissingRuleError(f"the {forward_ad.TRANSFORMATION} transformation has no rule for "
                                          f"stablehlo.reduce_window with body "
                                          f"{body or '(not a single add/maximum/minimum)'} or a differentiated "
                                          f"initial value (at {op.location})")
    # linear: the same windowed sum of the tangent, starting from zero
    return list(b.insert(op.clone({xs[0]: ts[0], xs[1]: zeros_like(b, xs[1])})).results)


def _sum_cumprod_reduce_window_vjp(b, op, cts):
    body = stablehlo.reduction_body(op)
    x, g = op.operands[0], cts[0]
    rank = len(shape_of(x))
    window = _ints(op, "window_dimensions")
    ones = [1] * rank
    plain = all(_ints(op, n) in ([], ones) for n in ("window_strides", "base_dilations", "window_dilations"))
    attr = op.properties.get("padding")
    flat = [0] * (2 * rank) if attr is None else [int(v) for v in np.asarray(attr.to_numpy()).reshape(-1)]
    if body == "stablehlo.multiply" and plain:
        axes = [d for d in range(rank) if window[d] != 1 or flat[2 * d] or flat[2 * d + 1]]
        if not axes:  # windows of one element
            return [g, None]
        if len(axes) == 1 and window[axes[0]] == shape_of(x)[axes[0]] and flat[2 * axes[0]:2 * axes[0] + 2] == [
                shape_of(x)[axes[0]] - 1, 0]:
            return [_cumprod_ct(b, x, g, axes[0]), None]
    if body != "stablehlo.add" or not plain:
        raise MissingRuleError(f"the {autodiff.TRANSFORMATION} transformation has no rule for stablehlo.reduce_window "
                               "other than a single-input add with unit strides and dilations, or a cumulative product")
    padding = []
    for d in range(rank):
        lo, w, n_in, n_out = flat[2 * d], window[d], shape_of(x)[d], shape_of(g)[d]
        before = w - 1 - lo
        after = n_in + w - 1 - n_out - before
        if before < 0 or after < 0:
            raise MissingRuleError(f"the {autodiff.TRANSFORMATION} rule of stablehlo.reduce_window does not handle "
                                   "this padding")
        padding.append((before, after))
    zero = full(b, 0, RankedTensorType((), g.type.element_type, None))
    gx = stablehlo.reduce_window(b, [g], [zero], window, lambda bb, args: [stablehlo.add(bb, args[0], args[1])],
                                 padding=padding)
    return [gx, None]


def _cumprod_ct(b: Builder, x: Value, g: Value, ax: int) -> Value:
    """The cotangent of `x` for its cumulative product along `ax`, exact with zeros:
    `gx[i] = prod(x[:i]) * sum_{j >= i} g[j] * prod(x[i+1:j+1])`, from an (n, n) expansion along
    a new axis (memory grows with the square of the axis length)."""
    shape, n = shape_of(x), shape_of(x)[ax]
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
    unit = full(b, 1, RankedTensorType((), x.type.element_type, None))
    c = stablehlo.reduce_window(b, [after], [unit], window, mul, padding=padding)
    later = stablehlo.select(b, stablehlo.compare(b, k_idx, i_idx, "GE"), stablehlo.multiply(b, gb, c), zero)
    total = reduce_sum(b, later, [ax + 1])
    before = stablehlo.select(b, stablehlo.compare(b, k_idx, i_idx, "LT"), xb, one)
    prefix = stablehlo.reduce(b, [before], [unit], [ax + 1], mul)
    return stablehlo.multiply(b, prefix, total)


@rule(BATCH_RULES, "stablehlo.reduce_window")
def _reduce_window_batch(b, op, args, dims):
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise batching.MissingRuleError(f"the {batching.TRANSFORMATION} transformation has no rule for op "
                                         f"'{op.name}' with a batched initial value (at {op.location})")
    size = next(shape_of(v)[k] for v, k in zip(args, dims) if k is not None)
    inputs = [bdim_to_front(b, v, d, size) for v, d in zip(args[:n], dims[:n])]
    rank = len(shape_of(args[0])) - (1 if dims[0] is not None else 0)
    props = dict(op.properties)
    props["window_dimensions"] = stablehlo.i64_array([1, *_ints(op, "window_dimensions")])
    for name in ("window_strides", "base_dilations", "window_dilations"):
        if name in props:
            props[name] = stablehlo.i64_array([1, *(_ints(op, name) or [1] * rank)])
    if "padding" in props:
        pads = props["padding"].to_numpy().reshape(-1, 2).tolist()
        props["padding"] = stablehlo.padding_attr([(0, 0), *[(int(lo), int(hi)) for lo, hi in pads]])
    types = [batched_type(r.type, size) for r in op.results]
    new = with_regions(b, op, [*inputs, *args[n:]], types, props)
    return list(new.results), [0] * len(types)


# --- products (reduce and reduce_window with a multiply body) -----------------------------------


def _cumprod(b: Builder, v: Value, axis: int) -> Value:
    """The inclusive cumulative product of `v` along `axis` (a reduce_window)."""
    n = shape_of(v)[axis]
    rank = len(shape_of(v))
    window = [1] * rank
    window[axis] = n
    padding = [(0, 0)] * rank
    padding[axis] = (n - 1, 0)
    one = scalar_constant(b, 1, v.type.element_type)
    return stablehlo.reduce_window(b, [v], [one], window,
                                   lambda bb, args: [stablehlo.multiply(bb, args[0], args[1])], padding=padding)


def _exclusive_products(b: Builder, x: Value, axis: int) -> Value:
    """`prod_{j != i} x[j]` along `axis` for every i, exact with zeros: the exclusive cumulative
    products from both ends, multiplied."""
    shape = shape_of(x)
    n = shape[axis]
    if n == 1:
        return full(b, 1, x.type)
    ones_shape = list(shape)
    ones_shape[axis] = 1
    ones = full(b, 1, RankedTensorType(tuple(ones_shape), x.type.element_type, None))
    starts, limits = [0] * len(shape), list(shape)
    limits[axis] = n - 1
    left = stablehlo.concatenate(b, [ones, stablehlo.slice_(b, _cumprod(b, x, axis), starts, limits)], axis)
    rev = stablehlo.reverse(b, x, [axis])
    right = stablehlo.concatenate(b, [ones, stablehlo.slice_(b, _cumprod(b, rev, axis), starts, limits)], axis)
    return stablehlo.multiply(b, left, stablehlo.reverse(b, right, [axis]))


def _flatten_axes(b: Builder, x: Value, dims: Sequence[int]) -> tuple[Value, list[int]]:
    """`x` with `dims` moved last and merged into one axis; also the permutation used."""
    rank = len(shape_of(x))
    kept = [d for d in range(rank) if d not in dims]
    perm = kept + list(dims)
    v = stablehlo.transpose(b, x, perm) if perm != list(range(rank)) else x
    shape = [shape_of(x)[d] for d in kept]
    n = int(np.prod([shape_of(x)[d] for d in dims], dtype=np.int64))
    return stablehlo.reshape(b, v, (*shape, n)), perm


def _product_partials(b: Builder, x: Value, dims: Sequence[int]) -> Value:
    """d prod(x over dims) / dx, of the shape of `x`."""
    flat, perm = _flatten_axes(b, x, dims)
    partial = _exclusive_products(b, flat, len(shape_of(flat)) - 1)
    permuted = [shape_of(x)[p] for p in perm]
    v = stablehlo.reshape(b, partial, permuted)
    inverse = [int(i) for i in np.argsort(perm)]
    return stablehlo.transpose(b, v, inverse) if inverse != list(range(len(inverse))) else v




@rule(VJP_RULES, "stablehlo.reduce")
def _reduce_vjp(b, op, cts):
    if stablehlo.reduction_body(op) != "stablehlo.multiply" or not is_float(op.operands[0].type):
        return _sum_max_min_reduce_vjp(b, op, cts)
    x = op.operands[0]
    dims = _ints(op, "dimensions")
    kept = [d for d in range(len(shape_of(x))) if d not in dims]
    if not dims:
        return [cts[0], None]
    g = stablehlo.broadcast_in_dim(b, cts[0], shape_of(x), kept)
    return [stablehlo.multiply(b, g, _product_partials(b, x, dims)), None]


@rule(JVP_RULES, "stablehlo.reduce")
def _reduce_jvp(b, op, xs, ts):
    if stablehlo.reduction_body(op) != "stablehlo.multiply" or not is_float(xs[0].type):
        return _sum_max_min_reduce_jvp(b, op, xs, ts)
    if ts[1] is not None:
        raise missing_rule("jvp", op, "with a differentiated initial value")
    x = xs[0]
    dims = _ints(op, "dimensions")
    if ts[0] is None:
        return [None]
    if not dims:
        return [ts[0]]
    return [reduce_sum(b, stablehlo.multiply(b, ts[0], _product_partials(b, x, dims)), dims)]




def _cumprod_reduce_window_jvp(b, op, xs, ts):
    axis = _cumulative_product_axis(op)
    if axis is None or ts[1] is not None:
        return _sum_reduce_window_jvp(b, op, xs, ts)
    if ts[0] is None:
        return [None]
    return [_cumprod_jvp(b, xs[0], ts[0], axis)]


def _cumulative_product_axis(op: Operation) -> int | None:
    """The axis of a reduce_window computing a cumulative product (as lnp.cumprod emits), or None."""
    if stablehlo.reduction_body(op) != "stablehlo.multiply" or not is_float(op.operands[0].type):
        return None
    x = op.operands[0]
    shape = shape_of(x)
    rank = len(shape)
    window = _ints(op, "window_dimensions")
    for name in ("window_strides", "base_dilations", "window_dilations"):
        if _ints(op, name) not in ([], [1] * rank):
            return None
    attr = op.properties.get("padding")
    flat = [0] * (2 * rank) if attr is None else [int(v) for v in np.asarray(attr.to_numpy()).reshape(-1)]
    axes = [d for d in range(rank) if window[d] != 1 or flat[2 * d] or flat[2 * d + 1]]
    if len(axes) != 1:
        return None
    a = axes[0]
    if window[a] != shape[a] or flat[2 * a:2 * a + 2] != [shape[a] - 1, 0]:
        return None
    return a


def _cumprod_jvp(b: Builder, x: Value, t: Value, axis: int) -> Value:
    """The tangent of the cumulative product of `x` along `axis`, exact with zeros: for each
    position i, the cumulative product of x with x[i] replaced by t[i] (an (n, n) expansion along a
    new axis), summed over the positions i <= j."""
    shape = shape_of(x)
    n = shape[axis]
    big = (*shape[:axis], n, *shape[axis:])  # the new axis `i` at axis, the original `k` at axis + 1
    keep = [d if d < axis else d + 1 for d in range(len(shape))]
    xb = stablehlo.broadcast_in_dim(b, x, big, keep)
    tb = stablehlo.broadcast_in_dim(b, t, big, keep)
    i32 = RankedTensorType(big, I32, None)
    i_idx, k_idx = stablehlo.iota(b, i32, axis), stablehlo.iota(b, i32, axis + 1)
    replaced = stablehlo.select(b, stablehlo.compare(b, i_idx, k_idx, "EQ"), tb, xb)
    products = _cumprod(b, replaced, axis + 1)
    terms = stablehlo.select(b, stablehlo.compare(b, i_idx, k_idx, "LE"), products, zeros_like(b, products))
    return reduce_sum(b, terms, [axis])



# --- max / min windows (pooling, cummax): select_and_scatter ------------------------------------


def _window_chooser(op: Operation) -> tuple[str, list[int], list[int], list[tuple[int, int]]] | None:
    """('GE' for max / 'LE' for min, window, strides, padding) of a one-input reduce_window with a
    maximum or minimum body and no dilation, else None."""
    body = stablehlo.reduction_body(op)
    if body not in ("stablehlo.maximum", "stablehlo.minimum") or not is_float(op.operands[0].type):
        return None
    rank = len(shape_of(op.operands[0]))
    for name in ("base_dilations", "window_dilations"):
        if _ints(op, name) not in ([], [1] * rank):
            return None
    window = _ints(op, "window_dimensions")
    strides = _ints(op, "window_strides") or [1] * rank
    attr = op.properties.get("padding")
    flat = [0] * (2 * rank) if attr is None else [int(v) for v in np.asarray(attr.to_numpy()).reshape(-1)]
    padding = [(flat[2 * d], flat[2 * d + 1]) for d in range(rank)]
    return ("GE" if body == "stablehlo.maximum" else "LE"), window, strides, padding




@rule(VJP_RULES, "stablehlo.reduce_window")
def _reduce_window_vjp(b, op, cts):
    chooser = _window_chooser(op)
    if chooser is None:
        return _sum_cumprod_reduce_window_vjp(b, op, cts)
    if cts[0] is None:
        return [None, None]
    direction, window, strides, padding = chooser
    x = op.operands[0]
    et = x.type.element_type
    # as JAX: each window's cotangent goes to the (first) element it selected
    new = Operation.create("stablehlo.select_and_scatter", [x, cts[0], scalar_constant(b, 0, et)], [x.type],
                           {"window_dimensions": stablehlo.i64_array(window),
                            "window_strides": stablehlo.i64_array(strides),
                            "padding": stablehlo.padding_attr(padding)}, {}, (), (), b.location)
    scalar = RankedTensorType((), et, None)
    new.add_region(stablehlo._build_region([scalar, scalar],
                                           lambda bb, a: [stablehlo.compare(bb, a[0], a[1], direction)]))
    new.add_region(stablehlo._build_region([scalar, scalar], add_body))
    return [b.insert(new).results[0], None]


@rule(JVP_RULES, "stablehlo.reduce_window")
def _reduce_window_jvp_choosers(b, op, xs, ts):
    chooser = _window_chooser(op)
    if chooser is None or ts[1] is not None:
        return _cumprod_reduce_window_jvp(b, op, xs, ts)
    if ts[0] is None:
        return [None]
    direction = "GT" if chooser[0] == "GE" else "LT"
    x, init = xs
    et = x.type.element_type
    scalar = RankedTensorType((), et, None)
    # the tangent of each window's first extremum: a two-input reduce_window carrying it along
    props = dict(op.properties)
    new = Operation.create(op.name, [x, ts[0], init, scalar_constant(b, 0, et)], [op.results[0].type] * 2, props, {},
                           (), (), b.location)
    choose = stablehlo.maximum if chooser[0] == "GE" else stablehlo.minimum

    def body(bb: Builder, a: list[Value]) -> list[Value]:
        acc_v, acc_t, v, t = a
        better = stablehlo.compare(bb, v, acc_v, direction)
        return [choose(bb, acc_v, v), stablehlo.select(bb, better, t, acc_t)]
    new.add_region(stablehlo._build_region([scalar] * 4, body))
    return [b.insert(new).results[1]]



declare("stablehlo.select_and_scatter",
        unsupported("the VJP of max pooling: loom does not differentiate or batch its own backward pass"),
        tables=("jvp", "vjp", "batching"))


# --- sharding rules ----------------------------------------------------------------------------

_REDUCERS = {"stablehlo.add": "add", "stablehlo.maximum": "max", "stablehlo.minimum": "min",
             "stablehlo.multiply": "mul", "stablehlo.and": "and", "stablehlo.or": "or"}


def _reducer_of(op: Operation) -> str | None:
    """"add", "max", ... when the body combines its two arguments with one such op (a sharded
    reduced dimension then reduces locally and across partitions); None otherwise."""
    if len(op.results) != 1 or not op.regions:
        return None
    body = list(op.regions[0].entry.ops)
    args = list(op.regions[0].entry.args)
    if len(body) != 2 or body[0].name not in _REDUCERS or list(body[0].operands) != args or \
            list(body[1].operands) != [body[0].results[0]]:
        return None
    return _REDUCERS[body[0].name]


def _reduce_sharding(op):
    """Kept dimensions map to the result's; reduced ones are reduction factors (sharding one
    reduces locally, then across partitions), needing replication for a body that is not one
    associative op (argmax's pair of values)."""
    n = len(op.results)
    reduced = set(_ints(op, "dimensions"))
    f = Factors()
    shape = shape_of(op.operands[0])
    fs = [f.new(s) for s in shape]
    kept = [fs[d] for d in range(len(shape)) if d not in reduced]
    return f.rule([fs] * n + [[]] * n, [kept] * n, reduction={fs[d] for d in reduced}, reducer=_reducer_of(op),
                  pad_value=lambda b, op, local, i: local[n + i])


def _sort_sharding(op):
    d = int(op.properties["dimension"].value) if "dimension" in op.properties else -1
    rank = len(shape_of(op.operands[0]))
    f = Factors()
    fs = [f.new(s) for s in shape_of(op.operands[0])]
    return f.rule([fs] * len(op.operands), [fs] * len(op.results), need_replication={fs[d % rank]})


def _reduce_window_sharding(op):
    """A dimension with a window of one element (no stride, padding or dilation) is kept; the
    others (cumsum's scanned dimension, pooling) need replication."""
    n = len(op.results)
    shape = shape_of(op.operands[0])
    ones = [1] * len(shape)
    pad = op.properties.get("padding")
    pads = pad.to_numpy().reshape(-1, 2).tolist() if pad is not None else [[0, 0]] * len(shape)
    keep = [w == 1 and s == 1 and bd == 1 and wd == 1 and p == [0, 0] for w, s, bd, wd, p in
            zip(_ints(op, "window_dimensions"), _ints(op, "window_strides") or ones,
                _ints(op, "base_dilations") or ones, _ints(op, "window_dilations") or ones, pads)]
    f = Factors()
    fs = [f.new(s) for s in shape]
    out = [f.new(s) if not k else fs[d] for d, (s, k) in enumerate(zip(shape_of(op.results[0]), keep))]
    blocked = {fs[d] for d, k in enumerate(keep) if not k} | {out[d] for d, k in enumerate(keep) if not k}
    return f.rule([fs] * n + [[]] * n, [out] * n, need_replication=blocked)


register(SHARDING_RULES, "stablehlo.reduce", _reduce_sharding)
register(SHARDING_RULES, "stablehlo.sort", _sort_sharding)
register(SHARDING_RULES, "stablehlo.reduce_window", _reduce_window_sharding)
declare("stablehlo.select_and_scatter", unsupported("max pooling's backward pass: runs replicated"),
        tables=("sharding",))
