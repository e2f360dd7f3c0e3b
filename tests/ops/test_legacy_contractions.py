"""The legacy contractions stablehlo.dot, stablehlo.einsum and stablehlo.unary_einsum in every
executor, against XLA (dot, einsum: ranks 1 and 2, precision_config, integer wrap-around, float16,
empty operands) and numpy (unary_einsum, which XLA no longer translates)."""

from __future__ import annotations

import numpy as np
import pytest
from support.executors import assert_all_close, module
from support.oracles import run_xla

pytestmark = pytest.mark.usefixtures("jax_x64")


def _type(shape, dtype):
    return f"tensor<{''.join(f'{n}x' for n in shape)}{dtype}>"


@pytest.mark.parametrize("lhs_shape,rhs_shape", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                                 ((0, 3), (3, 4)), ((2, 0), (0, 4))])
@pytest.mark.parametrize("dtype,mlir,tol", [(np.float32, "f32", 1e-5), (np.float16, "f16", 1e-2),
                                            (np.int32, "i32", 0)])
def test_dot_against_xla(lhs_shape, rhs_shape, dtype, mlir, tol):
    rng = np.random.default_rng(0)
    if dtype == np.int32:  # products that overflow: the result wraps
        lhs = rng.integers(2**20, 2**30, lhs_shape).astype(dtype)
        rhs = rng.integers(2**20, 2**30, rhs_shape).astype(dtype)
    else:
        lhs, rhs = rng.normal(size=lhs_shape).astype(dtype), rng.normal(size=rhs_shape).astype(dtype)
    out = lhs_shape[:-1] + rhs_shape[1:]
    tl, tr, to = _type(lhs_shape, mlir), _type(rhs_shape, mlir), _type(out, mlir)
    text = module(f"""func.func @main(%a: {tl}, %b: {tr}) -> {to} {{
  %0 = stablehlo.dot %a, %b, precision = [HIGHEST, HIGHEST] : ({tl}, {tr}) -> {to}
  return %0 : {to}
}}""")
    (want,) = run_xla(text, [lhs, rhs])
    assert_all_close(text, [lhs, rhs], want, rtol=tol, atol=tol)


def test_dot_to_a_wider_result():
    """i8 x i8 -> i32: the products are taken in the result type (no i8 wrap-around)."""
    lhs = np.full((2, 3), 100, np.int8)
    rhs = np.full((3, 2), 100, np.int8)
    text = module("""func.func @main(%a: tensor<2x3xi8>, %b: tensor<3x2xi8>) -> tensor<2x2xi32> {
  %0 = stablehlo.dot %a, %b : (tensor<2x3xi8>, tensor<3x2xi8>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}""")
    (want,) = run_xla(text, [lhs, rhs])
    assert (want == 30000).all()
    assert_all_close(text, [lhs, rhs], want, rtol=0, atol=0)


@pytest.mark.parametrize("config,lhs_shape,rhs_shape,out", [
    ("ab,bc->ac", (2, 3), (3, 4), (2, 4)),
    ("abc,acd->abd", (2, 3, 4), (2, 4, 5), (2, 3, 5)),
    ("ab,cb->ca", (2, 3), (4, 3), (4, 2)),
    ("a,b->ab", (3,), (4,), (3, 4)),
    ("ab,ab->", (3, 4), (3, 4), ()),
])
def test_einsum_against_xla(config, lhs_shape, rhs_shape, out):
    rng = np.random.default_rng(1)
    lhs, rhs = rng.normal(size=lhs_shape).astype(np.float32), rng.normal(size=rhs_shape).astype(np.float32)
    tl, tr, to = _type(lhs_shape, "f32"), _type(rhs_shape, "f32"), _type(out, "f32")
    text = module(f"""func.func @main(%a: {tl}, %b: {tr}) -> {to} {{
  %0 = stablehlo.einsum %a, %b, config = "{config}" : ({tl}, {tr}) -> {to}
  return %0 : {to}
}}""")
    (want,) = run_xla(text, [lhs, rhs])
    assert_all_close(text, [lhs, rhs], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("config,shape,out", [("ab->a", (2, 3), (2,)), ("ab->ba", (2, 3), (3, 2)),
                                              ("aa->a", (3, 3), (3,)), ("abc->", (2, 3, 4), ())])
@pytest.mark.parametrize("dtype,mlir", [(np.float32, "f32"), (np.int32, "i32")])
def test_unary_einsum_against_numpy(config, shape, out, dtype, mlir):
    x = np.arange(np.prod(shape), dtype=dtype).reshape(shape) - 3
    t, to = _type(shape, mlir), _type(out, mlir)
    text = module(f"""func.func @main(%a: {t}) -> {to} {{
  %0 = stablehlo.unary_einsum %a, config = "{config}" : ({t}) -> {to}
  return %0 : {to}
}}""")
    assert_all_close(text, [x], np.einsum(config, x).astype(dtype), rtol=1e-6, atol=0)
