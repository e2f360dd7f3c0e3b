"""Reductions: reduce, reduce_window, sort (their derivatives and batching here), select_and_scatter,
top_k.

Kernels, code generation (region bodies of one elementwise op reduce with numpy's ufuncs) and the
interpreter's reference rules after the imports; torch kernels and the runtime of the torch code
generation rules in `loom.ops.reductions_torch`.

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

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from loom.backend import common
from loom.backend.common import dtype_of, torch_kernels_in
from loom.backend.common import shape_of as type_shape
from loom.backend.compiled.codegen import (
    ELEMENTWISE,
    FunctionCodegen,
    InterpretedOp,
    codegen_rule,
    free_values,
)
from loom.backend.compiled.regions import (
    argreduce_direction,
    defining_op,
    has_shell_dtypes,
    is_compare,
    is_elementwise_region,
    reducer_ufunc,
)
from loom.backend.interpreter import Interpreter, scalar
from loom.backend.interpreter import rule as interpreter_rule
from loom.backend.kernels import Kernel, Operand, kernel, pad, result_dtype, total_order_key
from loom.dialects import stablehlo
from loom.ir.builder import Builder
from loom.ir.core import Block, Operation, Value
from loom.ir.types import IntegerType, RankedTensorType
from loom.ops.indexing import scatter_update_ufunc
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

# Kernels -----------------------------------------------------------------------------------------

# numpy kernels here; torch kernels in loom.ops.reductions_torch (imported with torch)

@kernel("chlo.top_k")
def _top_k(op: Operation) -> Kernel:
    return Kernel(top_k, Operand(0), common.integer(op.get_attr("k")), result_dtype(op, 1))


def top_k(x, k, index_dtype):
    """The k largest along the last axis, larger index losing ties, NaN largest (total order)."""
    x = np.asarray(x)
    key = total_order_key(x) if x.dtype.kind in "fV" else x
    positions = np.broadcast_to(np.arange(x.shape[-1]), x.shape)
    values, idx = sort_by_key((x, positions), key, x.ndim - 1, descending=True)
    return values[..., :k], idx[..., :k].astype(index_dtype)



# Windows ---------------------------------------------------------------------------------------

def window_view(x, init, window, strides, base_dil, win_dil, padding):
    """Windows of `x` (padded with `init`, base-dilated) as a strided view of shape
    (out..., window...)."""
    x = np.asarray(x)
    n = x.ndim
    if any(d != 1 for d in base_dil) or any(lo or hi for lo, hi in padding):
        x = pad(x, init, [p[0] for p in padding], [p[1] for p in padding], [d - 1 for d in base_dil])
    span = [(w - 1) * d + 1 for w, d in zip(window, win_dil)]
    if any(s > size for s, size in zip(span, x.shape)):
        out_shape = [max((size - s) // st + 1, 0) for size, s, st in zip(x.shape, span, strides)]
        return np.zeros((*out_shape, *window), x.dtype)
    views = sliding_window_view(x, span)
    index = tuple(slice(None, None, s) for s in strides) + tuple(slice(None, None, d) for d in win_dil)
    views = views[index]
    assert views.ndim == 2 * n
    return views


def reduce_window_ufunc(x, init, ufunc, window, strides, base_dil, win_dil, padding):
    views = window_view(x, init, window, strides, base_dil, win_dil, padding)
    n = np.ndim(x)
    axes = tuple(range(n, 2 * n))
    return ufunc(ufunc.reduce(views, axis=axes), init).astype(np.asarray(x).dtype, copy=False)


def reduce_ufunc(x, init, ufunc, axes):
    x = np.asarray(x)
    if any(x.shape[a] == 0 for a in axes):
        # nothing to combine: the init value, as XLA gives (maximum and minimum have no identity
        # for ufunc.reduce to start from)
        shape = [d for i, d in enumerate(x.shape) if i not in axes]
        return np.broadcast_to(np.asarray(init, x.dtype), shape).copy()
    out = ufunc.reduce(x, axis=axes) if axes else x
    return ufunc(out, init).astype(x.dtype, copy=False)


def argreduce_pick(values, indices, init_value, init_index, axis, pick_max):
    """The (value, index) pair of an argmax/argmin reducer over one axis, first index on ties,
    NaN winning as it does in jax's reducer body."""
    values = np.asarray(values)
    if values.shape[axis] == 0:
        shape = values.shape[:axis] + values.shape[axis + 1:]
        return np.broadcast_to(init_value, shape).copy(), np.broadcast_to(init_index, shape).copy()
    pos = np.argmax(values, axis=axis) if pick_max else np.argmin(values, axis=axis)
    pos = np.expand_dims(pos, axis)
    v = np.take_along_axis(values, pos, axis).squeeze(axis)
    i = np.take_along_axis(np.broadcast_to(indices, values.shape), pos, axis).squeeze(axis)
    return v, i


# Sorting and top-k -----------------------------------------------------------------------------

