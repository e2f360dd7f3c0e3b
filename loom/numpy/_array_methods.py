"""The methods and operators of traced arrays (`x.sum()`, `x.T`, `x[i]`, `x + y`, ...), as
loom.numpy's functions: loom.numpy sets them on `Tracer` when it is imported (as jax.numpy gives
JAX's tracers their array methods), so the tracing core needs no import of loom.numpy."""

from __future__ import annotations

from typing import Any

import loom.numpy as lnp
from loom.frontend.tracing import Tracer
from loom.lax import ops as lax_ops
from loom.numpy._indexing import at, getitem


class ArrayMethods:
    """The array methods of `Tracer`; `register` copies them onto it."""

    @property
    def T(self) -> Any:  # noqa: N802 - numpy's name
        return lnp.transpose(self)

    def astype(self, dtype: Any) -> Any:
        return lnp.astype(self, dtype)

    def reshape(self, *shape: Any) -> Any:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return lnp.reshape(self, shape)

    def sum(self, axis: Any = None, keepdims: bool = False) -> Any:
        return lnp.sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Any:
        return lnp.mean(self, axis=axis, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Any:
        return lnp.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Any:
        return lnp.min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis: int | None = None, keepdims: bool = False) -> Any:
        return lnp.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis: int | None = None, keepdims: bool = False) -> Any:
        return lnp.argmin(self, axis=axis, keepdims=keepdims)

    def prod(self, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Any:
        return lnp.prod(self, axis=axis, keepdims=keepdims, dtype=dtype)

    def var(self, axis: Any = None, keepdims: bool = False, ddof: int = 0) -> Any:
        return lnp.var(self, axis=axis, keepdims=keepdims, ddof=ddof)

    def std(self, axis: Any = None, keepdims: bool = False, ddof: int = 0) -> Any:
        return lnp.std(self, axis=axis, keepdims=keepdims, ddof=ddof)

    def any(self, axis: Any = None, keepdims: bool = False) -> Any:
        return lnp.any(self, axis=axis, keepdims=keepdims)

    def all(self, axis: Any = None, keepdims: bool = False) -> Any:
        return lnp.all(self, axis=axis, keepdims=keepdims)

    def cumsum(self, axis: int | None = None, dtype: Any = None) -> Any:
        return lnp.cumsum(self, axis=axis, dtype=dtype)

    def cumprod(self, axis: int | None = None, dtype: Any = None) -> Any:
        return lnp.cumprod(self, axis=axis, dtype=dtype)

    def sort(self, axis: int | None = -1) -> Any:
        return lnp.sort(self, axis=axis)

    def argsort(self, axis: int | None = -1) -> Any:
        return lnp.argsort(self, axis=axis)

    def flatten(self) -> Any:
        return lnp.reshape(self, (-1,))

    ravel = flatten

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        return lnp.swapaxes(self, axis1, axis2)

    def clip(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002 - numpy's names
        return lnp.clip(self, min, max)

    def round(self, decimals: int = 0) -> Any:
        return lnp.round(self, decimals)

    def squeeze(self, axis: Any = None) -> Any:
        return lnp.squeeze(self, axis)

    def transpose(self, *axes: Any) -> Any:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return lnp.transpose(self, tuple(axes) if axes else None)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, tuple) and len(index) == 1:
            index = index[0]
        if isinstance(index, Tracer) and index.shape == () and index.dtype.kind in "iu" and self.shape:
            return _take_scalar(self, index)
        return getitem(self, index)

    @property
    def at(self) -> Any:
        """Functional updates, `x.at[idx].set(v)` and friends, as in JAX."""
        return at(self)

    def __add__(self, o: Any) -> Any:
        return lnp.add(self, o)

    def __radd__(self, o: Any) -> Any:
        return lnp.add(o, self)

    def __sub__(self, o: Any) -> Any:
        return lnp.subtract(self, o)

    def __rsub__(self, o: Any) -> Any:
        return lnp.subtract(o, self)

    def __mul__(self, o: Any) -> Any:
        return lnp.multiply(self, o)

    def __rmul__(self, o: Any) -> Any:
        return lnp.multiply(o, self)

    def __truediv__(self, o: Any) -> Any:
        return lnp.divide(self, o)

    def __rtruediv__(self, o: Any) -> Any:
        return lnp.divide(o, self)

    def __pow__(self, o: Any) -> Any:
        return lnp.power(self, o)

    def __rpow__(self, o: Any) -> Any:
        return lnp.power(o, self)

    def __matmul__(self, o: Any) -> Any:
        return lnp.matmul(self, o)

    def __rmatmul__(self, o: Any) -> Any:
        return lnp.matmul(o, self)

    def __floordiv__(self, o: Any) -> Any:
        return lnp.floor_divide(self, o)

    def __rfloordiv__(self, o: Any) -> Any:
        return lnp.floor_divide(o, self)

    def __mod__(self, o: Any) -> Any:
        return lnp.remainder(self, o)

    def __rmod__(self, o: Any) -> Any:
        return lnp.remainder(o, self)

    def __and__(self, o: Any) -> Any:
        return lnp.bitwise_and(self, o)

    def __rand__(self, o: Any) -> Any:
        return lnp.bitwise_and(o, self)

    def __or__(self, o: Any) -> Any:
        return lnp.bitwise_or(self, o)

    def __ror__(self, o: Any) -> Any:
        return lnp.bitwise_or(o, self)

    def __xor__(self, o: Any) -> Any:
        return lnp.bitwise_xor(self, o)

    def __rxor__(self, o: Any) -> Any:
        return lnp.bitwise_xor(o, self)

    def __invert__(self) -> Any:
        return lnp.invert(self)

    def __neg__(self) -> Any:
        return lnp.negative(self)

    def __pos__(self) -> Any:
        return self

    def __abs__(self) -> Any:
        return lnp.abs(self)

    def __lt__(self, o: Any) -> Any:
        return lnp.less(self, o)

    def __le__(self, o: Any) -> Any:
        return lnp.less_equal(self, o)

    def __gt__(self, o: Any) -> Any:
        return lnp.greater(self, o)

    def __ge__(self, o: Any) -> Any:
        return lnp.greater_equal(self, o)

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        return lnp.equal(self, o)

    def __ne__(self, o: Any) -> Any:  # type: ignore[override]
        return lnp.not_equal(self, o)


def _take_scalar(x: Tracer, i: Tracer) -> Tracer:
    """`x[i]` for a traced integer scalar `i` (a loop counter): one `dynamic_slice` of the leading
    dimension, as JAX rewrites this case. The general path (a gather over a grid of indices) gives
    the same values (negative indices wrap, others clamp) but costs a full advanced-indexing read
    per call in the executors, and its gradient is a scatter instead of a `dynamic_update_slice`."""
    row = lax_ops.dynamic_slice_in_dim(x, i, 1, 0)  # wraps a negative start, as jax.lax.dynamic_slice
    return lax_ops.reshape(row, x.shape[1:])




# what every class has, not array methods (`__hash__` is None here, as `__eq__` is defined)
_CLASS_ATTRIBUTES = {"__hash__", "__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__firstlineno__",
                     "__static_attributes__"}


def register() -> None:
    """Give `Tracer` the array methods and operators."""
    for name, value in vars(ArrayMethods).items():
        if name not in _CLASS_ATTRIBUTES:
            setattr(Tracer, name, value)
