"""Kernels of the stack dialect (saved values of reverse-mode loops) for both executors.

A stack at run time is a `SavedStack`: a Python list that grows as the forward loop pushes and
shrinks as the backward loop pops. The kernels are registered in the numpy kernel table
(`KERNELS`), which both the reference interpreter and the compiled executor use for ops without
regions, so a backward program with stacks runs the same in both.

Saved memory is counted: `saved_bytes()` is the number of bytes held on all live stacks,
`peak_saved_bytes()` the highest it has been since `reset_saved_bytes()`. This is how the memory
policies of `loom.lax.while_loop` are measured.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.backend.kernels_numpy import KERNELS, Kernel
from loom.ir.core import Operation


class _Counter:
    __slots__ = ("current", "peak")

    def __init__(self) -> None:
        self.current = 0
        self.peak = 0


_COUNTER = _Counter()


def _nbytes(value: Any) -> int:
    return 0 if isinstance(value, SavedStack) else int(np.asarray(value).nbytes)


class SavedStack:
    """The run-time value of a `!stack.stack<T>`: values pushed by a forward loop."""

    __slots__ = ("companion", "items", "nbytes")

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.nbytes = 0
        self.companion: SavedStack | None = None  # `stack.companion`, created on first use

    def push(self, value: Any) -> None:
        self.items.append(value)
        n = _nbytes(value)
        self.nbytes += n
        c = _COUNTER
        c.current += n
        if c.current > c.peak:
            c.peak = c.current

    def pop(self) -> Any:
        if not self.items:
            raise IndexError("stack.pop on an empty stack: the backward loop ran more iterations than the forward "
                             "loop pushed")
        value = self.items.pop()
        n = _nbytes(value)
        self.nbytes -= n
        _COUNTER.current -= n
        return value

    def __del__(self) -> None:
        # a stack dropped before it was emptied (a forward pass whose backward never ran)
        _COUNTER.current -= self.nbytes

    def __repr__(self) -> str:
        return f"SavedStack({len(self.items)} items, {self.nbytes} bytes)"


def saved_bytes() -> int:
    """Bytes currently held on stacks of saved values."""
    return _COUNTER.current


def peak_saved_bytes() -> int:
    """The most bytes held on stacks at once since the last `reset_saved_bytes()`."""
    return _COUNTER.peak


def reset_saved_bytes() -> None:
    """Restart the peak count from the bytes held now."""
    _COUNTER.peak = _COUNTER.current


def stack_new() -> SavedStack:
    return SavedStack()


def stack_push(stack: SavedStack, value: Any) -> None:
    stack.push(value)


def stack_pop(stack: SavedStack) -> Any:
    return stack.pop()


def stack_companion(stack: SavedStack) -> SavedStack:
    if stack.companion is None:
        stack.companion = SavedStack()
    return stack.companion


def _new(op: Operation) -> Kernel:
    return Kernel(stack_new)


def _push(op: Operation) -> Kernel:
    return Kernel(stack_push)


def _pop(op: Operation) -> Kernel:
    return Kernel(stack_pop)


KERNELS["stack.new"] = _new
KERNELS["stack.push"] = _push
KERNELS["stack.pop"] = _pop
KERNELS["stack.companion"] = lambda op: Kernel(stack_companion)

__all__ = ["SavedStack", "peak_saved_bytes", "reset_saved_bytes", "saved_bytes", "stack_companion", "stack_new",
           "stack_pop",
           "stack_push"]

import loom.backend.ad_kernels  # noqa: E402, F401  (the ad dialect's kernels, registered in the same table)