def sort_by_key(operands, key, dimension: int, descending: bool):
    """Stable sort of every operand along `dimension` by an integer or float `key`."""
    key = np.asarray(key)
    if descending:
        rev = np.flip(key, dimension)
        order = np.flip(np.argsort(rev, axis=dimension, kind="stable"), dimension)
        order = key.shape[dimension] - 1 - order
    else:
        order = np.argsort(key, axis=dimension, kind="stable")
    return tuple(np.take_along_axis(np.asarray(x), order, dimension) for x in operands)


# Code generation ---------------------------------------------------------------------------------

def reduce_tree(body: Callable, xs: Sequence[Any], inits: Sequence[Any], axes: tuple[int, ...]) -> tuple:
    """Reduce with an elementwise body applied to whole halves at once (a pairwise tree)."""
    xs = [np.asarray(x) for x in xs]
    nd = xs[0].ndim
    keep = [d for d in range(nd) if d not in axes]
    out_shape = tuple(xs[0].shape[d] for d in keep)
    xs = [np.transpose(x, keep + list(axes)).reshape(out_shape + (-1,)) for x in xs]
    n = xs[0].shape[-1]
    if n == 0:
        return tuple(np.broadcast_to(i, out_shape).copy() for i in inits)
    while n > 1:
        half = n // 2
        ys = body(*(x[..., :half] for x in xs), *(x[..., half:2 * half] for x in xs))
        ys = [np.broadcast_to(y, out_shape + (half,)) for y in ys]
        if n % 2:
            ys = [np.concatenate([y, x[..., 2 * half:]], axis=-1) for y, x in zip(ys, xs)]
        xs = ys
        n = half + n % 2
    values = [x[..., 0] for x in xs]
    outs = body(*(np.broadcast_to(i, out_shape) for i in inits), *values)
    return tuple(np.array(np.broadcast_to(y, out_shape), dtype=x.dtype) for y, x in zip(outs, values))


def argreduce(values, indices, init_value, init_index, axis, pick_max, body):
    v, i = argreduce_pick(values, indices, init_value, init_index, axis, pick_max)
    out = body(np.broadcast_to(init_value, np.shape(v)), np.broadcast_to(init_index, np.shape(i)), v, i)
    return tuple(np.array(np.broadcast_to(y, np.shape(v))) for y in out)


@codegen_rule("stablehlo.reduce")
def _reduce(gen: FunctionCodegen, op: Operation) -> None:
    """A known reducer is one call of the library's reduction; argmax-style pairs and the other
    elementwise reducers apply the body to whole arrays (`argreduce`, a pairwise `reduce_tree`)."""
    n = len(op.results)
    xs, inits = op.operands[:n], op.operands[n:]
    dims = common.ints(op.get_attr("dimensions"))
    region = op.regions[0]
    ufunc = reducer_ufunc(region) if n == 1 else None
    if (_reduce_forms_torch if gen.torch else _reduce_by_ufunc)(gen, op, ufunc, dims):
        return
    if not is_elementwise_region(region):
        gen.not_lowered(op, "the reducer is not elementwise")
        return
    runtime = gen.runtime(__name__)
    pick_max = argreduce_direction(op)
    body = gen.region_function(region, "reducer")
    # torch's argmax and argmin take one dimension, and no unsigned or complex values
    if pick_max is not None and (not gen.torch or (len(dims) == 1 and not has_shell_dtypes(op.operands) and
                                                   dtype_of(xs[0].type).kind in "fViu")):
        gen.bind(op, f"{gen.mod.function(runtime.argreduce)}({gen.args(xs)}, {gen.args(inits)}, {dims[0]}, "
                     f"{pick_max}, {body})", returns_tuple=True)
        return
    gen.bind(op, f"{gen.mod.function(runtime.reduce_tree)}({body}, {gen.packed(xs)}, {gen.packed(inits)}, "
                 f"{gen.mod.literal(dims)})", returns_tuple=True)


def _reduce_by_ufunc(gen: FunctionCodegen, op: Operation, ufunc: np.ufunc | None, dims: list[int]) -> bool:
    """numpy code for a reduce by a known reducer (`ufunc.reduce`); False for other reducers."""
    if ufunc is None:
        return False
    x, init_value = op.operands
    init = _constant_value(init_value)
    if init is not None and dims:  # one call: ufunc.reduce with the init folded in
        dtype = dtype_of(op.results[0].type)
        reduce = gen.mod.hoist(ufunc.reduce, f"np_{ufunc.__name__}_reduce")
        initial = gen.mod.hoist(init, gen.mod.fresh("init"))
        gen.bind(op, f"{reduce}({gen.name(x)}, {gen.mod.literal(dims)}, {gen.mod.literal(dtype)}, "
                     f"initial={initial})")
        return True
    gen.bind(op, f"{gen.mod.function(reduce_ufunc)}({gen.name(x)}, {gen.name(init_value)}, "
                 f"{gen.mod.function(ufunc)}, {gen.mod.literal(dims)})")
    return True


def _constant_value(value: Value) -> Any:
    """The scalar a `stablehlo.constant` of one element defines, or None."""
    owner = value.owner_op
    if owner is None or owner.name != "stablehlo.constant":
        return None
    array = common.dense_value(owner.get_attr("value"))
    return array.reshape(-1)[0] if array.size == 1 else None


