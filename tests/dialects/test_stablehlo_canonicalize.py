"""StableHLO canonicalization patterns: a reduce over unit dimensions is a reshape, and the
transpose of a matrix product is the product with its operands swapped. Each rewrite is checked
by the ops it leaves and by the values of the program before and after, against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.ir as lir
from loom.rewrite.pass_manager import PassManager


def _canonicalized(text: str):
    module = lir.parse(text)
    PassManager.parse("builtin.module(canonicalize)").run(module)
    module.verify()
    return module


def _op_names(module) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("stablehlo.")]


def _reduce(body: str, init: str, et: str, shape: str, dims: str, out: str) -> str:
    return f"""func.func @main(%x: tensor<{shape}x{et}>) -> tensor<{out}{et}> {{
  %init = "stablehlo.constant"() <{{value = dense<{init}> : tensor<{et}>}}> : () -> tensor<{et}>
  %r = "stablehlo.reduce"(%x, %init) <{{dimensions = array<i64: {dims}>}}> ({{
  ^bb0(%a: tensor<{et}>, %b: tensor<{et}>):
    %c = "{body}"(%a, %b) : (tensor<{et}>, tensor<{et}>) -> tensor<{et}>
    "stablehlo.return"(%c) : (tensor<{et}>) -> ()
  }}) : (tensor<{shape}x{et}>, tensor<{et}>) -> tensor<{out}{et}>
  return %r : tensor<{out}{et}>
}}"""


REDUCES = [  # body, identity, element type, numpy reduction
    ("stablehlo.add", "0.0", "f32", np.sum),
    ("stablehlo.multiply", "1.0", "f32", np.prod),
    ("stablehlo.maximum", "0xFF800000", "f32", np.max),
    ("stablehlo.minimum", "0x7F800000", "f32", np.min),
    ("stablehlo.add", "0", "i32", np.sum),
    ("stablehlo.maximum", "-2147483648", "i32", np.max),
    ("stablehlo.minimum", "2147483647", "i32", np.min),
    ("stablehlo.and", "true", "i1", np.all),
    ("stablehlo.or", "false", "i1", np.any),
    ("stablehlo.and", "-1", "i32", np.bitwise_and.reduce),
]


def _values(et: str, shape: tuple[int, ...], rng) -> np.ndarray:
    if et == "i1":
        return rng.random(shape) < 0.5
    if et == "i32":
        return rng.integers(-50, 50, shape).astype(np.int32)
    x = rng.standard_normal(shape).astype(np.float32)
    x.flat[0] = np.nan  # NaN passes through max/min/add as the reduce would pass it
    return x


@pytest.mark.parametrize("body,init,et,reduction", REDUCES, ids=[f"{r[0][10:]}-{r[2]}" for r in REDUCES])
def test_reduce_over_unit_dims_is_a_reshape(body, init, et, reduction):
    text = _reduce(body, init, et, "3x1x4x1", "1, 3", "3x4x")
    module = _canonicalized(text)
    assert "stablehlo.reduce" not in _op_names(module) and "stablehlo.reshape" in _op_names(module)
    x = _values(et, (3, 1, 4, 1), np.random.default_rng(0))
    got = loom.compile(module)(x)
    want = reduction(x, axis=(1, 3)) if reduction is not np.bitwise_and.reduce else x.reshape(3, 4)
    np.testing.assert_array_equal(got, want.astype(got.dtype))
    np.testing.assert_array_equal(got, loom.compile(text)(x))


@pytest.mark.parametrize("case", ["not identity", "not unit", "two bodies"])
def test_reduce_kept_where_it_is_not_a_reshape(case):
    if case == "not identity":  # 1 + x is not x
        text = _reduce("stablehlo.add", "1.0", "f32", "3x1", "1", "3x")
    elif case == "not unit":
        text = _reduce("stablehlo.add", "0.0", "f32", "3x2", "1", "3x")
    else:  # max(acc, x) + 0: not a one-op body
        text = _reduce("stablehlo.add", "0.0", "f32", "3x1", "1", "3x").replace(
            '"stablehlo.return"(%c)', '%d = "stablehlo.maximum"(%c, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
            '    "stablehlo.return"(%d)')
    module = _canonicalized(text)
    assert "stablehlo.reduce" in _op_names(module)
    x = np.random.default_rng(1).standard_normal((3, 1 if case != "not unit" else 2)).astype(np.float32)
    np.testing.assert_allclose(loom.compile(module)(x), loom.compile(text)(x))
    want = {"not identity": 1 + x[:, 0], "not unit": x.sum(1), "two bodies": np.maximum(x[:, 0], 0)}[case]
    np.testing.assert_allclose(loom.compile(module)(x), want, rtol=1e-6)


def _matmul_transposed(lc: int, rc: int, extra_use: bool = False, precision: bool = False) -> str:
    a = "4x3" if lc == 1 else "3x4"
    b = "3x5" if rc == 0 else "5x3"
    prec = ', precision_config = [#stablehlo<precision HIGH>, #stablehlo<precision DEFAULT>]' if precision else ""
    ret = "%t, %d : tensor<5x4xf32>, tensor<4x5xf32>" if extra_use else "%t : tensor<5x4xf32>"
    rtype = "tensor<5x4xf32>, tensor<4x5xf32>" if extra_use else "tensor<5x4xf32>"
    return f"""func.func @main(%a: tensor<{a}xf32>, %b: tensor<{b}xf32>) -> ({rtype}) {{
  %d = "stablehlo.dot_general"(%a, %b) <{{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [{lc}],
    rhs_contracting_dimensions = [{rc}]>{prec}}}> : (tensor<{a}xf32>, tensor<{b}xf32>) -> tensor<4x5xf32>
  %t = "stablehlo.transpose"(%d) <{{permutation = array<i64: 1, 0>}}> : (tensor<4x5xf32>) -> tensor<5x4xf32>
  return {ret}
}}"""


@pytest.mark.parametrize("lc,rc", [(1, 0), (0, 0), (1, 1), (0, 1)])
def test_transpose_of_a_matrix_product_swaps_its_operands(lc, rc):
    text = _matmul_transposed(lc, rc, precision=True)
    module = _canonicalized(text)
    names = _op_names(module)
    assert "stablehlo.transpose" not in names and names.count("stablehlo.dot_general") == 1
    (dot,) = [op for op in module.walk() if op.name == "stablehlo.dot_general"]
    assert [str(p) for p in dot.properties["precision_config"]] == ["#stablehlo<precision DEFAULT>",
                                                                    "#stablehlo<precision HIGH>"]
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 3) if lc == 1 else (3, 4)).astype(np.float32)
    b = rng.standard_normal((3, 5) if rc == 0 else (5, 3)).astype(np.float32)
    want = ((a if lc == 1 else a.T).astype(np.float64) @ (b if rc == 0 else b.T)).T
    np.testing.assert_allclose(loom.compile(module)(a, b), want, rtol=1e-5, atol=1e-6)


def test_transpose_kept_when_the_product_is_used_elsewhere():
    module = _canonicalized(_matmul_transposed(1, 0, extra_use=True))
    assert "stablehlo.transpose" in _op_names(module)


def _pads_summed(et: str, pieces: list[int], dim: int, order: list[int]) -> str:
    """A function of one argument per piece (4 x n or n x 4, split along `dim`), each zero-padded
    to its place in the whole and the pads summed in `order`."""
    total = sum(pieces)
    shape = lambda n: (4, n) if dim == 1 else (n, 4)  # noqa: E731
    t = lambda n: f"tensor<{'x'.join(map(str, shape(n)))}x{et}>"  # noqa: E731
    zero = {"f32": "0.0", "i32": "0", "i1": "false"}[et]
    lines = [f'  %z = "stablehlo.constant"() <{{value = dense<{zero}> : tensor<{et}>}}> : () -> tensor<{et}>']
    start = 0
    for k, n in enumerate(pieces):
        low, high = [0, 0], [0, 0]
        low[dim], high[dim] = start, total - start - n
        lines.append(f'  %p{k} = "stablehlo.pad"(%a{k}, %z) <{{edge_padding_high = array<i64: {high[0]}, {high[1]}>, '
                     f'edge_padding_low = array<i64: {low[0]}, {low[1]}>, interior_padding = array<i64: 0, 0>}}> : '
                     f'({t(n)}, tensor<{et}>) -> {t(total)}')
        start += n
    acc = f"%p{order[0]}"
    for i, k in enumerate(order[1:]):
        lines.append(f'  %s{i} = "stablehlo.add"({acc}, %p{k}) : ({t(total)}, {t(total)}) -> {t(total)}')
        acc = f"%s{i}"
    args = ", ".join(f"%a{k}: {t(n)}" for k, n in enumerate(pieces))
    return f"func.func @main({args}) -> {t(total)} {{\n" + "\n".join(lines) + f"\n  return {acc} : {t(total)}\n}}"


@pytest.mark.parametrize("et", ["f32", "i32", "i1"])
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("order", [[3, 2, 1, 0], [0, 1, 2, 3], [1, 2, 0, 3]])
def test_zero_pads_of_adjacent_pieces_summed_are_their_concatenation(et, dim, order):
    """The gradient of a split sums a zero pad per piece: adjacent ones become a concatenation,
    with the values of the program as written (numpy: each piece in its place)."""
    pieces = [2, 3, 1, 2]
    text = _pads_summed(et, pieces, dim, order)
    module = _canonicalized(text)
    assert _op_names(module) == ["stablehlo.concatenate"]
    rng = np.random.default_rng(dim)
    dtype = {"f32": np.float32, "i32": np.int32, "i1": np.bool_}[et]
    args = [(rng.standard_normal((4, n) if dim == 1 else (n, 4)) * 5).astype(dtype) for n in pieces]
    want = np.concatenate(args, axis=dim)
    np.testing.assert_array_equal(loom.compile(module)(*args), want)
    np.testing.assert_array_equal(loom.compile(lir.parse(text))(*args), want)


def test_pads_summed_with_a_gap_stay():
    """Pieces 0 and 2 summed first leave a gap (piece 1's zeros): nothing to concatenate there."""
    module = _canonicalized(_pads_summed("f32", [2, 3, 1], 1, [0, 2, 1]))
    assert _op_names(module).count("stablehlo.pad") == 3


def test_gradient_of_a_split_is_one_concatenation():
    """loom.grad of a function of the four quarters of its argument (an LSTM's gates): JAX's
    gradient, computed with one concatenation of the quarters' cotangents and no pads."""
    jax = pytest.importorskip("jax")
    import loom.numpy as lnp

    def f(np_, x):
        i, f_, g, o = np_.split(x, 4, axis=-1)
        return np_.sum(np_.tanh(i) * f_ + g * o * o)

    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    grad = loom.jit(loom.grad(lambda x: f(lnp, x)))
    names = [op.name for op in grad.lower(x).module.walk()]
    assert "stablehlo.pad" not in names and names.count("stablehlo.concatenate") == 1
    np.testing.assert_allclose(grad(x), jax.grad(lambda x: f(jax.numpy, x))(x), rtol=1e-6, atol=1e-6)


def _sliced_product(start: list[int], limit: list[int], strides: list[int], extra_use: bool = False) -> str:
    """A batched product (2, 5, 3) x (2, 3, 4) -> (2, 5, 4) (batch, lhs's free, rhs's free) sliced."""
    out = [(hi - lo + k - 1) // k for lo, hi, k in zip(start, limit, strides)]
    t = f"tensor<{'x'.join(map(str, out))}xf32>"
    ret = f"%s, %d : {t}, tensor<2x5x4xf32>" if extra_use else f"%s : {t}"
    rtype = f"{t}, tensor<2x5x4xf32>" if extra_use else t
    return f"""func.func @main(%a: tensor<2x5x3xf32>, %b: tensor<2x3x4xf32>) -> ({rtype}) {{
  %d = "stablehlo.dot_general"(%a, %b) <{{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0],
    rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}}>
    : (tensor<2x5x3xf32>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  %s = "stablehlo.slice"(%d) <{{start_indices = array<i64: {", ".join(map(str, start))}>,
    limit_indices = array<i64: {", ".join(map(str, limit))}>, strides = array<i64: {", ".join(map(str, strides))}>}}>
    : (tensor<2x5x4xf32>) -> {t}
  return {ret}
}}"""


SLICES = [  # start, limit, strides of the (batch, lhs free, rhs free) result
    ([0, 0, 1], [2, 5, 3], [1, 1, 1]),  # rhs's free dimension
    ([0, 2, 0], [2, 4, 4], [1, 1, 1]),  # lhs's
    ([1, 0, 0], [2, 5, 4], [1, 1, 1]),  # the batch: both operands
    ([0, 1, 0], [2, 5, 4], [1, 2, 3]),  # strided
    ([1, 1, 2], [2, 4, 4], [1, 1, 1]),  # all three
]


@pytest.mark.parametrize("start,limit,strides", SLICES)
def test_slice_of_a_product_is_the_product_of_sliced_operands(start, limit, strides):
    """The slice moves onto the operands (the contracting dimension stays whole): the product
    computes only the elements kept, with numpy's values of the whole product sliced."""
    text = _sliced_product(start, limit, strides)
    module = _canonicalized(text)
    (dot,) = [op for op in module.walk() if op.name == "stablehlo.dot_general"]
    assert all(v.owner_op is None or v.owner_op.name == "stablehlo.slice" for v in dot.operands)
    assert not any(op.name == "stablehlo.slice" and op.operands[0].owner_op is dot for op in module.walk())
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 5, 3)).astype(np.float32), rng.standard_normal((2, 3, 4)).astype(np.float32)
    index = tuple(slice(lo, hi, k) for lo, hi, k in zip(start, limit, strides))
    want = np.einsum("bik,bkj->bij", a.astype(np.float64), b)[index]
    np.testing.assert_allclose(loom.compile(module)(a, b), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loom.compile(lir.parse(text))(a, b), want, rtol=1e-5, atol=1e-6)


