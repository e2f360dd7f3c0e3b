"""`stablehlo.rng_bit_generator` as XLA computes it (xla/hlo/builder/lib/prng.cc and the
RngBitGeneratorExpander): THREE_FRY is Threefry2x32 with 20 rounds, PHILOX is Philox4x32 with 10
rounds; DEFAULT is PHILOX on the CPU backend. The state's first word is the key; the rest is a
counter, advanced by the number of blocks generated.
"""

from __future__ import annotations

import numpy as np

_U32 = np.uint32
_U64 = np.uint64


def _rotl(v: np.ndarray, d: int) -> np.ndarray:
    return (v << _U32(d)) | (v >> _U32(32 - d))


def threefry2x32(x0: np.ndarray, x1: np.ndarray, k0, k1) -> tuple[np.ndarray, np.ndarray]:
    rotations = (13, 15, 26, 6, 17, 29, 16, 24)
    k0, k1 = _U32(k0), _U32(k1)
    k2 = _U32(0x1BD11BDA) ^ k0 ^ k1
    ks = (k0, k1, k2)
    x0 = x0 + k0
    x1 = x1 + k1
    for i in range(5):
        for r in (rotations[:4] if i % 2 == 0 else rotations[4:]):
            x0 = x0 + x1
            x1 = _rotl(x1, r)
            x1 = x0 ^ x1
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + _U32(i + 1)
    return x0, x1


def _split_halves(shape: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """XLA's SplitShapeIntoHalves: the half shape and the split dim."""
    if not shape:
        return (1,), 0
    split = next((i for i, d in enumerate(shape) if d % 2 == 0), None)
    if split is None:
        split = max(range(len(shape)), key=lambda i: (shape[i], -i))
    half = list(shape)
    half[split] = -(-shape[split] // 2)
    half.insert(split + 1, 1)
    return tuple(half), split


def _threefry_inputs(counter: int, shape: tuple[int, ...]) -> np.ndarray:
    """counter + a row-major linear index over the dims of size >= 2, as u64."""
    out = np.full(shape, counter, _U64)
    product = 1
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] < 2:
            continue
        iota = np.arange(shape[i], dtype=_U64).reshape([shape[i] if j == i else 1 for j in range(len(shape))])
        out = out + iota * _U64(product)
        product *= shape[i]
    return out


def _threefry_bits32(key: int, counter: int, shape: tuple[int, ...]) -> tuple[np.ndarray, int]:
    half, split = _split_halves(shape)
    inputs = _threefry_inputs(counter, half)
    y0, y1 = threefry2x32(inputs.astype(_U32), (inputs >> _U64(32)).astype(_U32), key & 0xFFFFFFFF, key >> 32)
    n_half = int(np.prod(half, dtype=np.int64))
    new_counter = (counter + n_half) & 0xFFFFFFFFFFFFFFFF
    if not shape:
        return y0.reshape(()), new_counter
    combined = np.concatenate([y0, y1], axis=split + 1)
    dims = list(shape)
    dims[split] = half[split] * 2
    combined = combined.reshape(dims)
    return combined[tuple(slice(0, d) for d in shape)], new_counter


def _threefry_bits64(key: int, counter: int, shape: tuple[int, ...]) -> tuple[np.ndarray, int]:
    inputs = _threefry_inputs(counter, shape)
    y0, y1 = threefry2x32(inputs.astype(_U32), (inputs >> _U64(32)).astype(_U32), key & 0xFFFFFFFF, key >> 32)
    n = int(np.prod(shape, dtype=np.int64))
    return y0.astype(_U64) | (y1.astype(_U64) << _U64(32)), (counter + n) & 0xFFFFFFFFFFFFFFFF


def philox4x32(x: list[np.ndarray], k0: int, k1: int) -> list[np.ndarray]:
    # the key schedule in Python ints: numpy's uint32 scalars warn where their sums wrap
    key0, key1 = int(k0) & 0xFFFFFFFF, int(k1) & 0xFFFFFFFF
    for _ in range(10):
        p0 = x[0].astype(_U64) * _U64(0xD2511F53)
        p1 = x[2].astype(_U64) * _U64(0xCD9E8D57)
        hi0, lo0 = (p0 >> _U64(32)).astype(_U32), p0.astype(_U32)
        hi1, lo1 = (p1 >> _U64(32)).astype(_U32), p1.astype(_U32)
        x = [hi1 ^ x[1] ^ _U32(key0), lo1, hi0 ^ x[3] ^ _U32(key1), lo0]
        key0 = (key0 + 0x9E3779B9) & 0xFFFFFFFF
        key1 = (key1 + 0xBB67AE85) & 0xFFFFFFFF
    return x


_M64 = 0xFFFFFFFFFFFFFFFF


def _philox_blocks(key: int, counter_lo: int, counter_hi: int, n: int) -> tuple[list[np.ndarray], int, int]:
    """n blocks from the 128-bit counter (counter_hi, counter_lo) on, each carry into the high
    word wrapping as XLA's uint64 adds do (past 2**128 - 1 the counter starts again at 0)."""
    iota = np.arange(n, dtype=_U64)
    lo = _U64(counter_lo) + iota
    hi = np.where(lo < _U64(counter_lo), _U64((counter_hi + 1) & _M64), _U64(counter_hi))
    words = [lo.astype(_U32), (lo >> _U64(32)).astype(_U32), hi.astype(_U32), (hi >> _U64(32)).astype(_U32)]
    out = philox4x32(words, key & 0xFFFFFFFF, key >> 32)
    new_lo = (counter_lo + n) & _M64
    new_hi = counter_hi + (1 if new_lo < counter_lo else 0)
    return out, new_lo, new_hi & _M64


def rng_bit_generator(state, algorithm: str, shape: tuple[int, ...], dtype) -> tuple[np.ndarray, np.ndarray]:
    state_dtype = np.asarray(state).dtype
    state = np.asarray(state).astype(_U64)
    dtype = np.dtype(dtype)
    key = int(state[0])
    bits = dtype.itemsize * 8
    n = int(np.prod(shape, dtype=np.int64))
    new_state = state.copy()
    if algorithm == "THREE_FRY":
        counter = int(state[1])
        if bits == 64:
            out, counter = _threefry_bits64(key, counter, tuple(shape))
        else:
            out, counter = _threefry_bits32(key, counter, tuple(shape))
        new_state[1] = counter
    elif algorithm in ("PHILOX", "DEFAULT"):
        if len(state) >= 3:
            lo, hi = int(state[1]), int(state[2])
        else:
            lo, hi = int(state[1]), int(state[0])
        if bits == 64:
            words, lo2, hi2 = _philox_blocks(key, lo, hi, -(-2 * n // 4))
            w64 = [words[0].astype(_U64) | (words[1].astype(_U64) << _U64(32)),
                   words[2].astype(_U64) | (words[3].astype(_U64) << _U64(32))]
            out = np.stack(w64, axis=1).reshape(-1)[:n].reshape(shape)
        else:
            words, lo2, hi2 = _philox_blocks(key, lo, hi, -(-n // 4))
            out = np.stack(words, axis=1).reshape(-1)[:n].reshape(shape)
        new_state[1] = lo2
        if len(state) >= 3:
            new_state[2] = hi2
    else:
        raise NotImplementedError(f"rng algorithm {algorithm}")
    if bits < 32:
        out = out.astype(np.dtype(f"u{dtype.itemsize}"))
    return new_state.astype(state_dtype), np.ascontiguousarray(out).view(dtype).reshape(shape)
