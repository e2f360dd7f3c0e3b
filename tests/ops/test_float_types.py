"""Every float type of the spec that ml_dtypes has (float8, float6, float4): literals parse and print
as jaxlib's MLIR does; arithmetic and convert round at the type's own width in both executors and
the torch backend (which holds them in float32 and rounds after every op), against the same
program on XLA's CPU backend over every value of the type. XLA does not lower f6 arithmetic; there
ml_dtypes' arithmetic (computed wider, rounded once to the type) is the oracle."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

jax = pytest.importorskip("jax")

from support.executors import one_op_program, run_everywhere  # noqa: E402
from support.oracles import run_xla  # noqa: E402

import loom.ir  # noqa: E402

FLOATS = {
    "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2, "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
    "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz, "f8E4M3B11FNUZ": ml_dtypes.float8_e4m3b11fnuz,
    "f8E4M3": ml_dtypes.float8_e4m3, "f8E3M4": ml_dtypes.float8_e3m4, "f8E8M0FNU": ml_dtypes.float8_e8m0fnu,
    "f6E2M3FN": ml_dtypes.float6_e2m3fn, "f6E3M2FN": ml_dtypes.float6_e3m2fn, "f4E2M1FN": ml_dtypes.float4_e2m1fn,
}
XLA_LACKS = {"f6E2M3FN", "f6E3M2FN"}  # "failed to legalize" on XLA's CPU backend
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum"]
UNARY = ["negate", "abs", "sqrt", "exponential", "tanh", "floor", "round_nearest_even"]


def every_value(dt) -> np.ndarray:
    bits = ml_dtypes.finfo(dt).bits
    return np.arange(1 << bits, dtype=np.uint8).view(dt)


def assert_same_values(got, want, dt, what: str) -> None:
    """Equal as values of `dt` (NaNs equal whatever their bits; f8E4M3FNUZ has one NaN anyway)."""
    g = np.asarray(got).astype(dt).astype(np.float64)
    w = np.asarray(want).astype(dt).astype(np.float64)
    bad = ~((g == w) & (np.signbit(g) == np.signbit(w)) | (np.isnan(g) & np.isnan(w)))
    assert not bad.any(), f"{what}: {bad.sum()} values differ, first at {np.nonzero(bad)[0][:4]}: " \
                          f"{g[bad][:4]} where the oracle has {w[bad][:4]}"


def has_nan(dt) -> bool:
    return bool(np.isnan(np.array(np.nan, np.float32).astype(dt).astype(np.float32)))


def oracle(op: str, t: str, text: str, args: list) -> np.ndarray:
    dt = FLOATS[t]
    if t not in XLA_LACKS:
        return run_xla(text, args)[0]
    fn = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
          "maximum": np.maximum, "minimum": np.minimum, "negate": np.negative, "abs": np.abs, "sqrt": np.sqrt,
          "exponential": np.exp, "tanh": np.tanh, "floor": np.floor, "round_nearest_even": np.rint}[op]
    with np.errstate(all="ignore"):  # in f16 (which holds every f6 value), then to the type, as for f8
        return fn(*(a.astype(np.float32) for a in args)).astype(np.float16).astype(dt)


# f8E8M0FNU (exponents only, no zero): XLA flushes the f32 subnormals of its smallest values
# to zero, and zero is NaN in the type; those ops are compared away from the bottom of the range.
def _cases():
    for t in FLOATS:
        for op in BINARY + UNARY:
            if t == "f8E8M0FNU" and op in ("subtract", "negate", "abs", "tanh", "floor", "round_nearest_even"):
                continue  # the verifier's float ops on a type without a sign: not what the type is for
            yield op, t


CASES = list(_cases())


@pytest.mark.parametrize("op,t", CASES, ids=[f"{op}-{t}" for op, t in CASES])
def test_arithmetic_rounds_at_the_types_width(op, t):
    dt = FLOATS[t]
    x = every_value(dt)
    if t == "f8E8M0FNU":  # away from the values XLA flushes
        x = x[(x.astype(np.float32) > 2.0 ** -60) & (x.astype(np.float32) < 2.0 ** 60)]
    if op == "sqrt" and not has_nan(dt):
        x = x[~np.signbit(x.astype(np.float32))]  # a type without NaN has no sqrt of a negative value
    unary = op in UNARY
    y = np.random.default_rng(len(op)).permutation(x)
    args = [x] if unary else [x, y]
    text = one_op_program(op, t, x.size, len(args))
    want = oracle(op, t, text, args)
    for where, got in run_everywhere(text, *args):
        if where != "compiled/torch":
            assert np.asarray(got).dtype == np.dtype(dt), where
        assert_same_values(got, want, dt, f"{op} on {t} ({where})")


@pytest.mark.parametrize("t", list(FLOATS))
@pytest.mark.parametrize("other", ["f32", "f16", "bf16", "i32", "f8E5M2"])
def test_convert_to_and_from_the_type(t, other):
    dt = FLOATS[t]
    x = every_value(dt)
    rng = np.random.default_rng(1)
    wide = np.concatenate([rng.standard_normal(200) * 10.0 ** rng.integers(-6, 6, 200),
                           [0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 0.5, 1.5, 2.5]])
    other_dt = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "i32": np.int32,
                "f8E5M2": ml_dtypes.float8_e5m2}[other]
    if other == "i32":
        wide = np.nan_to_num(wide, posinf=2e9, neginf=-2e9).clip(-2e9, 2e9)
    with np.errstate(over="ignore"):
        y = wide.astype(other_dt)
    for source, target, values in ((t, other, x), (other, t, y)):
        text = one_op_program("convert", source, values.size, 1, target)
        if t == "f4E2M1FN" and target == "i32":
            want = values.astype(np.float64).astype(np.int32)  # XLA gives INT_MAX for 6.0 (its max): a bug
        elif t in XLA_LACKS:
            with np.errstate(all="ignore"):
                want = values.astype(np.float64).astype(other_dt if target == other else dt) if other != "i32" \
                    or target != other else None
            if want is None:
                continue  # f6 to i32: covered by the f8 types' XLA runs (the same kernel)
        else:
            want = run_xla(text, [values])[0]
        target_dt = other_dt if target == other else dt
        for where, got in run_everywhere(text, values):
            if target_dt == np.int32:
                np.testing.assert_array_equal(np.asarray(got), want, err_msg=where)
            else:
                assert_same_values(got, want, target_dt, f"{source} -> {target} ({where})")


@pytest.mark.parametrize("t", list(FLOATS) + ["tf32"])
def test_literals_print_as_jaxlib(t, jax_ir):
    ir, ctx = jax_ir
    values = "[1.5, 448.0, 1000.0, 0.3, -2.0]" if t != "f8E8M0FNU" else "[0.5, 2.0, 1.0e+30, 3.0]"
    text = f'"x.c"() {{v = dense<{values}> : tensor<{values.count(",") + 1}x{t}>}} : () -> ()'
    ours = str(loom.ir.parse(text, allow_unregistered=True))
    with ctx:
        ctx.allow_unregistered_dialects = True
        theirs = str(ir.Module.parse(text))
    assert ours.splitlines()[1].strip() == theirs.splitlines()[1].strip()
    assert str(loom.ir.parse(ours, allow_unregistered=True)) == ours


@pytest.mark.parametrize("t", [t for t in FLOATS if t not in XLA_LACKS])
def test_bitcast_to_and_from_the_types_bits_as_xla(t):
    dt = FLOATS[t]
    bits = ml_dtypes.finfo(dt).bits
    x = every_value(dt)
    if bits == 8:
        text = one_op_program("bitcast_convert", t, x.size, 1, "i8")
        args = [x]
    else:  # two f4 values in one i8
        text = (f"func.func @main(%a: tensor<{x.size // 2}x2x{t}>) -> tensor<{x.size // 2}xi8> {{\n"
                f"  %0 = stablehlo.bitcast_convert %a : (tensor<{x.size // 2}x2x{t}>) -> tensor<{x.size // 2}xi8>\n"
                f"  return %0 : tensor<{x.size // 2}xi8>\n}}")
        args = [x.reshape(-1, 2)]
    want = run_xla(text, args)[0]
    keep = ~np.isnan(x.astype(np.float32))  # f4 has no NaN: every pair of values is kept
    for where, got in run_everywhere(text, *args):
        if where == "compiled/torch" and bits == 8:  # it holds float8 in float32: NaN payloads do not survive
            got, want = np.asarray(got).reshape(-1)[keep], want.reshape(-1)[keep]
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=where)
