"""Random arguments to `loom.compile` and `loom.jit` callables: wrong ranks, shapes and dtypes,
both byte orders, non-arrays, nested pytrees, NaN and inf, empty arrays. A call either gives the
oracle's values (numpy for compiled programs, JAX for jitted functions) or raises a clear error
naming the argument; never a raw numpy or internal exception.

By default a few dozen derandomized examples per test (a few seconds); under `make fuzz`
(LOOM_FUZZ_EXAMPLES set) one example per 50 of its mutants.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import loom
from loom.backend.common import ArgumentError

SEED = int(os.environ.get("LOOM_FUZZ_SEED", "0"))
EXAMPLES = max(60, int(os.environ.get("LOOM_FUZZ_EXAMPLES", "0")) // 50)
SETTINGS = settings(max_examples=EXAMPLES, derandomize=SEED == 0, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))


def fuzz(test: Any) -> Any:
    test = SETTINGS(test)
    return seed(SEED)(test) if SEED else test


SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 3.4e38, 1e-45, -1.0])
# XLA's CPU code flushes subnormals to zero (1e-45 * 1 is 0 there, inf * 1e-45 NaN); loom keeps
# them, as numpy does: the comparison with JAX takes the smallest normal float32 instead.
NORMAL_SPECIALS = np.where(SPECIALS == 1e-45, 1.2e-38, SPECIALS)
DTYPES = ["float16", "float32", "float64", "int8", "int32", "int64", "uint8", "uint32", "bool"]
ODD = ["complex64", "object", "<U3", "datetime64[D]", "V4"]


def array(rng: np.random.Generator, dtype: str, shape: tuple[int, ...], specials: bool, big_endian: bool,
          strided: bool, subnormals: bool = True) -> np.ndarray:
    """A random array of `dtype` and `shape` (with NaN, inf, ... among floats when `specials`), in
    big-endian order or as a non-contiguous view when asked."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = rng.standard_normal(shape) * 100
        if specials and x.size:
            pool = SPECIALS if subnormals else NORMAL_SPECIALS
            x.flat[rng.integers(0, x.size, max(1, x.size // 2))] = rng.choice(pool, max(1, x.size // 2))
        with np.errstate(over="ignore"):
            x = x.astype(dt)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        x = rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(dt)
    elif dt.kind == "b":
        x = rng.integers(0, 2, shape).astype(bool)
    elif dt.kind == "c":
        x = (rng.standard_normal(shape) + 1j).astype(dt)
    elif dt.kind == "O":
        x = np.empty(shape, object)
        x[...] = 1.5
    elif dt.kind == "M":
        x = np.zeros(shape, dt)
    else:
        x = np.zeros(shape, dt)
    if big_endian and dt.kind in "fiuc":
        x = x.astype(dt.newbyteorder(">"))
    if strided and x.ndim:
        wide = np.repeat(x, 2, axis=-1)
        x = wide[..., ::2]
    return x


@st.composite
def argument(draw: Any, dtype: str, shape: tuple[int, ...]) -> Any:
    """One argument for a parameter of `dtype` and `shape`: right or wrong in one way."""
    rng = np.random.default_rng(draw(st.integers(0, 1 << 30)))
    kind = draw(st.sampled_from(["valid", "valid", "dtype", "shape", "python", "other"]))
    specials, big, strided = draw(st.booleans()), draw(st.booleans()), draw(st.booleans())
    if kind == "valid":
        return array(rng, dtype, shape, specials, big, strided)
    if kind == "dtype":
        other = draw(st.sampled_from([d for d in DTYPES + ODD if d != dtype]))
        return array(rng, other, shape, specials, big, strided)
    if kind == "shape":
        wrong = draw(st.sampled_from([(), (0,), shape + (1,), shape[1:], tuple(d + 1 for d in shape),
                                      (0,) + shape, shape[::-1] + (2,)]))
        return array(rng, dtype, wrong, specials, big, strided)
    if kind == "python":
        x = array(rng, draw(st.sampled_from(["float64", "int64", "bool", dtype])), shape, specials, False, False)
        value = x.tolist()
        if draw(st.booleans()) and isinstance(value, list) and value:
            value = [value[0], value[1:]]  # ragged
        return value
    return draw(st.sampled_from([None, "abc", b"\x00\x01", {"a": 1}, {1, 2}, object(), 2 ** 70, -(2 ** 40), 1.5,
                                 True, (1.0, 2.0), [], [[]], np.float64(2.0), float("nan")]))


# loom.compile ------------------------------------------------------------------------------------

PROGRAM = """func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xi32>, %c: tensor<0xf32>)
    -> (tensor<2x3xf32>, tensor<0xf32>) {
  %0 = stablehlo.convert %b : (tensor<3xi32>) -> tensor<3xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %2 = stablehlo.multiply %a, %1 : tensor<2x3xf32>
  %3 = stablehlo.negate %c : tensor<0xf32>
  return %2, %3 : tensor<2x3xf32>, tensor<0xf32>
}"""
PARAMS = [("float32", (2, 3)), ("int32", (3,)), ("float32", (0,))]
KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def accepted(x: Any, dtype: str, shape: tuple[int, ...]) -> np.ndarray | None:
    """The value a compiled function takes for `x`, or None where it must refuse it: numpy values
    of exactly the type (either byte order); other values that numpy reads as numbers of a kind
    no wider than the parameter's, within its range."""
    want = np.dtype(dtype)
    if isinstance(x, (np.ndarray, np.generic)):
        ok = x.dtype.kind == want.kind and x.dtype.itemsize == want.itemsize and np.shape(x) == shape
        return np.asarray(x, want) if ok else None
    try:
        natural = np.asarray(x)
    except ValueError:
        return None
    if KIND_ORDER.get(natural.dtype.kind, 9) > KIND_ORDER[want.kind] or natural.shape != shape:
        return None
    converted = natural.astype(want)
    if want.kind in "iu" and not np.array_equal(converted, natural):
        return None
    return converted


COMPILED = {executor: loom.compile(PROGRAM, executor=executor) for executor in ("compiled", "interpreter")}


@pytest.mark.parametrize("executor", ["compiled", "interpreter"])
def test_compiled_functions_take_right_arguments_and_name_wrong_ones(executor: str) -> None:
    outcomes = {"ran": 0, "refused": 0}

    @fuzz
    @given(st.tuples(*[argument(d, s) for d, s in PARAMS]))
    def one(args: tuple) -> None:
        values = [accepted(x, d, s) for x, (d, s) in zip(args, PARAMS)]
        if all(v is not None for v in values):
            a, b, c = values
            got = COMPILED[executor](*args)
            with np.errstate(all="ignore"):
                want = (a * b.astype(np.float32)[None], -c)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape
                np.testing.assert_array_equal(g, w)
            outcomes["ran"] += 1
            return
        first_bad = next(i for i, v in enumerate(values) if v is None)
        with pytest.raises(ArgumentError) as e:
            COMPILED[executor](*args)
        assert e.value.args[0].startswith(f"@main: argument {first_bad} expected {_type(*PARAMS[first_bad])}, got "), \
            e.value
        outcomes["refused"] += 1

    one()
    assert outcomes["ran"] and outcomes["refused"], outcomes


def _type(dtype: str, shape: tuple[int, ...]) -> str:
    element = {"float32": "f32", "int32": "i32"}[dtype]
    return f"tensor<{''.join(f'{d}x' for d in shape)}{element}>"


# loom.jit ----------------------------------------------------------------------------------------

def body(lnp: Any) -> Any:
    def f(x: Any, t: dict) -> Any:
        return x * 2, t["a"] + 1, t["b"][0] * t["b"][1], lnp.sum(t["b"][0])
    return f


@st.composite
def leaf(draw: Any) -> Any:
    rng = np.random.default_rng(draw(st.integers(0, 1 << 30)))
    kind = draw(st.sampled_from(["array", "array", "array", "odd", "python"]))
    if kind == "python":
        return draw(st.sampled_from([1, -3, 2.5, True, float("inf"), float("nan"), 2 ** 40, -(2 ** 70), "abc", None,
                                     object()]))
    # no bool arrays: XLA rewrites x * bool as a select (inf * False is 0 there, NaN in IEEE and loom)
    dtype = draw(st.sampled_from([d for d in DTYPES if d != "bool"] if kind == "array" else ODD))
    shape = draw(st.sampled_from([(), (3,), (0,), (2, 3), (1, 3), (4,)]))
    return array(rng, dtype, shape, draw(st.booleans()), draw(st.booleans()), draw(st.booleans()), subnormals=False)


def native(x: Any) -> Any:
    if isinstance(x, np.ndarray) and not x.dtype.isnative:
        return x.astype(x.dtype.newbyteorder("="))
    return x


def test_jitted_functions_agree_with_jax_or_name_the_argument() -> None:
    import jax
    import jax.numpy as jnp

    import loom.numpy as lnp

    ours, theirs = loom.jit(body(lnp)), jax.jit(body(jnp))
    outcomes = {"ran": 0, "refused": 0}

    @fuzz
    @given(leaf(), leaf(), leaf(), leaf())
    def one(x: Any, a: Any, b0: Any, b1: Any) -> None:
        tree = {"a": a, "b": (b0, b1)}
        complex_leaf = any(isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind == "c" for v in (x, a, b0, b1))
        try:
            with np.errstate(all="ignore"):  # JAX refuses big-endian arrays: it gets the same values in native order
                want = [np.asarray(v) for v in theirs(native(x), {"a": native(a), "b": (native(b0), native(b1))})]
        except Exception:  # noqa: BLE001  (JAX refuses: loom must too, clearly)
            with pytest.raises((TypeError, ValueError, OverflowError)) as e:
                ours(x, tree)
            message = str(e.value)
            named = re.search(r"argument (x\b|t\['a'\]|t\['b'\]\[[01]\])|\(at .*:\d+\)", message)
            # None is an empty pytree, as in JAX: f gets None and Python's arithmetic refuses it
            assert named or (any(v is None for v in (x, a, b0, b1)) and "NoneType" in message), message
            assert "Python integer" not in message and "C long" not in message, message
            outcomes["refused"] += 1
            return
        if complex_leaf:  # loom has no complex arrays yet: it must say so, naming the argument
            with pytest.raises(TypeError, match=r"argument .* has dtype complex64, which loom does not support"):
                ours(x, tree)
            outcomes["refused"] += 1
            return
        got = ours(x, tree)
        for g, w in zip(got, want):
            g = np.asarray(g)
            assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
            if g.dtype.kind == "f" and g.size:  # sums may add in another order
                np.testing.assert_allclose(g, w, rtol=2e-3 if g.dtype == np.float16 else 1e-6, equal_nan=True)
            else:
                np.testing.assert_array_equal(g, w)
        outcomes["ran"] += 1

    one()
    assert outcomes["ran"] and outcomes["refused"], outcomes


@pytest.mark.parametrize("executor", ["compiled", "interpreter"])
def test_python_ints_out_of_the_parameters_range_are_refused_not_wrapped(executor: str) -> None:
    a, c = np.ones((2, 3), np.float32), np.ones(0, np.float32)
    for b in ([1, 1 << 40, 3], [1, -(1 << 31) - 1, 3], [1 << 31, 0, 0]):
        assert accepted(b, "int32", (3,)) is None
        with pytest.raises(ArgumentError, match=r"^@main: argument 1 expected tensor<3xi32>, got values out of its "
                                                r"range \(int64\[3\]\)$"):
            COMPILED[executor](a, b, c)
    np.testing.assert_array_equal(COMPILED[executor](a, [-(1 << 31), 0, (1 << 31) - 1], c)[0],
                                  np.float32([-(1 << 31), 0, (1 << 31) - 1])[None].repeat(2, 0))


def test_python_ints_out_of_range_in_jit_name_the_argument() -> None:
    f = loom.jit(lambda x, t: x + t["b"][0])
    for big in (1 << 40, -(1 << 70)):
        with pytest.raises(OverflowError, match=rf"^argument t\['b'\]\[0\]: Python int {big} does not fit the "
                                                r"default integer type"):
            f(1, {"b": (big,)})
