"""Readers of op properties for type inference and folding: `prop_ints`, `prop_int` and
`prop_padding` return plain Python values or raise `ShapeError` naming the property."""

from __future__ import annotations

from collections.abc import Sequence

from loom.dialects.stablehlo.types import ShapeError
from loom.ir.attributes import Attribute, DenseArrayAttr, DenseElementsAttr, IntegerAttr

__all__ = ["prop_ints", "prop_int", "prop_padding"]


def prop_ints(props: dict[str, Attribute], name: str, default: Sequence[int] | None = None) -> tuple[int, ...]:
    """The integers of an `array<i64: ...>` (or integer elements) property."""
    a = props.get(name)
    if a is None:
        if default is None:
            raise ShapeError(f"requires attribute '{name}'")
        return tuple(default)
    if isinstance(a, DenseArrayAttr):
        return tuple(int(v) for v in a.values)
    if isinstance(a, DenseElementsAttr):
        return tuple(int(v) for v in a.to_numpy().reshape(-1))
    raise ShapeError(f"attribute '{name}' must be an array of integers, but got {a}")


def prop_int(props: dict[str, Attribute], name: str, default: int | None = None) -> int:
    a = props.get(name)
    if a is None:
        if default is None:
            raise ShapeError(f"requires attribute '{name}'")
        return default
    if not isinstance(a, IntegerAttr):
        raise ShapeError(f"attribute '{name}' must be an integer, but got {a}")
    return a.value


def prop_padding(props: dict[str, Attribute], name: str, n: int) -> list[tuple[int, int]]:
    a = props.get(name)
    if a is None:
        return [(0, 0)] * n
    if not isinstance(a, DenseElementsAttr) or a.type.shape != (n, 2):
        shape = "x".join(map(str, a.type.shape)) if isinstance(a, DenseElementsAttr) else str(a)
        raise ShapeError(f"attribute '{name}' must have shape [{n}, 2], but got {shape}")
    return [(int(lo), int(hi)) for lo, hi in a.to_numpy()]
