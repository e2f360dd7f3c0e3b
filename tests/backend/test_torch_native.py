"""Ops the torch backend once ran as numpy islands, now torch code: bit counts, reduce_precision,
rng_bit_generator, unsigned division, convolution with batch groups, sorts by lexicographic and
other elementwise comparators; and uint64 and complex conversions, reductions, scatters, gathers
and integer products of unsigned values. Each runs without any numpy round trip (the executable
lists none in `numpy_ops`) and gives the numpy backend's results (and XLA's, through jax, where
jax has the op)."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")

import loom  # noqa: E402
import loom.ir  # noqa: E402
import loom.numpy as lnp  # noqa: E402
from loom import lax  # noqa: E402
from loom.backend import rng as numpy_rng  # noqa: E402
from loom.backend import torch_kernels as kt  # noqa: E402
from loom.ops import linalg_torch  # noqa: E402
from loom.runtime.executable import compile as loom_compile  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
BITS_OF = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
rng = np.random.default_rng(7)


def module(body: str, signature: str, results: str) -> str:
    return (f'"builtin.module"() ({{\n  "func.func"() <{{function_type = {signature}, sym_name = "main"}}> ({{\n'
            f'  ^bb0{results}:\n{body}\n  }}) : () -> ()\n}}) : () -> ()\n')


def unary(op: str, tin: str, tout: str, attrs: str = "") -> str:
    props = f" <{{{attrs}}}>" if attrs else ""
    return module(f'''
    %0 = "{op}"(%x){props} : ({tin}) -> {tout}
    "func.return"(%0) : ({tout}) -> ()''', f"({tin}) -> {tout}", f"(%x: {tin})")


def run_both(text: str, *args):
    """(torch results as numpy arrays, numpy backend results, the torch executable)."""
    m = loom.ir.parse(text)
    exe = loom_compile(m, backend="torch")
    got, want = exe(*args), loom_compile(m)(*args)
    if not isinstance(want, tuple):
        got, want = (got,), (want,)
    return tuple(kt.to_numpy(g) for g in got), want, exe


def assert_native(exe) -> None:
    """Nothing in the program runs on numpy values (no island, no numpy kernel on tensors)."""
    assert exe.numpy_ops == ()
    assert "to_numpy(" not in exe.source and "numpy_" not in exe.source and "interpreted_" not in exe.source
    assert not exe.reads_values_on_host


def assert_bits_equal(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    bits = BITS_OF[got.dtype.itemsize]
    np.testing.assert_array_equal(got.view(bits), want.view(bits))


def mlir_type(dt) -> str:
    dt = np.dtype(dt)
    if dt == BF16:
        return "bf16"
    if dt.kind == "f":
        return f"f{dt.itemsize * 8}"
    return f"{'ui' if dt.kind == 'u' else 'i'}{dt.itemsize * 8}"


def jax_run(fn, *args):
    with jax.enable_x64(True):
        return tuple(np.asarray(r) for r in jax.tree.leaves(jax.jit(fn)(*args)))


# popcnt and count_leading_zeros -------------------------------------------------------------------

INTEGER_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def integer_edges(dt) -> np.ndarray:
    info = np.iinfo(dt)
    bits = info.bits
    edges = [0, 1, 2, 3, info.min, info.max, info.max - 1, info.min + 1, info.max // 2, info.max // 2 + 1]
    edges += [(1 << k) for k in range(bits - (info.min < 0))]
    if info.min < 0:
        edges += [-1, -2, -(1 << (bits - 2))]
    fill = rng.integers(info.min, info.max, 200, dtype=dt, endpoint=True)
    return np.concatenate([np.array(edges, dtype=np.int64 if info.min < 0 else np.uint64).astype(dt), fill])


@pytest.mark.parametrize("dt", INTEGER_TYPES, ids=lambda d: np.dtype(d).name)
def test_popcnt_and_count_leading_zeros_are_native_for_every_integer_type(dt):
    x = integer_edges(dt)
    t = f"tensor<{x.size}x{mlir_type(dt)}>"
    text = module(f'''
    %0 = "stablehlo.popcnt"(%x) : ({t}) -> {t}
    %1 = "stablehlo.count_leading_zeros"(%x) : ({t}) -> {t}
    "func.return"(%0, %1) : ({t}, {t}) -> ()''', f"({t}) -> ({t}, {t})", f"(%x: {t})")
    got, want, exe = run_both(text, x)
    assert_native(exe)
    xla = jax_run(lambda v: (jax.lax.population_count(v), jax.lax.clz(v)), x)
    for g, w, j in zip(got, want, xla):
        assert g.dtype == np.dtype(dt)
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(g, j)
    bits = np.dtype(dt).itemsize * 8
    np.testing.assert_array_equal(got[1][:2], [bits, bits - 1])  # clz(0) is the width, clz(1) one less


# reduce_precision -----------------------------------------------------------------------------------

FLOAT_LAYOUT = {np.dtype(np.float16): (5, 10), BF16: (8, 7), np.dtype(np.float32): (8, 23),
                np.dtype(np.float64): (11, 52)}


def float_edges(dt) -> np.ndarray:
    """Zeros, infinities, NaNs (quiet, signalling, negative, with payloads), the extremes of the
    normal and subnormal ranges, rounding ties of several widths, and random bit patterns."""
    dt = np.dtype(dt)
    e, m = FLOAT_LAYOUT[dt]
    bits_t = BITS_OF[dt.itemsize]
    nbits = dt.itemsize * 8
    sign = 1 << (nbits - 1)
    exp_all = ((1 << e) - 1) << m
    one = ((1 << (e - 1)) - 1) << m
    patterns = [0, sign, exp_all, exp_all | sign, exp_all | (1 << (m - 1)), exp_all | 1, exp_all | sign | 5,
                exp_all - 1, (exp_all - 1) | sign, 1 << m, 1, 2, 3, (1 << m) - 1, sign | 1, one, one | sign]
    for drop in range(1, m + 1):  # x.5 in units of the last kept bit, the kept bit even and odd
        half = 1 << (drop - 1)
        patterns += [one | half, one | half | (1 << drop), one | (half - 1), one | half | 1,
                     (exp_all - (1 << m)) | ((1 << m) - 1) & ~((1 << drop) - 1) | half, half, half | (1 << drop)]
    words = np.array([p & ((1 << nbits) - 1) for p in patterns], dtype=np.uint64).astype(bits_t)
    fill = rng.integers(0, 2 ** 63, 3000, dtype=np.uint64, endpoint=True)
    fill = (fill ^ (fill << np.uint64(1))).astype(bits_t)  # the top bit set half the time
    return np.concatenate([words, fill]).view(dt)


FORMATS = [(5, 10), (5, 2), (8, 7), (8, 23), (8, 3), (4, 3), (3, 4), (2, 1), (1, 0), (11, 52), (10, 40), (6, 20),
           (11, 2), (5, 0)]


@pytest.mark.parametrize("dt", [np.float16, BF16, np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_reduce_precision_is_native_and_matches_xla_bit_for_bit(dt):
    x = float_edges(dt)
    t = f"tensor<{x.size}x{mlir_type(dt)}>"
    lines = [f'    %{i} = "stablehlo.reduce_precision"(%x) <{{exponent_bits = {e} : i32, mantissa_bits = {m} : i32}}>'
             f' : ({t}) -> {t}' for i, (e, m) in enumerate(FORMATS)]
    results = ", ".join(f"%{i}" for i in range(len(FORMATS)))
    types = ", ".join([t] * len(FORMATS))
    text = module("\n".join(lines) + f'\n    "func.return"({results}) : ({types}) -> ()', f"({t}) -> ({types})",
                  f"(%x: {t})")
    got, want, exe = run_both(text, x)
    assert_native(exe)
    # one XLA program for every format: one compile instead of one per format
    xlas = jax_run(lambda v: tuple(jax.lax.reduce_precision(v, e, m) for e, m in FORMATS), x)
    assert len(got) == len(want) == len(xlas) == len(FORMATS)
    for g, w, xla in zip(got, want, xlas):
        assert_bits_equal(g, xla)  # NaNs included: kept as XLA keeps them
        with np.errstate(invalid="ignore"):
            assert np.array_equal(np.isnan(g.astype(np.float64)), np.isnan(x.astype(np.float64)))
        assert_bits_equal(g, w)  # and the numpy kernel's, bit for bit


def test_reduce_precision_rounds_ties_to_even_and_overflows_to_inf():
    x = np.array([1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, 65504.0, 65520.0, -70000.0, 2 ** -14, 2 ** -15, -2 ** -20,
                  np.inf, -np.inf, np.nan, -0.0], np.float32)
    text = unary("stablehlo.reduce_precision", "tensor<12xf32>", "tensor<12xf32>",
                 "exponent_bits = 5 : i32, mantissa_bits = 10 : i32")
    (got,), _, exe = run_both(text, x)
    assert_native(exe)
    want = np.array([1.0, 1.0 + 2 ** -9, 65504.0, np.inf, -np.inf, 2 ** -14, 0.0, -0.0, np.inf, -np.inf, np.nan,
                     -0.0], np.float32)
    assert_bits_equal(got, want)


# rng_bit_generator ------------------------------------------------------------------------------------

STATES = [[0, 0], [1, 2], [2 ** 64 - 1, 2 ** 64 - 3], [0x123456789ABCDEF0, 2 ** 32 - 1],
          [0xDEADBEEF, 2 ** 64 - 2, 5], [42, 2 ** 64 - 5, 7], [7, 2 ** 63 - 1, 2 ** 63]]
SHAPES = [(), (1,), (5,), (3, 4), (3, 5, 7), (2, 1, 3), (7, 1)]
RNG_TYPES = [np.uint32, np.int32, np.uint64, np.int64, np.uint8, np.int16, np.uint16, np.float32, np.float64]


def _rng_module(algorithm: str, n_state: int, cases: list[tuple[tuple[int, ...], type]]) -> str:
    """One rng_bit_generator from the argument state per (shape, dtype) of `cases`, returning the
    new state and the bits of each in turn."""
    st = f"tensor<{n_state}xui64>"
    outs = [f"tensor<{''.join(f'{d}x' for d in shape)}{mlir_type(dt)}>" for shape, dt in cases]
    ops = "".join(f'''
    %s{k}, %b{k} = "stablehlo.rng_bit_generator"(%s) <{{rng_algorithm = #stablehlo<rng_algorithm {algorithm}>}}>
      : ({st}) -> ({st}, {out})''' for k, out in enumerate(outs))
    names = ", ".join(f"%s{k}, %b{k}" for k in range(len(cases)))
    types = ", ".join(f"{st}, {out}" for out in outs)
    return module(f'''{ops}
    "func.return"({names}) : ({types}) -> ()''', f"({st}) -> ({types})", f"(%s: {st})")


@pytest.mark.parametrize("algorithm", ["THREE_FRY", "PHILOX", "DEFAULT"])
def test_rng_bit_generator_is_native_and_bit_exact_with_the_numpy_kernel(algorithm):
    cases = list(itertools.product(SHAPES, RNG_TYPES))
    for state in STATES:
        if algorithm == "THREE_FRY" and len(state) != 2:
            continue
        s = np.array(state, np.uint64)
        # every (shape, dtype) from this state in one program: one compile per state, not per case
        got, want, exe = run_both(_rng_module(algorithm, len(state), cases), s)
        assert_native(exe)
        assert len(got) == len(want) == 2 * len(cases)
        for (shape, dt), new_state, bits, want_state, want_bits in zip(cases, got[0::2], got[1::2], want[0::2],
                                                                        want[1::2]):
            what = f"{algorithm} {state} {shape} {np.dtype(dt).name}"
            np.testing.assert_array_equal(new_state, want_state, err_msg=what)
            assert new_state.dtype == np.uint64
            assert_bits_equal(bits, want_bits)


def test_rng_bit_generator_counters_wrap_around_as_uint64():
    """The 128-bit Philox counter carries out of its low word, and wraps past 2**128 - 1 (the
    numpy kernel's Python ints overflow there: the expected words come from its philox4x32)."""
    s = np.array([9, 2 ** 64 - 2, 2 ** 64 - 1], np.uint64)
    exe = loom_compile(loom.ir.parse(_rng_module("PHILOX", 3, [((8,), np.uint32)])), backend="torch")
    assert_native(exe)
    new_state, bits = exe(s)
    assert kt.to_numpy(new_state).tolist() == [9, 0, 0]  # 2 blocks of 4 words: the counter wraps to 0
    lo = np.array([2 ** 64 - 2, 2 ** 64 - 1], np.uint64)
    hi = np.array([2 ** 64 - 1, 2 ** 64 - 1], np.uint64)
    words = [w.astype(np.uint32) for w in (lo, lo >> np.uint64(32), hi, hi >> np.uint64(32))]
    with np.errstate(over="ignore"):
        want = np.stack(numpy_rng.philox4x32(words, 9, 0), axis=1).reshape(-1)
    np.testing.assert_array_equal(kt.to_numpy(bits), want)


# Unsigned division ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [np.uint8, np.uint16, np.uint32, np.uint64], ids=lambda d: np.dtype(d).name)
def test_unsigned_division_and_remainder_are_native(dt):
    edges = integer_edges(dt)
    a = np.concatenate([np.repeat(edges[:20], 20), rng.integers(0, np.iinfo(dt).max, 3000, dtype=dt,
                                                                   endpoint=True)])
    small = rng.integers(0, 1000, 1000).astype(dt)
    big = rng.integers(0, np.iinfo(dt).max, 2000, dtype=dt, endpoint=True)
    b = np.concatenate([np.tile(edges[:20], 20), small, big >> rng.integers(0, np.iinfo(dt).bits, 2000).astype(dt)])
    t = f"tensor<{a.size}x{mlir_type(dt)}>"
    text = module(f'''
    %0 = "stablehlo.divide"(%a, %b) : ({t}, {t}) -> {t}
    %1 = "stablehlo.remainder"(%a, %b) : ({t}, {t}) -> {t}
    "func.return"(%0, %1) : ({t}, {t}) -> ()''', f"({t}, {t}) -> ({t}, {t})", f"(%a: {t}, %b: {t})")
    (q, r), (want_q, want_r), exe = run_both(text, a, b)
    assert_native(exe)
    np.testing.assert_array_equal(q, want_q)
    np.testing.assert_array_equal(r, want_r)
    nonzero = b != 0
    np.testing.assert_array_equal(q[nonzero], a[nonzero] // b[nonzero])
    np.testing.assert_array_equal(r[nonzero], a[nonzero] % b[nonzero])
    np.testing.assert_array_equal(q[~nonzero], np.iinfo(dt).max)  # x / 0 is all ones
    np.testing.assert_array_equal(r[~nonzero], a[~nonzero])        # x % 0 is x


# Convolution with batch groups --------------------------------------------------------------------

def _conv_module(lt: str, rt: str, ot: str, numbers: str, attrs: str) -> str:
    return module(f'''
    %0 = "stablehlo.convolution"(%a, %b) <{{dimension_numbers = #stablehlo.conv<{numbers}>, {attrs}}}>
      : ({lt}, {rt}) -> {ot}
    "func.return"(%0) : ({ot}) -> ()''', f"({lt}, {rt}) -> {ot}", f"(%a: {lt}, %b: {rt})")


@pytest.mark.parametrize("groups", [2, 3])
def test_convolution_with_batch_groups_is_native_and_matches_xla(groups):
    lhs = rng.normal(size=(2 * groups, 3, 9, 6)).astype(np.float32)   # N, C, H, W
    rhs = rng.normal(size=(4 * groups, 3, 3, 2)).astype(np.float32)   # O, I, H, W
    dn = jax.lax.conv_dimension_numbers(lhs.shape, rhs.shape, ("NCHW", "OIHW", "NCHW"))

    def conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (2, 1), ((1, 2), (0, 1)), rhs_dilation=(1, 2),
                                            dimension_numbers=dn, batch_group_count=groups)
    want_xla = jax_run(conv, lhs, rhs)[0]
    with jax.enable_x64(True):
        text = jax.jit(conv).lower(lhs, rhs).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
    (got,), (want,), exe = run_both(text, lhs, rhs)
    assert_native(exe)
    assert got.shape == want_xla.shape == (2, 4 * groups, 5, 5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, want_xla, rtol=1e-5, atol=1e-5)


def test_convolution_with_batch_groups_in_a_feature_last_layout_and_mixed_types():
    lt, rt, ot = "tensor<6x5x2xbf16>", "tensor<3x2x4xbf16>", "tensor<3x3x4xf32>"
    text = _conv_module(lt, rt, ot, "[b, 0, f]x[0, i, o]->[b, 0, f]",
                        "batch_group_count = 2 : i64, feature_group_count = 1 : i64, window_strides = array<i64: 2>, "
                        "padding = dense<[[1, 2]]> : tensor<1x2xi64>")
    lhs = rng.normal(size=(6, 5, 2)).astype(BF16)
    rhs = rng.normal(size=(3, 2, 4)).astype(BF16)
    (got,), (want,), exe = run_both(text, lhs, rhs)
    assert_native(exe)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# Sort ---------------------------------------------------------------------------------------------

def _sort_data():
    a = rng.integers(0, 3, (4, 11)).astype(np.float32)
    a[0, 1] = a[2, 3] = a[0, 5] = np.nan
    a[1, 2] = a[3, 0] = -0.0
    a[1, 4] = -np.nan
    a[2, 6] = -np.inf
    b = rng.integers(-2, 2, (4, 11)).astype(np.int32)
    b[0, 0] = np.iinfo(np.int32).min
    c = rng.normal(size=(4, 11)).astype(np.float32)
    u = rng.integers(0, 4, (4, 11)).astype(np.uint32) * np.uint32(2 ** 30)
    u[:, 0] = 2 ** 32 - 1
    return a, b, c, u


def _jax_text(fn, *args) -> str:
    with jax.enable_x64(True):
        return jax.jit(fn).lower(*args).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)