def _window_config(op: Operation, rank: int) -> tuple:
    window = common.ints(op.get_attr("window_dimensions"))
    strides = common.ints(op.get_attr("window_strides"), [1] * rank)
    base_dil = common.ints(op.get_attr("base_dilations"), [1] * rank)
    win_dil = common.ints(op.get_attr("window_dilations"), [1] * rank)
    padding = tuple(common.padding_pairs(op.get_attr("padding"), rank))
    return tuple(window), tuple(strides), tuple(base_dil), tuple(win_dil), padding


def reduce_window_tree(body: Callable, xs: Sequence[Any], inits: Sequence[Any], config: tuple) -> tuple:
    views = [window_view(x, i, *config[:4], config[4]) for x, i in zip(xs, inits)]
    rank = np.ndim(xs[0])
    axes = tuple(range(rank, 2 * rank))
    return reduce_tree(body, views, inits, axes)


@codegen_rule("stablehlo.reduce_window")
def _reduce_window(gen: FunctionCodegen, op: Operation) -> None:
    """A known reducer is one reduction of a strided view of the windows; other elementwise
    reducers a pairwise tree over it (`reduce_window_tree`)."""
    n = len(op.results)
    xs, inits = op.operands[:n], op.operands[n:]
    config = _window_config(op, len(type_shape(xs[0].type)))
    region = op.regions[0]
    ufunc = reducer_ufunc(region) if n == 1 else None
    if (_reduce_window_forms_torch if gen.torch else _reduce_window_by_ufunc)(gen, op, ufunc, config):
        return
    if not is_elementwise_region(region):
        gen.not_lowered(op, "the reducer is not elementwise")
        return
    body = gen.region_function(region, "reducer")
    gen.bind(op, f"{gen.mod.function(gen.runtime(__name__).reduce_window_tree)}({body}, {gen.packed(xs)}, "
                 f"{gen.packed(inits)}, {gen.mod.literal(config)})", returns_tuple=True)


def _reduce_window_by_ufunc(gen: FunctionCodegen, op: Operation, ufunc: np.ufunc | None, config: tuple) -> bool:
    """numpy code for a reduce_window by a known reducer; False for other reducers."""
    if ufunc is None:
        return False
    x, init = op.operands
    window, strides, base_dil, win_dil, padding = config
    gen.bind(op, f"{gen.mod.function(reduce_window_ufunc)}({gen.name(x)}, {gen.name(init)}, "
                 f"{gen.mod.function(ufunc)}, {gen.mod.literal(window)}, {gen.mod.literal(strides)}, "
                 f"{gen.mod.literal(base_dil)}, {gen.mod.literal(win_dil)}, {gen.mod.literal(padding)})")
    return True


@codegen_rule("stablehlo.map")
def _map(gen: FunctionCodegen, op: Operation) -> None:
    region = op.regions[0]
    if not is_elementwise_region(region):
        gen.not_lowered(op, "the mapper is not elementwise")
        return
    body = gen.region_function(region, "mapper")
    shape = type_shape(op.results[0].type)
    gen.bind(op, f"{gen.mod.function(gen.runtime(__name__).apply_map)}({body}, {gen.packed(op.operands)}, "
                 f"{gen.mod.literal(shape)})")


def apply_map(body: Callable, xs: Sequence[Any], shape: tuple[int, ...]) -> np.ndarray:
    return np.array(np.broadcast_to(body(*xs)[0], shape))


# Sort -------------------------------------------------------------------------------------------

def _depends_only_on(value: Value, arg: Value, block: Block) -> list[Operation] | None:
    """The ops (in block order) computing `value` from `arg` and constants alone, or None."""
    ops: dict[Operation, None] = {}
    stack = [value]
    while stack:
        v = stack.pop()
        if v is arg:
            continue
        owner = v.owner_op
        if owner is None or owner.parent is not block:
            return None
        if owner not in ops:
            ops[owner] = None
            stack.extend(owner.operands)
    return sorted(ops, key=lambda o: list(block.ops).index(o))


def _same_computation(a: Value, b: Value, arg_a: Value, arg_b: Value) -> bool:
    if a is arg_a:
        return b is arg_b
    oa, ob = a.owner_op, b.owner_op
    if oa is None or ob is None or oa.name != ob.name or len(oa.operands) != len(ob.operands):
        return False
    if {k: str(v) for k, v in oa.properties.items()} != {k: str(v) for k, v in ob.properties.items()}:
        return False
    if oa.name != "stablehlo.constant" and a.type is not b.type:
        return False
    return all(_same_computation(x, y, arg_a, arg_b) for x, y in zip(oa.operands, ob.operands))


class SortKey(NamedTuple):
    """One key of a lexicographic sort comparator."""
    operand: int               # the operand pair (block arguments 2k, 2k + 1) it is computed from
    ops: list[Operation]       # the comparator's ops computing it from argument 2k
    value: Value               # the key of argument 2k
    descending: bool
    total: bool                # floats ordered by TOTALORDER (else by `<`, NaN last as torch sorts)
    nan_last: bool             # `<` with NaNs sorted last and equal (loom's float comparator)
    compare: Operation         # the strict comparison


