"""Interning for immutable IR data: every type and attribute exists once per distinct value.

Identity is equality, so comparing two types is `is`, hashing is `id`, and the text of each one
is computed once and kept on the object.
"""

from __future__ import annotations

from typing import Any


class Interned(type):
    """Metaclass: `Cls(*params)` returns the one instance for these params.

    Constructor arguments must be hashable and canonical (tuples, not lists; bit patterns, not
    floats) so that equal values have equal keys. Convenience constructors (`get`) normalise.
    """

    _canonical_args: bool  # set by each class (see Type, Attribute)

    def __call__(cls, *params: Any) -> Any:
        key = (cls, params)
        cache = _CACHE
        obj = cache.get(key)
        if obj is None:
            obj = super().__call__(*params)
            if cls._canonical_args:
                cache[key] = obj
                return obj
            # Defaults and normalisation can make different argument lists mean one value.
            obj = cache.setdefault((cls, obj._params()), obj)
            cache[key] = obj
        return obj


_CACHE: dict[tuple, Any] = {}