@pytest.mark.parametrize("num_keys,dimension", [(1, 1), (2, 1), (3, 0), (2, 0)])
def test_jax_multi_key_sort_is_native_and_matches_xla(num_keys, dimension):
    a, b, c, _ = _sort_data()
    fn = lambda a, b, c: jax.lax.sort((a, b, c), dimension=dimension, num_keys=num_keys)  # noqa: E731
    got, want, exe = run_both(_jax_text(fn, a, b, c), a, b, c)
    assert_native(exe)
    assert "sort_lexicographic" in exe.source
    for g, w, x in zip(got, want, jax_run(fn, a, b, c)):
        assert_bits_equal(g, w)
        assert_bits_equal(g, x)


@pytest.mark.parametrize("case", ["float_keys", "unsigned_keys", "int_then_float", "sort", "argsort"])
def test_loom_lexicographic_sorts_are_native(case):
    a, b, c, u = _sort_data()
    fn, args = {
        "float_keys": (lambda a, c, b: lax.sort((a, c, b), num_keys=2, dimension=1), (a, c, b)),
        "unsigned_keys": (lambda u, b, c: lax.sort((u, b, c), num_keys=3, dimension=1), (u, b, c)),
        "int_then_float": (lambda b, a: lax.sort((b, a), num_keys=2, dimension=0), (b, a)),
        "sort": (lambda a: lnp.sort(a, axis=1), (a,)),
        "argsort": (lambda a: lnp.argsort(a, axis=0), (a,)),
    }[case]
    text = loom.jit(fn).lower(*args).as_text(generic=True)
    got, want, exe = run_both(text, *args)
    assert_native(exe)
    assert "sort_lexicographic" in exe.source
    for g, w in zip(got, want):
        assert_bits_equal(g, w) if g.dtype.kind == "f" else np.testing.assert_array_equal(g, w)