def lexicographic_keys(op: Operation) -> list[SortKey] | None:
    """The keys of a sort comparator that compares lexicographically, the first key deciding
    unless its two sides are equal, then the next: `k0 < k0'` or `or(k0 < k0', and(eq0, rest))`
    (either operand order), each key an elementwise function of one operand, `<` a LT or GT
    compare (jax's form) or `lt or (rhs is NaN and lhs is not)` (loom's form), `eq` its EQ
    compare over the same values or `not(or(less, greater))` with the same key. None for other
    comparators."""
    block = op.regions[0].blocks[0]
    ret = block.terminator
    if ret is None or len(ret.operands) != 1 or len(block.args) != 2 * len(op.operands):
        return None
    return _lexicographic(ret.operands[0], block)


def _lexicographic(value: Value, block: Block) -> list[SortKey] | None:
    single = _strict_key(value, block)
    if single is not None:
        return [single]
    either = defining_op(value, "stablehlo.or")
    if either is None:
        return None
    for first, second in (either.operands, either.operands[::-1]):
        key = _strict_key(first, block)
        both = defining_op(second, "stablehlo.and")
        if key is None or both is None:
            continue
        for equal, rest in (both.operands, both.operands[::-1]):
            if _is_key_equality(equal, key, first, block):
                tail = _lexicographic(rest, block)
                if tail is not None:
                    return [key, *tail]
    return None


