"""loom.lax operations against jax.lax on random inputs, traced (inside loom.jit) and eager."""

from __future__ import annotations

import numpy as np
import pytest

import loom
from loom import lax

jax = pytest.importorskip("jax")
jl = jax.lax

RNG = np.random.default_rng(0)
F = RNG.normal(size=(3, 4)).astype(np.float32)
G = RNG.normal(size=(3, 4)).astype(np.float32)
P = RNG.uniform(0.5, 2.0, size=(3, 4)).astype(np.float32)
I = RNG.integers(-20, 20, size=(3, 4)).astype(np.int32)
J = RNG.integers(1, 7, size=(3, 4)).astype(np.int32)
U = RNG.integers(0, 2 ** 31, size=(3, 4)).astype(np.uint32)
A3 = RNG.normal(size=(2, 3, 4)).astype(np.float32)
B3 = RNG.normal(size=(2, 4, 5)).astype(np.float32)
IMG = RNG.normal(size=(2, 3, 6, 5)).astype(np.float32)
KER = RNG.normal(size=(4, 3, 3, 2)).astype(np.float32)
GATHER_IDX = np.array([[0, 1], [2, 3], [1, 0]], np.int32)

# (name, f(lax module, *args), args)
CASES = [
    ("add", lambda L, x, y: L.add(x, y), (F, G)),
    ("add_scalar", lambda L, x: L.add(x, 2.0), (F,)),
    ("sub", lambda L, x, y: L.sub(x, y), (F, G)),
    ("mul_int", lambda L, x, y: L.mul(x, y), (I, J)),
    ("div_float", lambda L, x, y: L.div(x, y), (F, P)),
    ("div_int", lambda L, x, y: L.div(x, y), (I, J)),
    ("rem_int", lambda L, x, y: L.rem(x, y), (I, J)),
    ("rem_float", lambda L, x, y: L.rem(x, y), (F, P)),
    ("max", lambda L, x, y: L.max(x, y), (F, G)),
    ("min", lambda L, x, y: L.min(x, y), (I, J)),
    ("pow", lambda L, x, y: L.pow(x, y), (P, G)),
    ("atan2", lambda L, x, y: L.atan2(x, y), (F, G)),
    ("bitwise", lambda L, x, y: (L.bitwise_and(x, y), L.bitwise_or(x, y), L.bitwise_xor(x, y), L.bitwise_not(x)),
     (I, J)),
    ("shifts", lambda L, x, y: (L.shift_left(x, y), L.shift_right_logical(x, y), L.shift_right_arithmetic(x, y)),
     (I, J)),
    ("compare", lambda L, x, y: (L.eq(x, y), L.ne(x, y), L.lt(x, y), L.le(x, y), L.gt(x, y), L.ge(x, y)), (F, G)),
    ("unary_float", lambda L, x: (L.neg(x), L.sign(x), L.floor(x), L.ceil(x), L.round(x * 2), L.abs(x), L.exp(x),
                                  L.expm1(x), L.tanh(x), L.logistic(x), L.sin(x), L.cos(x), L.tan(x), L.cbrt(x),
                                  L.is_finite(x), L.square(x)), (F,)),
    ("unary_positive", lambda L, x: (L.log(x), L.log1p(x), L.sqrt(x), L.rsqrt(x)), (P,)),
    ("unary_int", lambda L, x: (L.neg(x), L.abs(x), L.sign(x), L.population_count(x), L.clz(x)), (I,)),
    ("integer_pow", lambda L, x: (L.integer_pow(x, 3), L.integer_pow(x, -2), L.integer_pow(x, 0)), (P,)),
    ("convert", lambda L, x: (L.convert_element_type(x, np.int32), L.convert_element_type(x, np.float16)), (F * 5,)),
    ("bitcast_same_width", lambda L, x: L.bitcast_convert_type(x, np.int32), (F,)),
    ("bitcast_narrow", lambda L, x: L.bitcast_convert_type(x, np.uint8), (F,)),
    ("bitcast_uint", lambda L, x: L.bitcast_convert_type(x, np.float32), (U,)),
    ("select", lambda L, x, y: L.select(x > y, x, y), (F, G)),
    ("select_scalar_pred", lambda L, x, y: L.select(np.bool_(True), x, y), (F, G)),
    ("clamp", lambda L, x: (L.clamp(-0.5, x, 0.5), L.clamp(np.float32(-0.2), x, np.full((3, 4), 0.3, np.float32))),
     (F,)),
    ("broadcast_in_dim", lambda L, x: L.broadcast_in_dim(x, (2, 3, 5, 4), (1, 3)), (F,)),
    ("broadcast", lambda L, x: L.broadcast(x, (2,)), (F,)),
    ("reshape", lambda L, x: (L.reshape(x, (4, 3)), L.reshape(x, (2, 6), dimensions=(1, 0))), (F,)),
    ("transpose", lambda L, x: L.transpose(x, (2, 0, 1)), (A3,)),
    ("rev", lambda L, x: L.rev(x, (0, 2)), (A3,)),
    ("pad", lambda L, x: L.pad(x, np.float32(-1), ((1, 2, 0), (0, 1, 2))), (F,)),
    ("pad_negative", lambda L, x: L.pad(x, np.float32(0), ((-1, 1, 1), (2, -2, 0))), (F,)),
    ("concatenate", lambda L, x, y: L.concatenate([x, y, x], 1), (F, G)),
    ("slice", lambda L, x: (L.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2)), L.slice_in_dim(x, 1, 3, axis=2),
                            L.index_in_dim(x, -1, 1), L.index_in_dim(x, 0, 0, keepdims=False)), (A3,)),
    ("squeeze_expand", lambda L, x: (L.squeeze(L.expand_dims(x, (0, 3)), (0,)), L.expand_dims(x, (1,))), (F,)),
    ("dynamic_slice", lambda L, x: (L.dynamic_slice(x, (np.int32(1), np.int32(3)), (2, 2)),
                                    L.dynamic_slice(x, (np.int32(5), np.int32(-1)), (2, 3)),
                                    L.dynamic_slice_in_dim(x, np.int32(1), 2, axis=1)), (F,)),
    ("dynamic_update_slice", lambda L, x, y: (L.dynamic_update_slice(x, y[:2, :2], (np.int32(2), np.int32(1))),
                                              L.dynamic_update_slice_in_dim(x, y[:, :1], np.int32(9), 1)), (F, G)),
    ("gather", lambda L, x: L.gather(x, GATHER_IDX, L.GatherDimensionNumbers(offset_dims=(1,),
                                                                              collapsed_slice_dims=(0,),
                                                                              start_index_map=(0, 1)), (1, 2),
                                     mode="clip"), (F,)),
    ("gather_fill", lambda L, x: L.gather(x, GATHER_IDX * 2, L.GatherDimensionNumbers(
        offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0, 1)), (1, 2), mode="fill"), (F,)),
    ("scatters", lambda L, x, y: tuple(
        fn(x, GATHER_IDX[:, :1], y[:3], L.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                                                  scatter_dims_to_operand_dims=(0,)))
        for fn in (L.scatter_add, L.scatter_mul, L.scatter_min, L.scatter_max)), (F, G)),
    ("scatter_drop", lambda L, x, y: L.scatter(x, np.array([[0], [7]], np.int32), y[:2], L.ScatterDimensionNumbers(
        update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))), (F, G)),
    ("scatter_clip", lambda L, x, y: L.scatter_add(x, np.array([[0, 3], [7, -2]], np.int32), y[:2, :2],
                                                   L.ScatterDimensionNumbers(update_window_dims=(1,),
                                                                             inserted_window_dims=(0,),
                                                                             scatter_dims_to_operand_dims=(0, 1)),
                                                   mode="clip"), (F, G)),
    ("dot_general", lambda L, a, b: L.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), (A3, B3)),
    ("dot_general_free", lambda L, a, b: L.dot_general(a, b, (((1,), (0,)), ((), ()))), (F, G.T.copy())),
    ("dot", lambda L, a, b: (L.dot(a, b), L.dot(a[0], b)), (F, G.T.copy())),
    ("dot_preferred", lambda L, a, b: L.dot(a, b, preferred_element_type=np.float32), (I, J.T.copy())),
    ("conv", lambda L, x, k: L.conv_general_dilated(x, k, (2, 1), "SAME", rhs_dilation=(1, 2)), (IMG, KER)),
    ("conv_nhwc", lambda L, x, k: L.conv_general_dilated(x.transpose(0, 2, 3, 1), k.transpose(2, 3, 1, 0), (1, 1),
                                                         ((1, 0), (2, 1)), lhs_dilation=(2, 1),
                                                         dimension_numbers=("NHWC", "HWIO", "NHWC")), (IMG, KER)),
    ("conv_simple", lambda L, x, k: L.conv(x, k, (1, 1), "VALID"), (IMG, KER)),
    ("reductions", lambda L, x: (L.reduce_sum(x, (0,)), L.reduce_max(x, (1,)), L.reduce_min(x, (0, 1)),
                                 L.reduce_prod(x, (1,))), (F,)),
    ("reductions_logical", lambda L, x: (L.reduce_and(x > 0, (1,)), L.reduce_or(x > 0, (0,))), (F,)),
    ("reduce_window", lambda L, x: (L.reduce_window(x, -np.inf, L.max, (1, 2, 2), (1, 1, 2), "SAME"),
                                    L.reduce_window(x, 0.0, L.add, (2, 2, 1), None, ((0, 1), (1, 0), (0, 0)))),
     (A3,)),
    ("cumulative", lambda L, x: (L.cumsum(x, 1), L.cumprod(x, 0, reverse=True), L.cummax(x, 1),
                                 L.cummin(x, 1, reverse=True)), (F,)),
    ("argmax_argmin", lambda L, x: (L.argmax(x, 1, np.int32), L.argmin(x, 0, np.int32)), (F,)),
    ("sort", lambda L, x: (L.sort(x), L.sort(x, dimension=0)), (F,)),
    ("sort_multiple", lambda L, x, y: L.sort((x, y), dimension=1, num_keys=1), (I % 3, G)),
    ("sort_two_keys", lambda L, x, y: L.sort((x, y, x * 2), dimension=1, num_keys=2), (I % 3, J)),
    ("sort_key_val", lambda L, x, y: L.sort_key_val(x, y), (F, G)),
    ("iota", lambda L, x: (L.add(L.convert_element_type(L.iota(np.int32, 4), np.float32), x[0]),
                           L.broadcasted_iota(np.int32, (2, 3), 1)), (F,)),
]