def _comparator_sort(comparator: str, n: int, t: str = "i32") -> str:
    """A sort of two operands, x and y, along their one dim, by `comparator` over the block
    arguments %x0, %x1, %y0, %y1 (ending with a value named %less)."""
    tt = f"tensor<{n}x{t}>"
    return module(f'''
    %0, %1 = "stablehlo.sort"(%x, %y) <{{dimension = 0 : i64, is_stable = true}}> ({{
      ^bb1(%x0: tensor<{t}>, %x1: tensor<{t}>, %y0: tensor<{t}>, %y1: tensor<{t}>):
{comparator}
        "stablehlo.return"(%less) : (tensor<i1>) -> ()
    }}) : ({tt}, {tt}) -> ({tt}, {tt})
    "func.return"(%0, %1) : ({tt}, {tt}) -> ()''', f"({tt}, {tt}) -> ({tt}, {tt})", f"(%x: {tt}, %y: {tt})")


def _cmp(name: str, direction: str, lhs: str, rhs: str, t: str = "i32") -> str:
    return (f'        %{name} = "stablehlo.compare"(%{lhs}, %{rhs}) <{{comparison_direction = '
            f'#stablehlo<comparison_direction {direction}>}}> : (tensor<{t}>, tensor<{t}>) -> tensor<i1>')