def test_slice_kept_when_the_product_is_used_elsewhere():
    module = _canonicalized(_sliced_product([0, 0, 1], [2, 5, 3], [1, 1, 1], extra_use=True))
    (dot,) = [op for op in module.walk() if op.name == "stablehlo.dot_general"]
    assert dot.results[0].type.shape == (2, 5, 4)


def test_gradient_of_an_lstm_gate_product_with_respect_to_the_state_alone():
    """loom.grad of `concatenate([x, h]) @ w` with respect to h (x is data): JAX's gradient, from
    a product only as wide as h (the cotangent of x is never computed)."""
    jax = pytest.importorskip("jax")
    import loom.numpy as lnp

    def f(np_, h, x, w):
        return np_.sum(np_.tanh(np_.concatenate([x, h], axis=-1) @ w))

    rng = np.random.default_rng(4)
    h, x = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 6)).astype(np.float32)
    w = rng.standard_normal((10, 8)).astype(np.float32)
    grad = loom.jit(loom.grad(lambda h, x, w: f(lnp, h, x, w)))
    dots = [op for op in grad.lower(h, x, w).module.walk() if op.name == "stablehlo.dot_general"]
    assert [op.results[0].type.shape for op in dots] == [(3, 8), (3, 4)]  # the forward product, then h's part
    np.testing.assert_allclose(grad(h, x, w), jax.grad(lambda h, x, w: f(jax.numpy, h, x, w))(h, x, w),
                               rtol=1e-5, atol=1e-6)
