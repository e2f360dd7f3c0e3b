"""The reductions' torch kernels (imported with torch: see `loom.ops.reductions`)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from loom.backend import common
from loom.backend.kernels import Kernel, Operand, operand_dtype, result_dtype
from loom.backend.torch_kernels import SIGNED_OF, flip_sign_bit, pad, torch_dtype, torch_kernel, total_order_key
from loom.ir.core import Operation


@torch_kernel("chlo.top_k")
def _top_k(op: Operation) -> Kernel | None:
    if operand_dtype(op).kind == "c":
        return None
    return Kernel(top_k, Operand(0), common.integer(op.get_attr("k")), torch_dtype(result_dtype(op, 1)))


def top_k(x, k, index_dtype):
    """The k largest along the last axis, the smaller index first on ties, NaN largest."""
    key = total_order_key(x) if x.is_floating_point() else x
    order = torch.sort(key, dim=-1, descending=True, stable=True).indices[..., :k]
    return torch.take_along_dim(x, order, -1), order.to(index_dtype)


def reduce_empty(inits, shapes) -> tuple:
    """A reduction over a dimension of size 0: the init values."""
    return tuple(i.expand(shape).clone() for i, shape in zip(inits, shapes))


def reduce_unsigned(x, dims, init, kind: str, combine: bool):
    """`reduce` over unsigned 16/32/64-bit values: sums and products wrap alike on the signed
    views; max and min compare them with the sign bits flipped."""
    signed = SIGNED_OF[x.dtype]
    xs, i = x.view(signed), init.view(signed)
    if kind in ("max", "min"):
        return flip_sign_bit(reduce(flip_sign_bit(xs), dims, flip_sign_bit(i), kind, signed, combine)).view(x.dtype)
    return reduce(xs, dims, i, kind, signed, combine).view(x.dtype)


def reduce_window_unsigned(x, init, kind: str, config, combine: bool):
    """`reduce_window` over unsigned 16/32/64-bit values, as `reduce_unsigned` reduces."""
    signed = SIGNED_OF[x.dtype]
    xs, i = x.view(signed), init.view(signed)
    if kind in ("max", "min"):
        out = reduce_window(flip_sign_bit(xs), flip_sign_bit(i), kind, config, signed, combine)
        return flip_sign_bit(out).view(x.dtype)
    return reduce_window(xs, i, kind, config, signed, combine).view(x.dtype)


# Sorting by several keys -----------------------------------------------------------------------

def sortable(key, total: bool):
    """A sort key as a tensor torch.sort orders as the comparator does: floats by total order
    when the comparator compares TOTALORDER (else as torch does: NaN last), unsigned
    16/32/64-bit keys through their signed bits with the sign flipped, booleans as uint8."""
    if key.dtype == torch.bool:
        return key.to(torch.uint8)
    if key.dtype in SIGNED_OF:
        return flip_sign_bit(key.view(SIGNED_OF[key.dtype]))
    if total and key.is_floating_point():
        return total_order_key(key)
    return key


def sort_lexicographic(operands, keys, descending, dimension: int):
    """Stable sort of every operand along `dimension` by the first key, ties by the next, ...:
    stable sorts by each key from the last to the first (a later sort keeps the order of the
    earlier ones among its ties)."""
    order = None
    for key, down in zip(reversed(keys), reversed(descending)):
        k = key if order is None else torch.take_along_dim(key, order, dimension)
        step = torch.sort(k, dim=dimension, descending=down, stable=True).indices
        order = step if order is None else torch.take_along_dim(order, step, dimension)
    return tuple(_take_along(x, order, dimension) for x in operands)


def _take_along(x, order, dimension: int):
    signed = SIGNED_OF.get(x.dtype)
    if signed is None:
        return torch.take_along_dim(x, order, dimension)
    return torch.take_along_dim(x.view(signed), order, dimension).view(x.dtype)  # no gather on unsigned


def sort_pairwise(comparator: Callable, xs, dimension: int) -> tuple:
    """Stable sort by any elementwise comparator, as the numpy rule computes it: each element's
    rank is the number of elements before it (less, or equivalent and earlier), from the n x n
    matrix of comparator results."""
    xs = [torch.movedim(x, dimension, -1) for x in xs]
    n = xs[0].shape[-1]
    if n <= 1:
        return tuple(torch.movedim(x, -1, dimension).clone() for x in xs)
    args = []
    for x in xs:
        args += [x.unsqueeze(-1), x.unsqueeze(-2)]
    less = comparator(*args)[0].expand((*xs[0].shape, n))
    greater = less.transpose(-1, -2)
    earlier = torch.ones((n, n), dtype=torch.bool, device=xs[0].device).tril(-1)
    rank = greater.sum(-1) + (~less & ~greater & earlier).sum(-1)
    order = torch.sort(rank, dim=-1, stable=True).indices
    return tuple(torch.movedim(_take_along(x, order, -1), -1, dimension) for x in xs)


def select_and_scatter(operand, source, init, window, strides, padding, keep):
    """select_and_scatter whose select is a comparison `keep(selected, candidate)` and whose
    scatter adds: each window's selection is the fold XLA defines (the candidate replaces the
    selection when `keep` is false; padding is never selected), done for all windows at once,
    one window position per step, so NaNs select exactly as in XLA and nothing is read back."""
    rank = operand.ndim
    ones = (1,) * rank
    no = torch.zeros((), dtype=torch.bool, device=operand.device)
    valid = window_view(torch.ones(operand.shape, dtype=torch.bool, device=operand.device), no, window, strides,
                        ones, ones, padding)
    zero = torch.zeros((), dtype=operand.dtype, device=operand.device)
    values = window_view(operand, zero, window, strides, ones, ones, padding)
    out_shape = tuple(values.shape[:rank])
    flat_valid = valid.reshape(out_shape + (-1,))
    flat = values.reshape(out_shape + (-1,))
    selected = flat[..., 0]
    position = torch.zeros(out_shape, dtype=torch.int64, device=operand.device)
    chosen = flat_valid[..., 0]
    for k in range(1, flat.shape[-1]):
        candidate = flat[..., k]
        switch = flat_valid[..., k] & (~chosen | ~keep(selected, candidate))
        selected = torch.where(switch, candidate, selected)
        position = torch.where(switch, k, position)
        chosen = chosen | flat_valid[..., k]
    # The operand index of each window's selection: window start + offset in the window.
    offsets = torch.stack(torch.unravel_index(position, tuple(window)), 0) if rank else position[None]
    index = torch.zeros(out_shape, dtype=torch.int64, device=operand.device)
    stride = 1
    for d in range(rank - 1, -1, -1):
        start = torch.arange(out_shape[d], device=operand.device) * strides[d] - padding[d][0]
        shape = [1] * rank
        shape[d] = out_shape[d]
        index = index + (start.reshape(shape) + offsets[d]) * stride
        stride *= operand.shape[d]
    size = operand.numel()
    target = torch.where(chosen, index, size).reshape(-1)
    result = torch.cat([init.to(operand.dtype).expand(size), init.to(operand.dtype).reshape(1)])
    result.index_put_((target,), source.reshape(-1).to(operand.dtype), accumulate=True)
    return result[:size].reshape(operand.shape)


# The runtime of the torch code generation rules (loom.ops.reductions) -----------------------------

_COMBINE = {"add": torch.add, "mul": torch.mul, "max": torch.maximum, "min": torch.minimum,
            "any": torch.logical_or, "all": torch.logical_and}


def reduce(x, dims, init, kind: str, dtype, combine: bool):
    """A reduction by a known binary op over `dims` (none of size 0), then with `init` unless it
    is the op's identity. With no dims each element is combined with `init` alone."""
    if not dims:
        return _COMBINE[kind](x, init)
    if kind == "add":
        out = torch.sum(x, dims, dtype=dtype)
        return out + init if combine else out
    if kind == "mul":
        out = x
        for d in sorted(dims, reverse=True):
            out = torch.prod(out, d, dtype=dtype)
        return out * init if combine else out
    if kind == "max":
        out = torch.amax(x, dims)
        return torch.maximum(out, init) if combine else out
    if kind == "min":
        out = torch.amin(x, dims)
        return torch.minimum(out, init) if combine else out
    if kind == "any":
        out = torch.any(x, dim=dims) if len(dims) != 1 else torch.any(x, dims[0])
        return out | init if combine else out
    out = torch.all(x, dim=dims) if len(dims) != 1 else torch.all(x, dims[0])  # "all"
    return out & init if combine else out