def test_descending_and_mixed_direction_keys_in_either_operand_order_are_native():
    # x descending (x1 < x0), then y ascending written as GT with swapped sides, equality by EQ
    comparator = "\n".join([
        _cmp("gt", "LT", "x1", "x0"), _cmp("eq", "EQ", "x1", "x0"), _cmp("lt", "GT", "y1", "y0"),
        '        %tie = "stablehlo.and"(%lt, %eq) : (tensor<i1>, tensor<i1>) -> tensor<i1>',
        '        %less = "stablehlo.or"(%tie, %gt) : (tensor<i1>, tensor<i1>) -> tensor<i1>'])
    x = rng.integers(-2, 2, 40).astype(np.int32)
    y = rng.integers(-3, 3, 40).astype(np.int32)
    (gx, gy), (wx, wy), exe = run_both(_comparator_sort(comparator, 40), x, y)
    assert_native(exe)
    np.testing.assert_array_equal(gx, wx)
    np.testing.assert_array_equal(gy, wy)
    order = sorted(range(40), key=lambda i: (-x[i], y[i]))
    np.testing.assert_array_equal(gx, x[order])
    np.testing.assert_array_equal(gy, y[order])


def test_other_elementwise_comparators_rank_pairs_natively():
    # by x + y: a key of two operands, not a compare of keys
    comparator = "\n".join([
        '        %s0 = "stablehlo.add"(%x0, %y0) : (tensor<i32>, tensor<i32>) -> tensor<i32>',
        '        %s1 = "stablehlo.add"(%x1, %y1) : (tensor<i32>, tensor<i32>) -> tensor<i32>',
        _cmp("less", "LT", "s0", "s1")])
    x = rng.integers(-5, 5, 50).astype(np.int32)
    y = rng.integers(-5, 5, 50).astype(np.int32)
    (gx, gy), (wx, wy), exe = run_both(_comparator_sort(comparator, 50), x, y)
    assert_native(exe)
    assert "sort_pairwise" in exe.source
    np.testing.assert_array_equal(gx, wx)
    np.testing.assert_array_equal(gy, wy)
    order = sorted(range(50), key=lambda i: x[i] + y[i])
    np.testing.assert_array_equal(gx, x[order])


