"""loom.random against jax.random (the default threefry2x32 generator, raw uint32 keys), bit for
bit: keys, split, fold_in, bits, uniform, randint, permutation, bernoulli, choice, categorical, and
in float32 normal, truncated_normal and gumbel (loom emits the log, log1p, erf and erfinv that XLA's
CPU code computes, FMAs included). float64 normals and float16 gumbels agree to rounding. Also
under loom.jit, loom.vmap and loom.grad, and the argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.numpy as lnp
import loom.random as lr

jax = pytest.importorskip("jax")
jnp = jax.numpy
jr = jax.random

SEEDS = [0, 1, 42, 12345, 2**31 + 5, 2**32 + 7, -1]
SHAPES = [(), (5,), (3, 4), (2, 3, 5)]


def ulps(a, b) -> int:
    """The largest distance in units in the last place between two float arrays."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    if a.size == 0:
        return 0
    as_int = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]

    def ordered(x):
        i = x.view(as_int).astype(np.int64)
        return np.where(i < 0, np.iinfo(as_int).min - i, i)  # sign-magnitude to a monotone integer line
    return int(np.max(np.abs(ordered(a) - ordered(b))))


def same(a, b) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_array_equal(a, b)


# --- keys -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_key_split_fold_in(seed):
    k, jk = lr.PRNGKey(seed), jr.PRNGKey(seed)
    same(k, jk)
    same(lr.key(np.int64(seed)), jk)
    same(lr.split(k), jr.split(jk))
    same(lr.split(k, 5), jr.split(jk, 5))
    same(lr.split(k, (2, 3)), jr.split(jk, (2, 3)))
    for data in (0, 7, 2**31 + 3):
        same(lr.fold_in(k, data), jr.fold_in(jk, data))


def test_key_chains_and_dtypes():
    k, jk = lr.key(3), jr.PRNGKey(3)
    for i in range(4):
        k, sub = lr.split(k)
        jk, jsub = jr.split(jk)
        same(sub, jsub)
        k, jk = lr.fold_in(k, i), jr.fold_in(jk, i)
    same(k, jk)
    same(lr.fold_in(k, np.int32(-4)), jr.fold_in(jk, np.int32(-4)))
    same(lr.fold_in(k, np.uint8(200)), jr.fold_in(jk, np.uint8(200)))


# --- bits and uniform -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES)
def test_bits_uniform_exact(shape):
    for seed in SEEDS[:4]:
        k, jk = lr.PRNGKey(seed), jr.PRNGKey(seed)
        same(lr.bits(k, shape), jr.bits(jk, shape))
        same(lr.uniform(k, shape), jr.uniform(jk, shape))
        # the range is applied with the multiply-add XLA fuses in float32 (and not in float16)
        same(lr.uniform(k, shape, np.float32, -3.7, 2.1), jr.uniform(jk, shape, jnp.float32, -3.7, 2.1))
        if len(shape) == 3:
            for dtype in (np.uint8, np.uint16):
                same(lr.bits(k, shape, dtype), jr.bits(jk, shape, dtype))
            same(lr.uniform(k, shape, np.float16), jr.uniform(jk, shape, jnp.float16))
            same(lr.uniform(k, shape, np.float16, -3.7, 2.1), jr.uniform(jk, shape, jnp.float16, -3.7, 2.1))


def test_many_keys_through_vmap():
    """Many seeds in one compiled function: the samplers batched over keys."""
    seeds = np.arange(-50, 200, 7, dtype=np.int32)
    keys, jkeys = loom.vmap(lr.key)(seeds), jax.vmap(jr.PRNGKey)(seeds)
    same(keys, jkeys)
    same(loom.vmap(lambda kk: lr.uniform(kk, (6,)))(keys), jax.vmap(lambda kk: jr.uniform(kk, (6,)))(jkeys))
    same(loom.vmap(lambda kk: lr.normal(kk, (6,)))(keys), jax.vmap(lambda kk: jr.normal(kk, (6,)))(jkeys))


def test_uniform_array_bounds_and_large():
    k, jk = lr.PRNGKey(11), jr.PRNGKey(11)
    lo = np.linspace(-2, 1, 4).astype(np.float32)
    same(lr.uniform(k, (3, 4), minval=lo, maxval=lo + 0.3), jr.uniform(jk, (3, 4), minval=lo, maxval=lo + 0.3))
    u = lr.uniform(k, (1000, 37))
    same(u, jr.uniform(jk, (1000, 37)))
    assert 0.0 <= u.min() and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.01


