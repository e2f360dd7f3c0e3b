"""`vectorize` and `apply_along_axis`, through `loom.vmap`.

Inside `loom.jit` the functions take tracers and insert StableHLO ops (with JAX's dtype
promotion); on plain arrays they run NumPy directly.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from loom.frontend.vmap import vmap
from loom.numpy import _lax_numpy as lax_numpy
from loom.numpy._util import ArrayLike, positive_axis


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    def dims(part: str) -> list[tuple[str, ...]]:
        groups = re.findall(r"\(([^()]*)\)", part)
        return [tuple(d.strip() for d in g.split(",") if d.strip()) for g in groups]
    if "->" not in signature:
        raise ValueError(f"vectorize: signature {signature!r} has no '->'")
    ins, outs = signature.split("->")
    return dims(ins), dims(outs)


def vectorize(pyfunc: Any, *, excluded: Any = frozenset(), signature: str | None = None) -> Any:
    """JAX's `vectorize`: `pyfunc` applied over the broadcast leading dimensions of its array
    arguments (those beyond the core dimensions of `signature`, e.g. "(n),(n)->()"), by one
    `loom.vmap` over the flattened loop dimensions. Arguments named in `excluded` (positions or
    keywords) pass through unchanged."""
    in_core, out_core = _parse_signature(signature) if signature else (None, None)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        positions = [i for i in range(len(args)) if i not in excluded]
        arrays = [args[i] for i in positions]
        core = in_core if in_core is not None else [()] * len(arrays)
        if len(core) != len(arrays):
            raise TypeError(f"vectorize: signature {signature!r} has {len(core)} inputs, but the call has "
                            f"{len(arrays)} array arguments")
        loop_shapes = []
        for x, c in zip(arrays, core):
            s = tuple(lax_numpy.shape(x))
            if len(s) < len(c):
                raise ValueError(f"vectorize: an argument of shape {s} has fewer dimensions than its core {c}")
            loop_shapes.append(s[:len(s) - len(c)])
        loop = np.broadcast_shapes(*loop_shapes)
        size = int(np.prod(loop, dtype=np.int64))
        flat = []
        for x, c in zip(arrays, core):
            s = tuple(lax_numpy.shape(x))
            core_shape = s[len(s) - len(c):]
            flat.append(lax_numpy.reshape(lax_numpy.broadcast_to(x, loop + core_shape), (size,) + core_shape))

        def one(*xs: Any) -> Any:
            full = list(args)
            for i, x in zip(positions, xs):
                full[i] = x
            return pyfunc(*full, **kwargs)

        out = vmap(one)(*flat)
        results = list(out) if isinstance(out, tuple) else [out]
        shaped = [lax_numpy.reshape(r, loop + tuple(lax_numpy.shape(r))[1:]) for r in results]
        return tuple(shaped) if isinstance(out, tuple) else shaped[0]

    excluded = frozenset(excluded)
    return wrapped


def apply_along_axis(func1d: Any, axis: int, arr: ArrayLike, *args: Any, **kwargs: Any) -> Any:
    """`func1d` applied to every 1-D slice of `arr` along `axis` (by `loom.vmap`); the dimensions
    of its result take the place of `axis`."""
    rank = lax_numpy.ndim(arr)
    axis = positive_axis(axis, rank, "apply_along_axis")
    moved = lax_numpy.moveaxis(arr, axis, -1)
    others = tuple(lax_numpy.shape(moved))[:-1]
    rows = lax_numpy.reshape(moved, (int(np.prod(others, dtype=np.int64)), lax_numpy.shape(arr)[axis]))
    out = vmap(lambda row: func1d(row, *args, **kwargs))(rows)
    extra = tuple(lax_numpy.shape(out))[1:]
    out = lax_numpy.reshape(out, others + extra)
    # the result's own dimensions go where `axis` was
    order = list(range(axis)) + list(range(len(others), len(others) + len(extra))) + list(range(axis, len(others)))
    return lax_numpy.transpose(out, tuple(order))


__all__ = ["apply_along_axis", "vectorize"]
