"""Linear algebra and convolution: dot_general and convolution (their derivatives and batching
here), fft, triangular_solve and cholesky (kernels, derivatives, batching here), the legacy
contractions dot / einsum / unary_einsum (kernels here).

dot_general's, convolution's and fft's numpy kernels are after the imports, their torch kernels in
`loom.ops.linalg_torch`. Both ops are bilinear: each operand's
tangent is the product with the other operand's; each cotangent is the transposed product (JAX's
transposes: for convolution, a convolution of the cotangent with the reversed kernel, and of the
input with the cotangent, feature and batch groups included). Batched by a new batching
dimension (dot_general) or by folding the batch into the batch, feature or kernel-output
dimension (convolution), as JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from loom.backend import common
from loom.backend import kernels as kn
from loom.backend.common import TORCH_KERNELS, ConvDims, torch_kernels_in
from loom.backend.kernels import KERNELS, Kernel, Operand, kernel, operand_dtype, pad, result_dtype
from loom.dialects import stablehlo
from loom.dialects.stablehlo import ConvDimensionNumbers, DotDimensionNumbers, TransposeAttr
from loom.ir.attributes import BoolAttr, DenseElementsAttr, numpy_dtype
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.types import RankedTensorType
from loom.ops.registry import declare, register, unsupported
from loom.transforms.autodiff import VJP_RULES, MissingRuleError, is_float
from loom.transforms.autodiff import props_ints as _ints
from loom.transforms.batching import BATCH_RULES, bdim_to_front, moveaxis
from loom.transforms.forward_ad import JVP_RULES
from loom.transforms.rule_builders import (
    dimension_numbers,
    int_property,
    rule,
    shape_of,
    zeros_like,
)
from loom.transforms.sharding_propagation import SHARDING_RULES, Factors

# Kernels -----------------------------------------------------------------------------------------

# numpy kernels here; torch kernels in loom.ops.linalg_torch (imported with torch)

@kernel("stablehlo.dot_general")
def _dot_general(op: Operation) -> Kernel:
    f = common.struct_fields(op.get_attr("dot_dimension_numbers"))
    lb, rb = f.get("lhs_batching_dimensions", ()), f.get("rhs_batching_dimensions", ())
    lc, rc = f.get("lhs_contracting_dimensions", ()), f.get("rhs_contracting_dimensions", ())
    lhs_t, rhs_t = op.operands[0].type, op.operands[1].type
    out_dt = result_dtype(op)
    work = kn._compute_dtype(out_dt)
    lrank, rrank = len(common.shape_of(lhs_t)), len(common.shape_of(rhs_t))
    same = operand_dtype(op, 0) == out_dt and operand_dtype(op, 1) == out_dt and work == out_dt
    form = _matmul_form(lrank, rrank, (lb, rb, lc, rc))
    if form == (False, False):
        return Kernel(np.matmul) if same else Kernel(matmul_as, Operand(0), Operand(1), work, out_dt)
    if form is not None:
        # one matmul over transposed views (BLAS reads them with its transpose flags): the
        # backward pass's contractions on dims (0, 0) and (1, 1) copy nothing
        if same:
            return Kernel(_TRANSPOSED_MATMUL[form], Operand(0), Operand(1))
        return Kernel(matmul_transposed_as, Operand(0), Operand(1), form, work, out_dt)
    return Kernel(dot_general, Operand(0), Operand(1), (lb, rb, lc, rc), work, out_dt)


def _matmul_form(lrank: int, rrank: int, dims: tuple) -> tuple[bool, bool] | None:
    """(transpose lhs, transpose rhs) when the dot_general is one `np.matmul` over the operands'
    last two dims, leading dims batch dims in order (its result is then laid out as StableHLO's:
    batch, lhs free, rhs free); None otherwise."""
    lb, rb, lc, rc = dims
    nb = len(lb)
    if lrank != nb + 2 or rrank != nb + 2 or len(lc) != 1 or len(rc) != 1:
        return None
    if tuple(lb) != tuple(range(nb)) or tuple(rb) != tuple(range(nb)):
        return None
    return lc[0] == nb, rc[0] == nb + 1


def _t(x: np.ndarray) -> np.ndarray:
    return x.T if x.ndim == 2 else np.swapaxes(x, -1, -2)


def matmul_tn(a, b):
    return np.matmul(_t(a), b)


def matmul_nt(a, b):
    return np.matmul(a, _t(b))


def matmul_tt(a, b):
    return np.matmul(_t(a), _t(b))


_TRANSPOSED_MATMUL = {(True, False): matmul_tn, (False, True): matmul_nt, (True, True): matmul_tt}


def matmul_transposed_as(a, b, form, work, out):
    a = np.asarray(a).astype(work, copy=False)
    b = np.asarray(b).astype(work, copy=False)
    return np.matmul(_t(a) if form[0] else a, _t(b) if form[1] else b).astype(out, copy=False)


def matmul_as(a, b, work, out):
    return np.matmul(a.astype(work, copy=False), b.astype(work, copy=False)).astype(out, copy=False)


def dot_general(lhs, rhs, dims, work, out_dtype):
    """Batch dims first, then lhs free dims, then rhs free dims: transpose, reshape, one matmul."""
    lb, rb, lc, rc = dims
    lhs = np.asarray(lhs).astype(work, copy=False)
    rhs = np.asarray(rhs).astype(work, copy=False)
    lf = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rf = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    batch_shape = [lhs.shape[d] for d in lb]
    lf_shape = [lhs.shape[d] for d in lf]
    rf_shape = [rhs.shape[d] for d in rf]
    nb = int(np.prod(batch_shape, dtype=np.int64))
    nc = int(np.prod([lhs.shape[d] for d in lc], dtype=np.int64))
    a = np.transpose(lhs, (*lb, *lf, *lc)).reshape(nb, -1 if lf_shape else 1, nc) if nb and nc else None
    b = np.transpose(rhs, (*rb, *rc, *rf)).reshape(nb, nc, -1 if rf_shape else 1) if nb and nc else None
    out_shape = (*batch_shape, *lf_shape, *rf_shape)
    if a is None or a.size == 0 or b.size == 0:
        return np.zeros(out_shape, out_dtype)
    return np.matmul(a, b).reshape(out_shape).astype(out_dtype, copy=False)


@kernel("stablehlo.convolution")
def _convolution(op: Operation) -> Kernel:
    dims = ConvDims(op.get_attr("dimension_numbers"))
    n = len(dims.input_spatial)
    strides = common.ints(op.get_attr("window_strides"), [1] * n)
    padding = common.padding_pairs(op.get_attr("padding"), n)
    lhs_dil = common.ints(op.get_attr("lhs_dilation"), [1] * n)
    rhs_dil = common.ints(op.get_attr("rhs_dilation"), [1] * n)
    reversal = common.bools(op.get_attr("window_reversal"), n)
    fgc = common.integer(op.get_attr("feature_group_count"), 1)
    bgc = common.integer(op.get_attr("batch_group_count"), 1)
    out_dt = result_dtype(op)
    config = (dims, tuple(strides), tuple(padding), tuple(lhs_dil), tuple(rhs_dil), tuple(reversal), fgc, bgc,
              kn._compute_dtype(out_dt), out_dt)
    return Kernel(convolution, Operand(0), Operand(1), config)


def convolution(lhs, rhs, config):
    """StableHLO convolution: layouts normalised to (N, C, spatial...) x (O, I, spatial...),
    dilations as interior padding, windows as strided views, one tensordot per group."""
    dims, strides, padding, lhs_dil, rhs_dil, reversal, fgc, bgc, work, out_dt = config
    x = np.transpose(np.asarray(lhs), (dims.input_batch, dims.input_feature, *dims.input_spatial)).astype(work)
    w = np.transpose(np.asarray(rhs), (dims.kernel_output_feature, dims.kernel_input_feature,
                                       *dims.kernel_spatial)).astype(work)
    n = len(dims.input_spatial)
    rev_axes = tuple(2 + i for i in range(n) if reversal[i])
    if rev_axes:
        w = np.flip(w, rev_axes)
    if any(d != 1 for d in rhs_dil):
        w = pad(w, np.zeros((), work), [0] * (n + 2), [0] * (n + 2), [0, 0, *(d - 1 for d in rhs_dil)])
    x = pad(x, np.zeros((), work), [0, 0, *(p[0] for p in padding)], [0, 0, *(p[1] for p in padding)],
            [0, 0, *(d - 1 for d in lhs_dil)])
    out = _grouped_conv(x, w, strides, fgc, bgc)
    out_perm = [0] * (n + 2)
    out_perm[dims.output_batch] = 0
    out_perm[dims.output_feature] = 1
    for i, d in enumerate(dims.output_spatial):
        out_perm[d] = 2 + i
    return np.transpose(out, out_perm).astype(out_dt, copy=False)


def _grouped_conv(x, w, strides, fgc, bgc):
    n = x.ndim - 2
    if bgc > 1:
        xs = np.split(x, bgc, axis=0)
        ws = np.split(w, bgc, axis=0)
        return np.concatenate([_grouped_conv(a, b, strides, fgc, 1) for a, b in zip(xs, ws)], axis=1)
    if fgc > 1:
        xs = np.split(x, fgc, axis=1)
        ws = np.split(w, fgc, axis=0)
        return np.concatenate([_grouped_conv(a, b, strides, 1, 1) for a, b in zip(xs, ws)], axis=1)
    ksize = w.shape[2:]
    out_spatial = [max((x.shape[2 + i] - ksize[i]) // strides[i] + 1, 0) if x.shape[2 + i] >= ksize[i] else 0
                   for i in range(n)]
    if 0 in out_spatial or x.shape[0] == 0 or w.shape[0] == 0:
        return np.zeros((x.shape[0], w.shape[0], *out_spatial), x.dtype)
    windows = sliding_window_view(x, ksize, axis=tuple(range(2, 2 + n)))
    windows = windows[(slice(None), slice(None), *(slice(None, None, s) for s in strides))]
    # windows: (N, C, out..., k...); w: (O, C, k...)
    out = np.tensordot(windows, w, axes=([1, *range(2 + n, 2 + 2 * n)], [1, *range(2, 2 + n)]))
    return np.moveaxis(out, -1, 1)  # (N, out..., O) -> (N, O, out...)

# FFT -------------------------------------------------------------------------------------------

@kernel("stablehlo.fft")
def _fft(op: Operation) -> Kernel:
    return Kernel(fft, Operand(0), common.enum(op.get_attr("fft_type")), common.ints(op.get_attr("fft_length")),
                  result_dtype(op))


def fft(x, fft_type, lengths, dtype):
    axes = tuple(range(-len(lengths), 0))
    if fft_type == "FFT":
        out = np.fft.fftn(x, axes=axes)
    elif fft_type == "IFFT":
        out = np.fft.ifftn(x, axes=axes)
    elif fft_type == "RFFT":
        out = np.fft.rfftn(x, axes=axes)
    else:
        out = np.fft.irfftn(x, s=lengths, axes=axes)
    return out.astype(dtype)


torch_kernels_in("loom.ops.linalg_torch")

# --- dot_general: bilinear (each operand's tangent is the product with the other; the cotangent
# of each is JAX's transposed product) ------------------------------------------------------------


@rule(JVP_RULES, "stablehlo.dot_general")
def _dot_general_jvp(b, op, xs, ts):
    x, y = xs
    dn = op.properties["dot_dimension_numbers"]
    et = op.results[0].type.element_type

    def dot(lhs: Value, rhs: Value) -> Value:
        v = stablehlo.dot_general(b, lhs, rhs, dn)
        return v if v.type.element_type == et else stablehlo.convert(b, v, et)
    tx = None if ts[0] is None else dot(ts[0], y)
    ty = None if ts[1] is None else dot(x, ts[1])
    return [tx if ty is None else ty if tx is None else stablehlo.add(b, tx, ty)]


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
    x_ndim, y_ndim = len(shape_of(x)), len(shape_of(y))
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
    n_g = len(shape_of(g)) - len(ans_y) - len(ans_batch)  # the product's dims from g, then those from y
    n_y = y_ndim - len(y_kept) - len(y_batch)
    if not x_batch and out_axes != list(range(len(out_axes))) and out_axes == [*range(n_g, n_g + n_y), *range(n_g)]:
        # the transposed product is the product with its operands swapped: no transpose, so the
        # cotangent comes out contiguous (a loop that accumulates it, the weight gradient of an RNN
        # step, adds contiguous arrays instead of reading one through a transposed view)
        dn = DotDimensionNumbers.get(lhs_batching_dimensions=(), rhs_batching_dimensions=(),
                                     lhs_contracting_dimensions=tuple(y_kept), rhs_contracting_dimensions=tuple(ans_y))
        v = stablehlo.dot_general(b, y, g, dn)
    else:
        v = stablehlo.dot_general(b, g, y, dn)
        if out_axes != list(range(len(out_axes))):
            v = stablehlo.transpose(b, v, out_axes)
    if v.type.element_type != x.type.element_type:
        v = stablehlo.convert(b, v, x.type.element_type)
    return v


@rule(VJP_RULES, "stablehlo.dot_general")
def _dot_general_vjp(b, op, cts):
    x, y = op.operands
    g = cts[0]
    dn = op.properties["dot_dimension_numbers"]
    xc, yc = list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions)
    xb, yb = list(dn.lhs_batching_dimensions), list(dn.rhs_batching_dimensions)
    gx = _dot_transpose_lhs(b, g, x, y, xc, yc, xb, yb) if is_float(x.type) else None
    gy = _dot_transpose_lhs(b, g, y, x, yc, xc, yb, xb, swap_ans=True) if is_float(y.type) else None
    return [gx, gy]


@rule(BATCH_RULES, "stablehlo.dot_general")
def _dot_general_batch(b, op, args, dims):
    lhs, rhs = args
    dl, dr = dims
    dn = op.properties["dot_dimension_numbers"]
    lb, rb = list(dn.lhs_batching_dimensions), list(dn.rhs_batching_dimensions)
    lc, rc = list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions)

    def shift(ds: list[int]) -> list[int]:
        return [i + 1 for i in ds]
    if dl is not None:
        lhs = moveaxis(b, lhs, dl, 0)
    if dr is not None:
        rhs = moveaxis(b, rhs, dr, 0)
    if dl is not None and dr is not None:  # a new batching dimension, first in the result
        new_dn = type(dn).get(lhs_batching_dimensions=[0, *shift(lb)], rhs_batching_dimensions=[0, *shift(rb)],
                              lhs_contracting_dimensions=shift(lc), rhs_contracting_dimensions=shift(rc))
        out_dim = 0
    elif dl is not None:  # a free dimension of the lhs: the first lhs free dimension of the result
        new_dn = type(dn).get(lhs_batching_dimensions=shift(lb), rhs_batching_dimensions=rb,
                              lhs_contracting_dimensions=shift(lc), rhs_contracting_dimensions=rc)
        out_dim = len(lb)
    else:  # a free dimension of the rhs: after the batch and lhs free dimensions
        new_dn = type(dn).get(lhs_batching_dimensions=lb, rhs_batching_dimensions=shift(rb),
                              lhs_contracting_dimensions=lc, rhs_contracting_dimensions=shift(rc))
        out_dim = len(shape_of(lhs)) - len(lc)
    shape = stablehlo.dot_general_shape(lhs.type, rhs.type, new_dn)
    rt = op.results[0].type
    props = dict(op.properties)
    props["dot_dimension_numbers"] = new_dn
    new = b.create(op.name, [lhs, rhs], [RankedTensorType(tuple(shape), rt.element_type, rt.encoding)], props,
                   dict(op.attributes))
    return [new.results[0]], [out_dim]


# --- convolution -------------------------------------------------------------------------------


class _Conv:
    """A convolution's attributes in JAX's terms: specs `(batch, feature, *spatial)` of the input
    and output, `(out_feature, in_feature, *spatial)` of the kernel."""

    def __init__(self, op: Operation) -> None:
        dn: ConvDimensionNumbers = op.properties["dimension_numbers"]
        self.lhs_spec = (dn.input_batch_dimension, dn.input_feature_dimension, *dn.input_spatial_dimensions)
        self.rhs_spec = (dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension,
                         *dn.kernel_spatial_dimensions)
        self.out_spec = (dn.output_batch_dimension, dn.output_feature_dimension, *dn.output_spatial_dimensions)
        n = len(dn.input_spatial_dimensions)
        self.strides = _ints(op, "window_strides") or [1] * n
        self.lhs_dilation = _ints(op, "lhs_dilation") or [1] * n
        self.rhs_dilation = _ints(op, "rhs_dilation") or [1] * n
        attr = op.properties.get("padding")
        flat = [0] * (2 * n) if attr is None else [int(v) for v in np.asarray(attr.to_numpy()).reshape(-1)]
        self.padding = [(flat[2 * i], flat[2 * i + 1]) for i in range(n)]
        self.feature_group_count = int_property(op, "feature_group_count", 1)
        self.batch_group_count = int_property(op, "batch_group_count", 1)
        self.precision = op.properties.get("precision_config")
        self.result_element = op.results[0].type.element_type
        reversal = op.properties.get("window_reversal")
        if reversal is not None and any(bool(v) for v in np.asarray(reversal.to_numpy()).reshape(-1)):
            raise MissingRuleError(f"the rules of stablehlo.convolution do not handle window_reversal "
                                   f"(at {op.location})")


def _conv(b: Builder, c: _Conv, lhs: Value, rhs: Value, specs: tuple, strides: Sequence[int],
          padding: Sequence[tuple[int, int]], lhs_dilation: Sequence[int], rhs_dilation: Sequence[int],
          feature_group_count: int, batch_group_count: int) -> Value:
    op = stablehlo.ConvolutionOp.build(b, lhs, rhs, dimension_numbers(*specs), window_strides=list(strides),
                                       padding=[(int(lo), int(hi)) for lo, hi in padding],
                                       lhs_dilation=list(lhs_dilation), rhs_dilation=list(rhs_dilation),
                                       feature_group_count=feature_group_count,
                                       batch_group_count=batch_group_count)
    if c.precision is not None:
        op.properties["precision_config"] = c.precision
    v = op.results[0]
    return v if v.type.element_type == lhs.type.element_type else stablehlo.convert(b, v, lhs.type.element_type)


def _reshape_axis_out_of(b: Builder, src: int, size1: int, v: Value) -> Value:
    shape = list(shape_of(v))
    shape[src:src + 1] = [size1, shape[src] // size1]
    return stablehlo.reshape(b, v, shape)


def _reshape_axis_into(b: Builder, src: int, dst: int, v: Value) -> Value:
    """Merge axis `src` into axis `dst` (numbered without `src`) as its major part."""
    shape = shape_of(v)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [shape[i] for i in range(len(shape)) if i != src]
    new_shape[dst] *= shape[src]
    if perm != list(range(len(shape))):
        v = stablehlo.transpose(b, v, perm)
    return stablehlo.reshape(b, v, new_shape)


def _dilate(shape: Sequence[int], dilation: Sequence[int]) -> np.ndarray:
    return np.asarray([0 if s == 0 else 1 + d * (s - 1) for s, d in zip(shape, dilation)])


def _transpose_spec(spec: Sequence[int]) -> tuple[int, ...]:
    return (spec[1], spec[0], *spec[2:])


def _conv_transpose_lhs(b: Builder, c: _Conv, g: Value, lhs: Value, rhs: Value) -> Value:
    lhs_sdims, rhs_sdims, out_sdims = c.lhs_spec[2:], c.rhs_spec[2:], c.out_spec[2:]
    fgc, bgc = c.feature_group_count, c.batch_group_count
    if fgc > 1:
        rhs = _reshape_axis_out_of(b, c.rhs_spec[0], fgc, rhs)
        rhs = _reshape_axis_into(b, c.rhs_spec[0], c.rhs_spec[1], rhs)
    elif bgc > 1:
        rhs = _reshape_axis_out_of(b, c.rhs_spec[0], bgc, rhs)
        rhs = _reshape_axis_into(b, c.rhs_spec[0], c.rhs_spec[1], rhs)
        fgc = bgc
    in_shape = [shape_of(lhs)[d] for d in lhs_sdims]
    window = [shape_of(rhs)[d] for d in rhs_sdims]
    out_shape = [shape_of(g)[d] for d in out_sdims]
    lhs_dilated = _dilate(in_shape, c.lhs_dilation)
    rhs_dilated = _dilate(window, c.rhs_dilation)
    out_dilated = _dilate(out_shape, c.strides)
    before = rhs_dilated - np.asarray([lo for lo, _ in c.padding]) - 1
    after = lhs_dilated + rhs_dilated - 1 - out_dilated - before
    reversed_rhs = stablehlo.reverse(b, rhs, list(rhs_sdims)) if rhs_sdims else rhs
    out = _conv(b, c, g, reversed_rhs, (c.out_spec, _transpose_spec(c.rhs_spec), c.lhs_spec), c.lhs_dilation,
                list(zip(before.tolist(), after.tolist())), c.strides, c.rhs_dilation, fgc, 1)
    if c.batch_group_count > 1:
        out = _reshape_axis_out_of(b, c.lhs_spec[1], c.batch_group_count, out)
        out = _reshape_axis_into(b, c.lhs_spec[1], c.lhs_spec[0], out)
    return out


def _conv_transpose_rhs(b: Builder, c: _Conv, g: Value, lhs: Value, rhs: Value) -> Value:
    lhs_sdims, rhs_sdims, out_sdims = c.lhs_spec[2:], c.rhs_spec[2:], c.out_spec[2:]
    fgc, bgc = c.feature_group_count, c.batch_group_count
    if bgc > 1:
        fgc, bgc = bgc, 1
    elif fgc > 1:
        fgc, bgc = 1, fgc
    in_shape = [shape_of(lhs)[d] for d in lhs_sdims]
    window = [shape_of(rhs)[d] for d in rhs_sdims]
    out_shape = [shape_of(g)[d] for d in out_sdims]
    lhs_dilated = _dilate(in_shape, c.lhs_dilation)
    rhs_dilated = _dilate(window, c.rhs_dilation)
    out_dilated = _dilate(out_shape, c.strides)
    lo = np.asarray([p for p, _ in c.padding], dtype=np.int64)
    hi = (out_dilated - lhs_dilated) + (rhs_dilated - lo - 1)
    specs = (_transpose_spec(c.lhs_spec), _transpose_spec(c.out_spec), _transpose_spec(c.rhs_spec))
    return _conv(b, c, lhs, g, specs, c.rhs_dilation, list(zip(lo.tolist(), hi.tolist())), c.lhs_dilation,
                 c.strides, fgc, bgc)


@rule(VJP_RULES, "stablehlo.convolution")
def _convolution_vjp(b, op, cts):
    lhs, rhs = op.operands
    g = cts[0]
    if g is None:
        return [None, None]
    c = _Conv(op)
    if 0 in shape_of(g):
        return [zeros_like(b, lhs) if is_float(lhs.type) else None, zeros_like(b, rhs) if is_float(rhs.type) else None]
    gl = _conv_transpose_lhs(b, c, g, lhs, rhs) if is_float(lhs.type) else None
    gr = _conv_transpose_rhs(b, c, g, lhs, rhs) if is_float(rhs.type) else None
    return [gl, gr]


@rule(JVP_RULES, "stablehlo.convolution")
def _convolution_jvp(b, op, xs, ts):
    lhs, rhs = xs
    out = None
    if ts[0] is not None:
        out = b.insert(op.clone({lhs: ts[0]})).results[0]
    if ts[1] is not None:
        t = b.insert(op.clone({rhs: ts[1]})).results[0]
        out = t if out is None else stablehlo.add(b, out, t)
    return [out]


@rule(BATCH_RULES, "stablehlo.convolution")
def _convolution_batch(b, op, args, dims):
    lhs, rhs = args
    dl, dr = dims
    c = _Conv(op)
    ls, rs, os_ = c.lhs_spec, c.rhs_spec, c.out_spec
    fgc, bgc = c.feature_group_count, c.batch_group_count

    def conv(new_lhs: Value, new_rhs: Value, f: int, g: int) -> Value:
        out = _conv(b, c, new_lhs, new_rhs, (ls, rs, os_), c.strides, c.padding, c.lhs_dilation, c.rhs_dilation,
                    f, g)
        et = op.results[0].type.element_type
        return out if out.type.element_type == et else stablehlo.convert(b, out, et)

    if dl is not None and dr is not None:
        size = shape_of(lhs)[dl]
        if bgc > 1:
            new_lhs = _reshape_axis_into(b, dl, ls[0], lhs)
            bgc *= size
        else:
            new_lhs = _reshape_axis_into(b, dl, ls[1], lhs)
            fgc *= size
        new_rhs = _reshape_axis_into(b, dr, rs[0], rhs)
        out = conv(new_lhs, new_rhs, fgc, bgc)
        return [_reshape_axis_out_of(b, os_[1], size, out)], [os_[1]]
    if dl is not None:
        size = shape_of(lhs)[dl]
        if bgc == 1:
            out = conv(_reshape_axis_into(b, dl, ls[0], lhs), rhs, fgc, bgc)
        else:
            new_lhs = _reshape_axis_out_of(b, ls[0] + int(dl <= ls[0]), bgc, lhs)
            new_lhs = _reshape_axis_into(b, dl + int(ls[0] < dl), ls[0] + 1, new_lhs)
            new_lhs = _reshape_axis_into(b, ls[0], ls[0], new_lhs)
            out = conv(new_lhs, rhs, fgc, bgc)
        return [_reshape_axis_out_of(b, os_[0], size, out)], [os_[0]]
    size = shape_of(rhs)[dr]
    if fgc == 1 and bgc == 1:
        out = conv(lhs, _reshape_axis_into(b, dr, rs[0], rhs), fgc, bgc)
        return [_reshape_axis_out_of(b, os_[1], size, out)], [os_[1]]
    groups = fgc if fgc > 1 else bgc
    new_rhs = _reshape_axis_out_of(b, rs[0] + int(dr <= rs[0]), groups, rhs)
    new_rhs = _reshape_axis_into(b, dr + int(rs[0] < dr), rs[0] + 1, new_rhs)
    new_rhs = _reshape_axis_into(b, rs[0], rs[0], new_rhs)
    out = conv(lhs, new_rhs, fgc, bgc)
    out = _reshape_axis_out_of(b, os_[1], groups, out)
    out = _reshape_axis_out_of(b, os_[1] + 1, size, out)
    out = _reshape_axis_into(b, os_[1], os_[1] + 1, out)
    return [out], [os_[1]]



declare("stablehlo.fft", unsupported("fft is run, not differentiated or batched yet"),
        tables=("jvp", "vjp", "batching"))
declare("chlo.ragged_dot",
        unsupported("parsed and printed only: loom's front end lowers to dot_general, convolution and "
                    "elementwise ops"))


# --- the legacy contractions: dot, einsum, unary_einsum ---------------------------------------
# `dot` contracts the last dimension of lhs (rank 1 or 2) with the first of rhs; `einsum` and
# `unary_einsum` take numpy's subscripts (`"ab,bc->ac"`, `"ab->a"`). Integers wrap, float16 and
# bfloat16 are computed in float32 (as dot_general); precision_config asks for at least the
# operands' precision, which these kernels always give. Producers that derive or batch emit
# dot_general, so these have kernels only.


def dot(lhs, rhs, work, out):
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    return dot_general(lhs, rhs, ((), (), (lhs.ndim - 1,), (0,)), work, out)


def einsum(config: str, work, out, *operands):
    with np.errstate(over="ignore"):
        return np.einsum(config, *(np.asarray(x).astype(work, copy=False) for x in operands)).astype(out, copy=False)


def torch_dot(lhs, rhs):
    import torch
    dtype = lhs.dtype
    return torch.tensordot(_torch_work(lhs), _torch_work(rhs), dims=([lhs.dim() - 1], [0])).to(dtype)


def torch_einsum(config: str, *operands):
    import torch
    dtype = operands[0].dtype
    return torch.einsum(config, *(_torch_work(x) for x in operands)).to(dtype)


def _einsum_config(op: Operation) -> str:
    attr = op.properties.get("einsum_config")
    if attr is None:
        raise MissingRuleError(f"{op.name} has no einsum_config (at {op.location})")
    return attr.value


def _float_operands(op: Operation) -> bool:
    """Whether torch computes the op: float operands of the result's type (else numpy does)."""
    out = kn.result_dtype(op)
    return out.kind == "f" and all(kn.operand_dtype(op, i) == out for i in range(len(op.operands)))


