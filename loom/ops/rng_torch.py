"""rng_bit_generator's torch kernel (imported with torch: see `loom.ops.rng`)."""

from __future__ import annotations

import math

import numpy as np
import torch

from loom.backend import common, rng
from loom.backend.common import shape_of
from loom.backend.kernels import Kernel, Operand, operand_dtype, result_dtype, result_shape
from loom.backend.torch_kernels import TORCH_DTYPES, below_unsigned, torch_dtype, torch_kernel
from loom.ir.core import Operation

# rng_bit_generator -----------------------------------------------------------------------------
# loom.backend.rng's algorithms on device tensors, the key and counters never read back. 32-bit
# words are held in int64 (masked to 32 bits after every add); 64-bit counters are int64 values
# whose wrapping arithmetic is that of uint64, compared as unsigned by flipping the sign bit.

_M32 = 0xFFFFFFFF


@torch_kernel("stablehlo.rng_bit_generator")
def _rng_bit_generator(op: Operation) -> Kernel | None:
    state_dt, out_dt = operand_dtype(op), result_dtype(op, 1)
    if state_dt not in (np.dtype(np.uint64), np.dtype(np.int64)) or out_dt not in TORCH_DTYPES or \
            out_dt.kind not in "iufV":
        return None
    algorithm = common.enum(op.get_attr("rng_algorithm"), "DEFAULT")
    state_shape = shape_of(op.operands[0].type)
    shape = tuple(result_shape(op, 1))
    if algorithm not in ("THREE_FRY", "PHILOX", "DEFAULT") or len(state_shape) != 1 or not state_shape[0] >= 2 or \
            any(d < 0 for d in shape):
        return None
    return Kernel(rng_bit_generator, Operand(0), algorithm, shape, torch_dtype(out_dt))


def rng_bit_generator(state, algorithm: str, shape: tuple[int, ...], dtype: torch.dtype):
    """The new state and `shape` random bits of `dtype`, bit-exact with loom.backend.rng."""
    s = state.view(torch.int64) if state.dtype == torch.uint64 else state
    key = s[0]
    bits = dtype.itemsize * 8
    n = math.prod(shape)
    if algorithm == "THREE_FRY":
        out, counter = (_threefry_bits64 if bits == 64 else _threefry_bits32)(key, s[1], shape)
        new = torch.cat([s[:1], counter.reshape(1), s[2:]])
    else:
        lo, hi = (s[1], s[2]) if s.shape[0] >= 3 else (s[1], s[0])
        blocks = -(-2 * n // 4) if bits == 64 else -(-n // 4)
        words, lo, hi = _philox_blocks(key, lo, hi, blocks)
        if bits == 64:
            words = [words[0] | (words[1] << 32), words[2] | (words[3] << 32)]
        out = torch.stack(words, dim=1).reshape(-1)[:n].reshape(shape)
        new = torch.cat([s[:1], lo.reshape(1), hi.reshape(1), s[3:]]) if s.shape[0] >= 3 else \
            torch.cat([s[:1], lo.reshape(1), s[2:]])
    new = new.view(state.dtype)
    if bits == 64:
        return new, out.view(dtype)
    # 32-bit words truncated to the result's width (int64 -> narrower ints wraps), then its bits
    narrow = {32: torch.int32, 16: torch.int16, 8: torch.int8}[bits]
    return new, out.to(narrow).view(dtype)


def _rotl32(v, d: int):
    return ((v << d) | (v >> (32 - d))) & _M32


def threefry2x32(x0, x1, k0, k1):
    rotations = (13, 15, 26, 6, 17, 29, 16, 24)
    ks = (k0, k1, k0 ^ k1 ^ 0x1BD11BDA)
    x0 = (x0 + k0) & _M32
    x1 = (x1 + k1) & _M32
    for i in range(5):
        for r in (rotations[:4] if i % 2 == 0 else rotations[4:]):
            x0 = (x0 + x1) & _M32
            x1 = _rotl32(x1, r) ^ x0
        x0 = (x0 + ks[(i + 1) % 3]) & _M32
        x1 = (x1 + ks[(i + 2) % 3] + (i + 1)) & _M32
    return x0, x1


def _threefry_inputs(counter, shape: tuple[int, ...]):
    """counter + the row-major linear index over the dims of size >= 2 (uint64 arithmetic)."""
    index = torch.zeros(shape, dtype=torch.int64, device=counter.device)
    product = 1
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] < 2:
            continue
        iota = torch.arange(shape[i], dtype=torch.int64, device=counter.device)
        index = index + iota.reshape([shape[i] if j == i else 1 for j in range(len(shape))]) * product
        product *= shape[i]
    return counter + index


def _threefry_words(key, inputs):
    return threefry2x32(inputs & _M32, (inputs >> 32) & _M32, key & _M32, (key >> 32) & _M32)


def _threefry_bits32(key, counter, shape: tuple[int, ...]):
    half, split = rng._split_halves(shape)  # XLA's SplitShapeIntoHalves
    y0, y1 = _threefry_words(key, _threefry_inputs(counter, half))
    new_counter = counter + math.prod(half)
    if not shape:
        return y0.reshape(()), new_counter
    dims = list(shape)
    dims[split] = half[split] * 2
    combined = torch.cat([y0, y1], dim=split + 1).reshape(dims)
    return combined[tuple(slice(0, d) for d in shape)], new_counter


def _threefry_bits64(key, counter, shape: tuple[int, ...]):
    y0, y1 = _threefry_words(key, _threefry_inputs(counter, shape))
    return y0 | (y1 << 32), counter + math.prod(shape)




def _mul_hi_lo(a, m: int):
    """The high and low 32-bit words of a * m (a, m < 2**32) without overflowing int64."""
    low = (a & 0xFFFF) * m
    high = (a >> 16) * m
    s = low + ((high & 0xFFFF) << 16)
    return (high >> 16) + (s >> 32), s & _M32


def philox4x32(x: list, k0, k1) -> list:
    key0, key1 = k0, k1
    for _ in range(10):
        hi0, lo0 = _mul_hi_lo(x[0], 0xD2511F53)
        hi1, lo1 = _mul_hi_lo(x[2], 0xCD9E8D57)
        x = [hi1 ^ x[1] ^ key0, lo1, hi0 ^ x[3] ^ key1, lo0]
        key0 = (key0 + 0x9E3779B9) & _M32
        key1 = (key1 + 0xBB67AE85) & _M32
    return x


def _philox_blocks(key, counter_lo, counter_hi, n: int):
    lo = counter_lo + torch.arange(n, dtype=torch.int64, device=key.device)
    hi = counter_hi + below_unsigned(lo, counter_lo).to(torch.int64)  # the carry out of the low word
    words = [lo & _M32, (lo >> 32) & _M32, hi & _M32, (hi >> 32) & _M32]
    out = philox4x32(words, key & _M32, (key >> 32) & _M32)
    new_lo = counter_lo + n
    new_hi = counter_hi + below_unsigned(new_lo, counter_lo).to(torch.int64)
    return out, new_lo, new_hi