@pytest.mark.usefixtures("loom_x64")  # float64 values
def test_float64_and_64_bit_ints():
    k, jk = lr.PRNGKey(5), jr.PRNGKey(5)
    with jax.enable_x64(True):
        same(lr.bits(k, (3, 7), np.uint64), jr.bits(jk, (3, 7), jnp.uint64))
        same(lr.uniform(k, (100,), np.float64), jr.uniform(jk, (100,), jnp.float64))
        same(lr.randint(k, (50,), -10, 2**40, np.int64), jr.randint(jk, (50,), -10, 2**40, jnp.int64))
        n, jn = lr.normal(k, (2000,), np.float64), np.asarray(jr.normal(jk, (2000,), jnp.float64))
        assert n.dtype == np.float64
        np.testing.assert_allclose(n, jn, rtol=1e-13, atol=0)


# --- normal ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_normal_exact(seed):
    k, jk = lr.PRNGKey(seed), jr.PRNGKey(seed)
    for shape in SHAPES:
        same(lr.normal(k, shape), jr.normal(jk, shape))
    same(lr.normal(k, (40,), np.float16), jr.normal(jk, (40,), jnp.float16))


def test_normal_example_and_statistics():
    same(lr.normal(lr.PRNGKey(0), (3, 4)), jr.normal(jr.PRNGKey(0), (3, 4)))
    big = lr.normal(lr.PRNGKey(1), (50000,))
    same(big, jr.normal(jr.PRNGKey(1), (50000,)))  # every element, tails included
    assert abs(big.mean()) < 0.02 and abs(big.std() - 1) < 0.02


def test_gumbel_and_truncated_normal():
    k, jk = lr.PRNGKey(2), jr.PRNGKey(2)
    same(lr.gumbel(k, (5000,)), jr.gumbel(jk, (5000,)))
    # in float16 XLA's fused -log(-log(u)) rounds differently at times
    g16, jg16 = lr.gumbel(k, (500,), np.float16), np.asarray(jr.gumbel(jk, (500,), jnp.float16))
    assert ulps(g16, jg16) <= 2 and np.mean(g16 == jg16) > 0.9
    for lower, upper in ((-1.5, 2.0), (0.0, 1.0), (-10.0, 10.0)):
        t = lr.truncated_normal(k, lower, upper, (500,))
        same(t, jr.truncated_normal(jk, lower, upper, (500,)))
        assert t.min() > lower and t.max() < upper
    lower = np.array([-1.0, 0.0, 0.5], np.float32)
    same(lr.truncated_normal(k, lower, 2.0, (4, 3)), jr.truncated_normal(jk, lower, 2.0, (4, 3)))


# --- integers, permutations, choices --------------------------------------------------------------

@pytest.mark.parametrize("lo,hi,dtype", [
    (0, 10, np.int32), (-5, 1000, np.int32), (0, 2**31 - 1, np.int32), (5, 5, np.int32), (7, 3, np.int32),
    (-2**31, 2**31 - 1, np.int32), (0, 256, np.uint8), (-3, 3, np.int8), (0, 7, np.uint32),
])
def test_randint(lo, hi, dtype):
    for seed in (0, 9):
        k, jk = lr.PRNGKey(seed), jr.PRNGKey(seed)
        out = lr.randint(k, (6, 5), lo, hi, dtype)
        same(out, jr.randint(jk, (6, 5), lo, hi, dtype))
        if hi > lo:
            assert lo <= int(out.min()) and int(out.max()) < hi
        else:
            assert (out == lo).all()  # an empty range gives minval, as JAX


def test_randint_array_bounds():
    k, jk = lr.PRNGKey(4), jr.PRNGKey(4)
    hi = np.array([2, 10, 1000], np.int32)
    same(lr.randint(k, (4, 3), 0, hi), jr.randint(jk, (4, 3), 0, hi))


def test_permutation():
    k, jk = lr.PRNGKey(8), jr.PRNGKey(8)
    same(lr.permutation(k, 10), jr.permutation(jk, 10))
    long = lr.permutation(k, 3000)  # two rounds of sorting
    same(long, jr.permutation(jk, 3000))
    assert sorted(long.tolist()) == list(range(3000))
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    for axis, independent in ((0, False), (-1, False), (1, True)):
        same(lr.permutation(k, x, axis, independent), jr.permutation(jk, x, axis, independent))


