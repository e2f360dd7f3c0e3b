"""dot_general's, convolution's and fft's torch kernels (imported with torch: see `loom.ops.linalg`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from loom.backend import common
from loom.backend.common import ConvDims, shape_of
from loom.backend.kernels import Kernel, Operand, operand_dtype, result_dtype
from loom.backend.torch_kernels import LOW_FLOATS, pad, torch_dtype, torch_kernel
from loom.ir.core import Operation


@torch_kernel("stablehlo.dot_general")
def _dot_general(op: Operation) -> Kernel | None:
    f = common.struct_fields(op.get_attr("dot_dimension_numbers"))
    lb, rb = f.get("lhs_batching_dimensions", ()), f.get("rhs_batching_dimensions", ())
    lc, rc = f.get("lhs_contracting_dimensions", ()), f.get("rhs_contracting_dimensions", ())
    out_dt = result_dtype(op)
    if out_dt == np.bool_ or operand_dtype(op, 0) == np.bool_:
        return None
    lrank, rrank = len(shape_of(op.operands[0].type)), len(shape_of(op.operands[1].type))
    out = torch_dtype(out_dt)
    same = operand_dtype(op, 0) == out_dt and operand_dtype(op, 1) == out_dt
    if out_dt.kind in "iu":
        return Kernel(integer_dot, Operand(0), Operand(1), (lb, rb, lc, rc), out)
    if same:
        direct = _matmul_form(lb, rb, lc, rc, lrank, rrank)
        if direct is not None:
            return Kernel(direct)
    return Kernel(dot_general, Operand(0), Operand(1), (lb, rb, lc, rc), out)


def matmul_tn(a, b):
    return torch.matmul(a.mT, b)


def matmul_nt(a, b):
    return torch.matmul(a, b.mT)


def matmul_tt(a, b):
    return torch.matmul(a.mT, b.mT)


def _matmul_form(lb, rb, lc, rc, lrank, rrank) -> Callable | None:
    """One (batched) matmul, the operands transposed in their last two dims as needed, when the
    dimension numbers are those of a matmul: leading batch dims in order on both sides, one
    contracting dim among the last two; or an N-d lhs contracting its last dim with a matrix."""
    nb = len(lb)
    if len(lc) != 1 or len(rc) != 1:
        return None
    if lb != tuple(range(nb)) or rb != tuple(range(nb)):
        return None
    if not nb and lrank > 2 and rrank == 2 and lc == (lrank - 1,):
        return torch.matmul if rc == (0,) else matmul_nt
    if lrank != nb + 2 or rrank != nb + 2 or lc[0] < nb or rc[0] < nb:
        return None
    transpose_l = lc[0] == nb          # contracting the first of the two: lhs^T
    transpose_r = rc[0] == nb + 1      # contracting the second: rhs^T
    return {(False, False): torch.matmul, (True, False): matmul_tn, (False, True): matmul_nt,
            (True, True): matmul_tt}[(transpose_l, transpose_r)]


def dot_general(lhs, rhs, dims, out_dtype):
    """Batch dims first, then lhs free dims, then rhs free dims: permute, reshape, one matmul."""
    lb, rb, lc, rc = dims
    lhs = lhs.to(out_dtype)
    rhs = rhs.to(out_dtype)
    lf = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rf = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    batch_shape = [lhs.shape[d] for d in lb]
    lf_shape = [lhs.shape[d] for d in lf]
    rf_shape = [rhs.shape[d] for d in rf]
    nb = 1
    for n in batch_shape:
        nb *= n
    nl = 1
    for n in lf_shape:
        nl *= n
    nr = 1
    for n in rf_shape:
        nr *= n
    nc = 1
    for d in lc:
        nc *= lhs.shape[d]
    a = lhs.permute((*lb, *lf, *lc)).reshape(nb, nl, nc)
    b = rhs.permute((*rb, *rc, *rf)).reshape(nb, nc, nr)
    return torch.matmul(a, b).reshape((*batch_shape, *lf_shape, *rf_shape))


def integer_dot(lhs, rhs, dims, out_dtype):
    """Integer dot products wrap; CUDA has no integer matmul, so there they are float64 ones of
    the operands' bytes (`exact_integer_product`)."""
    if lhs.device.type == "cpu":
        return dot_general(lhs, rhs, dims, out_dtype)
    return exact_integer_product(dot_general, lhs, rhs, out_dtype, dims, torch.float64)


def exact_integer_product(product: Callable, lhs, rhs, out_dtype, *args):
    """A bilinear integer product (a dot product, a convolution) modulo 2**bits of `out_dtype`,
    from float64 ones: the operands (converted to `out_dtype`, so narrower ones sign-extend) are
    split into bytes, and each product of two byte planes is exact in float64 (its sums stay
    below 255 * 255 * 2**37 < 2**53); the planes' products, shifted into place, add up modulo
    2**64 in int64, and the result keeps the low bits. Bytes whose shifts reach past the result's
    width are skipped."""
    nbytes = torch.empty((), dtype=out_dtype).element_size()
    a = lhs.to(out_dtype).to(torch.int64)
    b = rhs.to(out_dtype).to(torch.int64)
    a_bytes = [((a >> (8 * i)) & 0xFF).to(torch.float64) for i in range(nbytes)]
    b_bytes = [((b >> (8 * j)) & 0xFF).to(torch.float64) for j in range(nbytes)]
    total = None
    for i in range(nbytes):
        for j in range(nbytes - i):
            # rounded: a library may compute a float64 conv by a transform (FFT, Winograd)
            # whose error, far below 0.5 here, would otherwise truncate to the wrong integer
            part = torch.round(product(a_bytes[i], b_bytes[j], *args)).to(torch.int64) << (8 * (i + j))
            total = part if total is None else total + part
    return total.to(out_dtype)


