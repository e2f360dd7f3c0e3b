"""Shared by the distributions: inputs as floats, and the location-scale standardisation."""

from __future__ import annotations

from typing import Any

import numpy as np

import loom.numpy as lnp
from loom.numpy import _util

NEG_INF = np.float32(-np.inf)


def standard(x: Any, loc: Any, scale: Any) -> tuple[Any, Any]:
    """((x - loc) / scale, log(scale)) as floats."""
    z = (_util.as_floating(x) - loc) / scale
    # a Python scale is weakly typed: its log in the dtype of z, not NumPy's float64
    return z, lnp.log(lnp.astype(scale, lnp.result_type(z)))


__all__ = ["NEG_INF", "standard"]