register(KERNELS, "stablehlo.dot", lambda op: Kernel(dot, Operand(0), Operand(1), *_numpy_types(op)))
register(KERNELS, "stablehlo.einsum", lambda op: Kernel(einsum, _einsum_config(op), *_numpy_types(op), kn.ALL))
register(KERNELS, "stablehlo.unary_einsum", lambda op: Kernel(einsum, _einsum_config(op), *_numpy_types(op),
                                                               kn.ALL))
register(TORCH_KERNELS, "stablehlo.dot", lambda op: Kernel(torch_dot) if _float_operands(op) else None)
for _name in ("stablehlo.einsum", "stablehlo.unary_einsum"):
    register(TORCH_KERNELS, _name,
             lambda op: Kernel(torch_einsum, _einsum_config(op), kn.ALL) if _float_operands(op) else None)
declare(["stablehlo.dot", "stablehlo.einsum", "stablehlo.unary_einsum"],
        unsupported("legacy contractions: producers that differentiate or batch emit dot_general"),
        tables=("jvp", "vjp", "batching", "sharding"))


# --- triangular_solve and cholesky -------------------------------------------------------------
# Both act on the last two dimensions (square matrices `a`), the leading ones a batch. Kernels read
# only the triangle the op names (the spec: the other is ignored); a singular triangular system
# gives IEEE infinities / NaNs, a matrix cholesky cannot factor gives NaNs (as XLA). The
# derivatives (real types) are JAX's: the solve is linear in `b`, and `-op(a)^-1 op(da) x` in
# `a`; cholesky's tangent is `L phi(L^-1 S(da) L^-H)` (S: the symmetric matrix the read
# triangle stands for, phi: the lower triangle with the diagonal halved). Each VJP is the
# transpose of its JVP. Batching moves the batch dimension in front.