@torch_kernel("stablehlo.convolution")
def _convolution(op: Operation) -> Kernel | None:
    dims = ConvDims(op.get_attr("dimension_numbers"))
    n = len(dims.input_spatial)
    out_dt = result_dtype(op)
    bgc = common.integer(op.get_attr("batch_group_count"), 1)
    kinds = operand_dtype(op, 0).kind + operand_dtype(op, 1).kind
    if n not in (1, 2, 3) or out_dt.kind not in "fViu" or "c" in kinds or (out_dt.kind in "iu" and not
                                                                           set(kinds) <= set("biu")):
        return None
    strides = common.ints(op.get_attr("window_strides"), [1] * n)
    padding = common.padding_pairs(op.get_attr("padding"), n)
    lhs_dil = common.ints(op.get_attr("lhs_dilation"), [1] * n)
    rhs_dil = common.ints(op.get_attr("rhs_dilation"), [1] * n)
    reversal = common.bools(op.get_attr("window_reversal"), n)
    fgc = common.integer(op.get_attr("feature_group_count"), 1)
    config = (dims, tuple(strides), tuple(tuple(p) for p in padding), tuple(lhs_dil), tuple(rhs_dil),
              tuple(reversal), fgc, bgc, torch_dtype(out_dt))
    return Kernel(integer_convolution if out_dt.kind in "iu" else convolution, Operand(0), Operand(1), config)


def integer_convolution(lhs, rhs, config):
    """An integer convolution (wrapping, as the numpy kernel's) from float64 ones of the
    operands' bytes: torch has no integer convolution."""
    return exact_integer_product(convolution, lhs, rhs, config[-1], (*config[:-1], torch.float64))


_CONV = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}


def convolution(lhs, rhs, config):
    """StableHLO convolution as torch's conv: layouts permuted to (N, C, spatial...) x
    (O, I, spatial...); base dilation as interior padding; asymmetric or negative padding
    applied before the conv; computed in the result's type (operands converted to it, as the
    numpy kernel does), low precision in float32 on the CPU or when an operand has another
    type. A batch group count G splits the batch into G contiguous parts, part g convolved
    with the g-th G-th of the output features: the parts are moved into the feature dim and
    the conv runs with G feature groups."""
    dims, strides, padding, lhs_dil, rhs_dil, reversal, fgc, bgc, dtype = config
    n = len(dims.input_spatial)
    work = dtype
    if work in LOW_FLOATS and (lhs.device.type == "cpu" or lhs.dtype != dtype or rhs.dtype != dtype):
        work = torch.float32
    x = lhs.permute((dims.input_batch, dims.input_feature, *dims.input_spatial)).to(work)
    if bgc > 1:
        batch, features = x.shape[0], x.shape[1]
        x = x.reshape(bgc, batch // bgc, features, *x.shape[2:]).transpose(0, 1)
        x = x.reshape(batch // bgc, bgc * features, *x.shape[3:])
        fgc = bgc
    w = rhs.permute((dims.kernel_output_feature, dims.kernel_input_feature, *dims.kernel_spatial)).to(work)
    flips = [2 + i for i in range(n) if reversal[i]]
    if flips:
        w = torch.flip(w, flips)
    if any(d != 1 for d in lhs_dil):
        zero = torch.zeros((), dtype=work, device=x.device)
        x = pad(x, zero, [0] * (n + 2), [0] * (n + 2), [0, 0, *(d - 1 for d in lhs_dil)])
    if any(lo or hi for lo, hi in padding):
        flat = []
        for lo, hi in reversed(padding):
            flat += [lo, hi]
        x = torch.nn.functional.pad(x, flat)
    out = _CONV[n](x, w, stride=strides, dilation=rhs_dil, groups=fgc)
    perm = [0] * (n + 2)
    perm[dims.output_batch] = 0
    perm[dims.output_feature] = 1
    for i, d in enumerate(dims.output_spatial):
        perm[d] = 2 + i
    return out.permute(perm).to(dtype)


# FFT -------------------------------------------------------------------------------------------

@torch_kernel("stablehlo.fft")
def _fft(op: Operation) -> Kernel:
    return Kernel(fft, Operand(0), common.enum(op.get_attr("fft_type")),
                  tuple(common.ints(op.get_attr("fft_length"))), torch_dtype(result_dtype(op)))


def fft(x, fft_type, lengths, dtype):
    dims = tuple(range(-len(lengths), 0))
    if fft_type == "FFT":
        out = torch.fft.fftn(x, dim=dims)
    elif fft_type == "IFFT":
        out = torch.fft.ifftn(x, dim=dims)
    elif fft_type == "RFFT":
        out = torch.fft.rfftn(x, dim=dims)
    else:
        out = torch.fft.irfftn(x, s=lengths, dim=dims)
    return out.to(dtype)