def test_a_long_sort_by_another_comparator_stays_an_island_and_says_why():
    comparator = "\n".join([
        '        %s0 = "stablehlo.add"(%x0, %y0) : (tensor<i32>, tensor<i32>) -> tensor<i32>',
        '        %s1 = "stablehlo.add"(%x1, %y1) : (tensor<i32>, tensor<i32>) -> tensor<i32>',
        _cmp("less", "LT", "s0", "s1")])
    n = 2049  # one more than the pairwise sort takes
    x = rng.integers(-50, 50, n).astype(np.int32)
    y = rng.integers(-50, 50, n).astype(np.int32)
    (gx, gy), (wx, wy), exe = run_both(_comparator_sort(comparator, n), x, y)
    np.testing.assert_array_equal(gx, wx)
    np.testing.assert_array_equal(gy, wy)
    assert len(exe.numpy_ops) == 1
    name, reason = exe.numpy_ops[0]
    assert name == "stablehlo.sort" and "not a compare of keys" in reason and "pairwise" in reason
    assert f"# stablehlo.sort on numpy values: {reason}" in exe.source


def test_islands_that_remain_are_listed_with_their_reason():
    text = module("""
    %init = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %0 = "stablehlo.reduce"(%x, %init) <{dimensions = array<i64: 0>}> ({
      ^bb1(%a: tensor<i32>, %b: tensor<i32>):
        %m = "stablehlo.xor"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%m) : (tensor<i32>) -> ()
    }) : (tensor<6xi32>, tensor<i32>) -> tensor<i32>
    %1 = "stablehlo.popcnt"(%0) : (tensor<i32>) -> tensor<i32>
    "func.return"(%1) : (tensor<i32>) -> ()""", "(tensor<6xi32>) -> tensor<i32>", "(%x: tensor<6xi32>)")
    x = np.array([1, 7, 12, 3, 9, 30], np.int32)
    (got,), (want,), exe = run_both(text, x)
    assert int(got) == int(want)
    assert [name for name, _ in exe.numpy_ops] == ["stablehlo.reduce"]  # the popcnt after it is torch code
    assert "torch reduction" in exe.numpy_ops[0][1]


# Cheaper ones: unsigned clamp, power and uint64 conversions; complex ops -------------------------------

@pytest.mark.parametrize("dt", [np.uint16, np.uint32, np.uint64], ids=lambda d: np.dtype(d).name)
def test_unsigned_clamp_and_power_are_native(dt):
    x = integer_edges(dt)
    y = x[::-1].copy()
    e = rng.integers(0, 70, x.size).astype(dt)
    e[:3] = np.iinfo(dt).max  # huge exponents are not negative ones
    lo, hi = np.array(1000, dt), np.array(np.iinfo(dt).max - 5, dt)
    t, s = f"tensor<{x.size}x{mlir_type(dt)}>", f"tensor<{mlir_type(dt)}>"
    text = module(f'''
    %0 = "stablehlo.clamp"(%lo, %x, %hi) : ({s}, {t}, {s}) -> {t}
    %1 = "stablehlo.clamp"(%y, %x, %hi) : ({t}, {t}, {s}) -> {t}
    %2 = "stablehlo.power"(%x, %e) : ({t}, {t}) -> {t}
    "func.return"(%0, %1, %2) : ({t}, {t}, {t}) -> ()''', f"({t}, {t}, {t}, {s}, {s}) -> ({t}, {t}, {t})",
                  f"(%x: {t}, %y: {t}, %e: {t}, %lo: {s}, %hi: {s})")
    got, want, exe = run_both(text, x, y, e, lo, hi)
    assert_native(exe)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got[0], np.clip(x, lo, hi))


CONVERT_TYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.bool_, np.float16, BF16, np.float32,
                 np.float64]


def _convert_input(dt) -> np.ndarray:
    dt = np.dtype(dt)
    if dt == np.bool_:
        return np.array([True, False, True, True])
    if dt.kind in "iu":
        return integer_edges(dt)
    big = np.array([2.0 ** 63, 2.0 ** 64, 2.0 ** 64 - 2.0 ** 11, 1.5e19, -1.0, -0.5, 0.7, 2.0 ** 63 - 1024, 1e30])
    with np.errstate(over="ignore"):
        return np.concatenate([float_edges(dt)[:500], big.astype(dt)])


