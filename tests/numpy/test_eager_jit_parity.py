"""Eager loom.numpy behaves as under loom.jit, as jax.numpy does: for every call in
parity_cases.CASES, with 64-bit values off and on, the eager result's dtype equals the jitted
result's and JAX's (with the same x64 setting), the values equal JAX's, and a bad call raises in
both modes an error of JAX's type whose message names what is wrong.

Oracle: jax.numpy, run in a subprocess, with x64 off then on (jax_enable_x64 is process-wide state)."""

from __future__ import annotations

import builtins
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from parity_cases import CASES, Case, run_case

import loom
import loom.numpy as lnp

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def jax_results() -> dict[bool, dict[str, Any]]:
    """JAX's results of every case with jax_enable_x64 off and on (one subprocess: the setting is
    process-wide state, kept out of this process; one jax start-up serves both)."""
    pytest.importorskip("jax")
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONWARNINGS="ignore")
    done = subprocess.run([sys.executable, str(HERE / "parity_cases.py")], capture_output=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr.decode()
    return pickle.loads(done.stdout)


@pytest.fixture(scope="module", params=[False, True], ids=["x32", "x64"])
def setting(request: pytest.FixtureRequest, jax_results: dict[bool, dict[str, Any]]) -> tuple[bool, dict[str, Any]]:
    """(x64, JAX's results of every case with jax_enable_x64 = x64)."""
    return request.param, jax_results[request.param]


def _check(case: Case, mode: str, got: Any, want: tuple) -> None:
    where = f"{case.name} ({mode})"
    if want[0] == "error":
        expected = getattr(builtins, want[1])
        assert isinstance(got, Exception), f"{where}: JAX raises {want[1]}: {want[2]}; loom returned {got!r}"
        assert isinstance(got, expected), f"{where}: JAX raises {want[1]}, loom {type(got).__name__}: {got}"
        if case.error is not None and not (mode == "eager" and case.eager_numpy):
            assert case.error in str(got), f"{where}: the message does not name {case.error!r}: {got}"
        return
    assert not isinstance(got, Exception), f"{where}: loom raised {type(got).__name__}: {got}"
    dtype, value = want
    got = np.asarray(got)
    assert str(got.dtype) == dtype, f"{where}: dtype {got.dtype}, JAX's {dtype}"
    assert got.shape == value.shape, f"{where}: shape {got.shape}, JAX's {value.shape}"
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, value, err_msg=where)
    else:
        tol = 1e-12 if got.dtype == np.float64 else 2e-6
        np.testing.assert_allclose(got, value, rtol=tol, atol=tol, err_msg=where)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_eager_and_jit_match_jax(setting: tuple[bool, dict[str, Any]], case: Case) -> None:
    x64, jax_results = setting
    with loom.config.override(enable_x64=x64):
        eager = run_case(lnp, case)
        jitted = run_case(lnp, case, loom.jit)
    # JAX's own eager and jit answers agree except where noted in parity_cases (an error's type).
    _check(case, "eager", eager, jax_results[f"{case.name}/eager"])
    _check(case, "jit", jitted, jax_results[f"{case.name}/jit"])
    if not isinstance(eager, Exception):
        assert np.asarray(eager).dtype == np.asarray(jitted).dtype, case.name