@dataclass(frozen=True)
class _Solve:
    left_side: bool
    lower: bool
    unit_diagonal: bool
    transpose: str  # NO_TRANSPOSE, TRANSPOSE or ADJOINT

    @staticmethod
    def of(op: Operation) -> _Solve:
        p = op.properties
        t = p.get("transpose_a")
        return _Solve(bool(p["left_side"].value), bool(p["lower"].value), bool(p["unit_diagonal"].value),
                      "NO_TRANSPOSE" if t is None else t.value)


def _triangle(a: np.ndarray, lower: bool, unit_diagonal: bool) -> np.ndarray:
    m = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        m[..., np.arange(n), np.arange(n)] = 1
    return m


def _swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def triangular_solve(a, b, solve: _Solve, work, out):
    """`op(a) x = b` (left side) or `x op(a) = b`, by substitution over the rows, each step one
    batched product (the matrices' order n is the loop's length)."""
    m = _triangle(np.asarray(a).astype(work), solve.lower, solve.unit_diagonal)
    b = np.asarray(b).astype(work)
    lower = solve.lower
    if solve.transpose != "NO_TRANSPOSE":
        m, lower = _swap(m), not lower
        m = m.conj() if solve.transpose == "ADJOINT" else m
    if not solve.left_side:  # x m = b  <=>  m^T x^T = b^T
        m, lower, b = _swap(m), not lower, _swap(b)
    n = m.shape[-1]
    x = np.zeros(np.broadcast_shapes(m.shape[:-2], b.shape[:-2]) + b.shape[-2:], work)
    with np.errstate(all="ignore"):
        for i in range(n) if lower else range(n - 1, -1, -1):
            known = slice(0, i) if lower else slice(i + 1, n)
            partial = m[..., i:i + 1, known] @ x[..., known, :]
            x[..., i:i + 1, :] = (b[..., i:i + 1, :] - partial) / m[..., i:i + 1, i:i + 1]
    return (x if solve.left_side else _swap(x)).astype(out, copy=False)