def _strict_key(value: Value, block: Block) -> SortKey | None:
    """The key a strict comparison `value` orders by, or None."""
    cmp = defining_op(value, "stablehlo.compare")
    nan_last = False
    if cmp is None:  # lt or (rhs NaN and not lhs NaN)
        either = defining_op(value, "stablehlo.or")
        if either is None:
            return None
        for lt, nan_test in (either.operands, either.operands[::-1]):
            cmp = defining_op(lt, "stablehlo.compare")
            if cmp is not None and common.enum(cmp.get_attr("comparison_direction")) == "LT" and \
                    common.enum(cmp.get_attr("compare_type"), "") != "TOTALORDER" and \
                    _nan_last_test(nan_test, *cmp.operands):
                nan_last = True
                break
        else:
            return None
    direction = common.enum(cmp.get_attr("comparison_direction"))
    if direction not in ("LT", "GT"):
        return None
    lhs, rhs = cmp.operands
    for k in range(len(block.args) // 2):
        la, ra = block.args[2 * k], block.args[2 * k + 1]
        for value_a, value_b, swapped in ((lhs, rhs, False), (rhs, lhs, True)):
            ops = _depends_only_on(value_a, la, block)
            if ops is None or _depends_only_on(value_b, ra, block) is None or \
                    not _same_computation(value_a, value_b, la, ra):
                continue
            if any(o.name not in ELEMENTWISE for o in ops):
                return None
            total = common.enum(cmp.get_attr("compare_type"), "") == "TOTALORDER" and \
                dtype_of(value_a.type).kind in "fV"
            return SortKey(k, ops, value_a, (direction == "GT") != swapped, total, nan_last, cmp)
    return None


def _nan_last_test(value: Value, lhs: Value, rhs: Value) -> bool:
    """Whether `value` is `and(rhs != rhs, not(lhs != lhs))` (either operand order)."""
    both = defining_op(value, "stablehlo.and")
    if both is None:
        return False
    for rhs_nan, not_lhs_nan in (both.operands, both.operands[::-1]):
        negation = defining_op(not_lhs_nan, "stablehlo.not")
        if is_compare(rhs_nan, "NE", rhs, rhs) and negation is not None and \
                is_compare(negation.operands[0], "NE", lhs, lhs):
            return True
    return False


def _is_key_equality(value: Value, key: SortKey, less: Value, block: Block) -> bool:
    """Whether `value` is true exactly when the two sides of `key` are equal under its order:
    an EQ compare of the strict compare's values (of the same compare type), or
    `not(or(less, greater))` with `greater` the same key's comparison the other way."""
    cmp = defining_op(value, "stablehlo.compare")
    if cmp is not None:
        # NaN != NaN, though NaNs are equal under the NaN-last order: only `not(or(...))` fits it
        if key.nan_last or common.enum(cmp.get_attr("comparison_direction")) != "EQ" or \
                set(cmp.operands) != set(key.compare.operands):
            return False
        return key.total == (common.enum(cmp.get_attr("compare_type"), "") == "TOTALORDER")
    negation = defining_op(value, "stablehlo.not")
    either = defining_op(negation.operands[0], "stablehlo.or") if negation is not None else None
    if either is None:
        return False
    arg = block.args[2 * key.operand]
    for one, other in (either.operands, either.operands[::-1]):
        if one is not less:
            continue
        mirror = _strict_key(other, block)
        if mirror is not None and mirror.operand == key.operand and mirror.descending != key.descending and \
                (mirror.total, mirror.nan_last) == (key.total, key.nan_last) and \
                _same_computation(mirror.value, key.value, arg, arg):
            return True
    return False


def sort_pairwise(comparator: Callable, xs: Sequence[Any], dim: int) -> tuple:
    """Stable sort by any elementwise comparator: rank = #less + #equivalent-and-earlier, from
    the n x n matrix of comparator results."""
    xs = [np.moveaxis(np.asarray(x), dim, -1) for x in xs]
    n = xs[0].shape[-1]
    if n <= 1:
        return tuple(np.moveaxis(x, -1, dim).copy() for x in xs)
    args = []
    for x in xs:
        args += [x[..., :, None], x[..., None, :]]
    less = np.broadcast_to(comparator(*args)[0], xs[0].shape + (n,))
    greater = np.swapaxes(less, -1, -2)
    earlier = np.tri(n, n, -1, dtype=bool)
    rank = greater.sum(axis=-1) + (~less & ~greater & earlier).sum(axis=-1)
    order = np.argsort(rank, axis=-1, kind="stable")
    return tuple(np.moveaxis(np.take_along_axis(x, order, -1), -1, dim) for x in xs)


PAIRWISE_SORT_LIMIT = 2048


@codegen_rule("stablehlo.sort")
def _sort(gen: FunctionCodegen, op: Operation) -> None:
    """A comparator ordering by keys sorts by stable sorts of the keys (numpy: by one key; torch:
    lexicographically by several, the last key first); another elementwise one ranks all pairs
    (`sort_pairwise`) up to PAIRWISE_SORT_LIMIT elements; the rest is not lowered."""
    shape = type_shape(op.operands[0].type)
    dim = common.integer(op.get_attr("dimension"), -1)
    if dim < 0:
        dim += len(shape)
    keys = lexicographic_keys(op)
    if gen.torch and keys is not None and all(dtype_of(key.value.type).kind != "c" for key in keys):
        kt = _torch()
        exprs = [f"{gen.mod.function(kt.sortable)}({_key_function(gen, op, key)}.expand({gen.mod.literal(shape)}), "
                 f"{key.total})" for key in keys]
        descending = tuple(key.descending for key in keys)
        gen.bind(op, f"{gen.mod.function(kt.sort_lexicographic)}({gen.packed(op.operands)}, ({', '.join(exprs)},), "
                     f"{gen.mod.literal(descending)}, {dim})", returns_tuple=True)
        return
    if not gen.torch and keys is not None and len(keys) == 1 and not keys[0].nan_last:
        key_expr = _key_function(gen, op, keys[0])
        if keys[0].total:
            key_expr = f"{gen.mod.function(total_order_key)}({key_expr})"
        key_expr = f"{gen.mod.function(np.broadcast_to)}({key_expr}, {gen.mod.literal(shape)})"
        gen.bind(op, f"{gen.mod.function(sort_by_key)}({gen.packed(op.operands)}, {key_expr}, {dim}, "
                     f"{keys[0].descending})", returns_tuple=True)
        return
    region = op.regions[0]
    length = shape[dim] if shape else 1
    if not is_elementwise_region(region):
        gen.not_lowered(op, "the comparator is neither a compare of keys nor elementwise")
        return
    if length > PAIRWISE_SORT_LIMIT:
        gen.not_lowered(op, f"the comparator is not a compare of keys, and {length} elements are more than the "
                            f"pairwise sort takes ({PAIRWISE_SORT_LIMIT})")
        return
    body = gen.region_function(region, "comparator")
    gen.bind(op, f"{gen.mod.function(gen.runtime(__name__).sort_pairwise)}({body}, {gen.packed(op.operands)}, "
                 f"{dim})", returns_tuple=True)


def _key_function(gen: FunctionCodegen, op: Operation, key: SortKey) -> str:
    """Emit the function computing one sort key from its operand; return its call on the operand."""
    block = op.regions[0].blocks[0]
    name = gen.mod.fresh("key")
    param = gen.mod.fresh("b")
    gen.emit(f"def {name}({param}):")
    with gen.nested_scope():
        gen.names[block.args[2 * key.operand]] = param
        for o in key.ops:
            gen.op(o)
        gen.emit(f"return {gen.name(key.value)}")
    return f"{name}({gen.name(op.operands[key.operand])})"


def select_and_scatter_max(operand, source, init, window, strides, padding, pick_max: bool, first: bool):
    """select_and_scatter whose select is `a >= b` (first max), `a > b` (last max) or the min
    forms, and whose scatter adds: vectorised over windows; padding is never selected."""
    operand = np.asarray(operand)
    if operand.dtype.kind in "fVc" and np.isnan(operand).any():
        return None
    rank = operand.ndim
    valid = window_view(np.ones(operand.shape, bool), False, window, strides, (1,) * rank, (1,) * rank,
                           padding)
    values = window_view(operand, np.zeros((), operand.dtype), window, strides, (1,) * rank, (1,) * rank,
                            padding)
    out_shape = values.shape[:rank]
    flat_valid = valid.reshape(out_shape + (-1,))
    flat = values.reshape(out_shape + (-1,))
    extreme = np.where(flat_valid, flat, flat.max() if not pick_max else flat.min())
    best = extreme.max(axis=-1, keepdims=True) if pick_max else extreme.min(axis=-1, keepdims=True)
    hit = flat_valid & (flat == best)
    k = flat.shape[-1]
    pos = np.argmax(hit, axis=-1) if first else k - 1 - np.argmax(hit[..., ::-1], axis=-1)
    any_valid = flat_valid.any(axis=-1)
    w_index = np.unravel_index(pos, window)
    result = np.full(operand.shape, init, operand.dtype)
    out_index = np.indices(out_shape)
    coords = tuple(out_index[d] * strides[d] + w_index[d] - padding[d][0] for d in range(rank))
    sel = tuple(c[any_valid] for c in coords)
    np.add.at(result, sel, np.asarray(source)[any_valid])
    return result


# select's comparison -> (pick_max, first) of `select_and_scatter_max`; the torch comparison
_SELECT_FORMS = {"GE": (True, True), "GT": (True, False), "LE": (False, True), "LT": (False, False)}
_KEEP = {"GE": "ge", "GT": "gt", "LE": "le", "LT": "lt"}


@codegen_rule("stablehlo.select_and_scatter")
def _select_and_scatter(gen: FunctionCodegen, op: Operation) -> None:
    """A select that is one comparison of its arguments and a scatter that adds: vectorised over
    the windows."""
    select, scatter = op.regions
    ops = list(select.blocks[0].ops)
    direction = None
    if len(ops) == 2 and ops[0].name == "stablehlo.compare" and ops[0].operands == tuple(select.blocks[0].args) \
            and scatter_update_ufunc(scatter) == (True, np.add):
        direction = common.enum(ops[0].get_attr("comparison_direction"))
    rank = len(type_shape(op.operands[0].type))
    window = tuple(common.ints(op.get_attr("window_dimensions"), [1] * rank))
    strides = tuple(common.ints(op.get_attr("window_strides"), [1] * rank))
    padding = tuple(common.padding_pairs(op.get_attr("padding"), rank))
    if gen.torch and direction in _KEEP and not has_shell_dtypes(op.operands) and \
            dtype_of(op.operands[0].type).kind != "c":
        import torch
        gen.bind(op, f"{gen.mod.function(_torch().select_and_scatter)}({gen.args(op.operands)}, "
                     f"{gen.mod.literal(window)}, {gen.mod.literal(strides)}, {gen.mod.literal(padding)}, "
                     f"{gen.mod.function(getattr(torch, _KEEP[direction]))})")
        return
    if not gen.torch and direction in _SELECT_FORMS:
        fast = SelectAndScatter(InterpretedOp(gen.mod.interpreter, op, free_values(op)), window, strides, padding,
                                _SELECT_FORMS[direction])
        gen.bind(op, f"{gen.mod.hoist(fast, gen.mod.fresh('select_and_scatter'))}({gen.args(op.operands)})")
        return
    gen.not_lowered(op, "select is not one comparison of its arguments, or scatter does not add")


class SelectAndScatter:
    """The vectorised select_and_scatter, with the interpreter for data it cannot handle (NaN)."""

    def __init__(self, fallback: InterpretedOp, window, strides, padding, form) -> None:
        self.fallback = fallback
        self.window, self.strides, self.padding, self.form = tuple(window), tuple(strides), padding, form

    def __call__(self, operand, source, init):
        out = select_and_scatter_max(operand, source, init, self.window, self.strides, self.padding, *self.form)
        if out is None:
            return self.fallback((operand, source, init), ())[0]
        return out


def _torch():
    """`loom.ops.reductions_torch` (it imports torch): the runtime of the torch code."""
    from loom.ops import reductions_torch
    return reductions_torch


# The forms torch code takes first ----------------------------------------------------------------

_TORCH_REDUCE_KINDS = {np.add: "add", np.multiply: "mul", np.maximum: "max", np.minimum: "min",
                       np.bitwise_and: "all", np.bitwise_or: "any"}
_BOOL_REDUCE_KINDS = {"add": "any", "mul": "all", "max": "any", "min": "all", "all": "all", "any": "any"}
_IDENTITY = {"add": 0, "mul": 1, "any": False, "all": True}


def _torch_reducer(gen: FunctionCodegen, op: Operation, ufunc: np.ufunc, init_value: Value) -> tuple[str, bool] | None:
    """The torch reduction (`sum`, `max`, ...) a reducer ufunc maps to over the result's element
    type, and whether the init value must be combined in (it is not the reduction's identity);
    None, with the op given to numpy, where torch has none."""
    dtype = dtype_of(op.results[0].type)
    kind = _TORCH_REDUCE_KINDS.get(ufunc)
    if dtype == np.bool_ and kind is not None:
        kind = _BOOL_REDUCE_KINDS[kind]
    elif kind in ("all", "any") or (dtype.kind == "c" and kind in ("max", "min")):
        kind = None
    if kind is None:
        gen.numpy_island(op, "no torch reduction for this reducer and element type")
        return None
    init = _constant_value(init_value)
    identity = _IDENTITY.get(kind)
    if kind == "max" and dtype.kind in "fV":
        identity = -np.inf
    elif kind == "min" and dtype.kind in "fV":
        identity = np.inf
    return kind, init is None or identity is None or bool(init != identity)


def _reduce_forms_torch(gen: FunctionCodegen, op: Operation, ufunc: np.ufunc | None, dims: list[int]) -> bool:
    """torch code for a reduce over dynamic or empty dimensions or by a known reducer (one torch
    reduction, or the numpy rule where torch has none); False for other reducers."""
    kt = _torch()
    n = len(op.results)
    xs, inits = op.operands[:n], op.operands[n:]
    shape = type_shape(xs[0].type)
    shapes = tuple(type_shape(r.type) for r in op.results)
    if any(shape[d] < 0 for d in dims) or \
            (any(shape[d] == 0 for d in dims) and any(d < 0 for s in shapes for d in s)):
        gen.numpy_island(op, "dynamic dimensions")
        return True
    if any(shape[d] == 0 for d in dims):  # nothing to reduce: the init values
        gen.bind(op, f"{gen.mod.function(kt.reduce_empty)}({gen.packed(inits)}, {gen.mod.literal(shapes)})",
                 returns_tuple=True)
        return True
    if ufunc is None:
        return False
    reducer = _torch_reducer(gen, op, ufunc, inits[0])
    if reducer is None:
        return True
    kind, combine = reducer
    dtype = dtype_of(op.results[0].type)
    if has_shell_dtypes(op.operands):
        gen.bind(op, f"{gen.mod.function(kt.reduce_unsigned)}({gen.name(xs[0])}, {gen.mod.literal(dims)}, "
                     f"{gen.name(inits[0])}, {kind!r}, {combine})")
        return True
    if dims and not combine and kind in ("add", "max", "min"):  # the common forms: one torch call
        import torch
        fn = {"add": torch.sum, "max": torch.amax, "min": torch.amin}[kind]
        tdt = kt.torch_dtype(dtype)
        extra = f", dtype={gen.mod.hoist(tdt, str(tdt).replace('.', '_'))}" if kind == "add" else ""
        gen.bind(op, f"{gen.mod.function(fn)}({gen.name(xs[0])}, {gen.mod.literal(dims)}{extra})")
        return True
    gen.bind(op, f"{gen.mod.function(kt.reduce)}({gen.name(xs[0])}, {gen.mod.literal(dims)}, "
                 f"{gen.name(inits[0])}, {kind!r}, {gen.mod.literal(kt.torch_dtype(dtype))}, {combine})")
    return True


def _reduce_window_forms_torch(gen: FunctionCodegen, op: Operation, ufunc: np.ufunc | None, config: tuple) -> bool:
    """torch code for a reduce_window with no windows to unfold or by a known reducer (one torch
    reduction of the unfolded windows, or the numpy rule where torch has none); False for other
    reducers."""
    kt = _torch()
    x, init = op.operands[0], op.operands[len(op.results)]
    shape = type_shape(x.type)
    window, strides, base_dil, win_dil, padding = config
    padded = [(d - 1) * b + 1 + lo + hi if d else lo + hi for d, b, (lo, hi) in zip(shape, base_dil, padding)]
    spans = [(w - 1) * d + 1 for w, d in zip(window, win_dil)]
    out_size = math.prod(type_shape(op.results[0].type))
    if out_size == 0 or any(s > p for s, p in zip(spans, padded)) or any(d < 0 for d in shape):
        gen.numpy_island(op, "an empty result, a window larger than the input or dynamic dimensions")
        return True
    if ufunc is None:
        return False
    reducer = _torch_reducer(gen, op, ufunc, init)
    if reducer is None:
        return True
    kind, combine = reducer
    dtype = dtype_of(op.results[0].type)
    if has_shell_dtypes(op.operands):
        gen.bind(op, f"{gen.mod.function(kt.reduce_window_unsigned)}({gen.name(x)}, {gen.name(init)}, "
                     f"{kind!r}, {gen.mod.literal(config)}, {combine})")
        return True
    gen.bind(op, f"{gen.mod.function(kt.reduce_window)}({gen.name(x)}, {gen.name(init)}, {kind!r}, "
                 f"{gen.mod.literal(config)}, {gen.mod.literal(kt.torch_dtype(dtype))}, {combine})")
    return True


# The reference interpreter's rules (the spec's definitions, element by element) ---------------

@interpreter_rule("stablehlo.reduce")
def _reduce_interpreted(interp: Interpreter, op: Operation, args: list) -> list:
    n = len(args) // 2
    inputs, inits = [np.asarray(a) for a in args[:n]], args[n:]
    dims = common.ints(op.get_attr("dimensions"))
    body = interp.region_function(op.regions[0])
    kept = [d for d in range(inputs[0].ndim) if d not in dims]
    out_shape = [inputs[0].shape[d] for d in kept]
    results = [np.empty(out_shape, common.dtype_of(r.type)) for r in op.results]
    reduced_shape = [inputs[0].shape[d] for d in dims]
    for out_index in np.ndindex(*out_shape):
        acc = [scalar(v) for v in inits]
        for red_index in np.ndindex(*reduced_shape):
            full = [0] * inputs[0].ndim
            for d, i in zip(kept, out_index):
                full[d] = i
            for d, i in zip(dims, red_index):
                full[d] = i
            acc = body(*acc, *(x[tuple(full)] for x in inputs))
        for r, v in zip(results, acc):
            r[out_index] = v
    return results


@interpreter_rule("stablehlo.reduce_window")
def _reduce_window_interpreted(interp: Interpreter, op: Operation, args: list) -> list:
    n = len(args) // 2
    inputs, inits = [np.asarray(a) for a in args[:n]], args[n:]
    rank = inputs[0].ndim
    window = common.ints(op.get_attr("window_dimensions"))
    strides = common.ints(op.get_attr("window_strides"), [1] * rank)
    base_dil = common.ints(op.get_attr("base_dilations"), [1] * rank)
    win_dil = common.ints(op.get_attr("window_dilations"), [1] * rank)
    padding = common.padding_pairs(op.get_attr("padding"), rank)
    padded = [pad(x, init, [p[0] for p in padding], [p[1] for p in padding], [d - 1 for d in base_dil])
              for x, init in zip(inputs, inits)]
    body = interp.region_function(op.regions[0])
    out_shape = type_shape(op.results[0].type)
    results = [np.empty(out_shape, common.dtype_of(r.type)) for r in op.results]
    for out_index in np.ndindex(*out_shape):
        acc = [scalar(v) for v in inits]
        for w_index in np.ndindex(*window):
            pos = tuple(o * s + w * d for o, s, w, d in zip(out_index, strides, w_index, win_dil))
            acc = body(*acc, *(x[pos] for x in padded))
        for r, v in zip(results, acc):
            r[out_index] = v
    return results


@interpreter_rule("stablehlo.map")
def _map_interpreted(interp: Interpreter, op: Operation, args: list) -> list:
    inputs = [np.asarray(a) for a in args]
    body = interp.region_function(op.regions[0])
    out = np.empty(type_shape(op.results[0].type), common.dtype_of(op.results[0].type))
    for index in np.ndindex(*out.shape):
        out[index] = body(*(x[index] for x in inputs))[0]
    return [out]


@interpreter_rule("stablehlo.sort")
def _sort_interpreted(interp: Interpreter, op: Operation, args: list) -> list:
    inputs = [np.asarray(a) for a in args]
    dim = common.integer(op.get_attr("dimension"), -1)
    if dim < 0:
        dim += inputs[0].ndim
    body = interp.region_function(op.regions[0])
    outs = [np.array(x) for x in inputs]
    shape = inputs[0].shape
    others = [d for d in range(len(shape)) if d != dim]
    for rest in np.ndindex(*[shape[d] for d in others]):
        def at(i, rest=rest):
            full = [0] * len(shape)
            for d, r in zip(others, rest):
                full[d] = r
            full[dim] = i
            return tuple(full)

        def less(i, j, at=at) -> bool:
            pairs = []
            for x in inputs:
                pairs += [x[at(i)], x[at(j)]]
            return bool(body(*pairs)[0])

        def cmp(i, j, less=less) -> int:
            return -1 if less(i, j) else (1 if less(j, i) else 0)

        order = sorted(range(shape[dim]), key=functools.cmp_to_key(cmp))  # Python's sort is stable
        for x, out in zip(inputs, outs):
            for k, i in enumerate(order):
                out[at(k)] = x[at(i)]
    return outs


def select_and_scatter_reference(operand: np.ndarray, source: np.ndarray, init: Any, window: Sequence[int],
                                 strides: Sequence[int], padding: Sequence[tuple[int, int]],
                                 select: Callable[..., list], scatter: Callable[..., list]) -> np.ndarray:
    result = np.full(operand.shape, init, operand.dtype)
    for source_index in np.ndindex(*source.shape):
        selected = None
        for w in np.ndindex(*window):
            pos = tuple(s * st + wi - p[0] for s, st, wi, p in zip(source_index, strides, w, padding))
            if any(i < 0 or i >= n for i, n in zip(pos, operand.shape)):
                continue
            if selected is None or not bool(select(operand[selected], operand[pos])[0]):
                selected = pos
        if selected is not None:
            result[selected] = scatter(result[selected], source[source_index])[0]
    return result


@interpreter_rule("stablehlo.select_and_scatter")
def _select_and_scatter_interpreted(interp: Interpreter, op: Operation, args: list) -> list:
    operand, source, init = np.asarray(args[0]), np.asarray(args[1]), args[2]
    rank = operand.ndim
    window = common.ints(op.get_attr("window_dimensions"), [1] * rank)
    strides = common.ints(op.get_attr("window_strides"), [1] * rank)
    padding = common.padding_pairs(op.get_attr("padding"), rank)
    return [select_and_scatter_reference(operand, source, init, window, strides, padding,
                                         interp.region_function(op.regions[0]), interp.region_function(op.regions[1]))]


torch_kernels_in("loom.ops.reductions_torch")

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
