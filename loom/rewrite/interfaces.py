"""Op interfaces the transformations query: callables and calls (for the inliner and call
graphs). An op opts in by listing the trait; it may override the hooks as methods of its class.

    class FuncOp(OpBase):
        traits = (IsolatedFromAbove, Symbol, CallableOpInterface)

    class CallOp(OpBase):
        traits = (CallOpInterface,)      # callee in the `callee` attribute, arguments = operands

Ops named `func.func` / `func.call` are treated as callables / calls even without the traits.
"""

from __future__ import annotations

from loom.ir.attributes import SymbolRefAttr, UnitAttr
from loom.ir.core import Operation, Region, Value
from loom.ir.opdef import ReturnLike, Trait, has_trait


class CallableOpInterface(Trait):
    """An op with a body that can be called: its callable region is its first region (override
    with a `callable_region()` method); an empty region is a declaration."""


class CallOpInterface(Trait):
    """An op that calls a symbol: its callee is the `callee` attribute and its arguments are its
    operands (override with `callee_symbol()` / `call_arguments()` methods)."""


_CALLABLE_NAMES = frozenset({"func.func"})
_CALL_NAMES = frozenset({"func.call"})
_RETURN_NAMES = frozenset({"func.return"})


def is_callable(op: Operation) -> bool:
    return has_trait(op, CallableOpInterface) or op.name in _CALLABLE_NAMES


def is_call(op: Operation) -> bool:
    return has_trait(op, CallOpInterface) or op.name in _CALL_NAMES


def callable_region(op: Operation) -> Region | None:
    """The body of a callable, or None for a declaration."""
    hook = getattr(op, "callable_region", None)
    if callable(hook):
        return hook()
    if not op.regions or not op.regions[0].blocks:
        return None
    return op.regions[0]


def callee_symbol(op: Operation) -> SymbolRefAttr | None:
    """The symbol a call op calls, or None (an indirect call)."""
    hook = getattr(op, "callee_symbol", None)
    if callable(hook):
        return hook()
    callee = op.get_attr("callee")
    return callee if isinstance(callee, SymbolRefAttr) else None


def call_arguments(op: Operation) -> tuple[Value, ...]:
    hook = getattr(op, "call_arguments", None)
    if callable(hook):
        return tuple(hook())
    return op.operands


def is_return_like(op: Operation) -> bool:
    return has_trait(op, ReturnLike) or op.name in _RETURN_NAMES


def has_no_inline(op: Operation) -> bool:
    """The `no_inline` unit attribute of func.func / func.call."""
    return isinstance(op.get_attr("no_inline"), UnitAttr)


__all__ = ["CallOpInterface", "CallableOpInterface", "call_arguments", "callable_region", "callee_symbol",
           "has_no_inline", "is_call", "is_callable", "is_return_like"]