def _tensor_type(n: int, dt) -> str:
    return f"tensor<{n}x{'i1' if np.dtype(dt) == np.bool_ else mlir_type(dt)}>"


@pytest.mark.parametrize("other", CONVERT_TYPES, ids=lambda d: np.dtype(d).name)
def test_uint64_conversions_are_native(other):
    for src, dst in ((np.uint64, other), (other, np.uint64)):
        x = _convert_input(src)
        ta, tb = _tensor_type(x.size, src), _tensor_type(x.size, dst)
        text = module(f'''
    %0 = "stablehlo.convert"(%x) : ({ta}) -> {tb}
    "func.return"(%0) : ({tb}) -> ()''', f"({ta}) -> {tb}", f"(%x: {ta})")
        with np.errstate(all="ignore"):
            (got,), (want,), exe = run_both(text, x)
        assert_native(exe)
        assert got.dtype == want.dtype
        if got.dtype.kind in "fV":  # infinities and NaNs compare as values
            np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("cd", [np.complex64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_complex_subtract_negate_and_conversions_to_real_types_are_native(cd):
    z = (rng.normal(size=20) * 1e10 + 1j * rng.normal(size=20)).astype(cd)
    z[:5] = [complex(np.nan, 1), 3e38 + 1j, -7.9 + 2j, 0, complex(-np.inf, np.nan)]
    w = (rng.normal(size=20) + 1j * rng.normal(size=20)).astype(cd)
    c = f"tensor<20xcomplex<{'f32' if cd == np.complex64 else 'f64'}>>"
    for dst in ["i32", "i8", "ui8", "i64", "f32", "f16", "bf16", "i1"]:
        td = f"tensor<20x{dst}>"
        text = module(f'''
    %0 = "stablehlo.convert"(%x) : ({c}) -> {td}
    %1 = "stablehlo.subtract"(%x, %y) : ({c}, {c}) -> {c}
    %2 = "stablehlo.negate"(%x) : ({c}) -> {c}
    "func.return"(%0, %1, %2) : ({td}, {c}, {c}) -> ()''', f"({c}, {c}) -> ({td}, {c}, {c})", f"(%x: {c}, %y: {c})")
        with np.errstate(all="ignore"):
            got, want, exe = run_both(text, z, w)
        assert_native(exe)
        for g, e in zip(got, want):
            assert g.dtype == e.dtype
            if g.dtype == BF16:
                g, e = g.astype(np.float64), e.astype(np.float64)
            np.testing.assert_array_equal(g, e)


# Reductions: unsigned values, no reduced dimension, an empty one ------------------------------------

def _reduce_module(op: str, dt, shape: tuple[int, ...], dims: list[int], window: bool = False) -> str:
    et = "i1" if np.dtype(dt) == np.bool_ else mlir_type(dt)
    t = f"tensor<{'x'.join(map(str, shape))}x{et}>"
    s = f"tensor<{et}>"
    body = f'''      ^bb1(%a: {s}, %b: {s}):
        %m = "{op}"(%a, %b) : ({s}, {s}) -> {s}
        "stablehlo.return"(%m) : ({s}) -> ()'''
    if window:  # windows of 2 x 3, strides 1 x 2, one column of padding each side
        to = f"tensor<{shape[0] - 1}x{(shape[1] + 2 - 3) // 2 + 1}x{et}>"
        attrs = ("window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 1, 2>, "
                 "padding = dense<[[0, 0], [1, 1]]> : tensor<2x2xi64>")
        name = "stablehlo.reduce_window"
    else:
        out = [d for i, d in enumerate(shape) if i not in dims]
        to = f"tensor<{''.join(f'{d}x' for d in out)}{et}>"
        attrs = f"dimensions = array<i64{': ' + ', '.join(map(str, dims)) if dims else ''}>"
        name = "stablehlo.reduce"
    return module(f'''
    %0 = "{name}"(%x, %init) <{{{attrs}}}> ({{
{body}
    }}) : ({t}, {s}) -> {to}
    "func.return"(%0) : ({to}) -> ()''', f"({t}, {s}) -> {to}", f"(%x: {t}, %init: {s})")


REDUCERS = ["stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum"]


@pytest.mark.parametrize("dt", [np.uint16, np.uint32, np.uint64], ids=lambda d: np.dtype(d).name)
def test_reduce_and_reduce_window_over_unsigned_values_are_native(dt):
    x = integer_edges(dt)[:24].reshape(4, 6)
    for op, window in itertools.product(REDUCERS, (False, True)):
        for init in (0, 5, np.iinfo(dt).max):
            init = np.array(init, dt)
            for dims in ([1], [0, 1]):
                (got,), (want,), exe = run_both(_reduce_module(op, dt, (4, 6), dims, window), x, init)
                assert_native(exe)
                np.testing.assert_array_equal(got, want, err_msg=f"{op} {dims} {init} window={window}")
                if window:
                    break
    (got,), _, _ = run_both(_reduce_module("stablehlo.maximum", dt, (4, 6), [0, 1]), x, np.array(0, dt))
    assert got == np.iinfo(dt).max  # unsigned order: all ones is the largest


@pytest.mark.parametrize("dt", [np.int32, np.float32, np.uint32, np.bool_], ids=lambda d: np.dtype(d).name)
def test_reduce_over_no_dimension_and_over_an_empty_one_are_native(dt):
    for op in REDUCERS if np.dtype(dt) != np.bool_ else ["stablehlo.and", "stablehlo.or"]:
        x = (rng.integers(0, 5, (3, 4)) > 2) if np.dtype(dt) == np.bool_ else \
            rng.integers(0, 9, (3, 4)).astype(dt)
        init = np.array(True if np.dtype(dt) == np.bool_ else 3, dt)
        (got,), (want,), exe = run_both(_reduce_module(op, dt, (3, 4), []), x, init)
        assert_native(exe)
        np.testing.assert_array_equal(got, want)
        for shape, dims in (((3, 0), [1]), ((0, 2, 5), [0, 1])):
            text = _reduce_module(op, dt, shape, dims)
            exe = loom_compile(loom.ir.parse(text), backend="torch")
            assert_native(exe)
            got = kt.to_numpy(exe(np.zeros(shape, dt), init))
            # XLA's result: the init value, as the numpy backend gives it
            want = loom_compile(loom.ir.parse(text), backend="numpy")(np.zeros(shape, dt), init)
            np.testing.assert_array_equal(got, np.full([d for i, d in enumerate(shape) if i not in dims], init))
            np.testing.assert_array_equal(got, np.asarray(want))


@pytest.mark.parametrize("it", [np.uint16, np.uint32, np.uint64, np.int32], ids=lambda d: np.dtype(d).name)
def test_unsigned_indices_are_values_not_bits(it):
    """Indices of 2**15, 2**31, 2**63 or more in unsigned types are large, not negative: they
    clamp to the last valid start, on unsigned data too."""
    info = np.iinfo(it)
    starts = [1, info.max, info.max // 2 + 2, 0, 3]
    et = mlir_type(it)
    data = np.arange(10, dtype=np.uint32) * np.uint32(2 ** 28)
    for start in starts:
        text = module(f'''
    %0 = "stablehlo.dynamic_slice"(%x, %i) <{{slice_sizes = array<i64: 3>}}> : (tensor<10xui32>, tensor<{et}>)
      -> tensor<3xui32>
    %1 = "stablehlo.dynamic_update_slice"(%x, %u, %i) : (tensor<10xui32>, tensor<2xui32>, tensor<{et}>)
      -> tensor<10xui32>
    "func.return"(%0, %1) : (tensor<3xui32>, tensor<10xui32>) -> ()''',
                      f"(tensor<10xui32>, tensor<2xui32>, tensor<{et}>) -> (tensor<3xui32>, tensor<10xui32>)",
                      f"(%x: tensor<10xui32>, %u: tensor<2xui32>, %i: tensor<{et}>)")
        got, want, exe = run_both(text, data, np.array([2 ** 32 - 1, 5], np.uint32), np.array(start, it))
        assert exe.numpy_ops == ()
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, err_msg=f"start {start}")
    text = module(f'''
    %0 = "stablehlo.gather"(%x, %i) <{{dimension_numbers = #stablehlo.gather<offset_dims = [1],
      collapsed_slice_dims = [], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 2>}}>
      : (tensor<10xui32>, tensor<5x1x{et}>) -> tensor<5x2xui32>
    "func.return"(%0) : (tensor<5x2xui32>) -> ()''', f"(tensor<10xui32>, tensor<5x1x{et}>) -> tensor<5x2xui32>",
                  f"(%x: tensor<10xui32>, %i: tensor<5x1x{et}>)")
    index = np.array(starts, it).reshape(5, 1)
    if it == np.uint64:  # the numpy kernel converts uint64 indices with astype(int64): keep below 2**63
        index = np.array([1, 2 ** 63 - 1, 2 ** 40, 0, 3], it).reshape(5, 1)
    (got,), (want,), exe = run_both(text, data, index)
    assert exe.numpy_ops == ()
    np.testing.assert_array_equal(got, want)


def _scatter_module(op: str | None, et: str, it: str) -> str:
    s = f"tensor<{et}>"
    update = f'''        %m = "{op}"(%a, %b) : ({s}, {s}) -> {s}
        "stablehlo.return"(%m) : ({s}) -> ()''' if op else f'''        "stablehlo.return"(%b) : ({s}) -> ()'''
    t, ti, tu = f"tensor<6x{et}>", f"tensor<5x1x{it}>", f"tensor<5x{et}>"
    return module(f'''
    %0 = "stablehlo.scatter"(%x, %i, %u) <{{scatter_dimension_numbers = #stablehlo.scatter<
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}}> ({{
      ^bb1(%a: {s}, %b: {s}):
{update}
    }}) : ({t}, {ti}, {tu}) -> {t}
    "func.return"(%0) : ({t}) -> ()''', f"({t}, {ti}, {tu}) -> {t}", f"(%x: {t}, %i: {ti}, %u: {tu})")


@pytest.mark.parametrize("dt", [np.uint16, np.uint32, np.uint64, np.int32], ids=lambda d: np.dtype(d).name)
def test_scatter_of_unsigned_values_and_indices_is_native(dt):
    x = integer_edges(dt)[:6]
    u = integer_edges(dt)[6:11]
    for op, it in itertools.product([None, "stablehlo.add", "stablehlo.multiply", "stablehlo.maximum",
                                     "stablehlo.minimum"], [np.int32, np.uint32, np.uint16]):
        if op is None and dt == np.int32 and it == np.int32:
            continue  # nothing unsigned
        index = np.array([1, 4, 1, 2 ** 15 + 3, 0], np.int64).astype(it).reshape(5, 1)  # a repeat, one out of bounds
        (got,), (want,), exe = run_both(_scatter_module(op, mlir_type(dt), mlir_type(it)), x, index, u)
        assert_native(exe)
        np.testing.assert_array_equal(got, want, err_msg=f"{op} indices {np.dtype(it).name}")


def test_map_and_pairwise_sort_of_unsigned_values_are_native():
    t, s = "tensor<40xui32>", "tensor<ui32>"
    text = module(f'''
    %0 = "stablehlo.map"(%x, %y) <{{dimensions = array<i64: 0>}}> ({{
      ^bb1(%a: {s}, %b: {s}):
        %m = "stablehlo.xor"(%a, %b) : ({s}, {s}) -> {s}
        %k = "stablehlo.maximum"(%m, %a) : ({s}, {s}) -> {s}
        "stablehlo.return"(%k) : ({s}) -> ()
    }}) : ({t}, {t}) -> {t}
    "func.return"(%0) : ({t}) -> ()''', f"({t}, {t}) -> {t}", f"(%x: {t}, %y: {t})")
    x = integer_edges(np.uint32)[:40]
    y = x[::-1].copy()
    (got,), (want,), exe = run_both(text, x, y)
    assert_native(exe)
    np.testing.assert_array_equal(got, want)
    comparator = "\n".join([  # by x + y (wrapping), unsigned
        '        %s0 = "stablehlo.add"(%x0, %y0) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>',
        '        %s1 = "stablehlo.add"(%x1, %y1) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>',
        _cmp("less", "LT", "s0", "s1", "ui32")])
    got, want, exe = run_both(_comparator_sort(comparator, 40, "ui32"), x, y)
    assert_native(exe)
    assert "sort_pairwise" in exe.source
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


# Integer products: convolution (torch has none) and dot products of unsigned values -----------------

def _int_conv_module(din, dout, batch_groups: int = 1) -> str:
    lt = f"tensor<{2 * batch_groups}x4x5x6x{mlir_type(din)}>"
    rt = f"tensor<{3 * batch_groups}x4x2x3x{mlir_type(din)}>"
    ot = f"tensor<2x{3 * batch_groups}x5x5x{mlir_type(dout)}>"
    return module(f'''
    %0 = "stablehlo.convolution"(%a, %b) <{{
      dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>,
      feature_group_count = 1 : i64, batch_group_count = {batch_groups} : i64,
      padding = dense<[[1, 0], [0, 1]]> : tensor<2x2xi64>}}> : ({lt}, {rt}) -> {ot}
    "func.return"(%0) : ({ot}) -> ()''', f"({lt}, {rt}) -> {ot}", f"(%a: {lt}, %b: {rt})")


@pytest.mark.parametrize("din,dout", [(np.int8, np.int32), (np.int8, np.int8), (np.int16, np.int16),
                                      (np.int32, np.int32), (np.int64, np.int64), (np.uint8, np.uint8),
                                      (np.uint32, np.uint32), (np.uint64, np.uint64), (np.int32, np.float32)],
                         ids=lambda d: np.dtype(d).name)
def test_integer_convolution_is_native_and_wraps_as_numpy(din, dout):
    info = np.iinfo(din)
    for groups in (1, 2):
        a = rng.integers(info.min, info.max, (2 * groups, 4, 5, 6), dtype=din, endpoint=True)
        b = rng.integers(info.min, info.max, (3 * groups, 4, 2, 3), dtype=din, endpoint=True)
        a[0, 0, 0, :3] = [info.min, info.max, -1 if info.min else 1]
        if np.dtype(dout).kind == "f":  # exact in float32
            a, b = (a % 100).astype(din), (b % 100).astype(din)
        (got,), (want,), exe = run_both(_int_conv_module(din, dout, groups), a, b)
        assert_native(exe)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8], ids=lambda d: np.dtype(d).name)
