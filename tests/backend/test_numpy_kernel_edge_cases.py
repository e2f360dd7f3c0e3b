"""The numpy kernels where they once disagreed with XLA: reduce_precision on float16 subnormals
and NaN payloads, the Philox counter at the top of its 128 bits, and max/min reductions over an
empty dimension with an init value that is not a constant. Each runs as a kernel and as a program
in the compiled numpy executor and the interpreter, against XLA (through jax, or the same program
text compiled on XLA's CPU backend) and, where the values are easy to state, against values
worked out by hand or an independent Python reference."""

from __future__ import annotations

import functools
import itertools

import ml_dtypes
import numpy as np
import pytest

jax = pytest.importorskip("jax")

from support.oracles import run_xla  # noqa: E402

import loom  # noqa: E402
from loom.backend import rng as numpy_rng  # noqa: E402
from loom.ops.elementwise import reduce_precision  # noqa: E402
from loom.ops.reductions import reduce_ufunc  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
BITS_OF = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
M64 = 2 ** 64 - 1
rng = np.random.default_rng(20261130)


# One jitted wrapper per function, so that calls with the same argument types reuse one compile
# (the oracles below are functions built once per case list, not lambdas built per call).
_jit = functools.cache(jax.jit)


def jax_run(fn, *args) -> list[np.ndarray]:
    with jax.enable_x64(True):
        return [np.asarray(r) for r in jax.tree.leaves(_jit(fn)(*args))]


def lowered(fn, *args) -> str:
    """The StableHLO text jax lowers `fn` to, in generic form."""
    with jax.enable_x64(True):
        return _jit(fn).lower(*args).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)


@functools.cache
def loom_compile(text: str, executor: str):
    return loom.compile(text, executor=executor, backend="numpy")


def run_loom(text: str, *args) -> dict[str, list[np.ndarray]]:
    """The results of the compiled numpy executor and of the interpreter."""
    out = {}
    for executor in ("compiled", "interpreter"):
        r = loom_compile(text, executor)(*args)
        out[executor] = [np.asarray(v) for v in (r if isinstance(r, tuple) else (r,))]
    return out


def assert_bits_equal(got, want, what: str = "") -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, what
    bits = BITS_OF[got.dtype.itemsize]
    g, w = got.view(bits).reshape(-1), want.view(bits).reshape(-1)
    bad = np.flatnonzero(g != w)
    assert bad.size == 0, f"{what}: {bad.size} differ, e.g. bits {[hex(v) for v in g.reshape(-1)[bad[:4]]]} " \
                          f"where XLA has {[hex(v) for v in w[bad[:4]]]}"


# reduce_precision ---------------------------------------------------------------------------------

LAYOUT = {F16: (5, 10), BF16: (8, 7), F32: (8, 23), F64: (11, 52)}

# No-ops for some types ((5, 10) on float16, (8, 7) and (8, 23) on bfloat16, (11, 52) on all),
# ones that only narrow the mantissa or only the exponent, and ones whose results are subnormal
# in the operand's type, overflow to inf or flush to zero.
FORMATS = [(5, 10), (8, 7), (8, 23), (11, 52), (5, 9), (5, 2), (5, 0), (4, 10), (4, 3), (3, 4), (2, 1), (1, 0),
           (6, 10), (8, 3), (7, 7), (8, 22), (7, 23), (11, 23), (10, 52), (11, 20), (6, 20), (12, 60)]


def every_pattern(dt) -> np.ndarray:
    return np.arange(2 ** 16, dtype=np.uint32).astype(np.uint16).view(dt)