def cholesky(a, lower: bool, work, out):
    """The lower factor of the matrix the lower triangle of `a` stands for (the upper one: of
    `a^H`, then transposed back); zeros in the other triangle; NaNs in the factor's triangle of a
    matrix that is not positive definite."""
    a = np.asarray(a).astype(work)
    if not lower:
        a = _swap(a).conj()
    n = a.shape[-1]
    try:  # the whole batch at once; one matrix that cannot be factored sends it matrix by matrix
        factors = np.linalg.cholesky(a) if a.size else np.zeros_like(a)
    except np.linalg.LinAlgError:
        flat = a.reshape(-1, n, n)
        factors = np.zeros_like(flat)
        for i in range(flat.shape[0]):
            try:
                factors[i] = np.linalg.cholesky(flat[i])
            except np.linalg.LinAlgError:
                factors[i] = np.where(np.tri(n, dtype=bool), np.nan, 0)
        factors = factors.reshape(a.shape)
    return (factors if lower else _swap(factors).conj()).astype(out, copy=False)


def _torch_work(x):
    import torch  # optional: imported when a torch program runs
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def torch_triangular_solve(a, b, solve: _Solve):
    import torch
    dtype = b.dtype
    a, b = _torch_work(a), _torch_work(b)
    lower = solve.lower
    if solve.transpose != "NO_TRANSPOSE":
        a, lower = (a.mH if solve.transpose == "ADJOINT" else a.mT), not lower
    x = torch.linalg.solve_triangular(a, b, upper=not lower, left=solve.left_side, unitriangular=solve.unit_diagonal)
    return x.to(dtype)


