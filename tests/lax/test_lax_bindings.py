"""loom.lax's elementwise functions are made from the op table (loom.ops.elementwise): every row
that names a jax.lax function is bound, from the row or by hand with a reason; each binding made
from a row gives jax.lax's values and dtypes, eagerly and under jit, and accepts exactly the
dtypes jax.lax accepts."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import loom
from loom import lax
from loom.lax import ops as lax_ops
from loom.ops import elementwise

jax = pytest.importorskip("jax")
from support.op_info import OP_INFO  # noqa: E402

INFO = {info.op: info for info in OP_INFO}
GENERATED = [row for row in elementwise.OPS if row.lax in lax_ops.ELEMENTWISE_BINDINGS]
# 32-bit and narrower: loom's and jax's default (64-bit inputs become 32-bit ones)
NARROW = {np.dtype(d) for d in (np.float32, np.float16, ml_dtypes.bfloat16, np.int8, np.int16, np.int32,
                                np.uint8, np.uint16, np.uint32)}


def test_every_row_with_a_jax_name_is_bound_once():
    for row in elementwise.OPS:
        if row.lax is None:
            continue
        if row.lax in lax_ops.NOT_BOUND:
            assert not hasattr(lax, row.lax), f"{row.name}: lax.{row.lax} is listed as not bound"
            continue
        assert callable(getattr(lax, row.lax, None)), f"{row.name}: loom.lax has no {row.lax}"
        made = row.lax in lax_ops.ELEMENTWISE_BINDINGS
        assert made != (row.lax in lax_ops.BOUND_BY_HAND), f"{row.name}: lax.{row.lax} bound twice or not at all"
        if made:
            assert getattr(lax, row.lax) is lax_ops.ELEMENTWISE_BINDINGS[row.lax]
    assert set(lax_ops.ELEMENTWISE_BINDINGS) <= set(lax_ops.__all__)


def _tolerance(dtype: np.dtype) -> dict:
    if dtype in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)):
        return {"rtol": 1e-2, "atol": 1e-2}
    return {"rtol": 2e-5, "atol": 1e-6} if dtype.kind == "f" else {"rtol": 0, "atol": 0}


@pytest.mark.parametrize("row", GENERATED, ids=lambda r: r.lax)
def test_binding_matches_jax_lax(row):
    info = INFO[row.name]
    fn, ref = getattr(lax, row.lax), getattr(jax.lax, row.lax)
    dtypes = tuple(d for d in info.dtypes if np.dtype(d) in NARROW)
    assert dtypes, f"{row.name}: no 32-bit sample dtype"
    samples = info.random_samples(dtypes=dtypes)
    # JAX's values on every sample from one jitted program (one compilation, not one a dtype)
    wants = jax.jit(lambda *samples: [ref(*args) for args in samples])(*samples)
    for args, want in zip(samples, wants):
        want = np.asarray(want)
        for got in (fn(*args), loom.jit(fn)(*args)):
            got = np.asarray(got)
            assert got.dtype == want.dtype and got.shape == want.shape, (row.lax, args[0].dtype)
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), equal_nan=True,
                                       err_msg=f"lax.{row.lax} on {args[0].dtype}", **_tolerance(want.dtype))


# Where loom.lax accepts fewer dtypes than jax.lax, and why.
NARROWER = {("sign", "uint8"): "StableHLO's sign takes signed integers; jax.lax lowers an unsigned sign to a compare"}


@pytest.mark.parametrize("row", GENERATED, ids=lambda r: r.lax)
def test_binding_accepts_the_dtypes_jax_lax_accepts(row):
    fn, ref = getattr(lax, row.lax), getattr(jax.lax, row.lax)
    arity = len(row.op.definition.operands)
    for dtype in (np.bool_, np.int32, np.uint8, np.float32):
        args = [np.ones((2,), dtype)] * arity
        try:
            ref(*args)
        except TypeError:
            with pytest.raises(TypeError, match=f"lax.{row.lax} does not accept dtype"):
                fn(*args)
            continue
        if (row.lax, np.dtype(dtype).name) in NARROWER:
            with pytest.raises(TypeError, match=f"lax.{row.lax} does not accept dtype"):
                fn(*args)
        else:
            np.asarray(fn(*args))
