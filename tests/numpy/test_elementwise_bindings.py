"""loom.numpy's elementwise functions made from the op table (loom.ops.elementwise): every row
that names a numpy function is bound once, from the row or by hand with a reason; each one made
from a row gives jax.numpy's values and dtypes on the row's sample inputs and on integer inputs,
eagerly and under jit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import loom
import loom.numpy as lnp
from loom.numpy import _ufuncs
from loom.ops import elementwise

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from support.op_info import OP_INFO  # noqa: E402
from support.oracles import assert_matches  # noqa: E402

INFO = {info.op: info for info in OP_INFO}
MADE = [row for row in elementwise.OPS if row.lnp in _ufuncs.ELEMENTWISE_FUNCTIONS]
NARROW = {np.dtype(d) for d in (np.float32, np.float16, ml_dtypes.bfloat16, np.int8, np.int16, np.int32,
                                np.uint8, np.uint16, np.uint32)}


def test_every_row_with_a_numpy_name_is_bound_once():
    for row in elementwise.OPS:
        if row.lnp is None:
            continue
        assert callable(getattr(lnp, row.lnp, None)), f"{row.name}: loom.numpy has no {row.lnp}"
        made = row.lnp in _ufuncs.ELEMENTWISE_FUNCTIONS
        assert made != (row.lnp in _ufuncs.WRITTEN_BY_HAND), f"{row.name}: lnp.{row.lnp} bound twice or not at all"
    assert MADE, "no loom.numpy function is made from the table"


@pytest.mark.parametrize("row", MADE, ids=lambda r: r.lnp)
def test_function_matches_jax_numpy(row):
    info = INFO[row.name]
    fn, ref = getattr(lnp, row.lnp), getattr(jnp, row.lnp)
    samples = info.random_samples(dtypes=tuple(d for d in info.dtypes if np.dtype(d) in NARROW))
    samples += [tuple(np.arange(1, 5, dtype=np.int32) for _ in range(info.arity))]  # ints: promoted as jax.numpy
    for args in samples:
        want = np.asarray(ref(*args))
        assert_matches(fn(*args), want, info.tol, f"lnp.{row.lnp} on {args[0].dtype}, eagerly")
        assert_matches(loom.jit(fn)(*args), want, info.tol, f"lnp.{row.lnp} on {args[0].dtype}, under jit")