def torch_cholesky(a, lower: bool):
    import torch
    dtype = a.dtype
    a = _torch_work(a)
    if not lower:
        a = a.mH
    factor, info = torch.linalg.cholesky_ex(a)
    factor = torch.where((info != 0)[..., None, None], torch.full_like(factor, float("nan")).tril(), factor)
    return (factor if lower else factor.mH).to(dtype)


def _numpy_types(op: Operation) -> tuple[np.dtype, np.dtype]:
    out = kn.result_dtype(op)
    return kn._compute_dtype(out), out


register(KERNELS, "stablehlo.triangular_solve",
         lambda op: Kernel(triangular_solve, Operand(0), Operand(1), _Solve.of(op), *_numpy_types(op)))
register(KERNELS, "stablehlo.cholesky",
         lambda op: Kernel(cholesky, Operand(0), _lower(op), *_numpy_types(op)))
register(TORCH_KERNELS, "stablehlo.triangular_solve",
         lambda op: Kernel(torch_triangular_solve, Operand(0), Operand(1), _Solve.of(op)))
register(TORCH_KERNELS, "stablehlo.cholesky", lambda op: Kernel(torch_cholesky, Operand(0), _lower(op)))


def _lower(op: Operation) -> bool:
    attr = op.properties.get("lower")
    return attr is None or bool(attr.value)


