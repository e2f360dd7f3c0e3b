"""loom's dtype policy against JAX's: the result dtype of a table of loom.numpy and loom.lax calls,
eagerly and under loom.jit, equals jax.numpy's / jax.lax's under jax.jit, with 64-bit values off (64-bit inputs
and Python scalars canonicalized to 32 bits) and on (`loom.config.update("enable_x64", True)`,
`jax_enable_x64`); and the loop carry JAX runs (a literal updated with a float64 input) runs."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import loom
import loom.numpy as lnp
from loom import lax

F64 = np.linspace(0.5, 2.0, 6)  # float64
F32 = F64.astype(np.float32)
I32 = np.arange(1, 7, dtype=np.int32)
I64 = np.arange(1, 7, dtype=np.int64)
U8 = np.arange(1, 7, dtype=np.uint8)
B = np.array([True, False, True, True, False, True])
F16 = F64.astype(np.float16)

# (name, function of the numpy module (lnp or jnp), arguments)
CASES: list[tuple[str, Callable[[Any], Callable[..., Any]], tuple]] = [
    ("mean int32", lambda m: m.mean, (I32,)),
    ("mean int64", lambda m: m.mean, (I64,)),
    ("mean float64", lambda m: m.mean, (F64,)),
    ("sum bool", lambda m: m.sum, (B,)),
    ("sum uint8", lambda m: m.sum, (U8,)),
    ("sum int64", lambda m: m.sum, (I64,)),
    ("add float64 float32", lambda m: m.add, (F64, F32)),
    ("add int32 float32", lambda m: m.add, (I32, F32)),
    ("add int32 python float", lambda m: m.add, (I32, 1.5)),
    ("add float16 python float", lambda m: m.add, (F16, 1.5)),
    ("multiply int64 python int", lambda m: m.multiply, (I64, 3)),
    ("multiply uint8 int32", lambda m: m.multiply, (U8, I32)),
    ("divide int32 int32", lambda m: m.divide, (I32, I32)),
    ("exp int32", lambda m: m.exp, (I32,)),
    ("sqrt float64", lambda m: m.sqrt, (F64,)),
    ("maximum float64 python float", lambda m: m.maximum, (F64, 0.0)),
    ("less float64 float32", lambda m: m.less, (F64, F32)),
    ("where float64 python float", lambda m: m.where, (B, F64, 0.0)),
    ("matmul float64", lambda m: m.matmul, (F64.reshape(2, 3), F64.reshape(3, 2))),
    ("concatenate int64 int32", lambda m: m.concatenate, ([I64, I32],)),
    ("var int32", lambda m: m.var, (I32,)),
    ("cumsum int64", lambda m: m.cumsum, (I64,)),
    ("argmax float64", lambda m: m.argmax, (F64,)),
    ("reshape float64", lambda m: lambda x: m.reshape(x, (2, 3)), (F64,)),
]

# functions that take no arrays: their results' dtypes, eagerly
CREATION: list[tuple[str, Callable[[Any], Any]]] = [
    ("zeros", lambda m: m.zeros(3)),
    ("ones int", lambda m: m.ones(3, dtype=int)),
    ("arange int", lambda m: m.arange(5)),
    ("arange float", lambda m: m.arange(0.0, 1.0, 0.25)),
    ("linspace", lambda m: m.linspace(0, 1, 5)),
    ("eye", lambda m: m.eye(3)),
    ("array of floats", lambda m: m.array([1.0, 2.0])),
    ("array of ints", lambda m: m.array([1, 2])),
    ("asarray float64", lambda m: m.asarray(F64)),
    ("full python float", lambda m: m.full((2,), 1.5)),
]

LAX_CASES: list[tuple[str, Callable[[Any], Callable[..., Any]], tuple]] = [
    ("lax.add float64", lambda m: m.add, (F64, F64)),
    ("lax.max int32", lambda m: m.max, (I32, I32)),
    ("lax.exp float64", lambda m: m.exp, (F64,)),
    ("lax.convert_element_type to float64", lambda m: lambda x: m.convert_element_type(x, np.float64), (F32,)),
    ("lax.reduce_sum int64", lambda m: lambda x: m.reduce_sum(x, (0,)), (I64,)),
]


@contextlib.contextmanager
def x64(enabled: bool) -> Iterator[None]:
    """64-bit values on or off in loom and in jax, restored after."""
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", enabled)
    try:
        with loom.config.override(enable_x64=enabled):
            yield
    finally:
        jax.config.update("jax_enable_x64", before)


def _dtype(x: Any) -> np.dtype:
    return np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype


@pytest.mark.parametrize("enabled", [False, True], ids=["x64_off", "x64_on"])
@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_numpy_result_dtype_matches_jax(enabled: bool, name: str, fn: Callable, args: tuple) -> None:
    with x64(enabled):
        expected = _dtype(jax.eval_shape(fn(jnp), *args))  # jit's trace, without compiling it
        eager = _dtype(fn(lnp)(*args))
        jitted = _dtype(loom.jit(fn(lnp))(*args))
    assert (eager, jitted) == (expected, expected), f"{name}: eager {eager}, jit {jitted}, jax {expected}"


@pytest.mark.parametrize("enabled", [False, True], ids=["x64_off", "x64_on"])
@pytest.mark.parametrize("name,fn,args", LAX_CASES, ids=[c[0] for c in LAX_CASES])
def test_lax_result_dtype_matches_jax(enabled: bool, name: str, fn: Callable, args: tuple) -> None:
    with x64(enabled):
        expected = _dtype(jax.eval_shape(fn(jax.lax), *args))
        eager = _dtype(fn(lax)(*args))
        jitted = _dtype(loom.jit(fn(lax))(*args))
    assert (eager, jitted) == (expected, expected), f"{name}: eager {eager}, jit {jitted}, jax {expected}"


@pytest.mark.parametrize("enabled", [False, True], ids=["x64_off", "x64_on"])
@pytest.mark.parametrize("name,make", CREATION, ids=[c[0] for c in CREATION])
def test_creation_dtype_matches_jax(enabled: bool, name: str, make: Callable) -> None:
    with x64(enabled):
        assert _dtype(make(lnp)) == _dtype(make(jnp)), name


@pytest.mark.parametrize("enabled", [False, True], ids=["x64_off", "x64_on"])
def test_loop_carry_from_a_literal_updated_with_a_float64_input(enabled: bool) -> None:
    """The carry starts as the literal 0.0 and adds a float64 input each step: one dtype
    throughout (float32, or float64 with x64), as in JAX, where it used to change type."""
    def f(x: Any, m: Any) -> Any:
        return m.lax.while_loop(lambda c: c < 10.0, lambda c: c + x, 0.0)
    with x64(enabled):
        got = loom.jit(lambda x: f(x, loom))(np.float64(1.5))
        want = jax.jit(lambda x: f(x, jax))(np.float64(1.5))
    assert _dtype(got) == _dtype(want)
    np.testing.assert_allclose(got, want)


def test_config_flag_and_errors() -> None:
    before = loom.config.enable_x64
    with loom.config.override(enable_x64=not before):
        assert loom.config.enable_x64 is (not before)
    assert loom.config.enable_x64 is before
    with pytest.raises(AttributeError, match="no flag 'enable_x32'"):
        loom.config.update("enable_x32", True)
    with pytest.raises(TypeError, match="takes a bool"):
        loom.config.update("enable_x64", 1)


def test_jit_cache_follows_the_flag() -> None:
    """One jitted function called with the flag off, on and off again traces each policy."""
    f = loom.jit(lambda x: x * 2.0)
    x = np.ones(3, np.float64)
    with x64(False):
        assert f(x).dtype == np.float32 and f(x).dtype == np.float32  # the fast path too
    with x64(True):
        assert f(x).dtype == np.float64 and f(x).dtype == np.float64
    with x64(False):
        assert f(x).dtype == np.float32


@pytest.mark.parametrize("value,expected", [("1", "float64"), ("0", "float32")])
def test_environment_variable_read_at_import(value: str, expected: str) -> None:
    code = "import loom, loom.numpy as lnp, numpy as np; print(loom.jit(lambda x: x + 1.0)(np.ones(2)).dtype)"
    env = {**os.environ, "LOOM_ENABLE_X64": value}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == expected
