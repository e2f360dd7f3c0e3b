"""Running one StableHLO function in every executor loom has (the reference interpreter, the
compiled executor on numpy, the compiled executor on torch) and comparing each with an oracle."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import loom

EXECUTORS = [("interpreter", "numpy"), ("compiled", "numpy"), ("compiled", "torch")]


def module(body: str) -> str:
    return "module {\n" + body + "\n}"


def to_numpy(x):
    if isinstance(x, tuple):
        return tuple(to_numpy(v) for v in x)
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def run_all(text: str, args: Sequence) -> list:
    """The results of `text`'s @main on `args` in every executor, as numpy arrays."""
    return [to_numpy(loom.execute(text, *args, executor=ex, backend=be)) for ex, be in EXECUTORS]


def assert_all_close(text: str, args: Sequence, expected, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """Every executor's results match `expected` (one array or a tuple), NaNs in place."""
    for (ex, be), got in zip(EXECUTORS, run_all(text, args)):
        got = got if isinstance(got, tuple) else (got,)
        want = expected if isinstance(expected, (tuple, list)) else (expected,)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            w = np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype, (ex, be, g.shape, g.dtype, w.shape, w.dtype)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{ex} on {be}")