# IR builders of the rules


def _solve(b: Builder, a: Value, rhs: Value, s: _Solve) -> Value:
    props = {"left_side": BoolAttr(s.left_side), "lower": BoolAttr(s.lower), "unit_diagonal": BoolAttr(s.unit_diagonal),
             "transpose_a": TransposeAttr(s.transpose)}
    return b.create("stablehlo.triangular_solve", [a, rhs], [rhs.type], props).results[0]


def _mT(b: Builder, v: Value) -> Value:  # noqa: N802 - the matrix transpose, as `x.mT`
    r = len(shape_of(v))
    return stablehlo.transpose(b, v, [*range(r - 2), r - 1, r - 2])


def _matmul(b: Builder, x: Value, y: Value) -> Value:
    r = len(shape_of(x))
    batch = tuple(range(r - 2))
    dn = DotDimensionNumbers.get(lhs_batching_dimensions=batch, rhs_batching_dimensions=batch,
                                 lhs_contracting_dimensions=(r - 1,), rhs_contracting_dimensions=(r - 2,))
    return stablehlo.dot_general(b, x, y, dn)


def _masked(b: Builder, v: Value, mask: np.ndarray) -> Value:
    """`v` times the constant `mask` (a matrix, broadcast over the batch)."""
    shape = shape_of(v)
    t = RankedTensorType(mask.shape, v.type.element_type)
    m = stablehlo.constant(b, mask.astype(numpy_dtype(v.type.element_type)), t)
    return stablehlo.multiply(b, v, stablehlo.broadcast_in_dim(b, m, shape, [len(shape) - 2, len(shape) - 1]))