def wide_values(dt) -> np.ndarray:
    """Zeros, infinities, NaNs with payloads and signs, the ends of the normal and subnormal
    ranges, rounding ties at every width, and random bit patterns (half of them negative)."""
    e, m = LAYOUT[np.dtype(dt)]
    nbits = np.dtype(dt).itemsize * 8
    sign, exp_all, one = 1 << (nbits - 1), ((1 << e) - 1) << m, ((1 << (e - 1)) - 1) << m
    patterns = [0, sign, exp_all, exp_all | sign, exp_all | 1, exp_all | (1 << (m - 1)), exp_all | sign | 5,
                exp_all - 1, (exp_all - 1) | sign, 1 << m, 1, 3, (1 << m) - 1, sign | 1, one, one | sign]
    for drop in range(1, m + 1):
        half = 1 << (drop - 1)
        patterns += [one | half, one | half | (1 << drop), one | (half - 1), half, half | (1 << drop),
                     half | 1, (1 << m) | half | (1 << drop)]
    for k in range(1, 1 << e, max(1, (1 << e) // 64)):  # a tie at each of many exponents
        patterns += [(k << m) | (1 << (m - 1)), (k << m) | (3 << (m - 2))]
    words = np.array([p & ((1 << nbits) - 1) for p in patterns], np.uint64).astype(BITS_OF[nbits // 8])
    fill = rng.integers(0, 2 ** 63, 20000, dtype=np.uint64, endpoint=True)
    fill = (fill ^ (fill << np.uint64(1))).astype(BITS_OF[nbits // 8])
    return np.concatenate([words, fill]).view(dt)


@functools.cache
def reduce_precision_program(formats: tuple[tuple[int, int], ...]):
    """One program that reduces its operand to each of `formats` (one XLA compile per operand type)."""
    def fn(v):
        return tuple(jax.lax.reduce_precision(v, e, m) for e, m in formats)
    return fn


def xla_reduce_precision(x, *formats: tuple[int, int]) -> list[np.ndarray]:
    return jax_run(reduce_precision_program(formats), x)


@pytest.mark.parametrize("dt", [F16, BF16, F32, F64], ids=lambda d: d.name)
def test_reduce_precision_kernel_is_bit_exact_with_xla(dt):
    x = every_pattern(dt) if dt.itemsize == 2 else wide_values(dt)
    for (e, m), want in zip(FORMATS, xla_reduce_precision(x, *FORMATS), strict=True):
        got = reduce_precision(x, e, m)
        assert_bits_equal(got, want, f"{dt.name} ({e}, {m})")
    for v in x[:40]:  # 0-d operands: the same bits, and no overflow warning from numpy scalars
        with np.errstate(all="raise"):
            got = reduce_precision(np.array(v), 4, 3)
        assert got.shape == ()
        assert_bits_equal(got, xla_reduce_precision(np.array(v), (4, 3))[0], f"{dt.name} {v!r}")


def test_reduce_precision_float16_subnormals_round_on_float16_bits():
    """Values worked out by hand: float16 subnormals round where their own bits are, rather
    than being flushed by the narrower exponent of a float32 intermediate."""
    x = np.array([0x0003, 0x0001, 0x8003, 0x0002, 0x0006, 0x03FF, 0x0400], np.uint16).view(np.float16)
    got = reduce_precision(x, 5, 9)  # one mantissa bit fewer, same exponent range
    # 3 ulp -> 4 (tie to the even kept bit), 1 -> 0 (tie, kept bit even), -3 -> -4, 2 and 6 stay,
    # the largest subnormal rounds up into the smallest normal, which stays
    want = np.array([0x0004, 0x0000, 0x8004, 0x0002, 0x0006, 0x0400, 0x0400], np.uint16)
    np.testing.assert_array_equal(got.view(np.uint16), want)
    # a narrower exponent flushes them to signed zeros, as it does the normal values below its range
    got = reduce_precision(x, 4, 10)
    np.testing.assert_array_equal(got.view(np.uint16), [0, 0, 0x8000, 0, 0, 0, 0])


def test_reduce_precision_nan_payloads():
    f16_nans = np.array([0x7C01, 0xFE00, 0x7D55], np.uint16).view(np.float16)
    bf16_nans = np.array([0x7F81, 0xFFA5, 0x7FC0], np.uint16).view(BF16)
    for e, m in [(5, 10), (11, 52)]:  # no-ops on float16: every bit kept
        np.testing.assert_array_equal(reduce_precision(f16_nans, e, m).view(np.uint16), f16_nans.view(np.uint16))
    np.testing.assert_array_equal(reduce_precision(f16_nans, 5, 3).view(np.uint16), f16_nans.view(np.uint16))
    for e, m in [(8, 23), (11, 52)]:  # no-ops on bfloat16's float32 computation: every bit kept
        np.testing.assert_array_equal(reduce_precision(bf16_nans, e, m).view(np.uint16), bf16_nans.view(np.uint16))
    for e, m in [(8, 7), (5, 3)]:  # computed in float32: the quiet NaN of each sign
        np.testing.assert_array_equal(reduce_precision(bf16_nans, e, m).view(np.uint16), [0x7FC0, 0xFFC0, 0x7FC0])
        assert_bits_equal(reduce_precision(bf16_nans, e, m), xla_reduce_precision(bf16_nans, (e, m))[0])


@pytest.mark.parametrize("dt", [F16, BF16, F32, F64], ids=lambda d: d.name)
def test_reduce_precision_programs_are_bit_exact_with_xla(dt):
    """jax's program, run by the compiled numpy executor and by the interpreter."""
    x = every_pattern(dt) if dt.itemsize == 2 else wide_values(dt)[:4000]
    formats = [(5, 10), (8, 7), (8, 23), (5, 9), (4, 3), (2, 1), (11, 20)]

    def fn(v):
        return tuple(jax.lax.reduce_precision(v, e, m) for e, m in formats)

    want = jax_run(fn, x)
    for executor, got in run_loom(lowered(fn, x), x).items():
        for (e, m), g, w in zip(formats, got, want):
            assert_bits_equal(g, w, f"{executor} {dt.name} ({e}, {m})")


# Philox at the top of its counter -----------------------------------------------------------------

def philox_reference(key: int, counter: int, n_blocks: int) -> list[int]:
    """Philox4x32-10 in Python ints (Salmon et al.; XLA's word order): the 4 words of each
    block, the counter a 128-bit integer advanced by one per block, modulo 2**128."""
    out = []
    for b in range(n_blocks):
        c = (counter + b) % 2 ** 128
        x = [(c >> (32 * i)) & 0xFFFFFFFF for i in range(4)]
        k0, k1 = key & 0xFFFFFFFF, key >> 32
        for _ in range(10):
            p0, p1 = x[0] * 0xD2511F53, x[2] * 0xCD9E8D57
            x = [(p1 >> 32) ^ x[1] ^ k0, p1 & 0xFFFFFFFF, (p0 >> 32) ^ x[3] ^ k1, p0 & 0xFFFFFFFF]
            k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
        out += x
    return out


def test_philox_reference_matches_xla_away_from_the_edges():
    """The reference itself, checked where the numpy kernel never failed."""
    key, lo = 0x0123456789ABCDEF, 77
    (_, bits) = jax_run(lambda s: jax.lax.rng_bit_generator(s, (12,), np.uint32,
                                                             algorithm=jax.lax.RandomAlgorithm.RNG_PHILOX),
                        np.array([key, lo], np.uint64))
    np.testing.assert_array_equal(bits, philox_reference(key, (key << 64) | lo, 3))


def test_philox_blocks_wrap_past_the_top_of_the_counter():
    for lo in (M64, M64 - 1, M64 - 4):
        words, new_lo, new_hi = numpy_rng._philox_blocks(9, lo, M64, 6)
        got = np.stack(words, axis=1).reshape(-1)
        np.testing.assert_array_equal(got, philox_reference(9, (M64 << 64) | lo, 6))
        assert (new_lo, new_hi) == ((lo + 6) & M64, 0)  # carried out of the high word: wrapped to 0


PHILOX_TYPES = [np.uint8, np.uint16, np.uint32, np.uint64]
PHILOX_CASES = list(itertools.product([(), (1,), (7,), (3, 5), (2, 9)], PHILOX_TYPES))


def philox_every_case(s):
    """The new state and the bits of each of PHILOX_CASES from state `s`, in one XLA program."""
    return [jax.lax.rng_bit_generator(s, shape, dt, algorithm=jax.lax.RandomAlgorithm.RNG_PHILOX)
            for shape, dt in PHILOX_CASES]


@pytest.mark.parametrize("lo", [M64, M64 - 1, M64 - 2, M64 - 7, 0, 2 ** 63], ids=hex)
def test_philox_two_word_state_whose_high_word_is_all_ones_matches_xla(lo):
    """A 2-word state's high counter word is its key: a key of 2**64 - 1 puts the counter at the
    top of its range."""
    state = np.array([M64, lo], np.uint64)
    wants = jax_run(philox_every_case, state)
    assert len(wants) == 2 * len(PHILOX_CASES)
    for (shape, dt), want_state, want_bits in zip(PHILOX_CASES, wants[0::2], wants[1::2], strict=True):
        got_state, got_bits = numpy_rng.rng_bit_generator(state, "PHILOX", shape, dt)
        what = f"lo={lo:#x} {shape} {np.dtype(dt).name}"
        np.testing.assert_array_equal(got_state, want_state, err_msg=what)
        assert got_state.dtype == np.uint64
        assert_bits_equal(got_bits, want_bits, what)


def _rng_program(n_state: int, shape: tuple[int, ...], et: str) -> str:
    st = f"tensor<{n_state}xui64>"
    out = f"tensor<{''.join(f'{d}x' for d in shape)}{et}>"
    return (f'"builtin.module"() ({{\n  "func.func"() <{{function_type = ({st}) -> ({st}, {out}), '
            f'sym_name = "main"}}> ({{\n  ^bb0(%s: {st}):\n'
            f'    %0, %1 = "stablehlo.rng_bit_generator"(%s) <{{rng_algorithm = #stablehlo<rng_algorithm PHILOX>}}>'
            f' : ({st}) -> ({st}, {out})\n'
            f'    "func.return"(%0, %1) : ({st}, {out}) -> ()\n  }}) : () -> ()\n}}) : () -> ()\n')


@pytest.mark.parametrize("state", [[9, M64 - 1, M64], [0xDEADBEEF, M64, M64], [5, M64 - 9, M64], [1, 3, M64],
                                   [M64, M64, M64]], ids=lambda s: "-".join(hex(v) for v in s))
def test_philox_three_word_state_at_the_top_of_the_counter(state):
    """jax only builds 2-word states: the program is compiled on XLA's CPU backend directly,
    and run by both numpy executors; 32-bit words are also checked against the reference."""
    s = np.array(state, np.uint64)
    for shape, et, dt in [((8,), "ui32", np.uint32), ((3, 5), "ui64", np.uint64), ((11,), "ui8", np.uint8),
                          ((2, 3), "ui16", np.uint16)]:
        text = _rng_program(3, shape, et)
        want_state, want_bits = run_xla(text, (s,))
        for executor, (got_state, got_bits) in run_loom(text, s).items():
            what = f"{executor} {shape} {et}"
            np.testing.assert_array_equal(got_state, want_state, err_msg=what)
            assert_bits_equal(got_bits, want_bits, what)
        if dt == np.uint32:
            n = int(np.prod(shape))
            ref = philox_reference(state[0], (state[2] << 64) | state[1], -(-n // 4))[:n]
            np.testing.assert_array_equal(want_bits.reshape(-1), ref)


# Empty reductions with an init value that is an argument -------------------------------------------

REDUCERS = {"max": jax.lax.max, "min": jax.lax.min, "add": jax.lax.add, "mul": jax.lax.mul}
EMPTY = [((3, 0), (1,)), ((0, 2, 5), (0, 1)), ((2, 0, 3), (1,)), ((2, 0, 3), (0, 1, 2)), ((0,), (0,)),
         ((4, 0), (0, 1))]
REDUCE_TYPES = [F32, F64, F16, BF16, np.dtype(np.int32), np.dtype(np.int8), np.dtype(np.uint32),
                np.dtype(np.uint64)]


@functools.cache
def empty_reductions(name: str):
    """One program that reduces each of its operands (EMPTY's shapes, in order) over EMPTY's
    dimensions with the same init value, its last argument."""
    def fn(*args):
        *xs, init = args
        return tuple(jax.lax.reduce(x, init, REDUCERS[name], dims) for x, (_, dims) in zip(xs, EMPTY, strict=True))
    return fn


@pytest.mark.parametrize("dt", REDUCE_TYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(REDUCERS))
def test_reduce_over_an_empty_dimension_gives_the_init_value(name, dt):
    inits = [np.array(v, dt) for v in ([2.5, -np.inf, np.nan] if dt.kind == "f" or dt == BF16 else [7, 0])]
    if dt.kind == "i":
        inits.append(np.array(np.iinfo(dt).min, dt))
    fn = empty_reductions(name)
    xs = [np.zeros(shape, dt) for shape, _ in EMPTY]
    text = lowered(fn, *xs, inits[0])  # the init value is an argument: one program serves every init
    for init in inits:
        wants = jax_run(fn, *xs, init)
        for (shape, dims), want in zip(EMPTY, wants, strict=True):
            out_shape = [d for k, d in enumerate(shape) if k not in dims]
            assert_bits_equal(want, np.full(out_shape, init, dt), f"jax {shape} {dims} init={init}")
        for executor, gots in run_loom(text, *xs, init).items():
            for (shape, dims), got, want in zip(EMPTY, gots, wants, strict=True):
                assert_bits_equal(got, want, f"{executor} {shape} {dims} init={init}")


def test_reduce_kernel_over_an_empty_axis_keeps_the_nonempty_ones():
    init = np.array(-3, np.int16)
    for ufunc in (np.maximum, np.minimum, np.add, np.multiply):
        got = reduce_ufunc(np.ones((4, 0, 2), np.int16), init, ufunc, (1,))
        assert got.dtype == np.int16
        np.testing.assert_array_equal(got, np.full((4, 2), -3, np.int16))
        got = reduce_ufunc(np.ones((4, 0, 2), np.int16), init, ufunc, (0, 2))  # an empty result
        assert got.shape == (0,) and got.dtype == np.int16