def test_bernoulli():
    k, jk = lr.PRNGKey(6), jr.PRNGKey(6)
    same(lr.bernoulli(k, 0.3, (50,)), jr.bernoulli(jk, 0.3, (50,)))
    same(lr.bernoulli(k, 0.3, (50,), mode="high"), jr.bernoulli(jk, 0.3, (50,), mode="high"))
    p = np.array([0.1, 0.5, 0.9], np.float32)
    same(lr.bernoulli(k, p), jr.bernoulli(jk, p))
    same(lr.bernoulli(k, p, (4, 3)), jr.bernoulli(jk, p, (4, 3)))
    same(lr.bernoulli(k), jr.bernoulli(jk))


def test_choice():
    k, jk = lr.PRNGKey(12), jr.PRNGKey(12)
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    same(lr.choice(k, 10, (4,)), jr.choice(jk, 10, (4,)))
    same(lr.choice(k, x, (2, 3), axis=1), jr.choice(jk, x, (2, 3), axis=1))
    same(lr.choice(k, x, (3,)), jr.choice(jk, x, (3,)))
    same(lr.choice(k, 10, (4,), replace=False), jr.choice(jk, 10, (4,), replace=False))
    same(lr.choice(k, x, (2,), replace=False, axis=1), jr.choice(jk, x, (2,), replace=False, axis=1))
    p = np.array([0.125, 0.25, 0.5, 0.125], np.float32)  # dyadic: the cumulative sums are exact
    same(lr.choice(k, 4, (20,), p=p), jr.choice(jk, 4, (20,), p=p))
    same(lr.choice(k, 4, (3,), replace=False, p=p), jr.choice(jk, 4, (3,), replace=False, p=p))


def test_categorical():
    k, jk = lr.PRNGKey(13), jr.PRNGKey(13)
    logits = np.asarray(jr.normal(jr.PRNGKey(1), (5, 7)))
    same(lr.categorical(k, logits), jr.categorical(jk, logits))
    same(lr.categorical(k, logits, axis=0), jr.categorical(jk, logits, axis=0))
    same(lr.categorical(k, logits, shape=(3, 5)), jr.categorical(jk, logits, shape=(3, 5)))
    many = lr.categorical(k, np.log(np.array([0.2, 0.8], np.float32)), shape=(4000,))
    assert abs(many.mean() - 0.8) < 0.03


# --- transformations ------------------------------------------------------------------------------

def test_under_jit_traced_and_constant_keys():
    k, jk = lr.PRNGKey(3), jr.PRNGKey(3)
    # (results returned as they are: XLA would contract normal's last multiply with an add after it)
    f = loom.jit(lambda key: (lr.normal(key, (3, 4)),
                              lr.uniform(key, (3,)) + lr.randint(lr.fold_in(key, 2), (3,), 0, 9)))
    jf = jax.jit(lambda key: (jr.normal(key, (3, 4)),
                              jr.uniform(key, (3,)) + jr.randint(jr.fold_in(key, 2), (3,), 0, 9)))
    for mine, theirs in zip(f(k), jf(jk)):
        same(mine, theirs)
    g = loom.jit(lambda x: x + lr.uniform(k, x.shape))  # a key captured as a constant
    same(g(np.zeros(5, np.float32)), jr.uniform(jk, (5,)))
    seeded = loom.jit(lambda s: lr.split(lr.key(s), 3))
    same(seeded(np.int32(9)), jr.split(jr.PRNGKey(9), 3))


def test_under_vmap():
    k, jk = lr.PRNGKey(3), jr.PRNGKey(3)
    keys, jkeys = lr.split(k, 4), jr.split(jk, 4)
    same(loom.vmap(lambda kk: lr.uniform(kk, (3,)))(keys), jax.vmap(lambda kk: jr.uniform(kk, (3,)))(jkeys))
    same(loom.vmap(lr.split)(keys), jax.vmap(jr.split)(jkeys))
    t = loom.vmap(lambda kk: lr.truncated_normal(kk, -1.0, 1.0, (3,)))(keys)
    same(t, jax.vmap(lambda kk: jr.truncated_normal(kk, -1.0, 1.0, (3,)))(jkeys))
    seeds = np.arange(5, dtype=np.int32)
    same(loom.vmap(lr.key)(seeds), jax.vmap(jr.PRNGKey)(seeds))


