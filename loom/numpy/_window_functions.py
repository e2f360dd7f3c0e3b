"""Window functions (float32, as JAX's): bartlett, blackman, hamming, hanning, kaiser.

Inside `loom.jit` the functions take tracers and insert StableHLO ops (with JAX's dtype
promotion); on plain arrays they run NumPy directly.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from loom.numpy import _lax_numpy as lax_numpy
from loom.numpy import _ufuncs as ufuncs
from loom.numpy._util import ArrayLike, is_traced


def bartlett(M: int) -> np.ndarray:  # noqa: N803 - NumPy's name
    """The Bartlett (triangular) window of M points."""
    return np.bartlett(M).astype(np.float32)


def blackman(M: int) -> np.ndarray:  # noqa: N803
    """The Blackman window of M points."""
    return np.blackman(M).astype(np.float32)


def hamming(M: int) -> np.ndarray:  # noqa: N803
    """The Hamming window of M points."""
    return np.hamming(M).astype(np.float32)


def hanning(M: int) -> np.ndarray:  # noqa: N803
    """The Hann window of M points."""
    return np.hanning(M).astype(np.float32)


def kaiser(M: int, beta: ArrayLike) -> Any:  # noqa: N803 - NumPy's name
    """The Kaiser window of M points with shape parameter `beta` (float32, as JAX's; `beta` may be traced)."""
    M = operator.index(M)  # noqa: N806
    if not is_traced(beta):
        return np.kaiser(M, float(np.asarray(beta))).astype(np.float32)
    if M <= 1:
        # ones, but built from beta so the window stays a traced value of beta (with a zero derivative)
        return (
            lax_numpy.broadcast_to(lax_numpy.astype(np.ones(()), np.float32), (builtins.max(M, 0),))
            * lax_numpy.astype(beta, np.float32) ** 0
        )
    alpha = (M - 1) / 2.0
    n = np.arange(M, dtype=np.float32)
    beta = lax_numpy.astype(beta, np.float32)
    return ufuncs.i0(beta * np.sqrt(1.0 - ((n - alpha) / alpha) ** 2).astype(np.float32)) / ufuncs.i0(beta)


__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]