def reduce_tree(body: Callable, xs, inits, axes: tuple[int, ...]) -> tuple:
    """Reduce with an elementwise body applied to whole halves at once (a pairwise tree)."""
    nd = xs[0].ndim
    keep = [d for d in range(nd) if d not in axes]
    out_shape = tuple(xs[0].shape[d] for d in keep)
    xs = [x.permute(keep + list(axes)).reshape(out_shape + (-1,)) for x in xs]
    n = xs[0].shape[-1]
    if n == 0:
        return tuple(i.expand(out_shape).clone() for i in inits)
    while n > 1:
        half = n // 2
        ys = body(*(x[..., :half] for x in xs), *(x[..., half:2 * half] for x in xs))
        ys = [y.expand(out_shape + (half,)) for y in ys]
        if n % 2:
            ys = [torch.cat([y, x[..., 2 * half:]], dim=-1) for y, x in zip(ys, xs)]
        xs = ys
        n = half + n % 2
    values = [x[..., 0] for x in xs]
    outs = body(*(i.expand(out_shape) for i in inits), *values)
    return tuple(y.expand(out_shape).to(x.dtype) for y, x in zip(outs, values))


def argreduce(values, indices, init_value, init_index, axis, pick_max, body):
    """The (value, index) pair of jax's argmax/argmin reducer over one axis (of nonzero size):
    first index on ties, NaN winning; then the body once with the init values."""
    pos = torch.argmax(values, dim=axis, keepdim=True) if pick_max else torch.argmin(values, dim=axis, keepdim=True)
    v = torch.take_along_dim(values, pos, axis).squeeze(axis)
    i = torch.take_along_dim(indices.expand(values.shape), pos, axis).squeeze(axis)
    out = body(init_value.expand(v.shape), init_index.expand(i.shape), v, i)
    return tuple(y.expand(v.shape) for y in out)