def test_dropout_under_grad():
    k, jk = lr.PRNGKey(5), jr.PRNGKey(5)
    w = np.linspace(-1, 1, 8).astype(np.float32)

    def loss(w, key):
        return lnp.sum(lnp.where(lr.bernoulli(key, 0.5, w.shape), w * w, 0.0))

    def jloss(w, key):
        return jnp.sum(jnp.where(jr.bernoulli(key, 0.5, w.shape), w * w, 0.0))
    same(loom.grad(loss)(w, k), jax.grad(jloss)(w, jk))
    same(loom.jit(loom.grad(loss))(w, k), jax.grad(jloss)(w, jk))


# --- errors ---------------------------------------------------------------------------------------

def test_errors_name_the_argument():
    k = lr.PRNGKey(0)
    with pytest.raises(TypeError, match="'key' must be a uint32 array of shape \\(2,\\).*shape \\(3,\\)"):
        lr.normal(np.zeros(3, np.uint32), (2,))
    with pytest.raises(TypeError, match="'key'.*dtype int32"):
        lr.uniform(np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="single key.*loom.vmap"):
        lr.uniform(lr.split(k, 3))
    with pytest.raises(TypeError, match="'shape'"):
        lr.normal(k, (2.5, 3))
    with pytest.raises(ValueError, match="'shape'.*non-negative"):
        lr.uniform(k, (-1,))
    with pytest.raises(ValueError, match="'dtype' must be a float dtype"):
        lr.uniform(k, (2,), np.int32)
    with pytest.raises(TypeError, match="'seed' must be an integer scalar"):
        lr.key(1.5)
    with pytest.raises(TypeError, match="'data' must be an integer scalar"):
        lr.fold_in(k, np.arange(3))
    with pytest.raises(ValueError, match="'minval' of shape \\(5,\\) does not broadcast"):
        lr.uniform(k, (3, 4), minval=np.zeros(5, np.float32))
    with pytest.raises(TypeError, match="'dtype' must be an integer dtype"):
        lr.randint(k, (2,), 0, 3, np.float32)
    with pytest.raises(ValueError, match="larger sample"):
        lr.choice(k, 3, (5,), replace=False)
    with pytest.raises(TypeError, match="'p' must have a floating dtype"):
        lr.bernoulli(k, np.int32(1))


def test_log_and_log1p_as_xla_computes_them():
    """The float32 log and log1p that normal, gumbel and truncated_normal rest on, against jnp's
    over many magnitudes, with their special values."""
    rng = np.random.default_rng(0)
    special = [0.0, np.inf, -1.0, np.nan, 1.0, 1e-40]
    x = np.concatenate([np.exp(rng.uniform(-80, 80, 20000)), special]).astype(np.float32)
    log = loom.jit(lambda v: lr._log(lr._tracer(v)))
    same(log(x), jax.jit(jnp.log)(x))
    y = np.concatenate([rng.uniform(-1, 1, 20000), rng.uniform(-1e-3, 1e-3, 2000), [-1.0, 0.0, 3.0]]).astype(np.float32)
    log1p = loom.jit(lambda v: lr._log1p_f32(lr._tracer(v)))
    same(log1p(y), jax.jit(jnp.log1p)(y))


def test_bfloat16_samplers_bit_exact():
    """bfloat16 draws 8 random bits per element (its 7 mantissa bits), widened to 16, as JAX."""
    import ml_dtypes
    bf16 = ml_dtypes.bfloat16
    for seed in SEEDS[:4]:
        k, jk = lr.PRNGKey(seed), jr.PRNGKey(seed)
        for shape in ((7,), (3, 5), (2000,)):
            u = lr.uniform(k, shape, bf16)
            assert u.dtype == bf16
            same(u, jr.uniform(jk, shape, jnp.bfloat16))
            same(lr.uniform(k, shape, bf16, -2.5, 3.0), jr.uniform(jk, shape, jnp.bfloat16, -2.5, 3.0))
            same(lr.normal(k, shape, bf16), jr.normal(jk, shape, jnp.bfloat16))
        g, jg = lr.gumbel(k, (500,), bf16), np.asarray(jr.gumbel(jk, (500,), jnp.bfloat16))
        assert g.dtype == bf16 and ulps(g, jg) <= 2
        same(lr.truncated_normal(k, -1.5, 2.0, (300,), bf16), jr.truncated_normal(jk, -1.5, 2.0, (300,), jnp.bfloat16))