def _triangle_mask(n: int, lower: bool, unit_diagonal: bool) -> np.ndarray:
    k = -1 if unit_diagonal else 0
    return np.tri(n, k=k) if lower else np.tri(n, k=k).T


def _real_only(op: Operation, what: str) -> None:
    if not is_float(op.operands[0].type) or numpy_dtype(op.operands[0].type.element_type).kind == "c":
        raise MissingRuleError(f"the {what} of {op.name} is computed for real element types only (at {op.location})")


def _op_a(b: Builder, m: Value, s: _Solve) -> Value:
    """`op(m)`: `m`, or its transpose (real types: the adjoint is the transpose)."""
    return m if s.transpose == "NO_TRANSPOSE" else _mT(b, m)


def _transposed(s: _Solve) -> _Solve:
    """The solve by `op(a)^T`."""
    return replace(s, transpose="NO_TRANSPOSE" if s.transpose != "NO_TRANSPOSE" else "TRANSPOSE")


@rule(JVP_RULES, "stablehlo.triangular_solve")
def _triangular_solve_jvp(b, op, xs, ts):
    a, _ = xs
    s = _Solve.of(op)
    x = op.results[0]
    out = None if ts[1] is None else _solve(b, a, ts[1], s)
    if ts[0] is not None:
        _real_only(op, "derivative in a")
        da = _op_a(b, _masked(b, ts[0], _triangle_mask(shape_of(a)[-1], s.lower, s.unit_diagonal)), s)
        # x = op(a)^-1 b: dx = -op(a)^-1 op(da) x (left), -x op(da) op(a)^-1 (right)
        t = _solve(b, a, _matmul(b, da, x) if s.left_side else _matmul(b, x, da), s)
        t = stablehlo.negate(b, t)
        out = t if out is None else stablehlo.add(b, out, t)
    return [out]


@rule(VJP_RULES, "stablehlo.triangular_solve")
def _triangular_solve_vjp(b, op, cts):
    g = cts[0]
    if g is None:
        return [None, None]
    a = op.operands[0]
    s = _Solve.of(op)
    if numpy_dtype(a.type.element_type).kind == "c":
        raise MissingRuleError(f"the derivative of {op.name} is computed for real element types only "
                               f"(at {op.location})")
    gb = _solve(b, a, g, _transposed(s))
    x = op.results[0]
    # the transpose of da -> -op(a)^-1 op(da) x: -mask(op^T(gb x^T)) (left), -mask(op^T(x^T gb)) (right)
    outer = _matmul(b, gb, _mT(b, x)) if s.left_side else _matmul(b, _mT(b, x), gb)
    ga = stablehlo.negate(b, _masked(b, _op_a(b, outer, s), _triangle_mask(shape_of(a)[-1], s.lower,
                                                                            s.unit_diagonal)))
    return [ga, gb]


def _matrix_batch(b: Builder, op: Operation, args: list, dims: list) -> tuple[list, list]:
    """Batch an op on (batches of) matrices: the batch dimension in front of every operand."""
    size = next(shape_of(v)[d] for v, d in zip(args, dims) if d is not None)
    moved = [bdim_to_front(b, v, d, size) for v, d in zip(args, dims)]
    rt = op.results[0].type
    t = RankedTensorType((size, *rt.shape), rt.element_type, rt.encoding)
    new = b.create(op.name, moved, [t], dict(op.properties), dict(op.attributes))
    return [new.results[0]], [0]


register(BATCH_RULES, "stablehlo.triangular_solve", _matrix_batch)
register(BATCH_RULES, "stablehlo.cholesky", _matrix_batch)


def _symmetric_from_lower(b: Builder, t: Value) -> Value:
    """S(t) = tril(t) + tril(t, -1)^T: the symmetric matrix the lower triangle of `t` stands for."""
    n = shape_of(t)[-1]
    strict = _masked(b, t, np.tri(n, k=-1))
    return stablehlo.add(b, _masked(b, t, np.tri(n)), _mT(b, strict))


def _phi(b: Builder, m: Value) -> Value:
    """The lower triangle with the diagonal halved."""
    n = shape_of(m)[-1]
    return _masked(b, m, np.tri(n) - 0.5 * np.eye(n))


_LOWER_SOLVE = _Solve(left_side=True, lower=True, unit_diagonal=False, transpose="NO_TRANSPOSE")


def _inverse_sandwich(b: Builder, factor: Value, m: Value) -> Value:
    """`L^-1 m L^-T` for the lower factor L."""
    left = _solve(b, factor, m, _LOWER_SOLVE)
    return _solve(b, factor, left, replace(_LOWER_SOLVE, left_side=False, transpose="TRANSPOSE"))


