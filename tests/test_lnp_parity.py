"""More of jax.numpy's names in loom.numpy (loom/numpy/_parity.py), against jax.numpy's values and
dtypes, eagerly on numpy arrays and under loom.jit; gradients against jax.grad."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax_parity import check_call

import loom
import loom.numpy as lnp
from loom.numpy import _parity

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(5)
F = RNG.normal(size=(3, 4)).astype(np.float32)
F3 = RNG.normal(size=(2, 3, 4)).astype(np.float32)
V5 = RNG.normal(size=(5,)).astype(np.float32)
I = RNG.integers(-3, 4, size=(3, 4)).astype(np.int32)
NANS = F.copy()
NANS[0, 1] = NANS[2, :] = np.nan
NANS3 = F3.copy()
NANS3[0, 1, 2] = NANS3[1, 0, :] = np.nan


def test_dtype_names_are_jax_s():
    for name in ["int_", "uint", "uint16", "uint64", "float_", "double", "single"]:
        assert np.dtype(getattr(lnp, name)) == np.dtype(getattr(jnp, name)), name
    assert np.dtype(_parity.bool) == np.dtype(jnp.bool)
    assert lnp.dtype is jnp.dtype
    for name in ["generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact", "floating",
                 "complexfloating"]:
        assert getattr(lnp, name) is getattr(jnp, name), name
    assert lnp.issubdtype(lnp.float32, lnp.floating) and lnp.issubdtype(lnp.uint16, lnp.unsignedinteger)


DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.float16, np.float32, np.float64,
          np.complex64, ml_dtypes.bfloat16]


def test_can_cast_and_isdtype_against_jax():
    for a in DTYPES:
        for b in DTYPES:
            for casting in ("safe", "same_kind", "unsafe", "no", "equiv"):
                assert lnp.can_cast(a, b, casting) == jnp.can_cast(a, b, casting), (a, b, casting)
    assert lnp.can_cast(F, np.float64) == jnp.can_cast(F, np.float64)
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating",
             "numeric", np.float32, ("integral", np.float16), ("bool", "complex floating")]
    for d in DTYPES:
        for k in kinds:
            assert lnp.isdtype(d, k) == jnp.isdtype(d, k), (d, k)
    with pytest.raises(ValueError, match="isdtype: unknown kind 'float'"):
        lnp.isdtype(np.float32, "float")


# name, args, keyword arguments
CASES = [
    ("nanmedian", (NANS,), {}), ("nanmedian", (NANS,), {"axis": 1}),
    ("nanmedian", (NANS,), {"axis": 0, "keepdims": True}),
    ("nanmedian", (NANS3,), {"axis": (0, 2)}), ("nanmedian", (NANS3,), {"axis": (1, 2), "keepdims": True}),
    ("nanmedian", (I,), {"axis": 1}),
    ("nanquantile", (NANS, np.array([0.1, 0.5, 1.0])), {"axis": 1}), ("nanquantile", (NANS, 0.3), {}),
    ("nanquantile", (NANS3, [0.0, 0.25, 0.9]), {"axis": -1, "keepdims": True}),
    ("nanpercentile", (NANS, 40.0), {"axis": 0}), ("nanpercentile", (NANS3, [10.0, 90.0]), {"axis": (0, 1)}),
]


def _static_q(name, args, kwargs):
    # q is static inside loom.jit (as a Python value), so it must not be traced by check_call
    if len(args) > 1 and isinstance(args[1], np.ndarray):
        args = (args[0], args[1].tolist()) + args[2:]
    return args


@pytest.mark.filterwarnings("ignore:All-NaN slice")
@pytest.mark.parametrize("name,args,kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax(name, args, kwargs):
    args = _static_q(name, args, kwargs)
    jax_fn = getattr(jnp, name)

    def want(*a, **k):
        a = list(a)
        if len(a) > 1 and isinstance(a[1], list):
            a[1] = np.asarray(a[1])  # JAX's quantiles take arrays, not lists
        return jax_fn(*a, **k)

    check_call(name, getattr(lnp, name), want, args, kwargs)


GRADS = [  # name, args (the first is differentiated), kwargs
    ("nanmedian", (NANS,), {"axis": 1}), ("nanquantile", (NANS, 0.3), {"axis": 0}),
    ("nanpercentile", (NANS3, 70.0), {"axis": (0, 2)}),
]


@pytest.mark.parametrize("name,args,kwargs", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_against_jax(name, args, kwargs):
    def loss(np_, x):
        out = getattr(np_, name)(x, *args[1:], **kwargs)
        return np_.sum(np_.where(np_.isnan(out), 0.0, out) ** 2)

    got = loom.jit(loom.grad(lambda x: loss(lnp, x)))(args[0])
    want = jax.grad(lambda x: loss(jnp, x))(args[0])
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-4, atol=1e-5, equal_nan=True)
