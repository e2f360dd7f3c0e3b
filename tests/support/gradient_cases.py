"""The functions of the reverse-mode gradient suites, each written once against a numpy module `m`
(loom.numpy, or jax.numpy as the oracle): tests/frontend/test_grad.py (BASIC_CASES: elementwise
math, broadcasting, reductions, matmul, shape ops, small models) and test_grad_array_ops.py
(ARRAY_OP_CASES: cumulative ops, sort, remainder, loom.nn, einsum, pad, roll, tile, split, ...).
The higher-order suite and the torch backend run them all (SUITES)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import loom.nn as lnn
import loom.numpy as lnp


def _softmax(m, x, axis=-1):
    e = m.exp(x - m.max(x, axis=axis, keepdims=True))
    return e / m.sum(e, axis=axis, keepdims=True)


def _logsumexp(m, x, axis=-1):
    mx = m.max(x, axis=axis, keepdims=True)
    return m.log(m.sum(m.exp(x - mx), axis=axis, keepdims=True)) + mx


def _layer_norm(m, x, g, b):
    mu = m.mean(x, axis=-1, keepdims=True)
    var = m.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / m.sqrt(var + 1e-5) * g + b


def _mlp(m, w1, b1, w2, x):
    h = m.maximum(x @ w1 + b1, 0.0)
    return m.mean(m.tanh(h @ w2) ** 2)


def xent(m, w, x, y):
    logits = x @ w
    logp = logits - _logsumexp(m, logits)
    return -m.mean(m.sum(logp * y, axis=-1))


def _sigmoid(m, x):
    return 1.0 / (1.0 + m.exp(-x))


# (name, function of (numpy module, *args), argument shapes, positive inputs)
BASIC_CASES = [
    ("sum", lambda m, x: m.sum(x), [(3, 4)], False),
    ("mean", lambda m, x: m.mean(x), [(3, 4)], False),
    ("sum_sq", lambda m, x: m.sum(x * x), [(5,)], False),
    ("tanh", lambda m, x: m.sum(m.tanh(x)), [(3, 4)], False),
    ("exp", lambda m, x: m.sum(m.exp(x)), [(3, 4)], False),
    ("log", lambda m, x: m.sum(m.log(x)), [(3, 4)], True),
    ("sin", lambda m, x: m.sum(m.sin(x)), [(6,)], False),
    ("cos", lambda m, x: m.sum(m.cos(x)), [(6,)], False),
    ("sqrt", lambda m, x: m.sum(m.sqrt(x)), [(6,)], True),
    ("abs", lambda m, x: m.sum(m.abs(x)), [(6,)], False),
    ("negative", lambda m, x: m.sum(-x * x), [(6,)], False),
    ("divide", lambda m, x, y: m.sum(x / y), [(3, 4), (3, 4)], True),
    ("divide_scalar", lambda m, x: m.sum(2.0 / x), [(3, 4)], True),
    ("subtract", lambda m, x, y: m.sum((x - y) ** 2), [(3, 4), (3, 4)], False),
    ("power_int", lambda m, x: m.sum(x ** 3), [(3, 4)], False),
    ("power_float", lambda m, x, y: m.sum(x ** y), [(3, 4), (3, 4)], True),
    ("power_rsqrt", lambda m, x: m.sum(x ** -0.5), [(3, 4)], True),
    ("tanh_exp_log_chain", lambda m, x: m.sum(m.log(1.0 + m.exp(m.tanh(x)))), [(4, 3)], False),
    ("exp_sin_chain", lambda m, x: m.mean(m.exp(m.sin(x)) * m.cos(x)), [(7,)], False),
    ("sigmoid", lambda m, x: m.sum(_sigmoid(m, x)), [(3, 4)], False),
    ("broadcast_row", lambda m, x, b: m.sum(m.tanh(x + b)), [(3, 4), (4,)], False),
    ("broadcast_col", lambda m, x, b: m.sum(m.tanh(x * b)), [(3, 4), (3, 1)], False),
    ("broadcast_scalar_arg", lambda m, x, s: m.sum(m.sin(x * s)), [(3, 4), ()], False),
    ("broadcast_both", lambda m, x, y: m.sum(m.exp(x - y)), [(3, 1), (1, 4)], False),
    ("broadcast_3d", lambda m, x, y: m.sum((x * y) ** 2), [(2, 3, 4), (3, 1)], False),
    ("broadcast_to", lambda m, x: m.sum(m.sin(m.broadcast_to(x, (3, 4)))), [(4,)], False),
    ("sum_axis0", lambda m, x: m.sum(m.sin(m.sum(x, axis=0))), [(3, 4)], False),
    ("sum_axis1_keep", lambda m, x: m.sum(x / m.sum(x, axis=1, keepdims=True)), [(3, 4)], True),
    ("sum_axes_3d", lambda m, x: m.sum(m.tanh(m.sum(x, axis=(0, 2)))), [(2, 3, 4)], False),
    ("mean_axis", lambda m, x: m.sum(m.mean(x, axis=-1) ** 2), [(3, 4)], False),
    ("max_all", lambda m, x: m.max(x), [(3, 4)], False),
    ("max_axis", lambda m, x: m.sum(m.max(x, axis=1) ** 2), [(3, 4)], False),
    ("min_axis_keep", lambda m, x: m.sum(m.min(x, axis=0, keepdims=True) * x), [(3, 4)], False),
    ("max_ties", lambda m, x: m.max(m.maximum(x, 0.5)), [(3, 4)], False),
    ("maximum", lambda m, x, y: m.sum(m.maximum(x, y)), [(3, 4), (3, 4)], False),
    ("minimum", lambda m, x, y: m.sum(m.minimum(x, y) ** 2), [(3, 4), (3, 4)], False),
    ("relu", lambda m, x: m.sum(m.maximum(x, 0.0) * x), [(3, 4)], False),
    ("where", lambda m, x, y: m.sum(m.where(x > y, x * y, m.sin(y))), [(3, 4), (3, 4)], False),
    ("where_scalar", lambda m, x: m.sum(m.where(x > 0, x, 0.1 * x)), [(3, 4)], False),
    ("matvec", lambda m, a, v: m.sum(m.tanh(a @ v)), [(3, 4), (4,)], False),
    ("vecmat", lambda m, v, a: m.sum(m.tanh(v @ a)), [(3,), (3, 4)], False),
    ("matmul", lambda m, a, b: m.sum(m.sin(a @ b)), [(3, 4), (4, 5)], False),
    ("vecvec", lambda m, a, b: (a @ b) ** 2, [(4,), (4,)], False),
    ("batched_matmul", lambda m, a, b: m.sum((a @ b) ** 2), [(2, 3, 4), (2, 4, 5)], False),
    ("broadcast_matmul", lambda m, a, b: m.sum(m.tanh(a @ b)), [(2, 3, 4), (4, 5)], False),
    ("dot", lambda m, a, b: m.sum(m.dot(a, b) ** 2), [(3, 4), (4, 2)], False),
    ("transpose", lambda m, a: m.sum(m.sin(m.transpose(a)) @ a), [(3, 4)], False),
    ("transpose_3d", lambda m, a: m.sum(m.transpose(a, (2, 0, 1)) * m.arange(24.0).reshape(4, 2, 3)),
     [(2, 3, 4)], False),
    ("reshape", lambda m, a: m.sum(m.reshape(a, (4, 3)) @ m.ones((3, 2))), [(3, 4)], False),
    ("expand_squeeze", lambda m, a: m.sum(m.squeeze(m.expand_dims(m.sin(a), 0)) ** 2), [(3, 4)], False),
    ("slice", lambda m, a: m.sum(m.sin(a[1:3, ::2])), [(4, 5)], False),
    ("slice_index", lambda m, a: m.sum(a[0] * a[-1]), [(4, 5)], False),
    ("slice_reverse", lambda m, a: m.sum(a[::-1] * m.arange(5.0)), [(5,)], False),
    ("slice_reverse_step", lambda m, a: m.sum(a[::-2, 1:] ** 2 * 1.5), [(5, 3)], False),
    ("concatenate", lambda m, a, b: m.sum(m.sin(m.concatenate([a, b, a], axis=1)) * 2.0), [(2, 3), (2, 4)], False),
    ("concatenate_axis0", lambda m, a, b: m.sum(m.concatenate([a, b]) ** 3), [(2, 3), (1, 3)], False),
    ("stack", lambda m, a, b: m.sum(m.tanh(m.stack([a, b], axis=1))), [(3,), (3,)], False),
    ("softmax", lambda m, x: m.sum(_softmax(m, x) * m.arange(12.0).reshape(3, 4)), [(3, 4)], False),
    ("logsumexp", lambda m, x: m.sum(_logsumexp(m, x)), [(3, 4)], False),
    ("layer_norm", lambda m, x, g, b: m.sum(_layer_norm(m, x, g, b) ** 2 * m.arange(8.0)),
     [(3, 8), (8,), (8,)], False),
    ("mlp", _mlp, [(4, 6), (6,), (6, 2), (5, 4)], False),
    ("xent", lambda m, w, x: xent(m, w, x, m.eye(3)[m.array([0, 1, 2, 1, 0])] if m is jnp else ONEHOT),
     [(4, 3), (5, 4)], False),
    ("astype_f64", lambda m, x: m.sum(m.astype(x, m.float64) ** 2) if m is not jnp else m.sum(x ** 2),
     [(3,)], False),
    ("shared_subexpr", lambda m, x: m.sum(m.exp(x) * m.exp(x) + m.exp(x)), [(4,)], False),
    ("constant_only_path", lambda m, x, y: m.sum(x * 0.0 + m.tanh(y)), [(3,), (3,)], False),
]

ONEHOT = np.eye(3, dtype=np.float32)[[0, 1, 2, 1, 0]]


_W = np.linspace(-1.0, 2.0, 24).astype(np.float32)


def weights(shape):
    n = int(np.prod(shape))
    return np.resize(_W, n).reshape(shape)


def _nn(m):
    return lnn if m is lnp else jax.nn


# (name, function of (numpy module, *args), argument shapes, positive inputs)
ARRAY_OP_CASES = [
    ("cumsum", lambda m, x: m.sum(m.sin(m.cumsum(x, axis=1)) * weights((3, 4))), [(3, 4)], False),
    ("cumsum_flat", lambda m, x: m.sum(m.cumsum(x) ** 2), [(2, 3)], False),
    ("cumsum_axis0", lambda m, x: m.sum(m.tanh(m.cumsum(x, axis=0))), [(4, 3)], False),
    ("cumprod", lambda m, x: m.sum(m.cumprod(x, axis=1) * weights((3, 4))), [(3, 4)], False),
    ("cumprod_flat", lambda m, x: m.sum(m.cumprod(x) ** 2), [(2, 3)], False),
    ("cumprod_3d", lambda m, x: m.sum(m.sin(m.cumprod(x, axis=1))), [(2, 3, 2)], False),
    ("cumprod_len1", lambda m, x: m.sum(m.cumprod(x, axis=1) * 2.0), [(3, 1)], False),
    ("sort", lambda m, x: m.sum(m.sort(x) * weights((6,))), [(6,)], False),
    ("sort_axis0", lambda m, x: m.sum(m.sort(x, axis=0) ** 3 * weights((4, 3))), [(4, 3)], False),
    ("remainder", lambda m, x, y: m.sum(m.remainder(x * 3.0, y) * weights((3, 4))), [(3, 4), (3, 4)], True),
    ("remainder_neg", lambda m, x, y: m.sum(m.remainder(x * 3.0, -y) ** 2), [(3, 4), (3, 4)], True),
    ("arctan2", lambda m, y, x: m.sum(m.arctan2(y, x) * weights((3, 4))), [(3, 4), (3, 4)], False),
    ("clip", lambda m, x: m.sum(m.clip(x, -0.5, 0.7) ** 2), [(3, 4)], False),
    ("var", lambda m, x: m.sum(m.var(x, axis=1)), [(3, 4)], False),
    ("std", lambda m, x: m.std(x), [(3, 4)], False),
    ("std_ddof", lambda m, x: m.sum(m.std(x, axis=0, ddof=1)), [(3, 4)], False),
    ("logsumexp", lambda m, x: m.sum(_nn(m).logsumexp(x, axis=-1) if m is lnp
                                     else jax.scipy.special.logsumexp(x, axis=-1)), [(3, 4)], False),
    ("softmax", lambda m, x: m.sum(_nn(m).softmax(x) * weights((3, 4))), [(3, 4)], False),
    ("log_softmax", lambda m, x: m.sum(_nn(m).log_softmax(x) * weights((3, 4))), [(3, 4)], False),
    ("gelu", lambda m, x: m.sum(_nn(m).gelu(x)), [(3, 4)], False),
    ("silu", lambda m, x: m.sum(_nn(m).silu(x) * weights((3, 4))), [(3, 4)], False),
    ("sigmoid", lambda m, x: m.sum(_nn(m).sigmoid(x) ** 2), [(3, 4)], False),
    ("einsum", lambda m, a, b: m.sum(m.tanh(m.einsum("ij,jk->ik", a, b))), [(3, 4), (4, 2)], False),
    ("einsum_batch", lambda m, a, b: m.sum(m.einsum("bij,bjk->bik", a, b) ** 2), [(2, 3, 4), (2, 4, 2)], False),
    ("einsum_reduce", lambda m, a, b: m.einsum("ij,ij->j", a, b) @ m.arange(3.0), [(4, 3), (4, 3)], False),
    ("tensordot", lambda m, a, b: m.sum(m.sin(m.tensordot(a, b, axes=([1, 2], [0, 1])))),
     [(2, 3, 4), (3, 4, 2)], False),
    ("pad", lambda m, x: m.sum(m.sin(m.pad(x, ((1, 2), (0, 1))))), [(3, 4)], False),
    ("roll", lambda m, x: m.sum(m.roll(x, 2, axis=1) * weights((3, 4))), [(3, 4)], False),
    ("roll_flat", lambda m, x: m.sum(m.roll(x, -1) * weights((3, 4))), [(3, 4)], False),
    ("flip", lambda m, x: m.sum(m.flip(x, axis=0) * weights((3, 4))), [(3, 4)], False),
    ("tile", lambda m, x: m.sum(m.tile(x, (2, 3)) * weights((6, 6))), [(3, 2)], False),
    ("repeat", lambda m, x: m.sum(m.repeat(x, 2, axis=1) * weights((3, 4))), [(3, 2)], False),
    ("repeat_flat", lambda m, x: m.sum(m.repeat(x, 3) ** 2), [(2, 2)], False),
    ("concatenate_split", lambda m, a, b: m.sum(m.split(m.concatenate([a, b], axis=1), [1, 4], axis=1)[1] ** 2),
     [(2, 3), (2, 2)], False),
    ("split_sections", lambda m, x: m.sum(m.split(x, 2)[0] * m.split(x, 2)[1]), [(4, 3)], False),
    ("max_argmax_mix", lambda m, x: m.sum(m.max(x, axis=1)) + m.sum(m.argmax(x, axis=1).astype(x.dtype)),
     [(3, 4)], False),
    ("round_floor", lambda m, x: m.sum(x * m.round(x) + m.floor(x) + m.ceil(x) * x), [(3, 4)], False),
]


# every case above, by the suite that owns it (name: cases)
SUITES = {"grad": BASIC_CASES, "grad_array_ops": ARRAY_OP_CASES}


def case_inputs(shapes, positive: bool, dtype=np.float64, seed: int = 0) -> list[np.ndarray]:
    """Inputs of a case's shapes: uniform in [0.5, 2] for a case on positives, normal otherwise."""
    rng = np.random.default_rng(seed)
    return [np.asarray(rng.uniform(0.5, 2.0, size=s) if positive else rng.normal(size=s), dtype) for s in shapes]