def _transpose_inverse_sandwich(b: Builder, factor: Value, m: Value) -> Value:
    """`L^-T m L^-1` for the lower factor L."""
    left = _solve(b, factor, m, replace(_LOWER_SOLVE, transpose="TRANSPOSE"))
    return _solve(b, factor, left, replace(_LOWER_SOLVE, left_side=False))


@rule(JVP_RULES, "stablehlo.cholesky")
def _cholesky_jvp(b, op, xs, ts):
    _real_only(op, "derivative")
    lower = _lower(op)
    factor = op.results[0] if lower else _mT(b, op.results[0])  # L; an upper factor is L^T of a^T
    t = ts[0] if lower else _mT(b, ts[0])
    dl = _matmul(b, factor, _phi(b, _inverse_sandwich(b, factor, _symmetric_from_lower(b, t))))
    return [dl if lower else _mT(b, dl)]


@rule(VJP_RULES, "stablehlo.cholesky")
def _cholesky_vjp(b, op, cts):
    g = cts[0]
    if g is None:
        return [None]
    _real_only(op, "derivative")
    lower = _lower(op)
    factor = op.results[0] if lower else _mT(b, op.results[0])
    g = g if lower else _mT(b, g)
    # the transpose of dl = L phi(L^-1 S(da) L^-T), step by step (phi is its own transpose)
    sigma = _transpose_inverse_sandwich(b, factor, _phi(b, _matmul(b, _mT(b, factor), g)))
    n = shape_of(g)[-1]
    ga = stablehlo.add(b, _masked(b, sigma, np.tri(n)), _masked(b, _mT(b, sigma), np.tri(n, k=-1)))
    return [ga if lower else _mT(b, ga)]


# --- sharding rules ----------------------------------------------------------------------------

def _zero_of(b: Builder, op: Operation, local: list, i: int) -> Value:
    t = RankedTensorType((), op.operands[i].type.element_type)
    return b.create("stablehlo.constant", [], [t], {"value": DenseElementsAttr.get(np.zeros(()), t)}).results[0]


def _dot_general_sharding(op):
    """`([batch, i, k], [batch, k, j]) -> ([batch, i, j])`: k a reduction factor (a split k sums
    partial products across partitions)."""
    dn = op.properties["dot_dimension_numbers"]
    lhs, rhs = shape_of(op.operands[0]), shape_of(op.operands[1])
    f = Factors()
    ld: list = [None] * len(lhs)
    rd: list = [None] * len(rhs)
    out = []
    for a, c in zip(dn.lhs_batching_dimensions, dn.rhs_batching_dimensions):
        ld[a] = rd[c] = f.new(lhs[a])
        out.append(ld[a])
    reduction = set()
    for a, c in zip(dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions):
        ld[a] = rd[c] = f.new(lhs[a])
        reduction.add(ld[a])
    for dims, shape in ((ld, lhs), (rd, rhs)):
        for d in range(len(shape)):
            if dims[d] is None:
                dims[d] = f.new(shape[d])
                out.append(dims[d])
    return f.rule([ld, rd], [out], reduction=reduction, reducer="add", pad_value=_zero_of)


def _convolution_sharding(op):
    """Batch and output features are kept; input features are a reduction factor (one feature
    group); spatial dimensions, and everything of a grouped convolution, need replication."""
    dn = op.properties["dimension_numbers"]
    lhs, rhs, res = shape_of(op.operands[0]), shape_of(op.operands[1]), shape_of(op.results[0])
    groups = [op.properties.get(k) for k in ("feature_group_count", "batch_group_count")]
    grouped = any(g is not None and int(g.value) != 1 for g in groups)
    f = Factors()
    ld: list = [None] * len(lhs)
    rd: list = [None] * len(rhs)
    od: list = [None] * len(res)
    blocked = set()
    batch = f.new(lhs[dn.input_batch_dimension])
    ld[dn.input_batch_dimension] = od[dn.output_batch_dimension] = batch
    feature_in = f.new(lhs[dn.input_feature_dimension])
    ld[dn.input_feature_dimension] = rd[dn.kernel_input_feature_dimension] = feature_in
    feature_out = f.new(rhs[dn.kernel_output_feature_dimension])
    rd[dn.kernel_output_feature_dimension] = od[dn.output_feature_dimension] = feature_out
    if grouped:
        blocked |= {batch, feature_in, feature_out}
    for dims, shape in ((ld, lhs), (rd, rhs), (od, res)):
        for d in range(len(shape)):
            if dims[d] is None:
                dims[d] = f.new(shape[d])
                blocked.add(dims[d])
    return f.rule([ld, rd], [od], reduction={feature_in}, need_replication=blocked, reducer="add",
                  pad_value=_zero_of)


def _trailing_replicated(count):
    """Leading (batch) dimensions shared by every operand and result; the last `count(op)`
    dimensions of each need replication (fft's transformed ones, a matrix factorized whole)."""
    def make(op):
        f = Factors()
        rank = len(shape_of(op.results[0]))
        lead = rank - count(op)
        shared = [f.new(n) for n in shape_of(op.results[0])[:lead]]
        blocked = set()
        def dims(v):
            own = [f.new(n) for n in shape_of(v)[lead:]]
            blocked.update(own)
            return shared + own
        return f.rule([dims(v) for v in op.operands], [dims(r) for r in op.results], need_replication=blocked)
    return make


register(SHARDING_RULES, "stablehlo.dot_general", _dot_general_sharding)
register(SHARDING_RULES, "stablehlo.convolution", _convolution_sharding)
register(SHARDING_RULES, "stablehlo.fft", _trailing_replicated(lambda op: len(_ints(op, "fft_length"))))
register(SHARDING_RULES, "stablehlo.triangular_solve", _trailing_replicated(lambda op: 2))
register(SHARDING_RULES, "stablehlo.cholesky", _trailing_replicated(lambda op: 2))