def apply_map(body: Callable, xs, shape):
    return body(*xs)[0].expand(shape)


def window_view(x, init, window, strides, base_dil, win_dil, padding):
    """Windows of `x` (padded with `init`, base-dilated) as a strided view of shape
    (out..., window...)."""
    n = x.ndim
    if any(d != 1 for d in base_dil) or any(lo or hi for lo, hi in padding):
        x = pad(x, init, [p[0] for p in padding], [p[1] for p in padding], [d - 1 for d in base_dil])
    for dim in range(n):
        x = x.unfold(dim, (window[dim] - 1) * win_dil[dim] + 1, strides[dim])
    if any(d != 1 for d in win_dil):
        x = x[(slice(None),) * n + tuple(slice(None, None, d) for d in win_dil)]
    return x


def reduce_window(x, init, kind, config, dtype, combine):
    """reduce_window by a known binary op: a strided view of the windows, one reduction."""
    window, strides, base_dil, win_dil, padding = config
    views = window_view(x, init, window, strides, base_dil, win_dil, padding)
    n = x.ndim
    return reduce(views, tuple(range(n, 2 * n)), init, kind, dtype, combine)


def reduce_window_tree(body: Callable, xs, inits, config) -> tuple:
    views = [window_view(x, i, *config[:4], config[4]) for x, i in zip(xs, inits)]
    n = xs[0].ndim
    return reduce_tree(body, views, inits, tuple(range(n, 2 * n)))


# Sorting and top-k -----------------------------------------------------------------------------

def sort_by_key(operands, key, dimension: int, descending: bool):
    """Stable sort of every operand along `dimension` by `key`."""
    order = torch.sort(key, dim=dimension, descending=descending, stable=True).indices
    return tuple(torch.take_along_dim(x, order, dimension) for x in operands)