def _compare(ours, theirs):
    a, b = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(a) == len(b)
    for o, t in zip(a, b):
        o, t = np.asarray(o), np.asarray(t)
        assert o.shape == t.shape
        assert o.dtype == t.dtype, (o.dtype, t.dtype)
        if o.dtype.kind == "f":
            np.testing.assert_allclose(o, t, rtol=2e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(o, t)


@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_lax_op_matches_jax_inside_jit(name, fn, args):
    ours = loom.jit(lambda *a: fn(lax, *a))(*args)
    theirs = jax.jit(lambda *a: fn(jl, *a))(*args)
    _compare(ours, theirs)


EAGER = ["add", "dynamic_slice", "sort", "conv_simple", "gather", "cumulative", "pad"]


@pytest.mark.parametrize("name", EAGER)
def test_lax_op_runs_eagerly_on_arrays(name):
    fn, args = next((c[1], c[2]) for c in CASES if c[0] == name)
    _compare(fn(lax, *args), fn(jl, *args))


def test_mixed_dtypes_are_an_error_naming_convert_element_type():
    with pytest.raises(TypeError, match="convert_element_type"):
        loom.jit(lambda x, y: lax.add(x, y))(F, I)


def test_dot_general_shape_mismatch_names_the_line():
    with pytest.raises(TypeError, match=r"dot_general: dimension 1 of lhs \(3, 4\).*test_lax_ops\.py"):
        loom.jit(lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))))(F, G)


def test_lax_grad_through_conv_and_dynamic_slice():
    def f(L, m):
        return lambda x, k: m.sum(m.sin(L.dynamic_slice(L.conv(x, k, (1, 1), "SAME"), (0, 1, 2, 1), (2, 2, 3, 3))))
    ours = loom.grad(f(lax, loom.numpy), (0, 1))(IMG, KER)
    theirs = jax.grad(f(jl, jax.numpy), (0, 1))(IMG, KER)
    _compare(ours, theirs)


def test_dynamic_index_in_dim_matches_jax():
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    for axis in (0, 1, -1):
        for i in (-1, 0, 2, 9):
            for keep in (True, False):
                want = jax.lax.dynamic_index_in_dim(x, np.int32(i), axis, keep)
                got = loom.jit(lambda x, i, a=axis, k=keep: lax.dynamic_index_in_dim(x, i, a, k))(x, np.int32(i))
                np.testing.assert_array_equal(got, want)
    g = loom.grad(lambda x: lax.dynamic_index_in_dim(x, np.int32(1), 1, False).sum())(x)
    np.testing.assert_array_equal(g, jax.grad(lambda x: jax.lax.dynamic_index_in_dim(x, 1, 1, False).sum())(x))