def test_exact_integer_dot_from_float64_byte_products(dt):
    """The device path of integer dot products (CUDA has no integer matmul), run here on the CPU."""
    info = np.iinfo(dt)
    a = torch.from_numpy(rng.integers(info.min, info.max, (3, 7, 11), dtype=dt, endpoint=True))
    b = torch.from_numpy(rng.integers(info.min, info.max, (3, 11, 5), dtype=dt, endpoint=True))
    dims = ((0,), (0,), (2,), (1,))
    for out in {kt.torch_dtype(dt), torch.int32, torch.int64}:
        want = linalg_torch.dot_general(a, b, dims, out)
        product = linalg_torch.exact_integer_product(linalg_torch.dot_general, a, b, out, dims, torch.float64)
        assert torch.equal(product, want)


@pytest.mark.parametrize("dt", [np.uint16, np.uint32, np.uint64], ids=lambda d: np.dtype(d).name)
def test_unsigned_dot_general_is_native(dt):
    a = integer_edges(dt)[:24].reshape(4, 6)
    b = integer_edges(dt)[24:42].reshape(6, 3)
    et = mlir_type(dt)
    text = module(f'''
    %0 = "stablehlo.dot_general"(%a, %b) <{{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1],
      rhs_contracting_dimensions = [0]>}}> : (tensor<4x6x{et}>, tensor<6x3x{et}>) -> tensor<4x3x{et}>
    "func.return"(%0) : (tensor<4x3x{et}>) -> ()''', f"(tensor<4x6x{et}>, tensor<6x3x{et}>) -> tensor<4x3x{et}>",
                  f"(%a: tensor<4x6x{et}>, %b: tensor<6x3x{et}>)")
    (got,), (want,), exe = run_both(text, a, b)
    assert_native(exe)
    np.testing.assert_array_equal(got, want)
