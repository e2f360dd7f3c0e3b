"""Advanced indexing of traced arrays (lowered to stablehlo.gather), the functional updates
`x.at[idx].set/add/...` (lowered to stablehlo.scatter), lnp.take and lnp.take_along_axis, against
numpy and jax."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.numpy as lnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

X = np.random.default_rng(0).normal(size=(3, 4, 5)).astype(np.float32)

# static indices: numpy is the oracle
GETITEM = [
    ("list", lambda x: x[[0, 2]]),
    ("negative", lambda x: x[:, [1, -1]]),
    ("two_arrays_separated", lambda x: x[[0, 1], :, [2, 3]]),
    ("int_and_array_separated", lambda x: x[0, :, [1, 2]]),
    ("int_and_array_adjacent", lambda x: x[:, 0, [1, 2]]),
    ("none_first", lambda x: x[None, [0, 1]]),
    ("none_between", lambda x: x[[0, 1], None, [1, 2]]),
    ("ellipsis", lambda x: x[..., [4, 0]]),
    ("slices_and_reverse", lambda x: x[1:, ::-2, [0]]),
    ("strided_and_window", lambda x: x[[1], 1:3, None, ::2]),
    ("int_array_strided", lambda x: x[2, [0, 3], 1:4:2]),
    ("2d_index", lambda x: x[np.array([[0, 1], [2, 0]])]),
    ("broadcast_arrays", lambda x: x[np.array([[0], [2]]), :, np.array([1, 3, 4])]),
    ("bool_mask", lambda x: x[np.array([True, False, True])]),
    ("bool_mask_2d", lambda x: x[:, np.array([[True, False, True, False, True]] * 4)]),
    ("bool_mask_full", lambda x: x[x.shape[0] * [[[True, False] * 2 + [True]] * 4][0:3] if False else
                                   np.arange(60).reshape(3, 4, 5) % 7 == 0]),
    ("empty_array", lambda x: x[np.array([], np.int32)]),
    ("empty_slice", lambda x: x[[0, 1], 3:1]),
    ("int64_indices", lambda x: x[np.array([2, 1], np.int64), 1]),
    ("uint_indices", lambda x: x[:, np.array([3, 0], np.uint8)]),
    ("basic_mixed", lambda x: x[1, None, ..., ::-1]),
]


@pytest.mark.parametrize("name,fn", GETITEM, ids=[c[0] for c in GETITEM])
def test_getitem_matches_numpy(name, fn):
    out = np.asarray(loom.jit(fn)(X))
    expected = fn(X)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


# traced indices: jax is the oracle (out-of-bounds indices are clamped when reading)
TRACED = [
    ("one", lambda x, i: x[i], np.array([2, 0, 2, -1])),
    ("second_axis", lambda x, i: x[:, i], np.array([[3, 0], [1, -4]])),
    ("with_int", lambda x, i: x[1, i, 2:], np.array([0, 3])),
    ("scalar", lambda x, i: x[i, 1:3], np.array(-2)),
    ("clamped", lambda x, i: x[i], np.array([5, -9, 3])),
    ("two", lambda x, i: x[i, i], np.array([0, 2, 1])),
    ("separated", lambda x, i: x[i, :, i], np.array([0, 2])),
    ("uint8", lambda x, i: x[:, :, i], np.array([4, 0], np.uint8)),
    ("int64", lambda x, i: x[..., i], np.array([1, 0], np.int64)),
]


@pytest.mark.parametrize("name,fn,idx", TRACED, ids=[c[0] for c in TRACED])
def test_getitem_with_traced_index_matches_jax(name, fn, idx):
    out = np.asarray(loom.jit(fn)(X, idx))
    expected = np.asarray(jax.jit(fn)(X, idx))
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


def test_getitem_lowers_to_one_gather():
    text = loom.jit(lambda x, i: x[i, :, 1:3]).lower(X, np.array([0, 1])).as_text()
    assert text.count("\"stablehlo.gather\"") == 1
    assert "stablehlo.scatter" not in text


# x.at[...]: jax is the oracle (duplicates accumulate, out-of-bounds updates are dropped)
AT = [
    ("set_int", lambda x, v: x.at[1].set(v[0, 0, 0])),
    ("set_slice", lambda x, v: x.at[:, 1:3].set(v[:, :2])),
    ("set_strided_reverse", lambda x, v: x.at[::-2, :, ::2].set(v[:2, :, :3])),
    ("set_array_unique", lambda x, v: x.at[np.array([2, 0])].set(v[:2])),
    ("set_scalar_broadcast", lambda x, v: x.at[:, np.array([1, 3]), 2].set(7.0)),
    ("add_duplicates", lambda x, v: x.at[np.array([0, 0, 2, 0])].add(v[0, 0])),
    ("add_mixed", lambda x, v: x.at[1, np.array([0, 0, 3]), 1:4].add(v[0, :3, :3])),
    ("add_separated", lambda x, v: x.at[np.array([0, 2]), :, np.array([1, 1])].add(v[:2, :, 0])),
    ("add_out_of_bounds", lambda x, v: x.at[np.array([5, -9, -1, 1])].add(1.5)),
    ("add_none", lambda x, v: x.at[None, 1, np.array([1, 2])].add(v[0, :2])),
    ("multiply", lambda x, v: x.at[:, np.array([1, 1])].multiply(v[:, :2])),
    ("mul", lambda x, v: x.at[2].mul(v[0])),
    ("min", lambda x, v: x.at[np.array([0, 0]), 1].min(v[:2, 0])),
    ("max", lambda x, v: x.at[..., np.array([0, 4, 0])].max(v[..., :3])),
    ("divide", lambda x, v: x.at[np.array([1, 1])].divide(2.0)),
    ("power", lambda x, v: x.at[:, 0].power(2.0)),
    ("get", lambda x, v: x.at[np.array([2, 0]), 1].get()),
    ("bool_mask", lambda x, v: x.at[np.array([True, False, True])].set(v[:2])),
]


@pytest.mark.parametrize("name,fn", AT, ids=[c[0] for c in AT])
def test_at_matches_jax(name, fn):
    v = np.random.default_rng(1).normal(size=(3, 4, 5)).astype(np.float32)
    out = np.asarray(loom.jit(fn)(X, v))
    expected = np.asarray(jax.jit(fn)(X, v))
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)


def test_at_with_traced_index_matches_jax():
    def f(x, i, v):
        return x.at[i, 2].add(v[:, None]), x.at[:, i].set(0.0), x.at[i].max(-x[0])
    i = np.array([2, 0, 2, 7], np.int32)
    v = np.arange(4, dtype=np.float32)
    for o, e in zip(loom.jit(f)(X, i, v), jax.jit(f)(X, i, v)):
        np.testing.assert_allclose(np.asarray(o), np.asarray(e), rtol=1e-6)


def test_at_integer_and_bool_arrays():
    def f(x, b):
        return (x.at[np.array([1, 1, 3])].add(2), x.at[0].multiply(-3), b.at[np.array([0, 2])].set(True),
                b.at[1:].set(np.array([True, False, False])))
    x = np.arange(5, dtype=np.int32)
    b = np.array([False, True, False, True])
    for o, e in zip(loom.jit(f)(x, b), jax.jit(f)(x, b)):
        assert np.asarray(o).dtype == np.asarray(e).dtype
        np.testing.assert_array_equal(np.asarray(o), np.asarray(e))


def test_at_lowers_to_scatter():
    text = loom.jit(lambda x: x.at[[0, 2]].add(1.0)).lower(X).as_text()
    assert text.count("\"stablehlo.scatter\"") == 1


TAKE = [
    ("flat", lambda m, x, i: m.take(x, i)),
    ("axis0", lambda m, x, i: m.take(x, i, axis=0)),
    ("axis_last_clip", lambda m, x, i: m.take(x, i, axis=-1, mode="clip")),
    ("wrap", lambda m, x, i: m.take(x, i, axis=1, mode="wrap")),
    ("fill_value", lambda m, x, i: m.take(x, i, axis=1, fill_value=-3.0)),
    ("along_axis", lambda m, x, i: m.take_along_axis(x, m.argsort(x, axis=1)[:, :2], axis=1)),
    ("along_axis_index", lambda m, x, i: m.take_along_axis(x, m.reshape(i, (1, -1))[:, :3], axis=1)),
    ("along_axis_clip", lambda m, x, i: m.take_along_axis(x, m.reshape(i[:3], (-1, 1)), axis=1, mode="clip")),
    ("along_axis_none", lambda m, x, i: m.take_along_axis(x, i, axis=None)),
]


@pytest.mark.parametrize("name,fn", TAKE, ids=[c[0] for c in TAKE])
def test_take_matches_jax(name, fn):
    x = X[0, :3]
    i = np.array([7, -7, -1, 2, 0, 3], np.int32)
    out = np.asarray(loom.jit(lambda x, i: fn(lnp, x, i))(x, i))
    expected = np.asarray(fn(jnp, x, i))
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


def test_take_of_integers_fills_like_jax():
    x = np.arange(5, dtype=np.int32)
    i = np.array([9, -1, 2], np.int32)
    np.testing.assert_array_equal(loom.jit(lnp.take)(x, i), jnp.take(x, i))
    np.testing.assert_array_equal(lnp.take(x, np.array([4, -1])), np.take(x, np.array([4, -1])))


def test_traced_boolean_mask_is_an_error_naming_where():
    with pytest.raises(IndexError, match=r"lnp\.where.*test_indexing\.py|test_indexing\.py"):
        loom.jit(lambda x: x[x > 0])(X)


def test_static_out_of_bounds_basic_index_names_the_line():
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 0 with size 3 .*test_indexing\.py"):
        loom.jit(lambda x: x[3])(X)


def test_too_many_indices():
    with pytest.raises(IndexError, match="too many indices"):
        loom.jit(lambda x: x[0, 0, [0], 0])(X)


def test_float_index_is_an_error():
    with pytest.raises(IndexError, match="index arrays must be integers"):
        loom.jit(lambda x: x[np.array([0.5])])(X)
    with pytest.raises(IndexError, match="indices must be integers"):
        loom.jit(lambda x: x[x[0, 0, 0]])(X)


def test_at_values_that_do_not_broadcast():
    with pytest.raises(ValueError, match=r"cannot be broadcast to the indexed shape \(2, 4, 5\)"):
        loom.jit(lambda x: x.at[[0, 1]].set(np.ones(3, np.float32)))(X)


MODES = [
    ("get_fill", lambda x, i: x.at[i, 1].get(mode="fill")),
    ("get_fill_value", lambda x, i: x.at[:, i].get(mode="fill", fill_value=-7.0)),
    ("get_clip", lambda x, i: x.at[i].get(mode="clip")),
    ("set_clip", lambda x, i: x.at[i, 2].set(5.0, mode="clip")),
    ("add_drop", lambda x, i: x.at[i].add(1.0, mode="drop")),
    ("max_clip_window", lambda x, i: x.at[i, 1:3].max(0.5, mode="clip", indices_are_sorted=False)),
    ("multiply_unique", lambda x, i: x.at[np.array([0, 2])].multiply(2.0, unique_indices=True)),
]


@pytest.mark.parametrize("name,fn", MODES, ids=[c[0] for c in MODES])
def test_index_modes_match_jax(name, fn):
    i = np.array([2, -1, 5, -4], np.int32)
    out = np.asarray(loom.jit(fn)(X, i))
    expected = np.asarray(jax.jit(fn)(X, i))
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


def test_unknown_update_keyword_and_mode():
    with pytest.raises(TypeError, match="unexpected keyword"):
        loom.jit(lambda x: x.at[0].set(1.0, bogus=True))(X)
    with pytest.raises(ValueError, match="invalid index mode 'wrap'"):
        loom.jit(lambda x: x.at[np.array([0])].get(mode="wrap"))(X)
