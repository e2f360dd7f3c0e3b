"""`loom.eval_shape` and `loom.ShapeDtypeStruct` (abstract arrays), `loom.block_until_ready` and
`loom.device_get`, as in JAX."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.frontend.jit import Jitted, main_function
from loom.frontend.pytree import tree_map, tree_unflatten
from loom.frontend.tracing import np_dtype


class ShapeDtypeStruct:
    """An abstract array: a shape and a dtype, no values. `jit(f).lower` and `eval_shape`
    accept it wherever an array is expected."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Sequence[int], dtype: Any) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of `fun(*args, **kwargs)` as a pytree of `ShapeDtypeStruct`s, found
    by tracing (nothing is computed). Arguments may be arrays or `ShapeDtypeStruct`s."""
    lowered = Jitted(fun).lower(*args, **kwargs)
    fn = main_function(lowered.module)
    results = fn.properties["function_type"].value.results
    return tree_unflatten(lowered.out_tree, [ShapeDtypeStruct(t.shape, np_dtype(t.element_type)) for t in results])


def block_until_ready(x: Any) -> Any:
    """`x` (a pytree), once every array in it is computed (device work is asynchronous)."""
    def wait(leaf: Any) -> Any:
        ready = getattr(leaf, "block_until_ready", None)
        return ready() if callable(ready) else leaf
    return tree_map(wait, x)


def device_get(x: Any) -> Any:
    """`x` (a pytree) with every array copied to the host as a numpy array."""
    return tree_map(lambda leaf: np.asarray(leaf) if hasattr(leaf, "__array__") else leaf, x)


__all__ = ["ShapeDtypeStruct", "block_until_ready", "device_get", "eval_shape"]
